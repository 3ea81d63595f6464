/**
 * `${{ ... }}` references in unit specs: parsing, finding and substituting them.
 *
 * Allowed expressions (whitespace inside the braces optional): `env.name`, `env.values.KEY`,
 * `env.labels.KEY` and `units.NAME.outputs.KEY`. References may appear in any string value of a
 * unit spec except the fields its kind declares shell text (a Command's `script` fields: splicing
 * values into shell text is an injection; the driver registry knows them) and `dependsOn` (names,
 * not templates); never in mapping keys.
 *
 * An EnvironmentTemplate's environment spec has a grammar of its own (INSTANCE_GRAMMAR):
 * `instance.name` and `instance.suffix` only, resolved when `-e NAME` names an instance
 * (src/project/instances.ts); the unit grammar does not know them.
 */
import { isShellTextField } from '../drivers/kinds';
import { childPointer } from '../util/schema';
import { canonicalJson } from './execution-key';
import type { UnitReference } from './types';

export type Reference =
  | { kind: 'env.name' }
  | { kind: 'env.values'; key: string }
  | { kind: 'env.labels'; key: string }
  | { kind: 'units.outputs'; unit: string; output: string };

/** A reference of an EnvironmentTemplate's environment spec. */
export type InstanceReference = { kind: 'instance.name' } | { kind: 'instance.suffix' };

export type TemplatePart<R = Reference> = { text: string } | { reference: R; expression: string };

/** The expressions a kind of template accepts, and the fix naming them. */
interface Grammar<R> {
  expressions: readonly [RegExp, (m: RegExpExecArray) => R][];
  fix: string;
}

interface ReferenceProblem {
  /** JSON pointer inside the spec. */
  pointer: string;
  message: string;
  fix: string;
}

interface FoundReference {
  pointer: string;
  reference: Reference;
  expression: string;
}

export interface ReferenceScan {
  references: FoundReference[];
  /** The `units.*` references, in order of appearance. */
  unitReferences: UnitReference[];
  /** Pointers of every string value holding at least one reference, in order. */
  pointers: string[];
  problems: ReferenceProblem[];
}

const OPEN = '${{';
const CLOSE = '}}';
const KEY = '[A-Za-z0-9_.-]+';
const UNIT = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const UNIT_GRAMMAR: Grammar<Reference> = {
  expressions: [
    [/^env\.name$/, () => ({ kind: 'env.name' })],
    [new RegExp(`^env\\.values\\.(${KEY})$`), (m) => ({ kind: 'env.values', key: m[1]! })],
    [new RegExp(`^env\\.labels\\.(${KEY})$`), (m) => ({ kind: 'env.labels', key: m[1]! })],
    [new RegExp(`^units\\.(${UNIT})\\.outputs\\.(${KEY})$`), (m) => ({ kind: 'units.outputs', unit: m[1]!, output: m[2]! })],
  ],
  fix: 'use one of ${{ env.name }}, ${{ env.values.KEY }}, ${{ env.labels.KEY }} or ${{ units.NAME.outputs.KEY }}',
};

export const INSTANCE_GRAMMAR: Grammar<InstanceReference> = {
  expressions: [
    [/^instance\.name$/, () => ({ kind: 'instance.name' })],
    [/^instance\.suffix$/, () => ({ kind: 'instance.suffix' })],
  ],
  fix:
    "an EnvironmentTemplate's environment spec takes ${{ instance.name }} or ${{ instance.suffix }} only; " +
    'units read the environment through ${{ env.name }}, ${{ env.values.KEY }} and ${{ env.labels.KEY }}',
};

const SCRIPT_FIX =
  'pass the value through env: (e.g. env: {DB_URL: \'${{ units.db.outputs.url }}\'}) and use "$DB_URL" in the script; ' +
  'splicing values into shell text is an injection';

export function hasReference(text: string): boolean {
  return text.includes(OPEN);
}

export function parseExpression(expression: string): Reference | undefined;
export function parseExpression<R>(expression: string, grammar: Grammar<R>): R | undefined;
export function parseExpression(expression: string, grammar: Grammar<unknown> = UNIT_GRAMMAR): unknown {
  for (const [re, build] of grammar.expressions) {
    const m = re.exec(expression);
    if (m) return build(m);
  }
  return undefined;
}

