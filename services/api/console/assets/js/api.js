// The REST API as the console uses it: the user's bearer token on every call, the
// server's Status turned into an error that shows, and Kubernetes list-then-watch.

const tokenKey = 'vmop.token';

export const session = {
  get token() { return sessionStorage.getItem(tokenKey) || ''; },
  set token(t) { t ? sessionStorage.setItem(tokenKey, t) : sessionStorage.removeItem(tokenKey); },
};

// ApiError is a failed call: HTTP status, the Status reason and message, field causes.
export class ApiError extends Error {
  constructor(status, body, text) {
    const st = body && body.kind === 'Status' ? body : null;
    super(st?.message || text || `HTTP ${status}`);
    this.status = status;
    this.reason = st?.reason || '';
    this.causes = st?.details?.causes || [];
  }
}

// onUnauthorized is called when the server refuses the token (the page asks for another).
export const hooks = { onUnauthorized: () => {} };

function url(path, query) {
  const q = new URLSearchParams(Object.entries(query || {}).filter(([, v]) => v !== undefined && v !== ''));
  const qs = q.toString();
  return qs ? `${path}?${qs}` : path;
}

// Writes are recorded under this field manager (metadata.managedFields), not the browser's name.
const fieldManager = 'vmop-console';

async function send(method, path, { body, type = 'application/json', query, accept, signal } = {}) {
  if (['POST', 'PUT', 'PATCH'].includes(method)) query = { fieldManager, ...query };
  const headers = { Authorization: `Bearer ${session.token}`, Accept: accept || 'application/json' };
  if (body !== undefined) headers['Content-Type'] = type;
  if (body !== undefined && typeof body !== 'string') body = JSON.stringify(body);
  let res;
  try {
    res = await fetch(url(path, query), { method, headers, body, signal, cache: 'no-store' });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, null, `the server cannot be reached (${e.message})`);
  }
  if (res.status === 401) hooks.onUnauthorized();
  return res;
}

async function failure(res) {
  const text = await res.text();
  let body = null;
  try { body = JSON.parse(text); } catch { /* not JSON: the text is the message */ }
  return new ApiError(res.status, body, text.trim() || res.statusText);
}

// call sends one request and returns the decoded answer, or throws an ApiError.
export async function call(method, path, opts = {}) {
  const res = await send(method, path, opts);
  if (!res.ok) throw await failure(res);
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

export const tableAccept = 'application/json;as=Table;v=v1;g=meta.k8s.io';

// listWatch lists path, then watches from the list's resourceVersion, re-watching when
// the server ends the watch and listing again when the version is gone (410). onList gets
// each list (or Table), onEvent each change; onState 'live', 'retrying' or 'stopped' with
// the error. A refused request (400, 401, 403, 404, 422) stops it: retrying would not
// change the answer. Returns stop.
export function listWatch(path, { query = {}, accept, onList, onEvent, onState = () => {} }) {
  const ctl = new AbortController();
  const signal = ctl.signal;
  (async () => {
    let rv = '';
    let delay = 1000;
    while (!signal.aborted) {
      try {
        if (!rv) {
          const list = await call('GET', path, { query, accept, signal });
          rv = list.metadata?.resourceVersion || '';
          onList(list);
        }
        const res = await send('GET', path, {
          query: { ...query, watch: '1', resourceVersion: rv, allowWatchBookmarks: 'true' }, accept, signal,
        });
        if (!res.ok) throw await failure(res);
        onState('live');
        delay = 1000;
        for await (const ev of lines(res.body, signal)) {
          if (ev.type === 'ERROR') {
            if (ev.object?.code === 410) { rv = ''; break; }
            throw new ApiError(ev.object?.code || 500, ev.object, 'watch failed');
          }
          rv = ev.object?.metadata?.resourceVersion || rv;
          if (ev.type !== 'BOOKMARK') onEvent(ev);
        }
      } catch (e) {
        if (signal.aborted) return;
        if (e.status === 410) { rv = ''; continue; }
        if ([400, 401, 403, 404, 422].includes(e.status)) { onState('stopped', e); return; }
        onState('retrying', e);
        await new Promise(r => setTimeout(r, delay));
        delay = Math.min(delay * 2, 15000);
      }
    }
  })();
  return () => ctl.abort();
}

// lines decodes a watch stream: one JSON event per line.
async function* lines(body, signal) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  signal.addEventListener('abort', () => reader.cancel().catch(() => {}), { once: true });
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) yield JSON.parse(line);
    }
  }
}

// Paths of the kinds the console shows.
const vmop = '/apis/vmoperator.vmware.com/v1alpha5';
export function path(plural, ns, name) {
  const base = {
    virtualmachines: vmop, virtualmachinegroups: vmop, virtualmachineclasses: vmop,
    virtualmachineimages: vmop, clustervirtualmachineimages: vmop,
    encryptionclasses: '/apis/encryption.vmware.com/v1alpha1',
    computepolicies: '/apis/vsphere.policy.vmware.com/v1alpha1', tagpolicies: '/apis/vsphere.policy.vmware.com/v1alpha1',
    storageclasses: '/apis/storage.k8s.io/v1',
    persistentvolumeclaims: '/api/v1', namespaces: '/api/v1', events: '/api/v1',
  }[plural];
  let p = base;
  if (ns) p += `/namespaces/${encodeURIComponent(ns)}`;
  p += `/${plural}`;
  if (name) p += `/${encodeURIComponent(name)}`;
  return p;
}
