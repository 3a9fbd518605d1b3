// Small helpers to build the page from data without ever parsing it as HTML.

// h builds an element: attrs sets properties (on*: listeners, class, dataset, aria-*),
// children are nodes, strings (as text) or arrays of them; null and false are skipped.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('aria-') || k === 'role' || k === 'for' || k === 'list' || k === 'form') el.setAttribute(k, v);
    else el[k] = v;
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
}

// replace swaps el's children for the given ones.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// errorBox shows a failed call as the server answered it: code, reason, message and each
// field cause; never an empty box.
export function errorBox(err, what) {
  const causes = err.causes || [];
  return h('div', { class: 'error', role: 'alert' },
    h('strong', {}, what ? `${what}: ` : '', err.status ? `${err.status} ${err.reason || ''} ` : ''),
    err.message || String(err),
    causes.length ? h('ul', {}, causes.map(c => h('li', {}, h('code', {}, c.field || '(object)'), ' ', c.message || c.reason || ''))) : null);
}

// age renders a timestamp the way kubectl does: 5s, 3m, 2h, 4d.
export function age(ts) {
  if (!ts) return '';
  const s = Math.max(0, (Date.now() - Date.parse(ts)) / 1000);
  if (s < 120) return `${Math.floor(s)}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

// dl renders [term, value] pairs, skipping empty values.
export function dl(pairs) {
  return h('dl', { class: 'pairs' }, pairs.filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

// table renders rows under headings; an empty table says so.
export function table(headings, rows, empty = 'None.') {
  if (!rows.length) return h('p', { class: 'muted' }, empty);
  return h('table', {}, h('thead', {}, h('tr', {}, headings.map(t => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, rows.map(r => h('tr', {}, r.map(c => h('td', {}, c ?? ''))))));
}
