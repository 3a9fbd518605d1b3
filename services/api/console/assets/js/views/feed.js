// The live feed of the EVENTS stream as the gateway relays it (Kubernetes Events),
// filtered by text, type and kind.
import { h, replace, errorBox } from '../dom.js';
import { watchEvents, eventRow, notServed } from './events.js';

export function feedPage(main, ctx) {
  const text = h('input', { id: 'feed-text', type: 'search', placeholder: 'reason, name, message…', oninput: () => draw() });
  const type = h('select', { id: 'feed-type', onchange: () => draw() }, ['', 'Normal', 'Warning'].map(t => h('option', { value: t }, t || 'Any type')));
  const kind = h('select', { id: 'feed-kind', onchange: () => draw() }, h('option', { value: '' }, 'Any kind'));
  const state = h('div', { 'aria-live': 'polite' });
  const list = h('ol', { class: 'timeline', id: 'feed' });
  let events = [];
  replace(main, h('h1', {}, 'Events'),
    h('p', { class: 'muted' }, ctx.namespace ? `Namespace ${ctx.namespace}, newest first, live.` : 'Every namespace, newest first, live.'),
    h('div', { class: 'toolbar' }, h('label', { for: 'feed-text' }, 'Filter '), text,
      h('label', { for: 'feed-type' }, 'Type '), type, h('label', { for: 'feed-kind' }, 'Kind '), kind),
    state, list);

  function draw() {
    const q = text.value.trim().toLowerCase();
    const kinds = [...new Set(events.map(e => e.involvedObject?.kind).filter(Boolean))].sort();
    if (kinds.join() !== [...kind.options].slice(1).map(o => o.value).join()) {
      const was = kind.value;
      replace(kind, h('option', { value: '' }, 'Any kind'), kinds.map(k => h('option', { value: k, selected: k === was }, k)));
    }
    const shown = events.filter(e => (!type.value || e.type === type.value) && (!kind.value || e.involvedObject?.kind === kind.value) &&
      (!q || [e.reason, e.message, e.involvedObject?.name, e.involvedObject?.namespace, e.source?.component].some(v => (v || '').toLowerCase().includes(q))));
    replace(list, shown.length ? shown.map(e => eventRow(e, true)) : h('li', { class: 'muted' }, events.length ? 'No event matches the filter.' : 'No events yet.'));
  }

  // A user's "every namespace" is not theirs to watch: the feed then asks for a namespace.
  if (!ctx.namespace && !ctx.admin) {
    replace(state, h('p', { class: 'notice' }, 'Choose a namespace: only an administrator watches every namespace at once.'));
    return () => {};
  }
  return watchEvents(ctx.namespace, {}, (evs, err, phase) => {
    if (err) {
      replace(state, err.status === 404 ? notServed(err) : errorBox(err, phase === 'stopped' ? 'Feed stopped' : 'Feed interrupted, retrying'));
      if (phase === 'stopped') return;
    } else replace(state);
    events = evs;
    draw();
  });
}