/** Splits a string into literal text and references; problems describe malformed ones. */
export function parseTemplate(text: string): { parts: TemplatePart[]; problems: { message: string; fix: string }[] };
export function parseTemplate<R>(text: string, grammar: Grammar<R>): { parts: TemplatePart<R>[]; problems: { message: string; fix: string }[] };
export function parseTemplate(
  text: string,
  grammar: Grammar<unknown> = UNIT_GRAMMAR,
): { parts: TemplatePart<unknown>[]; problems: { message: string; fix: string }[] } {
  const parts: TemplatePart<unknown>[] = [];
  const problems: { message: string; fix: string }[] = [];
  let rest = 0;
  for (let open = text.indexOf(OPEN); open >= 0; open = text.indexOf(OPEN, rest)) {
    const close = text.indexOf(CLOSE, open + OPEN.length);
    if (close < 0) {
      problems.push({ message: `unterminated reference in "${text}"`, fix: 'close the reference with }}' });
      break;
    }
    if (open > rest) parts.push({ text: text.slice(rest, open) });
    const expression = text.slice(open + OPEN.length, close).trim();
    const reference = parseExpression(expression, grammar);
    if (reference) parts.push({ reference, expression });
    else problems.push({ message: `unknown reference \${{ ${expression} }}`, fix: grammar.fix });
    rest = close + CLOSE.length;
  }
  if (rest < text.length) parts.push({ text: text.slice(rest) });
  return { parts, problems };
}

/** Finds every reference of a unit spec, and every misplaced or malformed one. */
export function scanReferences(spec: Record<string, unknown>, kind: string): ReferenceScan {
  const scan: ReferenceScan = { references: [], unitReferences: [], pointers: [], problems: [] };
  const visit = (value: unknown, pointer: string): void => {
    if (typeof value === 'string') return scanString(value, pointer, kind, scan);
    if (Array.isArray(value)) return value.forEach((v: unknown, i) => visit(v, childPointer(pointer, i)));
    if (typeof value !== 'object' || value === null) return;
    for (const [key, v] of Object.entries(value)) {
      const p = childPointer(pointer, key);
      if (hasReference(key)) {
        scan.problems.push({ pointer: p, message: `a reference in the key "${key}"`, fix: 'references are allowed in values only, never in keys' });
      }
      visit(v, p);
    }
  };
  for (const [key, value] of Object.entries(spec)) {
    if (key !== 'dependsOn') visit(value, childPointer('', key));
  }
  return scan;
}

function scanString(value: string, pointer: string, kind: string, scan: ReferenceScan): void {
  if (!hasReference(value)) return;
  if (isShellTextField(kind, pointer)) {
    scan.problems.push({ pointer, message: `a reference in ${pointer.slice(1)} is refused`, fix: SCRIPT_FIX });
    return;
  }
  const { parts, problems } = parseTemplate(value);
  for (const p of problems) scan.problems.push({ pointer, ...p });
  let found = false;
  for (const part of parts) {
    if (!('reference' in part)) continue;
    found = true;
    scan.references.push({ pointer, reference: part.reference, expression: part.expression });
    if (part.reference.kind === 'units.outputs') {
      scan.unitReferences.push({ unit: part.reference.unit, output: part.reference.output, pointer });
    }
  }
  if (found) scan.pointers.push(pointer);
}

/** The `units.*` references of a spec, pointers relative to spec (e.g. `/env/DB_URL`). */
export function collectReferences(spec: Record<string, unknown>, kind = ''): UnitReference[] {
  return scanReferences(spec, kind).unitReferences;
}

/** Resolves one reference found at a pointer; the returned value replaces it. */
type Resolver<R = Reference> = (reference: R, pointer: string) => unknown;

/**
 * Substitutes references in every string of a value. A string that is exactly one reference
 * takes the referenced value with its JSON type; a reference inside longer text is stringified.
 */
export function renderValue<R = Reference>(
  value: unknown,
  resolve: Resolver<R>,
  pointer = '',
  grammar: Grammar<R> = UNIT_GRAMMAR as unknown as Grammar<R>,
): unknown {
  if (typeof value === 'string') return renderString(value, resolve, pointer, grammar);
  if (Array.isArray(value)) return value.map((v: unknown, i) => renderValue(v, resolve, childPointer(pointer, i), grammar));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = renderValue(v, resolve, childPointer(pointer, key), grammar);
  return out;
}

function renderString<R>(value: string, resolve: Resolver<R>, pointer: string, grammar: Grammar<R>): unknown {
  if (!hasReference(value)) return value;
  const { parts } = parseTemplate(value, grammar);
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only && 'reference' in only) return resolve(only.reference, pointer);
  return parts.map((p) => ('reference' in p ? stringifyValue(resolve(p.reference, pointer)) : p.text)).join('');
}

/** How a value reads inside text: strings as-is, everything else as canonical JSON. */
export function stringifyValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return canonicalJson(value);
}

/**
 * Looks a key up in an object: the key as written first, then, when it has dots, as a path
 * through nested objects (so `db.host` finds `{db: {host}}` unless a key "db.host" exists).
 */
export function lookupKey(source: Record<string, unknown>, key: string): { found: true; value: unknown } | { found: false } {
  if (Object.prototype.hasOwnProperty.call(source, key)) return { found: true, value: source[key] };
  if (!key.includes('.')) return { found: false };
  let current: unknown = source;
  for (const segment of key.split('.')) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return { found: false };
    if (!Object.prototype.hasOwnProperty.call(current, segment)) return { found: false };
    current = (current as Record<string, unknown>)[segment];
  }
  return { found: true, value: current };
}
