/**
 * A run's progress: the observed documents as units end, holds delivered to it, why it stopped,
 * and what it dispatched. `plan()` asks the planner about this progress; the engine applies the
 * answer. Nothing here decides what a unit does.
 */
import type { DriverSet } from '../drivers/registry';
import type { DeletionCause, DeliveredHold, ExecuteReason, Plan, StopReason, UnitPlan } from '../plan/actions';
import type { LifecycleOptions } from '../plan/lifecycle';
import { currentUid, ownedGraph, planEnvironment, type Prepared, type RunMode, sameDecision } from '../plan/planner';
import type { ApprovalGrants } from '../plan/input';
import { isoSeconds } from '../util/clock';
import type { EnvironmentResource, Project } from '../project/types';
import { type ApprovalRecord, type ConditionRecord, type DesiredUnitDoc, type ObservedUnitDoc, type ReceiptRecord, withoutDrift } from '../state/documents';
import { type Checkpoint, conditionOf, receiptOf } from '../state/run-record';
import { uuidv7 } from '../util/uuid';

/** What happened to a unit the run dispatched: an execution, or a teardown (`phase`). */
export interface UnitOutcome {
  name: string;
  kind: string;
  result: 'executed' | 'removed' | 'failed' | 'uncertain';
  phase?: 'teardown';
  /** removed under --allow-incomplete: the driver could not claim the removal. */
  incomplete?: boolean;
  /** A teardown that retained tombstones cite, let through by --allow-dependents. */
  allowedDependents?: string[];
  /** Why a teardown ran: the unit left, was requested, or changed its kind. */
  cause?: DeletionCause;
  /** One line: empty for an execution, else the failure or uncertainty. */
  detail: string;
  uid: string;
  /** Absent when the unit failed before its key existed (a failed prepare). */
  executionKey?: string;
  durationMs: number;
  /** The desired document the run decided, when it differs from the recorded one. */
  desired?: DesiredUnitDoc;
  /** The approval the execution consumed. */
  approval?: ApprovalRecord;
  /** Why it executed (a drift repair and a reapply are listed in the transition commit). */
  executedFor?: ExecuteReason;
  receipt?: ReceiptRecord;
  condition?: ConditionRecord;
}

/** Lifecycle work the run applied without a driver: a tombstone kept, or resources released. */
export interface LifecycleDone {
  name: string;
  kind: string;
  result: 'retained' | 'released';
  uid?: string;
  /** A kind change: the old incarnation was released and a new one follows. */
  kindChange?: boolean;
}

/** What a run plans from: the project at its source commit and the state it starts from. */
export interface RunInputs {
  project: Project;
  env: EnvironmentResource;
  sourceCommit: string;
  generation: number;
  desired: ReadonlyMap<string, DesiredUnitDoc>;
  observed: ReadonlyMap<string, ObservedUnitDoc>;
  drivers: DriverSet;
}

interface RunStateInput extends RunInputs {
  runId: string;
  only?: ReadonlySet<string>;
  /** Milliseconds since the epoch: new incarnations' uids are minted from it. */
  now: number;
  mode?: RunMode;
  lifecycle?: LifecycleOptions;
  /** Who runs it ("Name <email>"), for released records. */
  by: string;
  /** --approve/--approve-all, --reapply and --local of the run. */
  approvals?: ApprovalGrants;
  reapply?: ReadonlySet<string>;
  /** --reason of a --reapply: a driver that waits for an operator's acknowledgement takes it as one. */
  reapplyReason?: string;
  local?: boolean;
  /** Who approves (from --approved-by, CI context or the Git user): recorded with each approval consumed. */
  approver?: Approver;
}

/** Who approves what a run's --approve grants, and where the names come from. */
export interface Approver {
  by: string[];
  source: string;
  asserted: boolean;
}

export class RunState {
  readonly observed: Map<string, ObservedUnitDoc>;
  /**
   * The desired documents with what the run decided so far: the planner then sees a unit the run
   * executed as recorded for its new receipt, not as a decision left behind.
   */
  private readonly desired: Map<string, DesiredUnitDoc>;
  readonly holds = new Map<string, DeliveredHold>();
  readonly outcomes = new Map<string, UnitOutcome>();
  /** Teardowns the run dispatched (a kind change may also execute its unit: both are kept). */
  readonly teardownOutcomes = new Map<string, UnitOutcome>();
  readonly dispatchOrder: string[] = [];
  readonly prepared = new Map<string, Prepared>();
  readonly lifecycleDone = new Map<string, LifecycleDone>();
  stopped: { reason: StopReason; after?: string } | undefined;
  /** Units whose plan in this run had another digest than their approval named: the digest it had. */
  private readonly unapprovedDigests = new Map<string, string>();
  private readonly newUids: Map<string, string>;
  private lastPlan: Plan | undefined;

