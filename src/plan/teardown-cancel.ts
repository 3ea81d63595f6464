/**
 * What `nyl teardown --cancel` may withdraw, as a pure function over the state documents and the
 * teardowns that runs not imported yet recorded as started.
 *
 * A teardown request (`teardownRequest` on a desired document, written by `nyl teardown`) stays
 * until its unit is torn down. Until the teardown starts, nothing happened to the unit's resources,
 * so withdrawing the request puts the unit back where it was: the request goes, and the unit keeps
 * its uid, receipt, condition and hold. Once it started, the driver may have removed part of what
 * the unit made: the request cannot be withdrawn, only paused (`nyl hold`) or finished. Started
 * means, by the planner's rules (./unit-view.ts): a desired document with a deletion (deleting, or
 * held while deleting), uncertain when its incarnation's condition is; or a teardown record (a
 * started marker) in a run ref nobody imported yet, live or dead, whose commit would say so.
 * It lives in plan/ (not state/) because it decides by a unit's lifecycle.
 */
import type { DesiredUnitDoc, ObservedUnitDoc } from '../state/documents';
import { incarnationCondition, isDeleting } from './unit-view';

/** Why a request cannot be withdrawn: its teardown started (in state, or in a run's record), or is uncertain. */
type StartedWhy = 'deleting' | 'uncertain' | 'in-run';

export interface StartedTeardown {
  unit: string;
  why: StartedWhy;
  /** in-run: the run whose record holds the started marker. */
  run?: string;
}

export interface CancelResult {
  /** The desired documents with the withdrawn requests gone (the same map when none is). */
  after: ReadonlyMap<string, DesiredUnitDoc>;
  /** Units whose request is withdrawn, sorted. */
  withdrawn: string[];
  /** Units whose teardown started: refused by name, left out by --all. */
  started: StartedTeardown[];
  /** Units named that the state holds no document of. */
  unknown: string[];
  /** Units named that have no request to withdraw. */
  notRequested: string[];
}

/** Why this unit's request cannot be withdrawn, if it cannot. `inRun`: the run whose record started its teardown. */
function startedWhy(desired: DesiredUnitDoc, observed: ObservedUnitDoc | undefined, inRun: string | undefined): Omit<StartedTeardown, 'unit'> | undefined {
  if (inRun !== undefined) return { why: 'in-run', run: inRun };
  if (!isDeleting(desired) && !desired.deletion) return undefined;
  return { why: incarnationCondition(observed, desired.uid)?.type === 'uncertain' ? 'uncertain' : 'deleting' };
}

/**
 * The withdrawal of the requests of `names`, or of every unit with one (`all`). `startedInRuns`:
 * unit -> the run whose record holds a started teardown marker of it.
 */
export function cancelTeardowns(
  desired: ReadonlyMap<string, DesiredUnitDoc>,
  observed: ReadonlyMap<string, ObservedUnitDoc>,
  names: string[] | 'all',
  startedInRuns: ReadonlyMap<string, string>,
): CancelResult {
  const all = names === 'all';
  const units = all ? [...desired].filter(([, d]) => d.teardownRequest).map(([n]) => n) : [...new Set(names)];
  const result: Omit<CancelResult, 'after'> = { withdrawn: [], started: [], unknown: [], notRequested: [] };
  const after = new Map(desired);
  for (const unit of units.sort()) {
    const doc = desired.get(unit);
    if (!doc) {
      (observed.has(unit) ? result.notRequested : result.unknown).push(unit);
      continue;
    }
    const started = startedWhy(doc, observed.get(unit), startedInRuns.get(unit));
    // A teardown that started from source (no request) cannot be withdrawn either: say so by name.
    if (started) result.started.push({ unit, ...started });
    else if (!doc.teardownRequest) result.notRequested.push(unit);
    else {
      const { teardownRequest: _withdrawn, ...rest } = doc;
      after.set(unit, rest);
      result.withdrawn.push(unit);
    }
  }
  return { after: result.withdrawn.length > 0 ? after : desired, ...result };
}
