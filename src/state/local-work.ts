/**
 * Judgements about what a --local run left in the local state repository, without I/O: the
 * diagnostic that names its refs, and what `nyl state reset --local` would discard.
 */
import { type Diagnostic, type Severity, diagnostic } from '../errors/diagnostic';
import type { ObservedUnitDoc } from './documents';
import type { StateLocation } from './location';

/**
 * NYL-STATE-LOCAL-WORK: a --local run's lease, run, signal or evidence refs are in the local state
 * repository. `left` says what to do first: break a lease, import run refs, or decide the
 * uncertain units whose checkpoints the evidence refs hold (then `unit`, `units`).
 */
export function localWorkDiagnostic(env: string, coordination: string, refs: Iterable<string>, severity: Severity): Diagnostic {
  const names = [...refs].sort();
  const evidence = [
    ...new Set(names.filter((r) => r.startsWith(`${coordination}evidence/`)).map((r) => r.slice(`${coordination}evidence/`.length).split('/')[0]!)),
  ];
  const left = names.includes(`${coordination}lease`)
    ? 'lease'
    : evidence.length > 0 && names.every((r) => r.startsWith(`${coordination}evidence/`))
      ? 'evidence'
      : 'runs';
  const shown = `${names.slice(0, 3).join(', ')}${names.length > 3 ? `, and ${names.length - 3} more` : ''}`;
  const what = severity === 'error' ? 'nothing was changed' : 'online writers refuse until they are recovered';
  return diagnostic(
    'NYL-STATE-LOCAL-WORK',
    severity,
    `the local state repository holds a --local run's records the state repository does not have (${shown}); ${what}`,
    {
      env,
      data: { refs: names },
      left,
      ...(left === 'evidence' ? { unit: evidence[0], units: evidence } : {}),
    },
  );
}

/**
 * NYL-STATE-DIVERGED for the own branches of a remote's cache repository, where a --local run on a
 * remote that is not the checkout's origin commits: an error for online writers, a warning in
 * `status`. Its fix (`cache`) inspects them there and names the publication and the discard.
 */
export function cacheDivergedDiagnostic(
  loc: Pick<StateLocation, 'environment' | 'url'>,
  work: { cache: string; refs: string[] },
  severity: Severity,
): Diagnostic {
  const [first] = work.refs;
  const what = severity === 'error' ? 'nothing was changed' : 'online writers refuse until it is published or discarded';
  return diagnostic(
    'NYL-STATE-DIVERGED',
    severity,
    `the cache repository ${work.cache}'s ${work.refs.join(' and ')} hold${work.refs.length === 1 ? 's' : ''} state of a --local run the repository ${loc.url} does not have; ${what}`,
    { env: loc.environment, ref: first, cache: work.cache },
  );
}

/**
 * The units whose local observed document has a receipt that the state repository's observed
 * document of the unit does not have (another run or execution key, or none): what a reset loses.
 */
export function receiptsAbsent(local: ReadonlyMap<string, ObservedUnitDoc>, remote: ReadonlyMap<string, ObservedUnitDoc>): string[] {
  const absent: string[] = [];
  for (const [unit, doc] of local) {
    const mine = doc.receipt;
    if (!mine) continue;
    const theirs = remote.get(unit)?.receipt;
    if (!theirs || theirs.run !== mine.run || theirs.executionKey !== mine.executionKey) absent.push(unit);
  }
  return absent.sort();
}

type DiscardVerdict =
  | { kind: 'ok' }
  /** Receipts that would be lost and were not named: --discard them, or --discard-all. */
  | { kind: 'unnamed'; units: string[] }
  /** --discard named units that lose nothing: a typo, or a stale list. */
  | { kind: 'not-absent'; units: string[] };

/** Whether the reset may discard `absent`, given --discard (units) or --discard-all. */
export function discardVerdict(absent: string[], named: string[], all: boolean): DiscardVerdict {
  const wrong = named.filter((u) => !absent.includes(u));
  if (wrong.length > 0) return { kind: 'not-absent', units: [...new Set(wrong)].sort() };
  if (all) return { kind: 'ok' };
  const unnamed = absent.filter((u) => !named.includes(u));
  return unnamed.length > 0 ? { kind: 'unnamed', units: unnamed } : { kind: 'ok' };
}
