/**
 * What the planner decides for a unit: an action, a machine reason code and the data behind it.
 *
 * Every consumer (the run engine, the no-op fast path, `nyl status`, the importer, recover, and
 * later plan, teardown and approvals) reads these; none decides again. Human text is rendered
 * from the reason by ./reasons.ts and never parsed back.
 */
import type { Diagnostic } from '../errors/diagnostic';
import type { ConditionRecord, DesiredUnitDoc, HoldRecord, ObservedUnitDoc } from '../state/documents';
import type { UnitResource } from '../project/types';

/** A dependency a unit waits for, by the JSON pointer of its dependsOn entry or reference. */
export interface Wait {
  pointer: string;
  unit: string;
  reason: 'no-current-receipt';
}

/** Why a run starts no further unit. */
export type StopReason = 'cancelled' | 'lease-lost' | 'lease-deadline' | 'fail-fast' | 'state-unavailable' | 'signal-damaged';

/** A hold delivered to a running run through its signal ref. */
export interface DeliveredHold {
  by: string;
  reason?: string;
  at: string;
}

export type ExecuteReason =
  /** Never executed in this incarnation, and no incarnation yet. */
  | 'no-incarnation'
  /** An incarnation without a receipt. */
  | 'no-receipt'
  /** A receipt for another execution key. */
  | 'key-changed'
  /** The last execution failed and may be retried. */
  | 'retry-failure'
  /** A dead run left the unit uncertain and its recovery policy is converge. */
  | 'converge-uncertain';

export type Action =
  | { type: 'execute'; reason: ExecuteReason; condition?: ConditionRecord }
  | { type: 'current'; reason: 'receipt-current' }
  /**
   * Current, but the desired branch holds another decision (a change that failed and was reverted
   * in source, or a receipt imported for a newer key): the run records the document the receipt
   * was produced for (`next`) again, so that the desired branch says what Nyl decided.
   */
  | { type: 'current'; reason: 'desired-restored' }
  /**
   * Waits for dependencies that will get a current receipt first, then executes for a reason of
   * its own (`executes`): status shows it as that execution (pending, outdated, failed, uncertain).
   */
  | { type: 'wait'; reason: 'dependency-pending'; waits: Wait[]; executes: ExecuteReason; condition?: ConditionRecord }
  /**
   * Waits for dependencies that will get a current receipt first, then is decided again: nothing
   * of its own changed, so its receipt may still be current once it resolves from their new
   * outputs (status: awaiting-dependencies).
   */
  | { type: 'wait'; reason: 'upstream-pending'; waits: Wait[] }
  | { type: 'blocked'; reason: 'dependency-blocked'; waits: Wait[] }
  | { type: 'blocked'; reason: 'render-error'; errors: Diagnostic[] }
  | { type: 'blocked'; reason: 'run-stopped'; stop: StopReason; after?: string }
  /** A state document of the unit is damaged: nothing is decided on it until `nyl recover` repairs it. */
  | { type: 'blocked'; reason: 'state-damaged'; problem: string }
  /**
   * pending: the source commit since which changes wait; sourceChanged: this source renders it
   * differently. When `pending` differs from the recorded hold.pending, `next` records it.
   */
  | { type: 'held'; reason: 'held'; hold?: HoldRecord; pending?: string; sourceChanged: boolean }
  | { type: 'held'; reason: 'held-uncertain'; hold?: HoldRecord; condition: ConditionRecord; pending?: string; sourceChanged: boolean }
  | { type: 'held'; reason: 'hold-delivered'; delivered: DeliveredHold }
  | { type: 'held'; reason: 'held-leaving'; hold?: HoldRecord }
  /** A failure that needs `nyl recover --retry` (or that happened in this very run). */
  | { type: 'failed'; reason: 'needs-acknowledgement' | 'failed-in-run'; condition: ConditionRecord }
  /** Uncertain under recovery: manual (or in this very run): waits for an operator. */
  | { type: 'uncertain'; reason: 'needs-recovery' | 'uncertain-in-run'; condition: ConditionRecord }
  /** --unit names other units: this one executes nothing in this run. */
  | { type: 'skip'; reason: 'not-selected' }
  /** The driver must look something up before the execution key exists (an image digest). */
  | { type: 'prepare'; reason: 'driver-input' }
  /** In state, but no longer in the ownership set: lifecycle work decides its end. */
  | { type: 'leave'; reason: 'left-ownership-set' }
  /** A held marker that was resumed after its unit left the ownership set: its file goes. */
  | { type: 'drop'; reason: 'marker-left' };

export type ActionType = Action['type'];

/** The planner's verdict for one unit, with what the engine needs to apply it. */
export interface UnitPlan {
  name: string;
  kind: string;
  action: Action;
  unit?: UnitResource;
  desired?: DesiredUnitDoc;
  observed?: ObservedUnitDoc;
  /** The incarnation the unit has, or gets when it executes now. */
  uid?: string;
  /** True when the uid is new: the unit starts a new incarnation if it executes. */
  newIncarnation?: boolean;
  rendering?: Record<string, unknown>;
  executionKey?: string;
  /**
   * The desired document a run records for the unit: for `execute`, the one the execution is for;
   * for `current` with `desired-restored`, the one its receipt was produced for; for `held`, the
   * held document with a new hold.pending.
   */
  next?: DesiredUnitDoc;
}

export interface Plan {
  /** Units of the ownership set in dependency order, then leaving units by name. */
  order: string[];
  units: Map<string, UnitPlan>;
}

/** True when the unit will get a current receipt without an operator: it executes, or waits to. */
export function willExecute(plan: UnitPlan | undefined): boolean {
  return plan !== undefined && (plan.action.type === 'execute' || plan.action.type === 'wait' || plan.action.type === 'prepare');
}

/** A unit whose desired document a run writes though nothing executes it: work for a run all the same. */
export function writesDesiredOnly(plan: UnitPlan): boolean {
  return plan.action.type !== 'execute' && plan.next !== undefined;
}

/** A current unit whose desired document a run writes again (listed as `desiredRestored`). */
export function restoresDesired(plan: UnitPlan): boolean {
  return plan.action.type === 'current' && plan.action.reason === 'desired-restored' && plan.next !== undefined;
}

/** Units the engine executes now: names break ties within a parallel wave (code-unit order). */
export function executable(plan: Plan): UnitPlan[] {
  return [...plan.units.values()].filter((u) => u.action.type === 'execute').sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
