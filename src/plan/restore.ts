/**
 * What `nyl state restore` writes, as a pure function over the current documents and those of the
 * restore point (docs/design.md, "state restore").
 *
 * Unit documents become those of the restore point, except for admission, which stays current:
 * - a unit held now stays held with its current hold record: the restored desired document keeps
 *   `lifecycle.state: held` and the current `hold`; where the restore point has no desired document
 *   for it, a held marker (no incarnation) carries the hold;
 * - a unit not held now is not held by the restore either: a restored held document is resumed
 *   (lifecycle active, or deleting when it records a deletion) and a restored held marker is dropped.
 * state.yaml, the lease and every coordination ref are not unit documents and are never touched.
 *
 * An incarnation is a unit's uid (its desired document's, else its observed one's). The restore
 * resurrects a uid the current state does not have for that unit, and drops one it has that the
 * restore point does not.
 *
 * It lives in plan/ (not state/) because what it keeps held is decided by ./unit-view.ts.
 */
import type { DesiredUnitDoc, ObservedUnitDoc } from '../state/documents';
import { resumeDocument } from './hold';
import { isDeleting, isHeld, isMarker, isRetained, lifecycleState } from './unit-view';

export interface UnitDocs {
  desired: Map<string, DesiredUnitDoc>;
  observed: Map<string, ObservedUnitDoc>;
}

export interface RestoreResult {
  after: UnitDocs;
  /** Units held now whose hold the restore kept. */
  holdsKept: string[];
  /** unit -> uid the restore brings back / takes away. */
  resurrected: Record<string, string>;
  dropped: Record<string, string>;
}

/** The desired document a unit gets: the restore point's, under the current admission. */
function admittedDocument(current: DesiredUnitDoc | undefined, restored: DesiredUnitDoc | undefined): DesiredUnitDoc | undefined {
  if (isHeld(current)) {
    const hold = current.hold ? { hold: current.hold } : {};
    if (!restored || isMarker(restored)) return { lifecycle: { state: 'held' }, ...hold };
    const { hold: _old, ...rest } = restored;
    return { ...rest, lifecycle: { state: 'held' }, ...hold };
  }
  if (!isHeld(restored)) return restored;
  if (isMarker(restored)) return undefined;
  return resumeDocument(restored);
}

function uidOf(docs: UnitDocs, unit: string): string | undefined {
  return docs.desired.get(unit)?.uid ?? docs.observed.get(unit)?.uid;
}

export function restoreDocuments(current: UnitDocs, target: UnitDocs): RestoreResult {
  const desired = new Map<string, DesiredUnitDoc>();
  const holdsKept: string[] = [];
  for (const unit of new Set([...current.desired.keys(), ...target.desired.keys()])) {
    const doc = admittedDocument(current.desired.get(unit), target.desired.get(unit));
    if (doc) desired.set(unit, doc);
    if (isHeld(current.desired.get(unit))) holdsKept.push(unit);
  }
  const after: UnitDocs = { desired, observed: new Map(target.observed) };
  const resurrected: Record<string, string> = {};
  const dropped: Record<string, string> = {};
  const units = [...new Set([...current.desired.keys(), ...current.observed.keys(), ...desired.keys(), ...after.observed.keys()])].sort();
  for (const unit of units) {
    const [now, then] = [uidOf(current, unit), uidOf(after, unit)];
    if (then && then !== now) resurrected[unit] = then;
    if (now && now !== then) dropped[unit] = now;
  }
  return { after, holdsKept: holdsKept.sort(), resurrected, dropped };
}

/**
 * What a unit whose incarnation the restore brings back is now, so that the way forward named for
 * it works: a released record and a retained tombstone are reconciled by nothing; a unit source no
 * longer declares is handled by the next reconcile as one that left (under its deletionPolicy);
 * a deleting unit goes on with its teardown; a held one waits for resume; an active one, in
 * source, is trusted at its receipt. `owned`: source declares it (the ownership set).
 */
type Resurrected = 'released' | 'retained' | 'left' | 'deleting' | 'held' | 'active';

export function resurrectedAs(after: UnitDocs, unit: string, owned: boolean): Resurrected {
  const desired = after.desired.get(unit);
  if (!desired) return after.observed.get(unit)?.released ? 'released' : 'left';
  if (isRetained(desired)) return 'retained';
  if (isHeld(desired)) return 'held';
  if (!owned) return 'left';
  return isDeleting(desired) || lifecycleState(desired) === 'pending-teardown' ? 'deleting' : 'active';
}
