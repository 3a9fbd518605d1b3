// The VM list: live from a Table watch (the server's Status column and the whole object in
// each row), filtered by text here and by label on the server, sorted by any column.
import { h, replace, errorBox, age } from '../dom.js';
import { listWatch, path, tableAccept } from '../api.js';

const columns = [
  { key: 'name', title: 'Name', value: r => r.obj.metadata.name },
  { key: 'namespace', title: 'Namespace', value: r => r.obj.metadata.namespace, all: true },
  { key: 'status', title: 'Status', value: r => r.cells.Status },
  { key: 'power', title: 'Power state', value: r => r.obj.status?.powerState },
  { key: 'class', title: 'Class', value: r => r.obj.spec?.className },
  { key: 'image', title: 'Image', value: r => r.obj.spec?.image?.name ?? r.obj.spec?.imageName },
  { key: 'ip', title: 'Primary IP', value: r => r.obj.status?.network?.primaryIP4 || r.obj.status?.network?.primaryIP6 },
  { key: 'zone', title: 'Zone', value: r => r.obj.status?.zone },
  { key: 'age', title: 'Age', value: r => r.obj.metadata.creationTimestamp, show: age },
];

// rowsOf turns a Table (a list or one watch event's) into rows keyed namespace/name.
function rowsOf(tbl) {
  const names = tbl.columnDefinitions.map(c => c.name);
  return (tbl.rows || []).map(row => ({
    obj: row.object,
    cells: Object.fromEntries(names.map((n, i) => [n, row.cells[i]])),
  }));
}
const keyOf = (o) => `${o.metadata.namespace}/${o.metadata.name}`;

export function vmList(main, ctx) {
  const rows = new Map();
  const sort = { key: 'name', dir: 1 };
  const state = new Map(); // namespace or '' → what its watch says
  let stops = [];
  const text = h('input', { id: 'filter-text', type: 'search', placeholder: 'name, class, IP, status…', oninput: () => draw() });
  const labels = h('input', { id: 'filter-labels', type: 'search', placeholder: 'app=web,tier!=db', onchange: () => watch() });
  const tbody = h('tbody');
  const head = h('tr');
  const info = h('div', { 'aria-live': 'polite', id: 'list-state' });
  const count = h('span', { class: 'muted' });
  const cols = columns.filter(c => !c.all || !ctx.namespace);

  replace(main,
    h('h1', {}, 'Virtual machines'),
    h('div', { class: 'toolbar' },
      h('label', { for: 'filter-text' }, 'Filter '), text,
      h('label', { for: 'filter-labels' }, 'Labels '), labels,
      h('a', { class: 'button', href: '#/create' }, 'Create VM'), count),
    info,
    h('table', { class: 'list', id: 'vm-list' }, h('thead', {}, head), tbody));

  function drawHead() {
    replace(head, cols.map(c => h('th', { scope: 'col', 'aria-sort': sort.key === c.key ? (sort.dir > 0 ? 'ascending' : 'descending') : 'none' },
      h('button', { type: 'button', class: 'sort', onclick: () => { sort.dir = sort.key === c.key ? -sort.dir : 1; sort.key = c.key; drawHead(); draw(); } },
        c.title, sort.key === c.key ? (sort.dir > 0 ? ' ▲' : ' ▼') : ''))));
  }

  let pending = false;
  function draw() {
    if (pending) return;
    pending = true;
    setTimeout(() => { // one redraw for a burst of events (a timer also runs in a hidden tab)
      pending = false;
      const q = text.value.trim().toLowerCase();
      const col = columns.find(c => c.key === sort.key);
      const shown = [...rows.values()]
        .filter(r => !q || cols.some(c => String(c.value(r) ?? '').toLowerCase().includes(q)))
        .sort((a, b) => sort.dir * String(col.value(a) ?? '').localeCompare(String(col.value(b) ?? ''), undefined, { numeric: true }));
      replace(tbody, shown.length ? shown.map(r => h('tr', { dataset: { name: r.obj.metadata.name, namespace: r.obj.metadata.namespace } },
        cols.map(c => {
          const v = c.value(r);
          if (c.key === 'name') return h('td', {}, h('a', { href: `#/vm/${encodeURIComponent(r.obj.metadata.namespace)}/${encodeURIComponent(v)}` }, v));
          if (c.key === 'status') return h('td', { class: `status status-${v}` }, v ?? '');
          return h('td', {}, c.show ? c.show(v) : (v ?? ''));
        })))
        : h('tr', {}, h('td', { colSpan: cols.length, class: 'muted' }, rows.size ? 'No VM matches the filter.' : 'No virtual machines.')));
      count.textContent = ` ${shown.length} of ${rows.size}`;
      const problems = [...state.entries()].filter(([, s]) => s.err);
      replace(info, problems.map(([ns, s]) => errorBox(s.err, `${s.phase === 'stopped' ? 'Watch stopped' : 'Watch interrupted, retrying'}${ns ? ` (namespace ${ns})` : ''}`)));
    }, 30);
  }

  // watch starts one watch for the chosen namespace, for every namespace for an
  // administrator, or one per namespace for a user (those they may not see are skipped).
  function watch() {
    stops.forEach(s => s());
    rows.clear();
    state.clear();
    const scopes = ctx.namespace ? [ctx.namespace] : ctx.admin ? [''] : ctx.namespaces;
    stops = scopes.map(ns => listWatch(path('virtualmachines', ns), {
      accept: tableAccept, query: { includeObject: 'Object', labelSelector: labels.value.trim() },
      onList: (tbl) => {
        for (const k of [...rows.keys()]) if (!ns || k.startsWith(`${ns}/`)) rows.delete(k);
        for (const r of rowsOf(tbl)) rows.set(keyOf(r.obj), r);
        draw();
      },
      onEvent: (ev) => {
        for (const r of rowsOf(ev.object)) {
          if (ev.type === 'DELETED') rows.delete(keyOf(r.obj)); else rows.set(keyOf(r.obj), r);
        }
        draw();
      },
      onState: (phase, err) => {
        // A user's "all namespaces" skips those they may not see.
        if (err?.status === 403 && !ctx.namespace && !ctx.admin) state.delete(ns);
        else state.set(ns, { phase, err });
        draw();
      },
    }));
  }

  drawHead();
  watch();
  const tick = setInterval(draw, 10000); // ages move on
  return () => { stops.forEach(s => s()); clearInterval(tick); };
}
