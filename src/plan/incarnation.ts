/**
 * What state says about a unit's current incarnation, shared by the planner's passes: its receipt
 * and condition (only those of its uid count), and whether a condition keeps it from running
 * again without an operator. Pure.
 */
import { defaultRecovery, type KindSet } from '../drivers/kinds';
import type { ConditionRecord, DesiredUnitDoc, ReceiptRecord } from '../state/documents';
import type { Action, UnitPlan } from './actions';

/** The incarnation a unit keeps: its desired uid unless --fresh started a new generation. */
export function currentUid(desired: DesiredUnitDoc | undefined, generation: number): string | undefined {
  if (!desired?.uid) return undefined;
  if ((desired.generation ?? 1) < generation) return undefined;
  return desired.uid;
}

/** The unit's receipt in its current incarnation, current or not. */
export function receiptOfIncarnation(plan: UnitPlan | undefined): ReceiptRecord | undefined {
  return plan?.uid && plan.observed?.uid === plan.uid ? plan.observed.receipt : undefined;
}

/** The condition of the unit's current incarnation, if any. */
export function conditionOfIncarnation(plan: UnitPlan): ConditionRecord | undefined {
  return plan.uid && plan.observed?.uid === plan.uid ? plan.observed.condition : undefined;
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
