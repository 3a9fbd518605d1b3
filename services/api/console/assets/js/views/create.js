// Create a VM from a form (pickers filled from what the namespace offers) or from pasted
// YAML; the server checks it with a dry run before it is saved.
import { h, replace, errorBox } from '../dom.js';
import { call, path } from '../api.js';
import { toYAML, parseYAML, lineOfField } from '../yaml.js';

export function createPage(main, ctx) {
  const initial = ctx.namespace || (ctx.namespaces.includes('default') ? 'default' : ctx.namespaces[0]);
  const ns = h('select', { id: 'c-namespace', onchange: () => fill() },
    ctx.namespaces.map(n => h('option', { value: n, selected: n === initial }, n)));
  const name = h('input', { id: 'c-name', required: true, autocomplete: 'off', pattern: '[a-z0-9]([-a-z0-9.]*[a-z0-9])?' });
  const cls = h('select', { id: 'c-class' });
  const image = h('select', { id: 'c-image' });
  const storage = h('select', { id: 'c-storage' });
  const power = h('select', { id: 'c-power' }, ['PoweredOn', 'PoweredOff', 'Suspended'].map(p => h('option', { value: p }, p)));
  const nic = h('input', { id: 'c-nic', placeholder: 'eth0', autocomplete: 'off' });
  const network = h('input', { id: 'c-network', list: 'c-networks', placeholder: 'the namespace default', autocomplete: 'off' });
  const networks = h('datalist', { id: 'c-networks' });
  const cloudInit = h('input', { id: 'c-cloudinit', type: 'checkbox', checked: true });
  const cloudConfig = h('textarea', { id: 'c-cloudconfig', rows: 6, spellcheck: false, placeholder: 'users:\n- name: me\n  ssh_authorized_keys: [ssh-ed25519 AAAA…]' });
  const pasted = h('textarea', { id: 'c-yaml', rows: 18, spellcheck: false, 'aria-label': 'VirtualMachine YAML' });
  const result = h('div', { id: 'create-result', 'aria-live': 'polite' });
  const pickState = h('div', { 'aria-live': 'polite' });
  const fieldsOf = { 'metadata.name': name, 'spec.className': cls, 'spec.imageName': image, 'spec.image': image, 'spec.storageClass': storage,
    'spec.powerState': power, 'spec.network': network, 'spec.bootstrap': cloudConfig };
  const hints = new Map();

  const field = (label, input, help) => {
    const hint = h('div', { class: 'field-error', id: `${input.id}-error`, 'aria-live': 'polite' });
    hints.set(input, hint);
    input.setAttribute('aria-describedby', hint.id);
    return h('div', { class: 'field' }, h('label', { for: input.id }, label), input, help ? h('small', { class: 'muted' }, help) : null, hint);
  };

  const formTab = h('form', { id: 'create-form', onsubmit: (e) => { e.preventDefault(); submit(formYAML(), false); } },
    h('div', { class: 'grid' },
      field('Namespace', ns), field('Name', name),
      field('Class', cls), field('Image', image, 'Images of the namespace and the cluster: OVF, ISO and VM'),
      field('Storage class', storage), field('Power state', power),
      field('Network interface', nic), field('Network', network, 'a vSphere network; empty: the namespace default'), networks),
    h('div', { class: 'field' }, h('label', {}, cloudInit, ' Bootstrap with cloud-init')),
    field('Cloud-config (YAML; empty is {})', cloudConfig),
    h('div', { class: 'toolbar' },
      h('button', { type: 'submit', id: 'create-submit' }, 'Create'),
      h('button', { type: 'button', onclick: () => submit(formYAML(), true) }, 'Check (dry run)'),
      h('button', { type: 'button', onclick: () => { pasted.value = formYAML(); show('yaml'); } }, 'Edit as YAML')));
  const yamlTab = h('form', { id: 'create-yaml', hidden: true, onsubmit: (e) => { e.preventDefault(); submit(pasted.value, false); } },
    h('p', { class: 'muted' }, 'Paste a VirtualMachine (v1alpha5, or v1alpha4 as in VM Operator\'s examples). Its namespace is the one above unless it names one.'),
    pasted,
    h('div', { class: 'toolbar' },
      h('button', { type: 'submit' }, 'Create'),
      h('button', { type: 'button', onclick: () => submit(pasted.value, true) }, 'Check (dry run)')));
  const tabs = { form: formTab, yaml: yamlTab };
  const tabButtons = Object.keys(tabs).map(k => h('button', { type: 'button', 'aria-pressed': String(k === 'form'), dataset: { tab: k }, onclick: () => show(k) },
    k === 'form' ? 'Form' : 'YAML'));
  function show(k) {
    for (const [n, t] of Object.entries(tabs)) t.hidden = n !== k;
    for (const b of tabButtons) b.setAttribute('aria-pressed', String(b.dataset.tab === k));
  }

  replace(main, h('h1', {}, 'Create a virtual machine'), h('div', { class: 'toolbar', role: 'group', 'aria-label': 'How' }, tabButtons),
    pickState, formTab, yamlTab, result);

  // fill loads the pickers from what the namespace offers.
  async function fill() {
    const n = ns.value;
    const options = (sel, items, label, value = (o) => o.metadata.name) => {
      const was = sel.value;
      replace(sel, h('option', { value: '' }, items.length ? '— choose —' : '— none offered —'),
        items.map(o => h('option', { value: value(o), selected: value(o) === was }, label(o))));
    };
    const [classes, images, cimages, scs, vms] = await Promise.allSettled([
      call('GET', path('virtualmachineclasses', n)), call('GET', path('virtualmachineimages', n)),
      call('GET', path('clustervirtualmachineimages')), call('GET', path('storageclasses')), call('GET', path('virtualmachines', n)),
    ]);
    const failed = [classes, images, cimages, scs, vms].filter(r => r.status === 'rejected');
    replace(pickState, failed.map(r => errorBox(r.reason, 'Loading the choices')));
    const items = (r) => r.status === 'fulfilled' ? r.value.items : [];
    options(cls, items(classes), (o) => `${o.metadata.name} (${o.spec?.hardware?.cpus ?? '?'} CPU, ${o.spec?.hardware?.memory ?? '?'})`);
    const imgLabel = (o) => `${o.status?.name || o.metadata.name} (${o.status?.type || '?'}${o.kind === 'ClusterVirtualMachineImage' ? ', cluster' : ''}) — ${o.metadata.name}`;
    const all = [...items(images).map(o => ({ ...o, kind: 'VirtualMachineImage' })), ...items(cimages).map(o => ({ ...o, kind: 'ClusterVirtualMachineImage' }))];
    options(image, all, imgLabel, (o) => `${o.kind}/${o.metadata.name}`);
    options(storage, items(scs), (o) => o.metadata.name);
    const seen = new Set(items(vms).flatMap(vm => (vm.spec?.network?.interfaces || []).map(i => i.network?.name).filter(Boolean)));
    replace(networks, [...seen].map(v => h('option', { value: v })));
  }

  function formYAML() {
    const spec = {};
    if (cls.value) spec.className = cls.value;
    if (image.value) {
      const [kind, imageName] = image.value.split('/');
      if (kind === 'VirtualMachineImage') spec.imageName = imageName; else spec.image = { kind, name: imageName };
    }
    if (storage.value) spec.storageClass = storage.value;
    spec.powerState = power.value;
    if (nic.value || network.value) spec.network = { interfaces: [{ name: nic.value || 'eth0', ...(network.value ? { network: { name: network.value } } : {}) }] };
    if (cloudInit.checked) spec.bootstrap = { cloudInit: { cloudConfig: {} } };
    const text = toYAML({ apiVersion: 'vmoperator.vmware.com/v1alpha5', kind: 'VirtualMachine', metadata: { name: name.value, namespace: ns.value }, spec });
    const cc = cloudConfig.value.replace(/\s+$/, '');
    if (!cloudInit.checked || !cc) return text;
    // The user's cloud-config goes in as written, indented under cloudConfig.
    return text.replace(/^( *)cloudConfig: \{\}$/m, (_, lead) => `${lead}cloudConfig:\n${cc.split('\n').map(l => ' '.repeat(lead.length + 2) + l).join('\n')}`);
  }

  async function submit(text, onlyCheck) {
    for (const hint of hints.values()) replace(hint);
    let doc = null;
    try { doc = parseYAML(text); } catch { /* the server says what is wrong */ }
    const [group, version] = (doc?.apiVersion || 'vmoperator.vmware.com/v1alpha5').split('/');
    const namespace = doc?.metadata?.namespace || ns.value;
    const url = `/apis/${group}/${version}/namespaces/${encodeURIComponent(namespace)}/virtualmachines`;
    replace(result, h('p', { class: 'muted' }, 'Checking with the server (dry run)…'));
    try {
      const checked = await call('POST', url, { body: text, type: 'application/yaml', query: { dryRun: 'All' } });
      if (onlyCheck) {
        replace(result, h('p', { class: 'ok' }, 'The server accepts it; nothing was saved. It would store:'), h('pre', { class: 'yaml' }, toYAML(checked)));
        return;
      }
      replace(result, h('p', { class: 'muted' }, 'Dry run passed; creating…'));
      const made = await call('POST', url, { body: text, type: 'application/yaml' });
      location.hash = `#/vm/${encodeURIComponent(made.metadata.namespace)}/${encodeURIComponent(made.metadata.name)}`;
    } catch (err) {
      // Each cause by its path; in the YAML also by its line.
      const inYAML = !yamlTab.hidden;
      const causes = (err.causes || []).map(c => {
        const line = inYAML && c.field ? lineOfField(text, c.field) : -1;
        return line >= 0 ? { ...c, field: `${c.field} (line ${line + 1})` } : c;
      });
      replace(result, errorBox({ status: err.status, reason: err.reason, message: err.message, causes }, 'The server refused it'));
      for (const c of err.causes || []) {
        const key = Object.keys(fieldsOf).find(k => (c.field || '').startsWith(k));
        if (key && !formTab.hidden) hints.get(fieldsOf[key])?.append(h('span', {}, `${c.field}: ${c.message}`));
      }
    }
  }

  fill().catch(e => replace(pickState, errorBox(e, 'Loading the choices')));
  name.focus();
  return () => {};
}
