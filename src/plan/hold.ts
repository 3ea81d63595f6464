/**
 * What a hold keeps and what resume lifts, as pure functions over state documents.
 *
 * - A unit with a receipt of its current incarnation (./unit-view.ts: its uid, of the state's
 *   generation) is held at the desired document that receipt was produced for, with its uid, so
 *   consumers keep resolving from what actually runs; a newer decision that renders the unit
 *   differently (./unit-view.ts, sameRendering: as the planner compares a held unit's rendering)
 *   waits behind the hold, recorded as hold.pending.
 * - An uncertain unit is held the same way; its condition stays. One without a receipt, or a
 *   failed one, keeps its document and uid: it has nothing to fall back on, and its condition
 *   (a failure that needs `recover --retry`) must survive hold and resume.
 * - A unit that never ran, or one nothing shows ever ran, gets a held marker: lifecycle held,
 *   no uid, kind or rendering.
 * - A deleting unit pauses: its deletion block stays next to the hold.
 * - A retained tombstone cannot be held.
 * It lives in plan/ (not state/) because it decides by the planner's rules about an incarnation.
 */
import type { DesiredUnitDoc, HoldRecord, ObservedUnitDoc } from '../state/documents';
import { currentReceipt, isDeleting, isHeld, isRetained, sameRendering } from './unit-view';

type HoldDecision =
  | { kind: 'hold'; doc: DesiredUnitDoc; marker: boolean }
  | { kind: 'already-held'; doc: DesiredUnitDoc }
  | { kind: 'refused'; reason: 'retained' };

/** `generation`: the state's; a receipt of an incarnation --fresh gave up does not count. */
export function holdDocument(desired: DesiredUnitDoc | undefined, observed: ObservedUnitDoc | undefined, hold: HoldRecord, generation: number): HoldDecision {
  if (isHeld(desired)) return { kind: 'already-held', doc: desired };
  if (isRetained(desired)) return { kind: 'refused', reason: 'retained' };
  const receipt = currentReceipt(desired, observed, generation);
  if (receipt) {
    const base: DesiredUnitDoc = { ...receipt.desired };
    const record: HoldRecord = { ...hold };
    if (desired?.source && desired.source !== receipt.desired.source && desired.rendering && !sameRendering(desired.rendering, receipt.desired.rendering)) {
      record.pending = desired.source;
    }
    const doc: DesiredUnitDoc = { ...base, lifecycle: { state: 'held' }, hold: record };
    if (desired?.deletion) doc.deletion = desired.deletion;
    if (desired?.teardownRequest) doc.teardownRequest = desired.teardownRequest;
    return { kind: 'hold', doc, marker: false };
  }
  // Something shows it ran (a condition, a last run) or it is deleting: keep its incarnation.
  if (desired?.uid && (observed?.condition !== undefined || observed?.lastRun !== undefined || isDeleting(desired))) {
    return { kind: 'hold', doc: { ...desired, lifecycle: { state: 'held' }, hold }, marker: false };
  }
  const marker: DesiredUnitDoc = { lifecycle: { state: 'held' }, hold };
  return { kind: 'hold', doc: marker, marker: true };
}

/** The document after resume, or undefined when the unit is not held. */
export function resumeDocument(desired: DesiredUnitDoc | undefined): DesiredUnitDoc | undefined {
  if (!isHeld(desired)) return undefined;
  const { hold: _lifted, ...rest } = desired;
  return { ...rest, lifecycle: { state: desired.deletion ? 'deleting' : 'active' } };
}
