/**
 * Canonical JSON: object keys sorted recursively (by UTF-16 code units, stable across locales), no
 * whitespace, arrays in order, undefined members dropped. The same value gives the same text on
 * every machine and in every Node version, so digests of it (execution keys, plan digests) are
 * stable. It recurses once per level and refuses data nested deeper than MAX_DOCUMENT_DEPTH
 * (./nesting.ts) with an error naming the limit.
 */
import { MAX_DOCUMENT_DEPTH, nestedTooDeep } from './nesting';

export function canonicalJson(value: unknown): string {
  const out = encode(value, '', 0);
  if (out === undefined) throw new TypeError('canonicalJson: the value itself is undefined');
  return out;
}

/** Returns undefined for a value JSON omits (undefined), so that object members can drop it. */
function encode(value: unknown, pointer: string, depth: number): string | undefined {
  if (value === undefined) return undefined;
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      // As JSON.stringify: NaN and the infinities have no JSON form.
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'object':
      break;
    default:
      throw new TypeError(`canonicalJson: a ${typeof value} at '${pointer}' has no JSON form`);
  }
  if (depth + 1 > MAX_DOCUMENT_DEPTH) throw nestedTooDeep('canonicalJson');
  if (Array.isArray(value)) {
    const items = value.map((item: unknown, i) => encode(item, `${pointer}/${i}`, depth + 1) ?? 'null');
    return `[${items.join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  const members: string[] = [];
  // Default sort compares UTF-16 code units: stable across locales, unlike localeCompare.
  for (const key of Object.keys(record).sort()) {
    const encoded = encode(record[key], `${pointer}/${key}`, depth + 1);
    if (encoded !== undefined) members.push(`${JSON.stringify(key)}:${encoded}`);
  }
  return `{${members.join(',')}}`;
}
