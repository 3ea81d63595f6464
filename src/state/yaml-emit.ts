/**
 * A small YAML emitter for state documents: JSON-shaped data (objects, arrays, strings, numbers,
 * booleans, null) as block YAML with sorted keys, so `git log -p` of a state branch reads as a
 * review. It is an order of magnitude faster than a general YAML library, which matters when a
 * run writes a document per unit. Strings are written plain only when YAML 1.2 reads them back
 * as the same string; a multi-line string (a script, a tool's output) as a literal block scalar
 * (`|`), one line per line, so that a change to one line of a script is a one-line diff; everything
 * else is JSON-quoted (JSON strings are valid YAML). It recurses once per level and refuses data
 * nested deeper than MAX_DOCUMENT_DEPTH (src/util/nesting.ts).
 */
import { MAX_DOCUMENT_DEPTH, nestedTooDeep } from '../util/nesting';

const RESERVED = /^(?:true|false|null|~|y|n|yes|no|on|off)$/i;
const NUMBERISH = /^[-+]?(?:\d[\d_]*|0o[0-7]+|0x[0-9a-f]+|(?:\.\d+|\d+(?:\.\d*)?)(?:e[-+]?\d+)?|\.inf|\.nan)$/i;
// ':' is plain-safe when it is not followed by a space and does not end the string.
const PLAIN = /^[A-Za-z0-9_][A-Za-z0-9_./+@:-]*$/;

function str(s: string): string {
  if (PLAIN.test(s) && !s.endsWith(':') && !RESERVED.test(s) && !NUMBERISH.test(s)) return s;
  return JSON.stringify(s);
}

/**
 * Characters a literal block may not carry as they are: control characters other than tab (a
 * carriage return would read as a line break), the byte order mark, and the Unicode line and
 * paragraph separators (readers disagree on them). A string with any of them is JSON-quoted.
 */
const NOT_IN_BLOCK = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\ufeff\u2028\u2029]/;

/**
 * The lines of `s` as a literal block scalar below a key or dash at `indent`, or undefined when
 * it stays a quoted scalar: one line only, a character above, or a first line that is empty or
 * starts with a space (where a reader would guess the block's indentation from it). The chomping
 * indicator keeps the trailing line breaks exactly: `|-` none, `|` one, `|+` more.
 */
function literalBlock(s: string, indent: number): { header: string; lines: string[] } | undefined {
  if (!s.includes('\n') || NOT_IN_BLOCK.test(s) || s.startsWith('\n') || s.startsWith(' ')) return undefined;
  const lines = s.split('\n');
  let header = '|-';
  if (s.endsWith('\n')) {
    lines.pop();
    header = s.endsWith('\n\n') ? '|+' : '|';
  }
  const pad = ' '.repeat(indent + 2);
  // An empty line is written empty: trailing spaces would only make noise in a diff.
  return { header, lines: lines.map((line) => (line === '' ? '' : `${pad}${line}`)) };
}

/** `prefix` followed by the string `v` as a literal block scalar, when it is one (see literalBlock). */
function pushBlockScalar(prefix: string, v: unknown, indent: number, out: string[]): boolean {
  if (typeof v !== 'string') return false;
  const literal = literalBlock(v, indent);
  if (!literal) return false;
  out.push(`${prefix} ${literal.header}`, ...literal.lines);
  return true;
}

function isCollection(v: unknown): v is Record<string, unknown> | unknown[] {
  return typeof v === 'object' && v !== null;
}

function isEmptyCollection(v: Record<string, unknown> | unknown[]): boolean {
  return Array.isArray(v) ? v.length === 0 : Object.keys(v).every((k) => v[k] === undefined);
}

function scalar(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return str(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return '.nan';
    if (!Number.isFinite(v)) return v > 0 ? '.inf' : '-.inf';
    return String(v);
  }
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return '[]';
  if (typeof v === 'object') return '{}';
  return JSON.stringify(String(v));
}

/** Writes a collection at `depth` (the document is 1) with its items below it. */
function block(v: Record<string, unknown> | unknown[], indent: number, depth: number, out: string[]): void {
  const pad = ' '.repeat(indent);
  if (Array.isArray(v)) {
    for (const item of v) {
      if (pushBlockScalar(`${pad}-`, item, indent, out)) continue;
      if (!isCollection(item) || isEmptyCollection(within(item, depth))) {
        out.push(`${pad}- ${scalar(item)}`);
      } else if (Array.isArray(item)) {
        out.push(`${pad}-`);
        block(item, indent + 2, depth + 1, out);
      } else {
        const start = out.length;
        block(item, indent + 2, depth + 1, out);
        out[start] = `${pad}- ${out[start]!.slice(indent + 2)}`;
      }
    }
    return;
  }
  for (const key of Object.keys(v).sort()) {
    const value = v[key];
    if (value === undefined) continue;
    if (pushBlockScalar(`${pad}${str(key)}:`, value, indent, out)) continue;
    if (!isCollection(value) || isEmptyCollection(within(value, depth))) {
      out.push(`${pad}${str(key)}: ${scalar(value)}`);
    } else {
      out.push(`${pad}${str(key)}:`);
      block(value, indent + 2, depth + 1, out);
    }
  }
}

/** A collection one level below `depth`, refused when that is deeper than a document may nest. */
function within<T>(child: T, depth: number): T {
  if (depth + 1 > MAX_DOCUMENT_DEPTH) throw nestedTooDeep('YAML');
  return child;
}

export function emitYaml(value: unknown): string {
  if (!isCollection(value) || isEmptyCollection(value)) return `${scalar(value)}\n`;
  const out: string[] = [];
  block(value, 0, 1, out);
  return `${out.join('\n')}\n`;
}
