/**
 * Damage: a document Nyl keeps in Git that it cannot read as what it wrote (invalid YAML, the
 * wrong shape, a ref that does not point at a commit, a missing file). Readers return damage as
 * data, named by ref, path and line or JSON pointer; commands that would decide on the document
 * refuse with NYL-STATE-CORRUPT, `status` reports it, and only an explicit repair (`nyl lease
 * break`, `nyl recover`) sets it aside. Nothing is ever repaired silently.
 */
import { diagnostic, type Diagnostic, NylError, type Severity } from '../errors/diagnostic';
import type { Flaw } from './parse';

/** Which document is damaged: it decides what the message calls it and which command repairs it. */
type DamagedDocument = 'state' | 'desired-unit' | 'observed-unit' | 'run' | 'run-unit' | 'signal' | 'lease' | 'evidence';

export interface Damage extends Flaw {
  document: DamagedDocument;
  /** The ref whose content is damaged. */
  ref: string;
  /** The object the ref pointed at when it was read. */
  object: string;
  /** The file of the commit, relative to the environment's directory; absent when the ref is not a commit. */
  path?: string;
  /** The unit the document is about, when known. */
  unit?: string;
}

const WHAT: Record<DamagedDocument, (d: Damage) => string> = {
  state: () => 'the state document',
  'desired-unit': (d) => `the desired document of ${d.unit}`,
  'observed-unit': (d) => `the observed document of ${d.unit}`,
  run: () => 'a run record',
  'run-unit': (d) => `a run's record of ${d.unit}`,
  signal: () => 'a signal',
  lease: () => 'the lease',
  evidence: (d) => `an evidence record of ${d.unit}`,
};

/** The repair the catalog's fix names for each document. */
const REPAIR: Record<DamagedDocument, string> = {
  state: 'state',
  'desired-unit': 'unit',
  'observed-unit': 'unit',
  run: 'run',
  'run-unit': 'run',
  signal: 'signal',
  lease: 'lease',
  evidence: 'evidence',
};

/** `ref:path`, or the ref alone when it is not a commit. */
export function whereOf(d: Damage): string {
  return d.path ? `${d.ref}:${d.path}` : d.ref;
}

export function damageDiagnostic(env: string, d: Damage, severity: Severity = 'error'): Diagnostic {
  const at = d.line !== undefined ? ` line ${d.line}` : d.pointer !== undefined ? ` ${d.pointer || '/'}` : '';
  const message = `${WHAT[d.document](d)} is damaged: ${whereOf(d)}${at}: ${d.problem}`;
  const location = { file: whereOf(d), ...(d.line !== undefined ? { line: d.line } : {}), ...(d.pointer !== undefined ? { pointer: d.pointer } : {}) };
  const data: Record<string, unknown> = { document: d.document, ref: d.ref, object: d.object, problem: d.problem };
  for (const key of ['path', 'line', 'pointer', 'unit'] as const) if (d[key] !== undefined) data[key] = d[key];
  return diagnostic('NYL-STATE-CORRUPT', severity, message, {
    env,
    repair: REPAIR[d.document],
    ref: d.ref,
    location,
    data,
    ...(d.unit ? { unit: d.unit, units: [d.unit] } : {}),
  });
}

/** The refusal of a command that would decide on damaged documents: one diagnostic each. */
export function corruptError(env: string, damage: readonly Damage[]): NylError {
  return new NylError(damage.map((d) => damageDiagnostic(env, d)));
}

/** Refuses when anything is damaged. */
export function requireUndamaged(env: string, damage: readonly Damage[]): void {
  if (damage.length > 0) throw corruptError(env, damage);
}

/** A flaw found in a document, as damage of that document. */
export function damageOf(document: DamagedDocument, at: { ref: string; object: string; path?: string; unit?: string }, flaw: Flaw): Damage {
  return { document, ...at, ...flaw };
}
