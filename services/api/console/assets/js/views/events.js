// Kubernetes Events (v1, served from the EVENTS stream): a VM's timeline and the feed.
import { h, replace, errorBox, age } from '../dom.js';
import { listWatch, path } from '../api.js';

// notServed says plainly that the server has no Events yet, rather than showing an error.
export function notServed(err) {
  return h('p', { class: 'notice', role: 'status' },
    `This server does not serve Kubernetes Events (GET /api/v1/…/events answered ${err.status}: ${err.message}). `,
    'The rest of the console works without them.');
}

const when = (e) => e.lastTimestamp || e.eventTime || e.firstTimestamp || e.metadata?.creationTimestamp || '';

// eventRow renders one Event; withObject adds the object it is about.
export function eventRow(e, withObject) {
  const io = e.involvedObject || {};
  return h('li', { class: `event event-${e.type}`, dataset: { reason: e.reason || '' } },
    h('time', { dateTime: when(e), title: when(e) }, when(e) ? `${age(when(e))} ago` : ''),
    h('span', { class: `type type-${e.type}` }, e.type),
    h('strong', {}, e.reason),
    withObject ? h('span', { class: 'object' }, `${io.kind || ''} ${io.namespace ? `${io.namespace}/` : ''}${io.name || ''}`) : null,
    h('span', { class: 'message' }, e.message, e.count > 1 ? ` (×${e.count})` : ''),
    h('span', { class: 'muted source' }, e.source?.component || e.reportingController || ''));
}

// watchEvents keeps the events of ns (all namespaces when empty) matching fields, newest
// first, and calls draw with them (or with the error that stopped the watch).
export function watchEvents(ns, fields, draw, limit = 500) {
  const events = new Map();
  const sorted = () => [...events.values()].sort((a, b) => when(b).localeCompare(when(a))).slice(0, limit);
  const fieldSelector = Object.entries(fields).map(([k, v]) => `${k}=${v}`).join(',');
  return listWatch(path('events', ns), {
    query: { fieldSelector },
    onList: (list) => { events.clear(); for (const e of list.items || []) events.set(e.metadata.uid || e.metadata.name, e); draw(sorted()); },
    onEvent: (ev) => {
      const key = ev.object.metadata.uid || ev.object.metadata.name;
      if (ev.type === 'DELETED') events.delete(key); else events.set(key, ev.object);
      draw(sorted());
    },
    onState: (phase, err) => draw(sorted(), err, phase),
  });
}

// eventsTimeline shows the live events of one object.
export function eventsTimeline(box, ns, fields) {
  const list = h('ol', { class: 'timeline', id: 'event-list' });
  const state = h('div', { 'aria-live': 'polite' });
  replace(box, state, list);
  return watchEvents(ns, fields, (events, err, phase) => {
    if (err) {
      replace(state, err.status === 404 ? notServed(err) : errorBox(err, phase === 'stopped' ? 'Events stopped' : 'Events interrupted, retrying'));
      return;
    }
    replace(state);
    replace(list, events.length ? events.map(e => eventRow(e, false)) : h('li', { class: 'muted' }, 'No events yet.'));
  });
}