  constructor(readonly input: RunStateInput) {
    this.observed = new Map(input.observed);
    this.desired = new Map(input.desired);
    this.newUids = mintUids(input);
  }

  plan(): Plan {
    const { input } = this;
    this.lastPlan = planEnvironment({
      ...(this.lastPlan ? { carry: this.lastPlan } : {}),
      project: input.project,
      env: input.env,
      generation: input.generation,
      desired: this.desired,
      observed: this.observed,
      sourceCommit: input.sourceCommit,
      newUids: this.newUids,
      prepared: this.prepared,
      drivers: input.drivers,
      ...(input.lifecycle ? { lifecycle: input.lifecycle } : {}),
      run: {
        runId: input.runId,
        at: isoSeconds(input.now),
        ...(input.only ? { only: input.only } : {}),
        ...(input.mode ? { mode: input.mode } : {}),
        holds: this.holds,
        removed: this.removedForGood(),
        ...(this.stopped ? { stopped: this.stopped } : {}),
        ...(input.approvals ? { approvals: input.approvals } : {}),
        ...(input.reapply ? { reapply: input.reapply } : {}),
        ...(input.local ? { local: true } : {}),
        unapproved: this.unapprovedDigests,
      },
    });
    return this.lastPlan;
  }

  /** Units this run tore down, a kind change's old incarnation aside: not created again in this run. */
  private removedForGood(): Set<string> {
    return new Set([...this.teardownOutcomes.values()].filter((o) => o.result === 'removed' && o.cause !== 'kind-change').map((o) => o.name));
  }

  /**
   * The condition a failed or uncertain checkpoint gives the unit's incarnation, kept with what
   * state knew of that incarnation; its type is the outcome's result.
   */
  private recordCondition(plan: UnitPlan, cp: Checkpoint): { type: 'failed' | 'uncertain'; condition: ConditionRecord } {
    const run = this.input.runId;
    const type = cp.result === 'uncertain' ? 'uncertain' : 'failed';
    const prev = this.observed.get(plan.name);
    const earlier = prev?.uid === plan.uid ? prev?.condition?.toolState : undefined;
    // A tool state an earlier attempt of this incarnation left stays known until a receipt records one.
    const condition = { ...conditionOf(run, cp), ...(cp.toolState ? {} : earlier ? { toolState: earlier } : {}) };
    this.observed.set(plan.name, { ...(prev?.uid === plan.uid ? prev : {}), uid: plan.uid!, condition, lastRun: { run, result: type, at: cp.finishedAt } });
    return { type, condition };
  }

  /** The desired documents as the run leaves them: what it imported and decided, removals included. */
  desiredDocs(): Map<string, DesiredUnitDoc> {
    return this.desired;
  }

  /** Retain or release, which need no driver: the tombstone written, or the desired file dropped with a released record. */
  applyInstant(plan: UnitPlan): void {
    const kindChange = plan.action.type === 'release' && plan.action.reason === 'kind-change';
    const done: LifecycleDone = {
      name: plan.name,
      kind: plan.kind,
      result: plan.action.type === 'retain' ? 'retained' : 'released',
      ...(plan.uid ? { uid: plan.uid } : {}),
      ...(kindChange ? { kindChange } : {}),
    };
    if (plan.action.type === 'retain') this.desired.set(plan.name, plan.next!);
    else this.release(plan.name);
    this.lifecycleDone.set(plan.name, done);
  }

  private release(name: string): void {
    this.desired.delete(name);
    const { condition: _condition, ...kept } = this.observed.get(name) ?? {};
    this.observed.set(name, { ...kept, released: { at: isoSeconds(this.input.now), run: this.input.runId, by: this.input.by } });
  }

  /** The run starts no further unit (the first reason is kept). */
  stop(reason: StopReason, after?: string): void {
    this.stopped ??= { reason, ...(after ? { after } : {}) };
  }

  /** The plan a run made for an approved unit is not the one approved: it waits for a new approval. */
  unapproved(unit: string, digest: string): void {
    this.unapprovedDigests.set(unit, digest);
  }

  deliverHold(unit: string, hold: DeliveredHold): void {
    if (!this.holds.has(unit)) this.holds.set(unit, hold);
  }

  dispatched(name: string): void {
    this.dispatchOrder.push(name);
  }

