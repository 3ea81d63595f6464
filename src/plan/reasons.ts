/**
 * Human text for the planner's reasons: the DETAIL column of `nyl status` and `nyl reconcile`.
 * Rendering only: nothing reads these strings back. Status says what the unit is now ("no
 * receipt"); a run says what happened to it in the run ("not started: ...").
 */
import type { ConditionRecord } from '../state/documents';
import type { Action, ExecuteReason, StopReason, UnitPlan } from './actions';
import { formatWait } from './planner';

/**
 * `awaiting-dependencies`: the unit waits for dependencies that execute first and is re-evaluated
 * after them; nothing of its own changed, so it may stay current. The states that execute say so.
 */
export type StatusPhase = 'current' | 'pending' | 'outdated' | 'awaiting-dependencies' | 'blocked' | 'failed' | 'uncertain' | 'held' | 'leaving';

/** The state of a unit that executes, now or after its dependencies, for this reason. */
function executePhase(reason: ExecuteReason): StatusPhase {
  if (reason === 'retry-failure') return 'failed';
  if (reason === 'converge-uncertain') return 'uncertain';
  return reason === 'key-changed' ? 'outdated' : 'pending';
}

/** The state `nyl status` shows for a planned unit. */
export function statusPhase(plan: UnitPlan): StatusPhase {
  const a = plan.action;
  switch (a.type) {
    case 'execute':
      return executePhase(a.reason);
    case 'wait':
      return a.reason === 'upstream-pending' ? 'awaiting-dependencies' : executePhase(a.executes);
    case 'prepare':
      return 'pending';
    case 'skip':
      return 'pending';
    case 'leave':
    case 'drop':
      return 'leaving';
    default:
      return a.type;
  }
}

const STOPS: Record<StopReason, string> = {
  cancelled: 'the run was cancelled',
  'lease-lost': 'the run lost its lease',
  'lease-deadline': 'the run could not renew its lease before its deadline',
  'fail-fast': '--fail-fast stopped the run',
  'state-unavailable': 'the state repository could not be reached',
  'signal-damaged': 'a signal to the run is damaged (it may hold a unit; `nyl status` names it)',
};

export function describeStop(stop: StopReason, after?: string): string {
  return `not started: ${STOPS[stop]}${stop === 'fail-fast' && after ? ` after ${after}` : ''}`;
}

function holder(by: string, reason: string | undefined): string {
  return `held by ${by}${reason ? ` (${reason})` : ''}`;
}

/** The decision a current unit's desired document returns to: its receipt's, from this commit. */
function restoredFrom(plan: UnitPlan): string {
  const source = plan.next?.source;
  return `the desired document of its receipt again${source ? ` (source ${source})` : ''}`;
}

/** Detail text shared by status and runs, for actions that read the same in both. */
function common(a: Action): string | undefined {
  switch (a.type) {
    case 'current':
      return a.reason === 'receipt-current' ? '' : undefined;
    case 'blocked':
      if (a.reason === 'render-error') return a.errors[0]!.message;
      if (a.reason === 'run-stopped') return describeStop(a.stop, a.after);
      if (a.reason === 'state-damaged') return a.problem;
      return formatWait(a.waits[0]!);
    case 'uncertain':
      return a.condition.reason;
    case 'prepare':
      return 'its driver resolves what its execution key needs first';
    case 'leave':
      return 'left the ownership set';
    case 'drop':
      return 'a resumed held marker that left the ownership set';
    default:
      return undefined;
  }
}

/** Why a unit executes, as status says it. */
function executeDetail(reason: ExecuteReason, condition: ConditionRecord | undefined): string {
  if (reason === 'retry-failure') return `${condition!.reason} (retried by the next reconcile)`;
  if (reason === 'converge-uncertain') return condition!.reason;
  if (reason === 'key-changed') return 'execution key changed';
  return reason === 'no-incarnation' ? 'no incarnation yet' : 'no receipt';
}

/**
 * A waiting unit in status: what it waits for, then what it does after: re-evaluated, or executed
 * for a reason of its own (left unsaid for a unit that never ran: pending says it).
 */
function waitDetail(a: Extract<Action, { type: 'wait' }>): string {
  const wait = formatWait(a.waits[0]!);
  if (a.reason === 'upstream-pending') return `${wait}; re-evaluated after its dependencies run (its receipt may stay current)`;
  return a.executes === 'no-incarnation' || a.executes === 'no-receipt' ? wait : `${wait}; ${executeDetail(a.executes, a.condition)}`;
}

/** The DETAIL of `nyl status`: what the unit is now and what the next reconcile does. */
export function statusDetail(plan: UnitPlan): string {
  const a = plan.action;
  const shared = common(a);
  if (shared !== undefined) return shared;
  switch (a.type) {
    case 'skip':
      return '';
    case 'current':
      return `its receipt is current; the desired branch holds another decision, and the next reconcile records ${restoredFrom(plan)}`;
    case 'wait':
      return waitDetail(a);
    case 'execute':
      return executeDetail(a.reason, a.condition);
    case 'failed':
      return a.condition.reason;
    case 'held':
      if (a.reason === 'held-uncertain') return `held (uncertain): ${a.condition.reason}`;
      if (a.reason === 'held-leaving') return 'held with a pending deletion';
      if (a.reason === 'hold-delivered') return `${holder(a.delivered.by, a.delivered.reason)}, delivered to the running run`;
      if (!plan.desired?.uid) return '';
      return a.pending ? `pending changes from ${a.pending}` : 'held';
    default:
      return '';
  }
}

/** The DETAIL of a run's table for a unit the run did not execute. */
export function runDetail(plan: UnitPlan, sourceCommit: string): string {
  const a = plan.action;
  const shared = common(a);
  if (shared !== undefined) return shared;
  switch (a.type) {
    case 'skip':
      return 'not started: --unit names other units';
    case 'current':
      return `recorded ${restoredFrom(plan)}`;
    case 'wait':
      return formatWait(a.waits[0]!);
    case 'execute':
      return `executes: ${statusDetail(plan)}`;
    case 'failed':
      return a.reason === 'failed-in-run' ? a.condition.reason : `${a.condition.reason} (needs nyl recover --retry)`;
    case 'held': {
      if (a.reason === 'held-leaving') return 'held with a pending deletion: it left the ownership set';
      if (a.reason === 'hold-delivered') return `${holder(a.delivered.by, a.delivered.reason)}, delivered to this run`;
      const changes = a.sourceChanged ? `; changes from ${sourceCommit} wait` : '';
      return a.reason === 'held-uncertain' ? `held (uncertain): ${a.condition.reason}${changes}` : `held${changes}`;
    }
    default:
      return '';
  }
}

/** Why a unit starts, for its start line: `[dev/db] starting Command (reconcile): no receipt`. */
export function startReason(plan: UnitPlan): string {
  const a = plan.action;
  if (a.type !== 'execute') return a.type;
  if (a.reason === 'converge-uncertain') return 'converging uncertain unit';
  if (a.reason === 'retry-failure') return 'retrying failure';
  return a.reason === 'key-changed' ? 'execution key changed' : 'no receipt';
}
