/**
 * What the planner decides for a unit: an action, a machine reason code and the data behind it.
 *
 * Every consumer (the run engine, the no-op fast path, `nyl status`, the importer, recover, and
 * later plan, teardown and approvals) reads these; none decides again. Human text is rendered
 * from the reason by ./reasons.ts and never parsed back.
 */
import type { KeyReads } from '../project/execution-key';
import type { KeyChange } from './key-changes';
import type { Diagnostic } from '../errors/diagnostic';
import type { ConditionRecord, DesiredUnitDoc, DriftRecord, HoldRecord, ObservedUnitDoc } from '../state/documents';
import type { UnitResource } from '../project/types';

/** A dependency a unit waits for, by the JSON pointer of its dependsOn entry or reference. */
export interface Wait {
  pointer: string;
  unit: string;
  reason: 'no-current-receipt';
}

/** Why a unit is being deleted: it left source (or the selector), an operator asked, or its kind changed. */
export type DeletionCause = 'source' | 'request' | 'kind-change';

/**
 * Why a teardown waits (result pending-teardown, exit 2); `cause` says why the unit is deleted. A
 * teardown caused by source (or a kind change) starts only with --allow-teardown.
 */
export type TeardownWait = { cause: DeletionCause } & (
  | { reason: 'needs-allow-teardown' }
  /** Consumers first: these dependents are torn down first, in this run. */
  | { reason: 'consumers-first'; dependents: string[] }
  /** Units with an incarnation still depend on it (and are not torn down now). */
  | { reason: 'dependents-remain'; dependents: string[] }
  /** Retained tombstones cite it: --allow-dependents, or forget them (NYL-TEARDOWN-HAS-DEPENDENTS). */
  | { reason: 'cited-by-tombstones'; dependents: string[] }
  /**
   * --unit does no lifecycle work; a run without it deletes the unit (or its old incarnation)
   * first, with --allow-teardown when `allowTeardown` (a source-caused teardown not started yet).
   */
  | { reason: 'lifecycle-excluded'; allowTeardown: boolean }
);

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
  | 'converge-uncertain'
  /** `nyl verify` observed drift of its current receipt, and the environment repairs drift. */
  | 'drift-repair'
  /** --reapply --unit names it: it runs again although its receipt is current. */
  | 'reapply';

/**
 * Why an execution needs an approval: the unit declares `approval.required`, or it is not safe to
 * run again (recovery manual) and this execution repeats it on purpose (a drift repair, a
 * --reapply) or runs without the lease that guards it (--local). `digest-mismatch`: a plan-bound
 * approval named a digest other than the plan this run made.
 */
export type ApprovalNeed = 'approval-required' | 'manual-drift-repair' | 'manual-reapply' | 'manual-local' | 'digest-mismatch';

/** The approval an execution consumes: bound to the key it resolves to, or to a reviewed plan's digest. */
export type GrantedApproval = { form: 'desired'; executionKey: string; all: boolean } | { form: 'plan'; digest: string; executionKey: string };

