/**
 * What `nyl state forget` may drop, as a pure function over a unit's state documents.
 *
 * Forget removes a unit from state without touching its resources, so it takes only units that
 * nothing reconciles any more: a retained tombstone, a unit whose teardown waits
 * (pending-teardown), and a released record (no desired file, an observed file with `released`).
 * Anything else still has an incarnation that a run manages (active, deleting, held): dropping it
 * would leave resources that no state records, so it is refused.
 */
import type { DesiredUnitDoc, LifecycleState, ObservedUnitDoc } from './documents';

/** What a forgotten unit was, as the transition body and the report name it. */
export type ForgottenKind = 'retained' | 'pending-teardown' | 'released';

export type ForgetDecision =
  | { kind: 'forget'; was: ForgottenKind }
  /** The unit is in state, but not as anything forget drops; `state` says what it is. */
  | { kind: 'refused'; state: LifecycleState | 'observed-only'; uid?: string }
  | { kind: 'unknown' };

export function forgetDecision(desired: DesiredUnitDoc | undefined, observed: ObservedUnitDoc | undefined): ForgetDecision {
  if (desired) {
    const state = desired.lifecycle.state;
    if (state === 'retained' || state === 'pending-teardown') return { kind: 'forget', was: state };
    return { kind: 'refused', state, ...(desired.uid ? { uid: desired.uid } : {}) };
  }
  if (!observed) return { kind: 'unknown' };
  if (observed.released) return { kind: 'forget', was: 'released' };
  // An observed file no release left behind: not something forget was asked to drop.
  return { kind: 'refused', state: 'observed-only', ...(observed.uid ? { uid: observed.uid } : {}) };
}
