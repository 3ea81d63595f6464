/**
 * What `nyl state forget` may drop, as a pure function over a unit's state documents.
 *
 * Forget removes a unit from state without touching its resources, so it takes only units that
 * nothing reconciles any more: a retained tombstone, a unit whose teardown waits
 * (pending-teardown), and a released record (no desired file, an observed file with `released`).
 * Anything else still has an incarnation that a run manages (active, deleting, held): dropping it
 * would leave resources that no state records, so it is refused.
 * It lives in plan/ (not state/) because it decides by a unit's lifecycle state (./unit-view.ts).
 */
import type { DesiredUnitDoc, LifecycleState, ObservedUnitDoc } from '../state/documents';
import { lifecycleState } from './unit-view';

/** What a forgotten unit was, as the transition body and the report name it. */
export type ForgottenKind = 'retained' | 'pending-teardown' | 'released';

type ForgetDecision =
  | { kind: 'forget'; was: ForgottenKind }
  /** The unit is in state, but not as anything forget drops; `state` says what it is. */
  | { kind: 'refused'; state: LifecycleState | 'observed-only'; uid?: string }
  | { kind: 'unknown' };

export function forgetDecision(desired: DesiredUnitDoc | undefined, observed: ObservedUnitDoc | undefined): ForgetDecision {
  if (desired) {
    const state = lifecycleState(desired)!;
    if (state === 'retained' || state === 'pending-teardown') return { kind: 'forget', was: state };
    return { kind: 'refused', state, ...(desired.uid ? { uid: desired.uid } : {}) };
  }
  if (!observed) return { kind: 'unknown' };
  if (observed.released) return { kind: 'forget', was: 'released' };
  // An observed file no release left behind: not something forget was asked to drop.
  return { kind: 'refused', state: 'observed-only', ...(observed.uid ? { uid: observed.uid } : {}) };
}

/** What the unit is, in the words of a refusal (rendering only, like ./reasons.ts). */
export function refusedDetail(unit: string, d: Extract<ForgetDecision, { kind: 'refused' }>): string {
  const incarnation = d.uid ? ` (uid ${d.uid})` : '';
  switch (d.state) {
    case 'held':
      return `${unit} is held${incarnation}: a hold keeps the unit as it is, and forget drops only what nothing reconciles any more`;
    case 'deleting':
      return `${unit} is being deleted${incarnation}: its teardown has started, and forget would leave its resources unrecorded`;
    case 'observed-only':
      return `the state of ${unit} is an observed record${incarnation} that no release left: forget drops only retained tombstones, pending teardowns and released records`;
    default:
      return `${unit} still has an incarnation${incarnation}: forget drops only retained tombstones, pending teardowns and released records, and would leave its resources unrecorded`;
  }
}