  /**
   * Records a teardown's checkpoint: a removed unit's files go (it is not created again in this
   * run unless its kind changed); a failed or uncertain one keeps its deleting document and gets
   * the condition.
   */
  recordTeardown(plan: UnitPlan, cp: Checkpoint, durationMs: number): UnitOutcome {
    const cause = plan.action.type === 'teardown' ? { cause: plan.action.reason } : {};
    const base = {
      name: plan.name,
      kind: plan.kind,
      uid: plan.uid!,
      phase: 'teardown' as const,
      durationMs,
      ...cause,
      ...(plan.executionKey ? { executionKey: plan.executionKey } : {}),
    };
    let result: UnitOutcome;
    if (cp.result === 'removed') {
      this.desired.delete(plan.name);
      this.observed.delete(plan.name);
      result = { ...base, result: 'removed', detail: '', ...(cp.incomplete ? { incomplete: true, detail: cp.reason ?? '' } : {}) };
    } else {
      this.desired.set(plan.name, plan.next!);
      const { type, condition } = this.recordCondition(plan, cp);
      result = { ...base, result: type, detail: cp.reason ?? '', condition, desired: plan.next! };
    }
    if (plan.action.type === 'teardown' && plan.action.allowedDependents) result.allowedDependents = plan.action.allowedDependents;
    this.teardownOutcomes.set(plan.name, result);
    return result;
  }

  /**
   * The approval an execution consumes, as its commit and desired document record it: who
   * approved, from where, when, and what it was bound to.
   */
  private approvalOf(plan: UnitPlan, at: string): ApprovalRecord | undefined {
    const grant = plan.action.type === 'execute' ? plan.action.approval : undefined;
    if (!grant) return undefined;
    const approver = this.input.approver ?? { by: [this.input.by], source: 'git', asserted: false };
    const bound = grant.form === 'plan' ? { digest: grant.digest } : { executionKey: plan.executionKey ?? grant.executionKey };
    return { by: approver.by, source: approver.source, ...(approver.asserted ? { asserted: true } : {}), at, ...bound };
  }

  /** Records a unit's checkpoint: the receipt or the condition the unit now has. */
  record(plan: UnitPlan, cp: Checkpoint, durationMs: number): UnitOutcome {
    const run = this.input.runId;
    const executedFor = plan.action.type === 'execute' ? { executedFor: plan.action.reason } : {};
    const base = {
      name: plan.name,
      kind: plan.kind,
      uid: plan.uid!,
      ...(plan.executionKey ? { executionKey: plan.executionKey } : {}),
      durationMs,
      ...executedFor,
    };
    const approval = this.approvalOf(plan, cp.finishedAt);
    // The desired document records the approval its execution consumed; the next decision has none.
    const next = approval && plan.next ? { ...plan.next, approvals: [approval] } : plan.next;
    const decided = next && !sameDecision(this.input.desired.get(plan.name), next) ? { desired: next } : {};
    if (decided.desired) this.desired.set(plan.name, decided.desired);
    let result: UnitOutcome;
    if (cp.result === 'receipt') {
      const receipt = receiptOf(run, { executionKey: plan.executionKey!, desired: next! }, cp);
      this.observed.set(plan.name, {
        ...driftHistoryOf(this.observed.get(plan.name), plan.uid!),
        uid: plan.uid!,
        receipt,
        lastRun: { run, result: 'executed', at: cp.finishedAt },
      });
      result = { ...base, ...decided, result: 'executed', detail: '', receipt, ...(approval ? { approval } : {}) };
    } else {
      const { type, condition } = this.recordCondition(plan, cp);
      result = { ...base, ...decided, result: type, detail: cp.reason ?? '', condition, ...(approval ? { approval } : {}) };
    }
    this.outcomes.set(plan.name, result);
    return result;
  }
}

/** The drift history a new receipt keeps: the observations of the incarnation, the latest among them. */
function driftHistoryOf(prev: ObservedUnitDoc | undefined, uid: string): Pick<ObservedUnitDoc, 'driftHistory'> {
  if (!prev || prev.uid !== uid) return {};
  const kept = withoutDrift(prev).driftHistory;
  return kept && kept.length > 0 ? { driftHistory: kept } : {};
}

/**
 * Uids for every owned unit without an incarnation, and for one whose kind changed (its old
 * incarnation goes first): used only by those that execute.
 */
function mintUids(input: RunStateInput): Map<string, string> {
  const uids = new Map<string, string>();
  const { byName, order } = ownedGraph(input.project, input.env);
  for (const name of order) {
    const desired = input.desired.get(name);
    const kindChanged = desired?.kind !== undefined && desired.kind !== byName.get(name)!.kind;
    if (!currentUid(desired, input.generation) || kindChanged) uids.set(name, uuidv7(input.now));
  }
  return uids;
}
