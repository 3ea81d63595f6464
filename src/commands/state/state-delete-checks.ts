/**
 * What keeps `nyl state delete` from deleting an environment's state: units that still
 * have an incarnation, a teardown in progress or a recorded teardown request, and run refs no run
 * has imported yet. Both refusals are NYL-STATE-DELETE-INCARNATIONS (exit 1); they change nothing.
 *
 * Which units block, by their desired document (docs/design.md, "state delete"):
 * - a teardown request, or lifecycle `deleting` or `pending-teardown`, whatever its generation;
 * - a retained tombstone: it keeps its uid and receipt because its resources still exist;
 * - a uid of the current generation (active, or held at a receipt): a live incarnation. A uid of
 *   an older generation was given up by `state init --fresh` and blocks nothing.
 * An observed record without a desired document blocks when it names a uid and was not released.
 * Held markers (no uid) and released records block nothing: the deletion removes them.
 */
import { diagnostic, type Diagnostic, NylError } from '../../errors/diagnostic';
import { type KindSet, removalUnclaimed } from '../../drivers/kinds';
import { isHeld, liveIncarnation } from '../../plan/unit-view';
import type { DesiredUnitDoc, ObservedUnitDoc } from '../../state/documents';
import type { EnvironmentStateView } from '../../state/read';
import { byCodeUnits } from '../../util/compare';

/** Why a unit blocks, as the refusal lists it: `cache (retained)`. */
type BlockReason = 'teardown requested' | 'deleting' | 'pending-teardown' | 'retained' | 'active' | 'held' | 'observed only';

interface UnitBlocker {
  unit: string;
  why: BlockReason;
}

/** Why a unit's desired document keeps the state from being deleted, if it does. */
function desiredBlock(d: DesiredUnitDoc, generation: number): BlockReason | undefined {
  if (d.teardownRequest) return 'teardown requested';
  return liveIncarnation(d, generation);
}

/** Why an observed record without a desired document blocks: an incarnation nothing released. */
function observedBlock(o: ObservedUnitDoc): BlockReason | undefined {
  return o.uid && !o.released ? 'observed only' : undefined;
}

/** The units that keep the state from being deleted, by name. */
export function unitBlockers(view: Pick<EnvironmentStateView, 'desiredUnits' | 'observedUnits'>, generation: number): UnitBlocker[] {
  const out: UnitBlocker[] = [];
  for (const [unit, d] of view.desiredUnits) {
    const why = desiredBlock(d, generation);
    if (why) out.push({ unit, why });
  }
  for (const [unit, o] of view.observedUnits) {
    const why = view.desiredUnits.has(unit) ? undefined : observedBlock(o);
    if (why) out.push({ unit, why });
  }
  return out.sort((a, b) => byCodeUnits(a.unit, b.unit));
}

/** What `nyl state forget` drops from state: a retained tombstone, a pending teardown, a teardown request. */
const FORGETTABLE: ReadonlySet<string> = new Set(['retained', 'pending-teardown', 'teardown requested']);

function unitsDiagnostic(env: string, blockers: UnitBlocker[]): Diagnostic {
  const units = blockers.map((b) => b.unit);
  const forgettable = blockers.filter((b) => FORGETTABLE.has(b.why)).map((b) => b.unit);
  const listed = blockers.map((b) => `${b.unit} (${b.why})`).join(', ');
  return diagnostic(
    'NYL-STATE-DELETE-INCARNATIONS',
    'error',
    `the state of ${env} still holds units with an incarnation, a teardown or a teardown request: ${listed}; nothing was deleted`,
    {
      env,
      units,
      ...(units.length === 1 ? { unit: units[0]! } : {}),
      forgettable,
    },
  );
}

function runsDiagnostic(env: string, runs: string[]): Diagnostic {
  const what = runs.length === 1 ? `run ${runs[0]!} is` : `runs ${runs.join(', ')} are`;
  return diagnostic(
    'NYL-STATE-DELETE-INCARNATIONS',
    'error',
    `${what} not imported yet: a run ref may be the only record of units its run created; nothing was deleted`,
    { env, runs: true, data: { runs } },
  );
}

/** Refuses with every reason that applies: the blocking units, then the unimported runs. */
export function refuseBlocked(env: string, blockers: UnitBlocker[], runs: string[]): void {
  const found = [...(blockers.length > 0 ? [unitsDiagnostic(env, blockers)] : []), ...(runs.length > 0 ? [runsDiagnostic(env, runs)] : [])];
  if (found.length > 0) throw new NylError(found);
}

/** A unit whose teardown cannot claim its removal, and why (its driver's words). */
interface UnclaimedRemoval {
  unit: string;
  why: string;
}

/**
 * The units `nyl teardown --all` would tear down (those that block the deletion, held ones apart)
 * whose driver says, from the rendering their desired document recorded, that it cannot claim
 * the removal: without --allow-incomplete each such teardown fails, and the units it depends on
 * wait (a teardown goes consumers first).
 */
export function unclaimedRemovals(view: Pick<EnvironmentStateView, 'desiredUnits' | 'observedUnits'>, generation: number, kinds: KindSet): UnclaimedRemoval[] {
  const out: UnclaimedRemoval[] = [];
  for (const { unit } of unitBlockers(view, generation)) {
    const doc = view.desiredUnits.get(unit);
    // A held unit is not torn down: the deletion waits for it (exit 2), whatever its driver can claim.
    if (isHeld(doc)) continue;
    const why = doc?.kind && doc.rendering ? removalUnclaimed(doc.kind, doc.rendering, kinds) : undefined;
    if (why) out.push({ unit, why });
  }
  return out;
}

/**
 * Refuses up front, before anything is torn down, the units whose removal cannot be claimed: one
 * error naming them all. `again`: the options of this command line besides --allow-incomplete, so
 * that the fix runs as printed.
 */
export function refuseUnclaimed(env: string, unclaimed: UnclaimedRemoval[], again: string[]): void {
  if (unclaimed.length === 0) return;
  const units = unclaimed.map((u) => u.unit);
  const reasons = [...new Set(unclaimed.map((u) => u.why))];
  const why = reasons.length === 1 ? `each ${reasons[0]!}` : unclaimed.map((u) => `${u.unit} ${u.why}`).join('; ');
  const listed = units.join(', ');
  throw new NylError(
    diagnostic(
      'NYL-STATE-DELETE-INCOMPLETE',
      'error',
      `the teardown cannot claim the removal of ${listed} (${why}): without --allow-incomplete each would fail and the units it depends on would wait; nothing was torn down or deleted`,
      { env, units, ...(units.length === 1 ? { unit: units[0]! } : {}), listed, again: again.join(' ') },
    ),
  );
}
