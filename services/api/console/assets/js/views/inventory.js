// Inventory pages: what VMs are made from and with, each kind as the server's Table (its
// printer columns), live; groups also show their members and boot order.
import { h, replace, errorBox } from '../dom.js';
import { listWatch, path, tableAccept } from '../api.js';

const pages = {
  classes: { title: 'Classes', kinds: ['virtualmachineclasses'] },
  images: { title: 'Images', kinds: ['virtualmachineimages', 'clustervirtualmachineimages'] },
  storage: { title: 'Storage classes', kinds: ['storageclasses'] },
  encryption: { title: 'Encryption classes', kinds: ['encryptionclasses'] },
  policies: { title: 'Policies', kinds: ['computepolicies', 'tagpolicies'] },
  groups: { title: 'Groups', kinds: ['virtualmachinegroups'] },
  claims: { title: 'Claims', kinds: ['persistentvolumeclaims'] },
};
const clusterScoped = new Set(['clustervirtualmachineimages', 'storageclasses']);
const kindTitles = { clustervirtualmachineimages: 'Cluster images', virtualmachineimages: 'Namespace images', computepolicies: 'Compute policies', tagpolicies: 'Tag policies' };

export function inventoryPage(main, ctx, page = 'classes') {
  const spec = pages[page] || pages.classes;
  const stops = [];
  const boxes = spec.kinds.map(plural => {
    const box = h('div');
    stops.push(liveTable(box, plural, clusterScoped.has(plural) ? '' : ctx.namespace, ctx, plural === 'virtualmachinegroups'));
    return spec.kinds.length > 1 ? h('section', {}, h('h2', {}, kindTitles[plural] || plural), box) : box;
  });
  replace(main,
    h('h1', {}, `Inventory: ${spec.title}`),
    h('nav', { 'aria-label': 'Inventory', class: 'subnav' }, h('ul', {}, Object.entries(pages).map(([k, p]) =>
      h('li', {}, h('a', { href: `#/inventory/${k}`, 'aria-current': k === page ? 'page' : false }, p.title))))),
    boxes);
  return () => stops.forEach(s => s());
}

// liveTable shows the Table of plural in ns (every namespace when empty and allowed).
function liveTable(box, plural, ns, ctx, groups) {
  const rows = new Map();
  let columns = [];
  const state = h('div', { 'aria-live': 'polite' });
  const body = h('div');
  replace(box, state, body);
  const key = (r) => `${r.object.metadata.namespace || ''}/${r.object.metadata.name}`;
  function draw() {
    const shown = columns.map((c, i) => ({ ...c, i })).filter(c => c.priority === 0 || c.priority === undefined || c.priority === 1);
    const namespaced = !clusterScoped.has(plural) && !ns;
    const list = [...rows.values()].sort((a, b) => key(a).localeCompare(key(b)));
    if (!list.length) { replace(body, h('p', { class: 'muted' }, 'None.')); return; }
    replace(body, h('table', { class: 'list', dataset: { kind: plural } },
      h('thead', {}, h('tr', {}, namespaced ? h('th', { scope: 'col' }, 'Namespace') : null, shown.map(c => h('th', { scope: 'col', title: c.description || '' }, c.name)),
        groups ? [h('th', { scope: 'col' }, 'Boot order and members')] : null)),
      h('tbody', {}, list.map(r => h('tr', {},
        namespaced ? h('td', {}, r.object.metadata.namespace) : null,
        shown.map(c => h('td', {}, r.cells[c.i] ?? '')),
        groups ? h('td', {}, bootOrder(r.object)) : null)))));
  }
  const toRows = (tbl) => {
    if (tbl.columnDefinitions?.length) columns = tbl.columnDefinitions;
    return (tbl.rows || []).map(r => ({ cells: r.cells, object: r.object }));
  };
  if (!ns && !clusterScoped.has(plural) && !ctx.admin) {
    replace(state, h('p', { class: 'notice' }, 'Choose a namespace: only an administrator sees every namespace at once.'));
    return () => {};
  }
  return listWatch(path(plural, ns), {
    accept: tableAccept, query: { includeObject: 'Object' },
    onList: (tbl) => { rows.clear(); for (const r of toRows(tbl)) rows.set(key(r), r); draw(); },
    onEvent: (ev) => { for (const r of toRows(ev.object)) ev.type === 'DELETED' ? rows.delete(key(r)) : rows.set(key(r), r); draw(); },
    onState: (phase, err) => replace(state, err ? errorBox(err, phase === 'stopped' ? `Listing ${plural}` : `Watching ${plural}, retrying`) : null),
  });
}

// bootOrder lists a group's boot steps with their delay and members, and what the group
// reports of each member.
function bootOrder(g) {
  const reported = new Map((g.status?.members || []).map(m => [`${m.kind}/${m.name}`, m]));
  const steps = g.spec?.bootOrder || [];
  if (!steps.length) return h('span', { class: 'muted' }, 'no members');
  return h('ol', { class: 'boot' }, steps.map((s) => h('li', {},
    s.powerOnDelay ? h('span', { class: 'muted' }, `after ${s.powerOnDelay}: `) : null,
    (s.members || []).map((m, j) => {
      const r = reported.get(`${m.kind || 'VirtualMachine'}/${m.name}`);
      return [j ? ', ' : '', h('span', {}, `${m.kind === 'VirtualMachineGroup' ? 'group ' : ''}${m.name}`,
        r?.powerState ? h('span', { class: 'muted' }, ` (${r.powerState})`) : null)];
    }))));
}
