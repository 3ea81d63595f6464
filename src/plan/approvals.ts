/**
 * The planner's gates on an execution it decided: drift (a current receipt that `nyl verify`
 * observed drifted) and approvals. Pure, like the planner that calls it.
 *
 * Drift: a drifted receipt executes again (`drift-repair`) when the Environment's `driftRepair`
 * is converge; under `driftRepair: manual` the unit stays `drifted` until `--reapply` names it.
 *
 * Approvals: an execution needs one when the unit declares `approval.required`, or when it is not
 * safe to run again (recovery manual) and this execution repeats it on purpose (a drift repair, a
 * --reapply) or runs without the remote lease that guards it (--local). A run's `--approve U` is
 * desired-bound (it covers the execution key the unit resolves to in that run), `--approve
 * U=DIGEST` plan-bound (./digest.ts); `--approve-all` covers every candidate except units with
 * `requireDigest`. Without one the unit is `awaiting-approval` and its dependents are blocked.
 */
import { type KindSet } from '../drivers/kinds';
import type { UnitResource } from '../project/types';
import type { ConditionRecord, DriftRecord, ObservedUnitDoc, ReceiptRecord } from '../state/documents';
import type { Action, ApprovalNeed, ExecuteReason, GrantedApproval } from './actions';
import type { PlanInput } from './input';
import { recoveryPolicy } from './unit-view';

/** The unit's approval policy as source declares it. */
export function approvalPolicy(unit: UnitResource): { required: boolean; requireDigest: boolean } {
  const declared = (unit.spec.approval ?? {}) as { required?: unknown; requireDigest?: unknown };
  return { required: declared.required === true, requireDigest: declared.requireDigest === true };
}

/** Can an execution of this unit ever need an approval? Approving one that cannot is an error. */
export function mayNeedApproval(unit: UnitResource, kinds: KindSet): boolean {
  return approvalPolicy(unit).required || recoveryPolicy(unit.spec.recovery, unit.kind, kinds) === 'manual';
}

/** The drift observation that speaks of this receipt, if it says drifted. */
function driftOf(observed: ObservedUnitDoc | undefined, receipt: ReceiptRecord): DriftRecord | undefined {
  const drift = observed?.drift;
  if (drift?.status !== 'drifted') return undefined;
  return drift.receipt === undefined || drift.receipt === receipt.run ? drift : undefined;
}

/**
 * What a unit with a current receipt does about reapply and drift: execute again for a reason, stay
 * drifted, or nothing (undefined: it is current).
 */
export function currentReceiptAction(
  name: string,
  observed: ObservedUnitDoc | undefined,
  receipt: ReceiptRecord,
  input: PlanInput,
): ExecuteReason | Action | undefined {
  // Once: the receipt this run produced is the reapplied one.
  if (input.run?.reapply?.has(name) && receipt.run !== input.run.runId) return 'reapply';
  const drift = driftOf(observed, receipt);
  if (!drift) return undefined;
  // Running again would plan against a state that is not the unit's: only --reapply, with a reason.
  if (drift.code === 'NYL-BACKEND-STATE-LOST') return { type: 'drifted', reason: 'state-lost', drift };
  return input.env.spec.driftRepair === 'manual' ? { type: 'drifted', reason: 'drift-repair-manual', drift } : 'drift-repair';
}

/** Why this execution needs an approval, if it does. */
function approvalNeed(unit: UnitResource, reason: ExecuteReason, input: PlanInput): ApprovalNeed | undefined {
  if (approvalPolicy(unit).required) return 'approval-required';
  if (recoveryPolicy(unit.spec.recovery, unit.kind, input.drivers) !== 'manual') return undefined;
  if (reason === 'drift-repair') return 'manual-drift-repair';
  if (reason === 'reapply') return 'manual-reapply';
  return input.run?.local ? 'manual-local' : undefined;
}

/** The approval the run grants this unit, if any. */
function grantOf(unit: UnitResource, executionKey: string, input: PlanInput): GrantedApproval | undefined {
  const grants = input.run?.approvals;
  if (!grants) return undefined;
  const named = grants.units.get(unit.name);
  if (named?.digest !== undefined) return { form: 'plan', digest: named.digest, executionKey };
  if (approvalPolicy(unit).requireDigest) return undefined;
  if (named || grants.all) return { form: 'desired', executionKey, all: !named };
  return undefined;
}

/**
 * The execution as decided, or awaiting an approval. `approvalKey` is the execution key an
 * approval binds to (./planner.ts approvalKeyOf). A plan-bound approval of a kind that does not
 * plan names that key: compared here. A planning kind's digest is compared by the run
 * once it planned (`run.unapproved` then says what it planned).
 */
export function gateExecution(
  unit: UnitResource,
  reason: ExecuteReason,
  approvalKey: () => string | undefined,
  planning: boolean,
  condition: ConditionRecord | undefined,
  input: PlanInput,
): Action {
  const execute: Action = { type: 'execute', reason, ...(condition ? { condition } : {}) };
  const need = approvalNeed(unit, reason, input);
  if (!need) return execute;
  const executionKey = approvalKey();
  const waiting = (why: ApprovalNeed, digest: string | undefined): Action => ({
    type: 'awaiting-approval',
    reason: why,
    executes: reason,
    requireDigest: approvalPolicy(unit).requireDigest,
    ...(digest ? { digest } : {}),
    ...(condition ? { condition } : {}),
  });
  // The digest to approve: a kind that does not plan is approved by its execution key.
  const known = planning ? undefined : executionKey;
  const unapproved = input.run?.unapproved?.get(unit.name);
  if (unapproved !== undefined) return waiting('digest-mismatch', unapproved);
  const grant = executionKey === undefined ? undefined : grantOf(unit, executionKey, input);
  if (!grant) return waiting(need, known);
  if (grant.form === 'plan' && !planning && grant.digest !== executionKey) return waiting('digest-mismatch', known);
  return { ...execute, approval: grant } as Action;
}
