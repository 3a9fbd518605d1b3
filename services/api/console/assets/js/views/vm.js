// One VM: what it is and does, live from a watch of it; its Events; its YAML to edit; the
// actions; the pending checks that hold it.
import { h, replace, errorBox, dl, table, age } from '../dom.js';
import { call, listWatch, path, tableAccept } from '../api.js';
import { eventsTimeline } from './events.js';
import { yamlEditor } from './editor.js';

const checkPrefixes = { 'poweron.check.vmoperator.vmware.com/': 'Power-on check', 'delete.check.vmoperator.vmware.com/': 'Delete check' };

export function vmPage(main, ctx, ns, name) {
  const title = h('h1', {}, name);
  const badge = h('span', { class: 'status', id: 'vm-status' });
  const actionResult = h('div', { 'aria-live': 'polite', id: 'action-result' });
  const watchState = h('div', { 'aria-live': 'polite' });
  const sections = {
    checks: h('div'), summary: h('div'), conditions: h('div', { id: 'conditions' }), volumes: h('div'),
    network: h('div'), crypto: h('div'),
  };
  const eventsBox = h('div', { id: 'events' });
  const editorBox = h('div');
  let stopEvents = () => {};
  let eventsOf = ''; // the uid whose events show
  let editor = null;

  const section = (id, heading, body) => h('section', { 'aria-labelledby': `h-${id}` }, h('h2', { id: `h-${id}` }, heading), body);
  replace(main,
    h('p', {}, h('a', { href: '#/vms' }, '← Virtual machines')),
    h('div', { class: 'titlebar' }, title, badge, h('span', { class: 'muted' }, ` namespace ${ns}`)),
    h('div', { class: 'toolbar', role: 'group', 'aria-label': 'Actions' },
      actionButton('Start', () => call('PUT', `${path('virtualmachines', ns, name)}/start`)),
      actionButton('Stop', () => call('PUT', `${path('virtualmachines', ns, name)}/stop`)),
      actionButton('Restart', () => call('PUT', `${path('virtualmachines', ns, name)}/restart`)),
      actionButton('Suspend', () => call('PATCH', path('virtualmachines', ns, name),
        { type: 'application/merge-patch+json', body: { spec: { powerState: 'Suspended' } } })),
      deleteButton()),
    actionResult, watchState,
    sections.checks,
    h('div', { class: 'columns' },
      section('summary', 'Summary', sections.summary),
      section('crypto', 'Encryption', sections.crypto)),
    section('conditions', 'Conditions', sections.conditions),
    section('volumes', 'Volumes', sections.volumes),
    section('network', 'Network', sections.network),
    section('events', 'Events', eventsBox),
    section('yaml', 'YAML', editorBox));

  function actionButton(label, run) {
    return h('button', { type: 'button', dataset: { action: label.toLowerCase() }, onclick: async (e) => {
      const b = e.currentTarget;
      b.disabled = true;
      try {
        await run();
        replace(actionResult, h('p', { class: 'ok' }, `${label}: accepted.`));
      } catch (err) {
        replace(actionResult, errorBox(err, label));
      } finally { b.disabled = false; }
    } }, label);
  }

  // Delete asks once more in the page (no browser dialog), so the keyboard path is the same.
  function deleteButton() {
    const box = h('span');
    const ask = h('button', { type: 'button', class: 'danger', dataset: { action: 'delete' }, onclick: () => {
      replace(box, h('span', {}, `Delete ${name}? `),
        actionButton('Confirm delete', () => call('DELETE', path('virtualmachines', ns, name))),
        h('button', { type: 'button', onclick: () => { replace(box, ask); ask.focus(); } }, 'Cancel'));
      box.querySelector('button').focus();
    } }, 'Delete');
    return replace(box, ask);
  }

  function render(row) {
    const vm = row.object;
    const s = vm.status || {}, spec = vm.spec || {};
    const status = row.cells[row.names.indexOf('Status')];
    badge.textContent = status;
    badge.className = `status status-${status}`;
    renderChecks(vm);
    replace(sections.summary, dl([
      ['Status', status],
      ['Power state', `${s.powerState || '—'} (desired ${spec.powerState || '—'})`],
      ['Class', spec.className],
      ['Image', spec.image ? `${spec.image.kind || ''} ${spec.image.name}` : spec.imageName],
      ['Storage class', spec.storageClass],
      ['Zone', s.zone],
      ['Host', s.nodeName],
      ['Guest', spec.guestID],
      ['Created', vm.metadata.creationTimestamp ? `${vm.metadata.creationTimestamp} (${age(vm.metadata.creationTimestamp)} ago)` : ''],
      ['Deleting since', vm.metadata.deletionTimestamp],
      ['Labels', labelList(vm.metadata.labels)],
      ['UID', vm.metadata.uid],
      ['Instance UUID', s.instanceUUID],
      ['Hardware version', s.hardwareVersion],
    ]));
    replace(sections.conditions, table(['Type', 'Status', 'Reason', 'Message', 'Since'],
      (s.conditions || []).map(c => [c.type, h('span', { class: `cond-${c.status}` }, c.status), c.reason, c.message,
        h('time', { dateTime: c.lastTransitionTime, title: c.lastTransitionTime }, age(c.lastTransitionTime))]), 'No conditions reported yet.'));
    const observed = new Map((s.volumes || []).map(v => [v.name, v]));
    const volumeNames = [...new Set([...(spec.volumes || []).map(v => v.name), ...observed.keys()])];
    replace(sections.volumes, table(['Name', 'Source', 'Type', 'Attached', 'Disk UUID', 'Used / limit', 'Error'],
      volumeNames.map(n => {
        const want = (spec.volumes || []).find(v => v.name === n);
        const got = observed.get(n) || {};
        const src = want?.persistentVolumeClaim ? `claim ${want.persistentVolumeClaim.claimName}` : want ? Object.keys(want).filter(k => k !== 'name').join(', ') : got.type === 'Classic' ? 'the image' : '(not in spec)';
        return [n, src, got.type, got.attached === undefined ? '' : String(got.attached), got.diskUUID, [got.used, got.limit].filter(Boolean).join(' / '), got.error];
      }), 'No volumes.'));
    const net = s.network || {};
    replace(sections.network,
      h('h3', {}, 'Intended'),
      spec.network?.disabled ? h('p', {}, 'Networking is disabled.') : null,
      table(['Interface', 'Network', 'Addresses', 'Gateways', 'DHCP', 'Nameservers'],
        (net.config?.interfaces || []).map(i => {
          const asked = (spec.network?.interfaces || []).find(x => x.name === i.name);
          return [i.name, asked?.network?.name || '(namespace default)', (i.ip?.addresses || []).join(', '),
            [i.ip?.gateway4, i.ip?.gateway6].filter(Boolean).join(', '), i.ip?.dhcp ? JSON.stringify(i.ip.dhcp) : '',
            (i.dns?.nameservers || []).join(', ')];
        }), spec.network?.interfaces?.length ? 'Not worked out yet.' : 'No interface asked for (the namespace default applies).'),
      h('h3', {}, 'Observed (reported by the guest)'),
      dl([['Primary IPv4', net.primaryIP4], ['Primary IPv6', net.primaryIP6], ['Host name', net.hostName]]),
      table(['Interface', 'MAC', 'Addresses'], (net.interfaces || []).map(i => [i.name, i.ip?.macAddr,
        (i.ip?.addresses || []).map(a => `${a.address}${a.origin ? ` (${a.origin})` : ''}`).join(', ')]),
        'The guest reports no interface.'));
    replace(sections.crypto, dl([
      ['Encryption class', spec.crypto?.encryptionClassName],
      ['Default key provider', spec.crypto?.useDefaultKeyProvider === undefined ? '' : String(spec.crypto.useDefaultKeyProvider)],
      ['Encrypted', (s.crypto?.encrypted || []).join(', ') || 'no'],
      ['Key provider', s.crypto?.providerID],
      ['Key ID', s.crypto?.keyID],
      ['vTPM', s.crypto?.hasVTPM ? 'yes' : ''],
    ]));
    if (!editor) editor = yamlEditor(editorBox, { ns, name, object: vm });
    else editor.update(vm);
    if (vm.metadata.uid && eventsOf !== vm.metadata.uid) { // a VM of this name made anew has other events
      stopEvents();
      eventsOf = vm.metadata.uid;
      stopEvents = eventsTimeline(eventsBox, ns, { 'involvedObject.uid': eventsOf });
    }
  }

  // renderChecks shows the annotations that hold the VM; an administrator may remove one.
  function renderChecks(obj) {
    const checks = Object.entries(obj.metadata.annotations || {}).flatMap(([k, v]) => {
      const p = Object.keys(checkPrefixes).find(x => k.startsWith(x));
      return p ? [{ key: k, what: checkPrefixes[p], component: k.slice(p.length), value: v }] : [];
    });
    const result = h('div', { 'aria-live': 'polite' });
    replace(sections.checks, checks.length ? h('section', { class: 'checks', 'aria-labelledby': 'h-checks' },
      h('h2', { id: 'h-checks' }, 'Pending checks'),
      table(['Check', 'Component', 'Reason', ''], checks.map(c => [c.what, c.component, c.value,
        ctx.admin ? h('button', { type: 'button', onclick: async () => {
          try {
            await call('PATCH', path('virtualmachines', ns, name), { type: 'application/merge-patch+json', body: { metadata: { annotations: { [c.key]: null } } } });
            replace(result, h('p', { class: 'ok' }, `Removed ${c.key}.`));
          } catch (err) { replace(result, errorBox(err, `Remove ${c.key}`)); }
        } }, 'Remove') : h('span', { class: 'muted' }, 'an administrator removes it')])),
      result) : null);
  }

  const stopVM = listWatch(path('virtualmachines', ns), {
    accept: tableAccept, query: { includeObject: 'Object', fieldSelector: `metadata.name=${name}` },
    onList: (tbl) => {
      if (tbl.rows?.length) render(rowOf(tbl, 0));
      else replace(watchState, errorBox({ status: 404, reason: 'NotFound', message: `virtualmachines "${name}" not found in namespace ${ns}` }));
    },
    onEvent: (ev) => {
      if (ev.type === 'DELETED') {
        replace(watchState, h('p', { class: 'ok', role: 'status' }, `${name} is deleted.`));
        badge.textContent = 'Deleted';
        return;
      }
      replace(watchState);
      render(rowOf(ev.object, 0));
    },
    onState: (phase, err) => replace(watchState, err ? errorBox(err, phase === 'stopped' ? 'Watch stopped' : 'Watch interrupted, retrying') : null),
  });
  return () => { stopVM(); stopEvents(); };
}

function rowOf(tbl, i) {
  const row = tbl.rows[i];
  return { object: row.object, cells: row.cells, names: tbl.columnDefinitions.map(c => c.name) };
}

function labelList(labels) {
  const entries = Object.entries(labels || {});
  return entries.length ? h('ul', { class: 'labels' }, entries.map(([k, v]) => h('li', {}, h('code', {}, `${k}=${v}`)))) : '';
}
