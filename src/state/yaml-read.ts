/**
 * A strict reader for exactly the YAML that yaml-emit.ts writes (block collections, two-space
 * indent, plain or JSON-quoted scalars, literal block scalars `|`, `|-` and `|+`, `{}` and `[]`). State documents are read on every run,
 * often on a fresh CI runner with no parse cache, so reading them must be cheap. Anything outside
 * that subset (a hand edit, a comment, flow style) returns NOT_EMITTED and the caller falls back
 * to a full YAML parser.
 */

export const NOT_EMITTED: unique symbol = Symbol('not emitted by yaml-emit');

class Unsupported extends Error {}

const NUMBER = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?$/i;

function scalar(text: string): unknown {
  if (text.startsWith('"')) return JSON.parse(text);
  switch (text) {
    case 'null':
      return null;
    case 'true':
      return true;
    case 'false':
      return false;
    case '{}':
      return {};
    case '[]':
      return [];
    case '.inf':
      return Infinity;
    case '-.inf':
      return -Infinity;
    case '.nan':
      return NaN;
  }
  if (NUMBER.test(text)) return Number(text);
  if (!/^[A-Za-z0-9_][A-Za-z0-9_./+@:-]*$/.test(text) || text.endsWith(':')) throw new Unsupported();
  return text;
}

/** Splits `key: value` / `key:` into the key and the rest (undefined when a nested block follows). */
function splitKey(content: string): { key: string; rest: string | undefined } | undefined {
  if (content.startsWith('"')) {
    let i = 1;
    while (i < content.length && content[i] !== '"') i += content[i] === '\\' ? 2 : 1;
    const key = JSON.parse(content.slice(0, i + 1)) as string;
    const after = content.slice(i + 1);
    if (after === ':') return { key, rest: undefined };
    if (after.startsWith(': ')) return { key, rest: after.slice(2) };
    return undefined;
  }
  // Plain keys and plain values never contain ': ' or end with ':', so the first ': ' splits.
  const sep = content.indexOf(': ');
  if (sep > 0) return { key: content.slice(0, sep), rest: content.slice(sep + 2) };
  if (content.endsWith(':')) return { key: content.slice(0, -1), rest: undefined };
  return undefined;
}

export function readEmittedYaml(text: string): unknown {
  const lines = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
  try {
    if (lines.length === 1 && !splitKey(lines[0]!) && !lines[0]!.startsWith('- ')) return scalar(lines[0]!);
    const [value, next] = block(lines, 0, 0);
    if (next !== lines.length) throw new Unsupported();
    return value;
  } catch {
    return NOT_EMITTED;
  }
}

const BLOCK_HEADERS = new Set(['|', '|-', '|+']);

/**
 * The literal block scalar whose header ended line `start - 1`, its lines indented by `indent`:
 * the string and the line after it. Empty lines belong to the block (the emitter writes a
 * block's empty lines empty); the chomping indicator says how many line breaks end it.
 */
function literal(lines: string[], start: number, indent: number, header: string): [string, number] {
  const pad = ' '.repeat(indent);
  const content: string[] = [];
  let i = start;
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') content.push('');
    else if (line.startsWith(pad)) content.push(line.slice(indent));
    else break;
  }
  // Trailing empty lines are the block's only under |+; otherwise none were written.
  if (header !== '|+' && content[content.length - 1] === '') throw new Unsupported();
  if (content.length === 0 || content[0] === '' || content[0]!.startsWith(' ')) throw new Unsupported();
  const text = content.join('\n');
  return [header === '|-' ? text : `${text}\n`, i];
}

function indentOf(line: string): number {
  let i = 0;
  while (line.charCodeAt(i) === 32) i++;
  return i;
}

function block(lines: string[], start: number, indent: number): [unknown, number] {
  const first = lines[start];
  if (first === undefined || indentOf(first) !== indent) throw new Unsupported();
  const body = first.slice(indent);
  return body === '-' || body.startsWith('- ') ? sequence(lines, start, indent) : mapping(lines, start, indent);
}

function sequence(lines: string[], start: number, indent: number): [unknown[], number] {
  const out: unknown[] = [];
  let i = start;
  while (i < lines.length && indentOf(lines[i]!) === indent) {
    const body = lines[i]!.slice(indent);
    if (body === '-') {
      const [v, next] = block(lines, i + 1, indent + 2);
      out.push(v);
      i = next;
    } else if (body.startsWith('- ')) {
      const content = body.slice(2);
      if (content.startsWith('"') ? splitKey(content) !== undefined : content.includes(': ') || content.endsWith(':')) {
        // A mapping item: its first key shares the line with the dash.
        const [v, next] = mapping(lines, i, indent + 2, content);
        out.push(v);
        i = next;
      } else if (BLOCK_HEADERS.has(content)) {
        const [v, next] = literal(lines, i + 1, indent + 2, content);
        out.push(v);
        i = next;
      } else {
        out.push(scalar(content));
        i++;
      }
    } else break;
  }
  return [out, i];
}

function mapping(lines: string[], start: number, indent: number, firstBody?: string): [Record<string, unknown>, number] {
  const out: Record<string, unknown> = {};
  let i = start;
  while (i < lines.length && (i === start && firstBody !== undefined ? true : indentOf(lines[i]!) === indent)) {
    const body = i === start && firstBody !== undefined ? firstBody : lines[i]!.slice(indent);
    if (body.startsWith('-')) break;
    const kv = splitKey(body);
    // A duplicate key is never emitted: the full parser refuses it instead of keeping either value.
    if (!kv || kv.key === '__proto__' || Object.prototype.hasOwnProperty.call(out, kv.key)) throw new Unsupported();
    if (kv.rest === undefined) {
      const [v, next] = block(lines, i + 1, indent + 2);
      out[kv.key] = v;
      i = next;
    } else if (BLOCK_HEADERS.has(kv.rest)) {
      const [v, next] = literal(lines, i + 1, indent + 2, kv.rest);
      out[kv.key] = v;
      i = next;
    } else {
      out[kv.key] = scalar(kv.rest);
      i++;
    }
  }
  return [out, i];
}
