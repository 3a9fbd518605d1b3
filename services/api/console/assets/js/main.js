// The console's shell: sign-in, navigation, the namespace choice and the hash router.
// Each view renders into <main> and returns a function that stops its watches.
import { h, replace, errorBox } from './dom.js';
import { call, session, hooks, path } from './api.js';
import { parseYAML } from './yaml.js';
import { vmList } from './views/vms.js';
import { vmPage } from './views/vm.js';
import { createPage } from './views/create.js';
import { inventoryPage } from './views/inventory.js';
import { feedPage } from './views/feed.js';

const main = document.getElementById('view');
const nav = document.getElementById('nav');
const alerts = document.getElementById('alerts');

// ctx is what every view shares: the namespaces, the chosen one ('' is all the user may
// see) and whether the user is privileged.
const ctx = { namespaces: [], namespace: sessionStorage.getItem('vmop.namespace') ?? '', admin: false };

let stop = () => {};

// A failure nobody caught still shows, never a blank page.
window.addEventListener('unhandledrejection', (e) => showAlert(e.reason));
window.addEventListener('error', (e) => showAlert(e.error || e.message));

export function showAlert(err) {
  replace(alerts, errorBox(err instanceof Error || err?.message ? err : new Error(String(err))),
    h('button', { type: 'button', onclick: () => replace(alerts) }, 'Dismiss'));
}

hooks.onUnauthorized = () => {
  if (session.token) {
    session.token = '';
    signIn('The server refused the token (401). Sign in again.');
  }
};

// signIn asks for a token, pasted or read from a dropped kubeconfig.
function signIn(message) {
  stop();
  replace(nav);
  const token = h('input', { id: 'token', type: 'password', autocomplete: 'off', required: true, 'aria-describedby': 'token-help' });
  const status = h('div', { 'aria-live': 'polite' }, message ? h('p', { class: 'error', role: 'alert' }, message) : null);
  const file = h('input', { id: 'kubeconfig', type: 'file', onchange: () => file.files[0] && readKubeconfig(file.files[0]) });
  const drop = h('div', { class: 'drop', tabIndex: -1 }, 'Or drop a kubeconfig here, or choose one: ', file);
  async function readKubeconfig(f) {
    try {
      token.value = tokenOf(parseYAML(await f.text()));
      await submit();
    } catch (e) {
      replace(status, errorBox(e, `kubeconfig ${f.name}`));
    }
  }
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => { e.preventDefault(); drop.classList.remove('over'); if (e.dataTransfer.files[0]) readKubeconfig(e.dataTransfer.files[0]); });
  async function submit(e) {
    e?.preventDefault();
    session.token = token.value.trim();
    try {
      await call('GET', '/apis');
      await start();
    } catch (err) {
      session.token = '';
      replace(status, errorBox(err, 'Sign-in failed'));
    }
  }
  replace(main, h('section', { class: 'signin' },
    h('h1', {}, 'Sign in to vmop'),
    h('form', { onsubmit: submit },
      h('label', { for: 'token' }, 'Bearer token'),
      token,
      h('p', { id: 'token-help', class: 'muted' }, 'Kept in this tab only (sessionStorage). kubectl config view --raw shows yours.'),
      h('button', { type: 'submit' }, 'Sign in')),
    drop, status));
  token.focus();
}

// tokenOf finds the token of a kubeconfig's current context.
function tokenOf(kc) {
  if (!kc || typeof kc !== 'object') throw new Error('not a kubeconfig');
  const ctxName = kc['current-context'];
  const context = (kc.contexts || []).find(c => c.name === ctxName)?.context;
  const userName = context?.user ?? (kc.users || [])[0]?.name;
  const user = (kc.users || []).find(u => u.name === userName)?.user;
  if (!user?.token) throw new Error(`the kubeconfig's user ${userName ?? '(none)'} of context ${ctxName ?? '(none)'} has no token`);
  return user.token;
}

// start learns who the user is and what they may see, then shows the page asked for.
async function start() {
  const [nsList, clusterVMs] = await Promise.allSettled([
    call('GET', path('namespaces')),
    call('GET', path('virtualmachines'), { query: { limit: '1' } }),
  ]);
  if (nsList.status === 'rejected') throw nsList.reason;
  ctx.namespaces = nsList.value.items.map(n => n.metadata.name);
  ctx.admin = clusterVMs.status === 'fulfilled'; // only privileged users list VMs of every namespace
  if (ctx.namespace && !ctx.namespaces.includes(ctx.namespace)) ctx.namespace = '';
  renderNav();
  route();
}

function renderNav() {
  const select = h('select', { id: 'namespace', onchange: () => {
    ctx.namespace = select.value;
    sessionStorage.setItem('vmop.namespace', ctx.namespace);
    route();
  } }, h('option', { value: '' }, 'All namespaces'), ctx.namespaces.map(n => h('option', { value: n, selected: n === ctx.namespace }, n)));
  select.value = ctx.namespace;
  const link = (href, text) => h('a', { href }, text);
  replace(nav,
    h('ul', {}, h('li', {}, link('#/vms', 'Virtual machines')), h('li', {}, link('#/create', 'Create VM')),
      h('li', {}, link('#/inventory', 'Inventory')), h('li', {}, link('#/events', 'Events'))),
    h('label', { for: 'namespace' }, 'Namespace '), select,
    h('span', { class: 'muted' }, ctx.admin ? ' administrator' : ''),
    h('button', { type: 'button', onclick: () => { session.token = ''; signIn(); } }, 'Sign out'));
}

function route() {
  stop();
  replace(alerts);
  const [, view = 'vms', ...rest] = location.hash.replace(/^#/, '').split('/').map(decodeURIComponent);
  for (const a of nav.querySelectorAll('a')) {
    if (a.getAttribute('href') === `#/${view}`) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  const views = {
    vms: () => vmList(main, ctx),
    vm: () => vmPage(main, ctx, rest[0], rest[1]),
    create: () => createPage(main, ctx),
    inventory: () => inventoryPage(main, ctx, rest[0]),
    events: () => feedPage(main, ctx),
  };
  const render = views[view] || (() => { replace(main, errorBox(new Error(`no page ${location.hash}`))); return () => {}; });
  stop = render() || (() => {});
  const heading = main.querySelector('h1');
  if (heading) { heading.tabIndex = -1; heading.focus({ preventScroll: true }); }
}

window.addEventListener('hashchange', () => session.token && route());

if (session.token) start().catch(e => signIn(e.message)); else signIn();
