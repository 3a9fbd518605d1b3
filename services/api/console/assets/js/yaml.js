// YAML for people: toYAML writes JSON values as block YAML (the server reads YAML bodies,
// so the console never needs a full parser), lineOfField finds where a field path of a
// 422 sits in edited text, and parseYAML reads the simple block YAML of a kubeconfig.

const reserved = /^(true|false|yes|no|on|off|null|y|n|~|[-+]?(\.inf|\.nan)|[-+]?[0-9][0-9_.:eExXoObB+-]*)$/i;
const plain = /^[A-Za-z0-9_/.][A-Za-z0-9_ ./@()=+-]*$/;

function scalar(v) {
  if (v === null || v === undefined) return 'null';
  if (typeof v !== 'string') return String(v);
  if (v !== '' && plain.test(v) && !reserved.test(v) && !v.endsWith(' ')) return v;
  return JSON.stringify(v); // JSON strings are YAML double-quoted scalars
}

function isFull(v) {
  return v !== null && typeof v === 'object' && Object.keys(v).length > 0;
}

function inline(v) {
  if (Array.isArray(v)) return '[]';
  if (v !== null && typeof v === 'object') return '{}';
  return scalar(v);
}

function block(v, pad) {
  const out = [];
  if (Array.isArray(v)) {
    for (const item of v) {
      if (isFull(item)) {
        const sub = block(item, pad + '  ');
        sub[0] = pad + '- ' + sub[0].slice(pad.length + 2);
        out.push(...sub);
      } else out.push(`${pad}- ${inline(item)}`);
    }
    return out;
  }
  for (const [k, val] of Object.entries(v)) {
    if (isFull(val)) out.push(`${pad}${scalar(k)}:`, ...block(val, pad + '  '));
    else out.push(`${pad}${scalar(k)}: ${inline(val)}`);
  }
  return out;
}

// toYAML writes a JSON value as block YAML.
export function toYAML(v) {
  return isFull(v) ? block(v, '').join('\n') + '\n' : inline(v) + '\n';
}

// A line as the scanners see it: indentation, whether it starts a sequence item, the
// column of its key and the key itself.
function scan(line) {
  const m = /^( *)((?:- +)?)(.*)$/.exec(line);
  const rest = m[3];
  if (rest === '' || rest.startsWith('#') || rest === '---') return null;
  const k = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s"'#:-][^:#]*?|-[^\s:#][^:#]*?)\s*:(?:\s+(.*))?$/.exec(rest);
  return {
    indent: m[1].length, item: m[2] !== '', keyAt: m[1].length + m[2].length,
    key: k ? unquote(k[1]) : null, value: k ? (k[2] ?? '') : rest,
  };
}

function unquote(s) {
  if (s.startsWith('"')) return JSON.parse(s);
  if (s.startsWith("'")) return s.slice(1, -1).replaceAll("''", "'");
  return s;
}

// fieldSegments splits a Kubernetes field path: spec.volumes[0].name,
// metadata.annotations[example.com/x].
function fieldSegments(path) {
  const segs = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[([^\]]*)\]/g)) {
    if (m[1] !== undefined) segs.push({ key: m[1] });
    else if (/^\d+$/.test(m[2])) segs.push({ index: Number(m[2]) });
    else segs.push({ key: m[2] });
  }
  return segs;
}

// lineOfField returns the 0-based line of text where path is written, or of its nearest
// written parent; -1 when not even the first segment is there.
export function lineOfField(text, path) {
  const lines = text.split('\n').map(scan);
  let from = 0, to = lines.length, found = -1;
  const first = (a, b) => { for (let i = a; i < b; i++) if (lines[i]) return lines[i]; return null; };
  for (const seg of fieldSegments(path)) {
    const head = first(from, to);
    if (!head) break;
    let at = -1;
    if (seg.key !== undefined) {
      const level = head.keyAt;
      for (let i = from; i < to; i++) {
        const l = lines[i];
        if (!l) continue;
        if (l.keyAt < level) break;
        if (l.keyAt === level && l.key === seg.key) { at = i; break; }
      }
      if (at < 0) break;
      let end = at + 1;
      for (; end < to; end++) {
        const l = lines[end];
        if (l && (l.item ? l.indent < level : l.keyAt <= level)) break;
      }
      found = at; from = at + 1; to = end;
    } else {
      const items = [];
      const itemIndent = head.indent;
      for (let i = from; i < to; i++) if (lines[i] && lines[i].item && lines[i].indent === itemIndent) items.push(i);
      if (seg.index >= items.length) break;
      at = items[seg.index];
      found = at; from = at; to = items[seg.index + 1] ?? to;
      lines[at] = { ...lines[at], item: false, indent: lines[at].keyAt }; // its key is the item's first field
    }
  }
  return found;
}

// parseYAML reads block YAML of mappings, sequences and single-line scalars (what a
// kubeconfig holds); JSON is YAML too and is read as such.
export function parseYAML(text) {
  try { return JSON.parse(text); } catch { /* block YAML */ }
  const lines = [];
  for (const raw of text.split(/\r?\n/)) {
    const l = scan(raw);
    if (l) lines.push(l);
  }
  let i = 0;
  const value = (s) => {
    s = s.replace(/\s+#.*$/, '').trim();
    if (s.startsWith('"') || s.startsWith("'")) return unquote(s);
    if (s.startsWith('[') || s.startsWith('{')) {
      try { return JSON.parse(s); } catch { return s === '[]' ? [] : s === '{}' ? {} : s; }
    }
    if (s === '' || s === '~' || s === 'null') return null;
    if (s === 'true' || s === 'false') return s === 'true';
    if (/^-?\d+(\.\d+)?$/.test(s)) return Number(s);
    return s;
  };
  const node = (indent) => {
    const l = lines[i];
    if (!l || l.indent < indent) return null;
    return l.item ? seq(l.indent) : map(l.keyAt);
  };
  const child = (ownAt) => {
    const n = lines[i];
    return n && (n.keyAt > ownAt || (n.item && n.indent >= ownAt)) ? node(n.indent) : null;
  };
  function seq(indent) {
    const out = [];
    while (i < lines.length && lines[i].item && lines[i].indent === indent) {
      const l = lines[i];
      if (l.key !== null) { lines[i] = { ...l, item: false, indent: l.keyAt }; out.push(map(l.keyAt)); continue; }
      i++;
      out.push(l.value.trim() === '' ? child(indent) : value(l.value));
    }
    return out;
  }
  function map(at) {
    const out = {};
    while (i < lines.length && !lines[i].item && lines[i].keyAt === at && lines[i].key !== null) {
      const l = lines[i++];
      out[l.key] = l.value.trim() === '' ? child(at) : value(l.value);
    }
    return out;
  }
  if (!lines.length) return null;
  return node(0);
}
