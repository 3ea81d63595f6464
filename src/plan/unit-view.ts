/**
 * The rules about a unit's incarnation, one function each, so that every command reads a unit the
 * way the planner does: which uid is its current incarnation, which receipt and condition count
 * (only those of that uid), what its lifecycle state makes of it, whether a run's checkpoint
 * matches the unit now, and when two renderings are the same. Import, verify, hold, forget,
 * recover, state delete and status all ask here instead of deciding again; no file outside
 * src/plan/ reads or compares a lifecycle state (test/unit/unit-view-rule.test.mjs keeps it so).
 * Pure.
 */
import { defaultRecovery, type KindSet } from '../drivers/kinds';
import { canonicalJson } from '../util/canonical-json';
import type { ConditionRecord, DesiredUnitDoc, LifecycleState, ObservedUnitDoc, ReceiptRecord } from '../state/documents';
import type { Action, UnitPlan } from './actions';

// --- the incarnation, its receipt and its condition ------------------------------------------

/** The incarnation a unit keeps: its desired uid unless --fresh started a new generation. */
export function currentUid(desired: DesiredUnitDoc | undefined, generation: number): string | undefined {
  if (!desired?.uid) return undefined;
  if ((desired.generation ?? 1) < generation) return undefined;
  return desired.uid;
}

/** Does the observed document speak of incarnation `uid`? Only then do its records count. */
export function observesIncarnation(observed: ObservedUnitDoc | undefined, uid: string | undefined): observed is ObservedUnitDoc {
  return uid !== undefined && observed?.uid === uid;
}

/** The receipt of incarnation `uid`, current or not: a receipt of another uid does not count. */
export function incarnationReceipt(observed: ObservedUnitDoc | undefined, uid: string | undefined): ReceiptRecord | undefined {
  return observesIncarnation(observed, uid) ? observed.receipt : undefined;
}

/** The condition of incarnation `uid`, if any. */
export function incarnationCondition(observed: ObservedUnitDoc | undefined, uid: string | undefined): ConditionRecord | undefined {
  return observesIncarnation(observed, uid) ? observed.condition : undefined;
}

/** The receipt of a unit's current incarnation in its generation, read from its documents. */
export function currentReceipt(desired: DesiredUnitDoc | undefined, observed: ObservedUnitDoc | undefined, generation: number): ReceiptRecord | undefined {
  return incarnationReceipt(observed, currentUid(desired, generation));
}

/** The unit's receipt in its current incarnation, current or not. */
export function receiptOfIncarnation(plan: UnitPlan | undefined): ReceiptRecord | undefined {
  return incarnationReceipt(plan?.observed, plan?.uid);
}

/** The condition of the unit's current incarnation, if any. */
export function conditionOfIncarnation(plan: UnitPlan): ConditionRecord | undefined {
  return incarnationCondition(plan.observed, plan.uid);
}

/**
 * A condition that keeps the unit from running (executing, or tearing down) again: it waits for
 * an operator (uncertain under manual recovery, a failure that needs acknowledgement), or arose in
 * this very run (`runId`). Undefined when the unit runs again: a retryable failure, or an
 * uncertain one under converge.
 */
export function terminalCondition(condition: ConditionRecord, recovery: 'converge' | 'manual', runId: string | undefined): Action | undefined {
  const inRun = runId !== undefined && condition.run === runId;
  if (condition.type === 'uncertain') {
    if (inRun) return { type: 'uncertain', reason: 'uncertain-in-run', condition };
    return recovery === 'converge' ? undefined : { type: 'uncertain', reason: 'needs-recovery', condition };
  }
  if (inRun) return { type: 'failed', reason: 'failed-in-run', condition };
  return condition.retryable ? undefined : { type: 'failed', reason: 'needs-acknowledgement', condition };
}

/** A unit's recovery policy: the one it declares, else its kind's default. */
export function recoveryPolicy(declared: unknown, kind: string, kinds: KindSet): 'converge' | 'manual' {
  return declared === 'converge' || declared === 'manual' ? declared : defaultRecovery(kind, kinds);
}

// --- the lifecycle state ----------------------------------------------------------------------

/** The lifecycle state its desired document records; undefined without one. */
export function lifecycleState(desired: DesiredUnitDoc | undefined): LifecycleState | undefined {
  return desired?.lifecycle?.state;
}

/** A desired document in lifecycle state `S` (a narrowing that leaves other documents as they are). */
type InState<S extends LifecycleState> = DesiredUnitDoc & { lifecycle: { state: S } };

/** Held: a hold freezes the unit, its deletion included, until `nyl resume`. */
export function isHeld(desired: DesiredUnitDoc | undefined): desired is InState<'held'> {
  return lifecycleState(desired) === 'held';
}

/** A retained tombstone: nothing reconciles it any more, its resources stay. */
export function isRetained(desired: DesiredUnitDoc | undefined): boolean {
  return lifecycleState(desired) === 'retained';
}

/** A unit whose teardown started (a held one that paused its teardown is held, not deleting). */
export function isDeleting(desired: DesiredUnitDoc | undefined): boolean {
  return lifecycleState(desired) === 'deleting';
}

/** A held marker: held without an incarnation (no uid, no kind). */
export function isMarker(desired: DesiredUnitDoc | undefined): desired is InState<'held'> {
  return isHeld(desired) && !desired.uid && !desired.kind;
}

/** A unit nothing reconciles as it is: held, or on its way out. Undefined for an active unit. */
type StandingState = Exclude<LifecycleState, 'active'>;

export function notReconciled(desired: DesiredUnitDoc | undefined): StandingState | undefined {
  const state = lifecycleState(desired);
  return state === 'active' ? undefined : state;
}

/**
 * The lifecycle state of a desired document that still stands for resources: one on its way out
 * (deleting, pending-teardown, a retained tombstone) whatever its generation, and an active or
 * held one whose uid is of the current generation. Undefined for a uid --fresh gave up and for
 * a held marker.
 */
export function liveIncarnation(desired: DesiredUnitDoc, generation: number): LifecycleState | undefined {
  const state = lifecycleState(desired);
  if (state === 'deleting' || state === 'pending-teardown' || state === 'retained') return state;
  if (!currentUid(desired, generation)) return undefined;
  return state === 'held' ? 'held' : 'active';
}

// --- checkpoints and renderings -------------------------------------------------------------------

/** What a run recorded of one unit's execution: the incarnation it ran and the key it ran for. */
interface CheckpointIdentity {
  uid: string;
  executionKey: string;
}

/**
 * Does a run's checkpoint match the unit now: the same incarnation, and the key the unit has now
 * (`key`; undefined when it cannot be told, which matches nothing)?
 */
export function checkpointMatches(checkpoint: CheckpointIdentity, uid: string | undefined, key: string | undefined): boolean {
  return uid !== undefined && key !== undefined && checkpoint.uid === uid && checkpoint.executionKey === key;
}

/**
 * The key a unit has now for a checkpoint to match: the one its desired document recorded, while
 * the source resolves it to the same key or cannot resolve it; undefined when source moved on.
 */
export function keyNow(recorded: string | undefined, resolved: string | undefined): string | undefined {
  return resolved === undefined || resolved === recorded ? recorded : undefined;
}

/**
 * The same rendering: equal as canonical JSON (key order and undefined members do not count).
 * Only the rendering: a document's uid, generation and source are not part of it.
 */
export function sameRendering(a: Record<string, unknown> | undefined, b: Record<string, unknown> | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return canonicalJson(a) === canonicalJson(b);
}
