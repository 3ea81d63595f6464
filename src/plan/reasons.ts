/**
 * Human text for the planner's reasons: the DETAIL column of `nyl status` and `nyl reconcile`.
 * Rendering only: nothing reads these strings back. Status says what the unit is now ("no
 * receipt"); a run says what happened to it in the run ("not started: ...").
 */
import type { ConditionRecord, DesiredUnitDoc, DriftRecord } from '../state/documents';
import type { Action, ApprovalNeed, DeletionCause, ExecuteReason, StopReason, TeardownWait, UnitPlan } from './actions';
import { policyOf } from './lifecycle';
import type { KeyChange } from './key-changes';
import { formatWait } from './planner';
import { notReconciled } from './unit-view';

/**
 * `awaiting-dependencies`: the unit waits for dependencies that execute first and is re-evaluated
 * after them; nothing of its own changed, so it may stay current. The states that execute say so.
 */
type StatusPhase =
  | 'current'
  | 'pending'
  | 'outdated'
  | 'awaiting-dependencies'
  | 'blocked'
  | 'failed'
  | 'uncertain'
  | 'held'
  | 'leaving'
  | 'pending-teardown'
  | 'tearing-down'
  | 'retained'
  | 'awaiting-approval'
  | 'drifted';

/** The state of a unit that executes, now or after its dependencies, for this reason. */
function executePhase(reason: ExecuteReason): StatusPhase {
  if (reason === 'retry-failure') return 'failed';
  if (reason === 'converge-uncertain') return 'uncertain';
  if (reason === 'drift-repair') return 'drifted';
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
    case 'teardown':
      // A teardown retried after a failure, or converging after an uncertain end, shows as that.
      if (a.condition) return a.condition.type === 'uncertain' ? 'uncertain' : 'failed';
      return 'tearing-down';
    case 'retain':
    case 'release':
    case 'drop':
    case 'removed':
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

function names(list: string[]): string {
  return list.join(', ');
}

/** Why the unit is deleted, as a run's detail begins. */
function deletionWhy(plan: UnitPlan, cause: DeletionCause): string {
  if (cause === 'request') return `teardown requested by ${plan.desired?.teardownRequest?.by ?? 'an operator'}`;
  if (cause === 'kind-change') return `its kind changed from ${plan.desired?.kind ?? '?'} to ${plan.unit?.kind ?? '?'}: the old incarnation goes first`;
  return `left the ownership set (deletionPolicy ${policyOf(plan.desired!)})`;
}

const TEARDOWN_WAITS: { [R in TeardownWait['reason']]: (w: Extract<TeardownWait, { reason: R }>) => string } = {
  'needs-allow-teardown': () => 'its teardown starts only with --allow-teardown',
  'consumers-first': (w) => `its consumers are torn down first: ${names(w.dependents)}`,
  'dependents-remain': (w) => `units with an incarnation still depend on it: ${names(w.dependents)}`,
  'cited-by-tombstones': (w) => `retained tombstones cite it: ${names(w.dependents)} (--allow-dependents tears it down all the same)`,
  'lifecycle-excluded': () => '--unit does no lifecycle work: a run without --unit deletes it first',
};

/** What a tombstone or a release that a run applied leaves, for its row. */
export function doneDetail(result: 'retained' | 'released', kindChange: boolean): string {
  if (result === 'retained') return 'a tombstone keeps its receipt (deletionPolicy Retain)';
  return `its resources stay in place${kindChange ? ' (its kind changed)' : ' (deletionPolicy Release)'}`;
}

/** Detail of lifecycle actions, the same in status and runs; undefined for other actions. */
function lifecycleDetail(plan: UnitPlan): string | undefined {
  const a = plan.action;
  switch (a.type) {
    case 'teardown': {
      const again = a.condition
        ? `; its teardown ${a.condition.type === 'uncertain' ? 'ended uncertain' : 'failed'} (${a.condition.reason}) and runs again`
        : '';
      return `${deletionWhy(plan, a.reason)}; torn down by its driver${a.allowedDependents ? ` although retained tombstones cite it (--allow-dependents): ${names(a.allowedDependents)}` : ''}${again}`;
    }
    case 'retain':
      return `left the ownership set: ${doneDetail('retained', false)}`;
    case 'retained':
      return 'a retained tombstone: `nyl teardown --unit` tears it down, `nyl state forget` drops it';
    case 'release':
      return a.reason === 'kind-change'
        ? `${deletionWhy(plan, 'kind-change')}; its resources stay in place`
        : `left the ownership set: ${doneDetail('released', false)}`;
    case 'pending-teardown':
      return `${deletionWhy(plan, a.cause)}; ${(TEARDOWN_WAITS[a.reason] as (w: TeardownWait) => string)(a)}`;
    case 'removed':
      return 'torn down by this run; the next reconcile starts a new incarnation';
    default:
      return undefined;
  }
}

/** Detail text shared by status and runs, for actions that read the same in both. */
function common(plan: UnitPlan): string | undefined {
  const a = plan.action;
  const lifecycle = lifecycleDetail(plan);
  if (lifecycle !== undefined) return lifecycle;
  switch (a.type) {
    case 'current':
      if (a.reason === 'input-absent') return `current on the preparation its desired document recorded (${a.absent}: only an execution needs it)`;
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
    case 'drop':
      return 'a resumed held marker that left the ownership set';
    case 'awaiting-approval':
      return `${executeWhy(a.executes, a.condition, plan)}; ${approvalText(plan, a)}`;
    case 'drifted':
      if (a.reason === 'state-lost')
        return `${driftText(a.drift)}; no run repairs a lost state by itself: restore it, or \`--reapply --unit ${plan.name} --reason\` creates the resources again`;
      return `${driftText(a.drift)}; driftRepair is manual: \`--reapply --unit ${plan.name} --reason\` repairs it`;
    default:
      return undefined;
  }
}

/** The execution a waiting approval would allow, in a few words. */
function executeWhy(reason: ExecuteReason, condition: ConditionRecord | undefined, plan: UnitPlan): string {
  if (reason === 'drift-repair') return driftText(plan.observed?.drift);
  return executeDetail(reason, condition, plan);
}

/** What an observation of drift says, for a detail. */
function driftText(drift: DriftRecord | undefined): string {
  if (!drift) return 'drifted';
  return `drifted (observed at ${drift.observedAt}${drift.detail ? `: ${drift.detail}` : ''})`;
}

/** Why an execution waits for an approval, and which --approve lets it go. */
function approvalText(plan: UnitPlan, a: Extract<Action, { type: 'awaiting-approval' }>): string {
  const bound = a.requireDigest || a.reason === 'digest-mismatch';
  const how = !bound
    ? `--approve ${plan.name}`
    : a.digest
      ? `--approve ${plan.name}=${a.digest}`
      : `--approve ${plan.name}=<digest> (nyl plan shows the digest)`;
  const why: Record<ApprovalNeed, string> = {
    'approval-required': 'approval.required: it executes only with an approval',
    'manual-drift-repair': 'it is not safe to run again (recovery manual): its drift repair needs an approval',
    'manual-reapply': 'it is not safe to run again (recovery manual): --reapply needs an approval',
    'manual-local': 'it is not safe to run again (recovery manual): a --local run executes it only with an approval',
    'digest-mismatch': `the plan this run made has the digest ${a.digest ?? '?'}, not the approved one: nothing was applied`,
  };
  return `${why[a.reason]}; awaiting ${how}`;
}

/** Why a unit executes, as status says it. */
function executeDetail(reason: ExecuteReason, condition: ConditionRecord | undefined, plan?: UnitPlan): string {
  if (reason === 'drift-repair') return `${driftText(plan?.observed?.drift)}; the next reconcile repairs it (driftRepair converge)`;
  if (reason === 'reapply') return 'reapplied on request (--reapply)';
  if (reason === 'retry-failure') return `${condition!.reason} (retried by the next reconcile)`;
  if (reason === 'converge-uncertain') return condition!.reason;
  if (reason === 'key-changed') return keyChangedText(plan?.keyChanges);
  return reason === 'no-incarnation' ? 'no incarnation yet' : 'no receipt';
}

/** How many changes a detail names before it says how many more. */
const MAX_NAMED = 8;

function keyChangeText(c: KeyChange): string {
  switch (c.read) {
    case 'spec':
      return `spec ${c.fields.length === 1 ? 'field' : 'fields'} ${names(c.fields)} changed`;
    case 'trigger':
      return c.how === 'changed' ? `triggered by ${c.unit}` : `trigger ${c.unit} ${c.how}`;
    case 'secret':
      return `sensitive output ${c.unit}.${c.output} changed`;
    case 'module-file':
      return `module file ${c.path} ${c.how}`;
    default:
      return `${c.read} ${c.path} ${c.how}`;
  }
}

/**
 * Why the key changed, read by read: `input migrations/003.sql added; triggered by deploy`. Only
 * when nothing recorded tells (state from before reads were recorded): `execution key changed`.
 */
function keyChangedText(changes: readonly KeyChange[] | undefined): string {
  if (!changes || changes.length === 0) return 'execution key changed';
  const named = changes.slice(0, MAX_NAMED).map(keyChangeText);
  return [...named, ...(changes.length > MAX_NAMED ? [`and ${changes.length - MAX_NAMED} more`] : [])].join('; ');
}

/**
 * A waiting unit in status: what it waits for, then what it does after: re-evaluated, or executed
 * for a reason of its own (left unsaid for a unit that never ran: pending says it).
 */
function waitDetail(a: Extract<Action, { type: 'wait' }>, plan: UnitPlan): string {
  const wait = formatWait(a.waits[0]!);
  if (a.reason === 'upstream-pending') return `${wait}; re-evaluated after its dependencies run (its receipt may stay current)`;
  return a.executes === 'no-incarnation' || a.executes === 'no-receipt' ? wait : `${wait}; ${executeDetail(a.executes, a.condition, plan)}`;
}

/** The DETAIL of `nyl status`: what the unit is now and what the next reconcile does. */
export function statusDetail(plan: UnitPlan): string {
  const a = plan.action;
  const shared = common(plan);
  if (shared !== undefined) return shared;
  switch (a.type) {
    case 'skip':
      return '';
    case 'current':
      return `its receipt is current; the desired branch holds another decision, and the next reconcile records ${restoredFrom(plan)}`;
    case 'wait':
      return waitDetail(a, plan);
    case 'execute':
      return executeDetail(a.reason, a.condition, plan);
    case 'failed':
      return a.condition.reason;
    case 'held':
      if (a.reason === 'held-uncertain') return `held (uncertain): ${a.condition.reason}`;
      if (a.reason === 'held-leaving' || heldDeleting(plan)) return 'held with a pending deletion';
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
  const shared = common(plan);
  if (shared !== undefined) return shared;
  switch (a.type) {
    case 'skip':
      if (a.reason === 'leaving-only') return 'not started: --leaving does only lifecycle work';
      return a.reason === 'teardown-only' ? 'not torn down: the teardown names other units' : 'not started: --unit names other units';
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
      if (heldDeleting(plan)) return 'held with a pending deletion: resume lets it go on';
      if (a.reason === 'hold-delivered') return `${holder(a.delivered.by, a.delivered.reason)}, delivered to this run`;
      const changes = a.sourceChanged ? `; changes from ${sourceCommit} wait` : '';
      return a.reason === 'held-uncertain' ? `held (uncertain): ${a.condition.reason}${changes}` : `held${changes}`;
    }
    default:
      return '';
  }
}

/** A held unit whose deletion started or was requested: it pauses where it is. */
function heldDeleting(plan: UnitPlan): boolean {
  return plan.desired?.deletion !== undefined || plan.desired?.teardownRequest !== undefined;
}

/** Why a unit starts, for its start line: `[dev/db] starting Command (reconcile): no receipt`. */
export function startReason(plan: UnitPlan): string {
  const a = plan.action;
  if (a.type === 'teardown')
    return a.condition
      ? `${deletionWhy(plan, a.reason)}; ${a.condition.type === 'uncertain' ? 'converging uncertain teardown' : 'retrying failure'}`
      : deletionWhy(plan, a.reason);
  if (a.type !== 'execute') return a.type;
  if (a.reason === 'converge-uncertain') return 'converging uncertain unit';
  if (a.reason === 'drift-repair') return 'repairing drift';
  if (a.reason === 'reapply') return 'reapplied on request';
  if (a.reason === 'retry-failure') return 'retrying failure';
  return a.reason === 'key-changed' ? keyChangedText(plan.keyChanges) : 'no receipt';
}

/** Why a held unit or one on its way out is left alone (`nyl verify` checks only active units). */
export function notReconciledDetail(desired: DesiredUnitDoc | undefined): string | undefined {
  switch (notReconciled(desired)) {
    case 'held':
      return `it is held${desired!.hold?.by ? ` by ${desired!.hold.by}` : ''}: a held unit is left as it is until nyl resume`;
    case 'retained':
      return 'it is a retained tombstone: nothing reconciles it any more';
    case 'deleting':
      return 'it is being deleted: its teardown has started';
    case 'pending-teardown':
      return 'it is leaving: its teardown waits for --allow-teardown';
    default:
      return undefined;
  }
}
