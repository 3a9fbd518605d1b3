// The YAML editor of a VM: the object without what only the server writes, saved with PUT
// as YAML (the server parses it); a 422 marks each cause's field where it is written.
import { h, replace, errorBox } from '../dom.js';
import { call, path } from '../api.js';
import { toYAML, lineOfField } from '../yaml.js';

const serverMeta = ['uid', 'creationTimestamp', 'generation', 'managedFields', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink'];

function editable(obj) {
  const { status: _status, ...rest } = obj;
  const metadata = { ...rest.metadata };
  for (const k of serverMeta) delete metadata[k];
  return { ...rest, metadata };
}

export function yamlEditor(box, { ns, name, object }) {
  let current = object;
  let shown = toYAML(editable(object));
  const text = h('textarea', { id: 'yaml', spellcheck: false, rows: 24, 'aria-label': `YAML of ${name}`, 'aria-describedby': 'yaml-errors',
    oninput: () => { drawGutter([]); note(); }, onscroll: () => { gutter.scrollTop = text.scrollTop; } });
  const gutter = h('pre', { class: 'gutter', 'aria-hidden': 'true' });
  const errors = h('div', { id: 'yaml-errors', 'aria-live': 'polite' });
  const stale = h('p', { class: 'notice', hidden: true }, `${name} changed on the server since you began editing. `,
    h('button', { type: 'button', onclick: () => load(current) }, 'Load the newest'));
  text.value = shown;

  function dirty() { return text.value !== shown; }
  function note() { stale.hidden = !dirty() || toYAML(editable(current)) === shown; }
  function load(obj) {
    shown = toYAML(editable(obj));
    text.value = shown;
    replace(errors);
    drawGutter([]);
    note();
  }

  // drawGutter numbers the lines and marks those with an error.
  function drawGutter(marks) {
    const bad = new Map(marks.map(m => [m.line, m]));
    const n = text.value.split('\n').length;
    replace(gutter, Array.from({ length: n }, (_, i) => h('span', { class: bad.has(i) ? 'bad' : '', title: bad.get(i)?.message || '' }, `${bad.has(i) ? '▶' : ''}${i + 1}\n`)));
    gutter.scrollTop = text.scrollTop;
  }

  // reveal scrolls the text so that line shows, a few lines from the top.
  function reveal(line) {
    const height = text.scrollHeight / Math.max(1, text.value.split('\n').length);
    text.scrollTop = Math.max(0, (line - 3) * height);
    gutter.scrollTop = text.scrollTop;
  }

  function jump(line) {
    const lines = text.value.split('\n');
    const start = lines.slice(0, line).reduce((a, l) => a + l.length + 1, 0);
    text.focus();
    text.setSelectionRange(start, start + (lines[line] || '').length);
  }

  async function save(dryRun) {
    replace(errors, h('p', { class: 'muted' }, dryRun ? 'Checking…' : 'Saving…'));
    try {
      const saved = await call('PUT', path('virtualmachines', ns, name), { body: text.value, type: 'application/yaml', query: { dryRun: dryRun ? 'All' : '' } });
      if (dryRun) replace(errors, h('p', { class: 'ok' }, 'The server accepts it (dry run: nothing saved).'));
      else { load(saved); replace(errors, h('p', { class: 'ok' }, 'Saved.')); }
      drawGutter([]);
    } catch (err) {
      const marks = (err.causes || []).map(c => ({ ...c, line: c.field ? lineOfField(text.value, c.field) : -1 }));
      replace(errors, h('div', { class: 'error', role: 'alert' },
        h('strong', {}, `${err.status || ''} ${err.reason || ''}: `), err.message,
        marks.length ? h('ul', { class: 'field-errors' }, marks.map(m => h('li', {},
          m.line >= 0 ? h('button', { type: 'button', class: 'link', onclick: () => jump(m.line) }, `line ${m.line + 1}`) : null,
          ' ', h('code', { class: 'path' }, m.field || '(object)'), ' ', m.message))) : null));
      const placed = marks.filter(m => m.line >= 0);
      drawGutter(placed);
      if (placed.length) reveal(placed[0].line);
    }
  }

  replace(box,
    stale,
    h('div', { class: 'editor' }, gutter, text),
    h('div', { class: 'toolbar' },
      h('button', { type: 'button', id: 'yaml-save', onclick: () => save(false) }, 'Save'),
      h('button', { type: 'button', id: 'yaml-dryrun', onclick: () => save(true) }, 'Check (dry run)'),
      h('button', { type: 'button', onclick: () => load(current) }, 'Discard changes')),
    errors);
  drawGutter([]);

  return {
    // update follows the server: the text too while the user has not changed it.
    update(obj) {
      current = obj;
      const next = toYAML(editable(obj));
      if (dirty() || next === shown) { note(); return; }
      shown = next;
      text.value = next;
      drawGutter([]);
    },
  };
}
