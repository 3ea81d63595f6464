/**
 * A run's progress: the observed documents as units end, holds delivered to it, why it stopped,
 * and what it dispatched. `plan()` asks the planner about this progress; the engine applies the
 * answer. Nothing here decides what a unit does.
 */
import { createHash } from 'node:crypto';
import type { Outputs } from '../drivers/contract';
import type { DriverSet } from '../drivers/registry';
import type { DeliveredHold, Plan, StopReason, UnitPlan } from '../plan/actions';
import { currentUid, ownedGraph, planEnvironment, type Prepared, sameDecision } from '../plan/planner';
import { canonicalJson } from '../project/execution-key';
import type { EnvironmentResource, Project } from '../project/types';
import type { ConditionRecord, DesiredUnitDoc, ObservedUnitDoc, ReceiptRecord } from '../state/documents';
import { type Checkpoint, conditionOf, receiptOf } from '../state/run-record';
import { uuidv7 } from '../util/uuid';

/** What happened to a unit the run dispatched. */
export interface UnitOutcome {
  name: string;
  kind: string;
  result: 'executed' | 'failed' | 'uncertain';
  /** One line: empty for an execution, else the failure or uncertainty. */
  detail: string;
  uid: string;
  /** Absent when the unit failed before its key existed (a failed prepare). */
  executionKey?: string;
  durationMs: number;
  /** The desired document the run decided, when it differs from the recorded one. */
  desired?: DesiredUnitDoc;
  receipt?: ReceiptRecord;
  condition?: ConditionRecord;
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

export interface RunStateInput extends RunInputs {
  runId: string;
  only?: ReadonlySet<string>;
  /** Milliseconds since the epoch: new incarnations' uids are minted from it. */
  now: number;
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
  readonly dispatchOrder: string[] = [];
  readonly prepared = new Map<string, Prepared>();
  stopped: { reason: StopReason; after?: string } | undefined;
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
      run: { runId: input.runId, ...(input.only ? { only: input.only } : {}), holds: this.holds, ...(this.stopped ? { stopped: this.stopped } : {}) },
    });
    return this.lastPlan;
  }

  /** The run starts no further unit (the first reason is kept). */
  stop(reason: StopReason, after?: string): void {
    this.stopped ??= { reason, ...(after ? { after } : {}) };
  }

  deliverHold(unit: string, hold: DeliveredHold): void {
    if (!this.holds.has(unit)) this.holds.set(unit, hold);
  }

  dispatched(name: string): void {
    this.dispatchOrder.push(name);
  }

  /** Records a unit's checkpoint: the receipt or the condition the unit now has. */
  record(plan: UnitPlan, cp: Checkpoint, durationMs: number): UnitOutcome {
    const run = this.input.runId;
    const base = { name: plan.name, kind: plan.kind, uid: plan.uid!, ...(plan.executionKey ? { executionKey: plan.executionKey } : {}), durationMs };
    const decided = plan.next && !sameDecision(this.input.desired.get(plan.name), plan.next) ? { desired: plan.next } : {};
    if (decided.desired) this.desired.set(plan.name, decided.desired);
    let result: UnitOutcome;
    if (cp.result === 'receipt') {
      const receipt = receiptOf(run, { executionKey: plan.executionKey!, desired: plan.next! }, cp);
      this.observed.set(plan.name, { uid: plan.uid!, receipt, lastRun: { run, result: 'executed', at: cp.finishedAt } });
      result = { ...base, ...decided, result: 'executed', detail: '', receipt };
    } else {
      const type = cp.result === 'uncertain' ? 'uncertain' : 'failed';
      const condition = conditionOf(run, cp);
      const prev = this.observed.get(plan.name);
      this.observed.set(plan.name, { ...(prev?.uid === plan.uid ? prev : {}), uid: plan.uid!, condition, lastRun: { run, result: type, at: cp.finishedAt } });
      result = { ...base, ...decided, result: type, detail: cp.reason ?? '', condition };
    }
    this.outcomes.set(plan.name, result);
    return result;
  }
}

/** Uids for every owned unit without an incarnation: used only by those that execute. */
function mintUids(input: RunStateInput): Map<string, string> {
  const uids = new Map<string, string>();
  for (const name of ownedGraph(input.project, input.env).order) {
    if (!currentUid(input.desired.get(name), input.generation)) uids.set(name, uuidv7(input.now));
  }
  return uids;
}

/**
 * A driver's outputs as state records them: plain values, and for each sensitive output only its
 * sha256, so that a sensitive value never enters a commit.
 */
export function splitOutputs(outputs: Outputs): { outputs: Record<string, unknown>; sensitiveOutputs?: Record<string, { sha256: string }> } {
  const plain: Record<string, unknown> = {};
  const sensitive: Record<string, { sha256: string }> = {};
  for (const [name, o] of Object.entries(outputs)) {
    if (o.sensitive) sensitive[name] = { sha256: sha256Of(o.value) };
    else plain[name] = o.value;
  }
  return Object.keys(sensitive).length > 0 ? { outputs: plain, sensitiveOutputs: sensitive } : { outputs: plain };
}

function sha256Of(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;
}