export type Action =
  | { type: 'execute'; reason: ExecuteReason; condition?: ConditionRecord; approval?: GrantedApproval }
  /**
   * Would execute for `executes`, but needs an approval this run does not carry (dependents are
   * blocked). `requireDigest`: only a plan-bound approval will do. `digest`: the digest to approve,
   * when it is known without planning (a kind that does not plan: its execution key) or this run
   * planned it (an approval named another one).
   */
  | { type: 'awaiting-approval'; reason: ApprovalNeed; executes: ExecuteReason; requireDigest: boolean; digest?: string; condition?: ConditionRecord }
  /** Its current receipt drifted and driftRepair is manual: it stays so until --reapply names it. */
  /** state-lost: the tool state its receipt recorded is gone (NYL-BACKEND-STATE-LOST): no run repairs that without an operator. */
  | { type: 'drifted'; reason: 'drift-repair-manual' | 'state-lost'; drift: DriftRecord }
  | { type: 'current'; reason: 'receipt-current' }
  /**
   * Current, but the desired branch holds another decision (a change that failed and was reverted
   * in source, or a receipt imported for a newer key): the run records the document the receipt
   * was produced for (`next`) again, so that the desired branch says what Nyl decided.
   */
  | { type: 'current'; reason: 'desired-restored' }
  /**
   * Current on the preparation its desired document recorded, because what its driver resolves is
   * absent on this machine (`absent`, the driver's account: an image not present locally). It is
   * needed only when the unit executes.
   */
  | { type: 'current'; reason: 'input-absent'; absent: string }
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
  /**
   * Left alone by this run: --unit names other units, --leaving does only lifecycle work, or
   * `nyl teardown` tears down only the units it was asked for.
   */
  | { type: 'skip'; reason: 'not-selected' | 'leaving-only' | 'teardown-only' }
  /**
   * The driver must look something up before the execution key exists (an image digest).
   * `recordedStands`: the preparation its desired document recorded keeps the unit current, so if
   * the driver finds its input absent on this machine, the run keeps that preparation (the unit is
   * then current, `input-absent`) instead of failing the unit.
   */
  | { type: 'prepare'; reason: 'driver-input'; recordedStands?: true }
  /**
   * Lifecycle: the driver tears the unit down (consumers first). `next` is its deleting document.
   * allowedDependents: tombstones that cite it, overridden by --allow-dependents.
   */
  | { type: 'teardown'; reason: DeletionCause; condition?: ConditionRecord; allowedDependents?: string[] }
  /** Retain: the unit left; its desired file becomes a tombstone that keeps its receipt. */
  | { type: 'retain'; reason: 'left-ownership-set' }
  /** A retained tombstone: nothing reconciles it until `nyl teardown --unit` or `nyl state forget`. */
  | { type: 'retained'; reason: 'tombstone' }
  /** Release (or a kind change under Retain): resources stay; the desired file goes, an observed record stays. */
  | { type: 'release'; reason: 'left-ownership-set' | 'kind-change' }
  | ({ type: 'pending-teardown' } & TeardownWait)
  /** Torn down by this run while still in the ownership set: the next reconcile starts a new incarnation. */
  | { type: 'removed'; reason: 'torn-down-in-run' }
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
  /**
   * A waiting unit's rendering once its dependencies ran, for review: outputs of units that
   * execute first read `(known after apply)` (./preview.ts). Never executed, never keyed.
   */
  preview?: Record<string, unknown>;
  executionKey?: string;
  /** What the unit reads besides its spec (source objects, trigger runs, secret digests): part of its key. */
  reads?: KeyReads;
  /** The files under the directories it reads, by path: recorded for the next plan's review, not keyed. */
  readFiles?: Record<string, string>;
  /** Why its key changed since its receipt, read by read (./key-changes.ts), when it executes for `key-changed`. */
  keyChanges?: KeyChange[];
  /**
   * The execution key an approval binds to, set when the planner asked for an approval: the
   * execution key, or for a unit without an incarnation yet the key with a placeholder uid (the
   * run mints the real one), so that it can be reviewed and approved ahead.
   */
  approvalKey?: string;
  /** The rendering is a driver's preparation of the rendering with this digest (desired: preparedFrom). */
  preparedFrom?: string;
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
  return plan.action.type !== 'execute' && plan.action.type !== 'teardown' && plan.next !== undefined;
}

/** Lifecycle work a run applies after its execution waves: a teardown, a tombstone, a release. */
export function isLifecycleWork(plan: UnitPlan): boolean {
  const type = plan.action.type;
  return type === 'teardown' || type === 'retain' || type === 'release';
}

/** Units whose deletion this plan is about: they left, or are torn down (the table's leaving section). */
export function inLeavingSection(plan: UnitPlan): boolean {
  switch (plan.action.type) {
    case 'teardown':
    case 'retain':
    case 'release':
    case 'pending-teardown':
    case 'removed':
      return true;
    case 'held':
      return plan.action.reason === 'held-leaving';
    default:
      return false;
  }
}

/** A current unit whose desired document a run writes again (listed as `desiredRestored`). */
export function restoresDesired(plan: UnitPlan): boolean {
  return plan.action.type === 'current' && plan.action.reason === 'desired-restored' && plan.next !== undefined;
}

/** What a unit that would start (execute, tear down) is once the run starts nothing more. */
export function runStopped(stopped: { reason: StopReason; after?: string }): Action {
  return { type: 'blocked', reason: 'run-stopped', stop: stopped.reason, ...(stopped.after ? { after: stopped.after } : {}) };
}

/** Teardowns the engine runs now, in the plan's order (consumers first). */
export function teardowns(plan: Plan): UnitPlan[] {
  return plan.order.map((n) => plan.units.get(n)!).filter((u) => u.action.type === 'teardown');
}

/** Units the engine executes now: names break ties within a parallel wave (code-unit order). */
export function executable(plan: Plan): UnitPlan[] {
  return [...plan.units.values()].filter((u) => u.action.type === 'execute').sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
