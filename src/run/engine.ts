/**
 * The run engine: an applier of the planner's decisions, as a ready queue. It asks the planner,
 * queues what the plan lets start now (prepare phases, executions: a wave), and asks again
 * whenever a unit ends and nothing already queued can take its slot, so a unit starts as soon as
 * its own dependencies have ended, never waiting for an unrelated sibling. When nothing executes
 * or prepares any more, lifecycle work: tombstones and releases at once, and the teardowns the
 * planner allows now (consumers first), queued the same way; a teardown's end lets the next
 * consumer-first one go, and a kind change's new incarnation execute. Then it waits for the last
 * checkpoints and returns the final plan with what it dispatched.
 *
 * Durability: before a wave's drivers start, one write records that they started, carrying the
 * lease (so a holder that lost it starts nothing) and the checkpoints of the units whose end let
 * them go; a unit's checkpoint otherwise goes to group commit as soon as it ends. The engine
 * never decides what a unit does: a unit it did not dispatch is reported by its final action.
 */
import type { LeaseHandle } from '../lease/lease';
import { executable, type Plan, teardowns } from '../plan/actions';
import type { LifecycleOptions } from '../plan/lifecycle';
import type { RunMode } from '../plan/planner';
import type { DesiredUnitDoc, ObservedUnitDoc } from '../state/documents';
import type { Runtime } from '../util/runtime';
import { RunKeys } from './secrets';
import { type Checkpointed, GroupCommit } from './checkpoints';
import { noteStops, startWave } from './execute-wave';
import { queuePrepares } from './prepare-wave';
import { ReadyQueue } from './ready-queue';
import type { RunRef } from './run-ref';
import { type Approver, type LifecycleDone, type RunInputs, RunState, type UnitOutcome } from './run-state';
import type { ApprovalGrants } from '../plan/input';
import type { HoldSignal } from './signals';
import { type SignalSource, SignalWatch } from './signal-watch';
import { UnitOutput, type UnitOutputOptions } from './unit-output';
import { progressIntervalMs, UnitProgress } from './progress';
import { Workspace } from './workspace';
import type { WaveContext } from './wave-context';

interface EngineOptions {
  /** --unit/--units: execute only these. */
  only?: ReadonlySet<string>;
  failFast: boolean;
  concurrency: number;
  /** --quiet-unit-output and --unit-log-dir. */
  output?: UnitOutputOptions;
  /** Minimum time between signal reads inside a wave; a network remote wants it longer. */
  signalPollMs?: number;
  /** --leaving, or a `nyl teardown` run. */
  mode?: RunMode;
  /** --allow-teardown, --allow-dependents, --allow-incomplete. */
  lifecycle?: LifecycleOptions;
}

interface EngineInput extends RunInputs {
  rt: Runtime;
  runRef: RunRef;
  lease: LeaseHandle;
  /** Unpacks the source commit (or a teardown's own commit) into a directory (once each, on first use). */
  materialize: (dest: string, commit?: string) => Promise<string>;
  /** Who runs it ("Name <email>"): released records name them. */
  by: string;
  signals?: SignalSource;
  options: EngineOptions;
  /** --approve/--approve-all, and who approves. */
  approvals?: ApprovalGrants;
  approver?: Approver;
  /** --reapply with --unit, and its --reason. */
  reapply?: ReadonlySet<string>;
  reapplyReason?: string;
  /** A --local run. */
  local?: boolean;
}

export interface EngineResult {
  /** The planner's final word on every unit. */
  plan: Plan;
  /** Units whose driver executed them, with what happened. */
  outcomes: Map<string, UnitOutcome>;
  /** Units whose driver tore them down, with what happened. */
  teardownOutcomes: Map<string, UnitOutcome>;
  /** Units whose driver started, in dispatch order. */
  dispatchOrder: string[];
  /** The unit after whose failure --fail-fast stopped the run. */
  stoppedAfter?: string;
  cancelled: boolean;
  lost: boolean;
  /** The state repository could not be reached: the run started nothing more. */
  unavailable: boolean;
  /** Units whose checkpoints never reached the run ref (they wait for the run's last push). */
  unpushed: string[];
  /** The observed documents as the run leaves them (receipts and conditions it recorded). */
  observed: Map<string, ObservedUnitDoc>;
  /** Every signal the run read; its transition push deletes them. */
  signals: HoldSignal[];
  /** The desired documents as the run leaves them (decisions, removals, tombstones, releases). */
  desired: Map<string, DesiredUnitDoc>;
  /** Tombstones kept and units released by this run. */
  lifecycleDone: Map<string, LifecycleDone>;
}

/**
 * Applies waves until the planner has nothing left to execute, tear down, retain or release and
 * nothing runs. Each turn is a dispatch point: what the plan lets start now and the queue does
 * not hold yet is the next wave.
 */
async function applyWaves(ctx: WaveContext): Promise<void> {
  const queue = new ReadyQueue(ctx.concurrency, ctx.commits);
  try {
    for (;;) {
      const plan = await planAfterSignals(queue, ctx);
      const riding = queue.takeEnded();
      const more = await dispatch(plan, riding, queue, ctx);
      if (!more && queue.idle) return;
      await queue.next();
      // Units that end at the same moment make one dispatch point (one write), not one each.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  } finally {
    // On an error too: no unit outlives the loop, and no checkpoint stays behind in the queue.
    await queue.settle();
    for (const cp of queue.takeEnded()) ctx.commits.add(cp.unit, cp.file, cp.content);
  }
}

/**
 * The plan at a dispatch point, after a look at the hold signals. Where the barrier between waves
 * used to be (nothing runs), the look reads the signals whatever the poll interval, but only when
 * the plan has something left to start: a hold changes nothing for a unit that started or ended,
 * and the run's end reads them anyway (one network round trip less per run). A plan is never
 * used across a read: units end while it is on its way, and a unit that ended is no longer in the
 * queue, so a plan made before would start it again.
 */
async function planAfterSignals(queue: ReadyQueue, ctx: WaveContext): Promise<Plan> {
  noteStops(ctx);
  const plan = stopAtApprovalWait(ctx, ctx.state.plan());
  const force = queue.idle;
  // Nothing runs and nothing is left to start: the run ends here, and its end reads the signals.
  if (force && !startsSomething(plan, queue)) return plan;
  if (!ctx.signals.due(force)) return plan;
  await ctx.signals.poll(force);
  noteStops(ctx);
  return stopAtApprovalWait(ctx, ctx.state.plan());
}

/** Does the plan start anything the queue does not hold yet (an execution, a prepare, lifecycle work)? */
function startsSomething(plan: Plan, queue: ReadyQueue): boolean {
  const lifecycle = new Set(['prepare', 'retain', 'release']);
  if ([...plan.units.values()].some((u) => lifecycle.has(u.action.type))) return true;
  return [...executable(plan), ...teardowns(plan)].some((u) => !queue.has(u.name));
}

/**
 * Queues what the plan lets start now: prepare phases and executions, or, once none is left
 * queued or running, lifecycle work. `riding` (checkpoints of units that ended) goes with the
 * wave's started markers, or to group commit when there is no wave. False when the plan had
 * nothing new and nothing was awaited (the engine then waits for a unit to end, or is done).
 */
async function dispatch(plan: Plan, riding: Checkpointed[], queue: ReadyQueue, ctx: WaveContext): Promise<boolean> {
  const executions = executable(plan);
  const preparing = plan.order.some((n) => plan.units.get(n)!.action.type === 'prepare');
  let wave = executions.filter((u) => !queue.has(u.name));
  let instant = false;
  if (executions.length === 0 && !preparing && !queue.executing) {
    instant = applyInstant(plan, ctx);
    wave = teardowns(plan).filter((u) => !queue.has(u.name));
  }
  if (wave.length > 0) await startWave(wave, riding, queue, ctx);
  else for (const cp of riding) ctx.commits.add(cp.unit, cp.file, cp.content);
  // A prepare takes time (registry lookups) and writes nothing: the checkpoints do not wait for it.
  if (preparing && riding.length > 0) await ctx.commits.idle();
  // A plan is never used across an await: a prepare that ended meanwhile left the queue, and what
  // it prepared may execute now. After an await the loop plans again (more), whatever this plan had.
  const awaited = wave.length > 0 || (preparing && riding.length > 0);
  const prepares = preparing && queuePrepares(awaited ? ctx.state.plan() : plan, queue, ctx);
  return prepares || instant || awaited;
}

/**
 * --fail-fast stops at the first approval wait, as at a failure: the run starts no further unit
 * (the planner then reports them blocked by the stop). Returns the plan to apply.
 */
function stopAtApprovalWait(ctx: WaveContext, plan: Plan): Plan {
  if (!ctx.failFast || ctx.state.stopped) return plan;
  const waiting = plan.order.find((n) => plan.units.get(n)!.action.type === 'awaiting-approval');
  if (waiting === undefined) return plan;
  ctx.state.stop('fail-fast', waiting);
  return ctx.state.plan();
}

/** Lifecycle work without a driver: tombstones and releases apply at once. False when there was none. */
function applyInstant(plan: Plan, ctx: WaveContext): boolean {
  const instant = [...plan.units.values()].filter((u) => u.action.type === 'retain' || u.action.type === 'release');
  for (const unit of instant) ctx.state.applyInstant(unit);
  return instant.length > 0;
}

function contextOf(input: EngineInput, state: RunState, workspace: Workspace): WaveContext {
  const { rt, options } = input;
  const keys = new RunKeys(rt.env, input.env.name);
  return {
    rt,
    state,
    runRef: input.runRef,
    lease: input.lease,
    commits: new GroupCommit(rt, input.runRef),
    keys,
    signals: new SignalWatch(input.signals, rt.clock, state, options.signalPollMs, rt.cancel),
    output: new UnitOutput(input.env.name, { ...(options.output ?? { quiet: false }), alwaysMasked: keys.texts() }, rt.log),
    progress: new UnitProgress(input.env.name, rt.clock, rt.log, rt.liveStatus, progressIntervalMs(rt.env)),
    drivers: input.drivers,
    workspace,
    concurrency: options.concurrency,
    failFast: options.failFast,
  };
}

function resultOf(ctx: WaveContext, plan: Plan): EngineResult {
  const { state } = ctx;
  const result: EngineResult = {
    plan,
    outcomes: state.outcomes,
    teardownOutcomes: state.teardownOutcomes,
    dispatchOrder: state.dispatchOrder,
    cancelled: ctx.rt.cancel.aborted,
    lost: ctx.lease.lost,
    unavailable: state.stopped?.reason === 'state-unavailable',
    unpushed: ctx.commits.unpushed(),
    observed: state.observed,
    signals: ctx.signals.seen,
    desired: state.desiredDocs(),
    lifecycleDone: state.lifecycleDone,
  };
  if (state.stopped?.reason === 'fail-fast' && state.stopped.after) result.stoppedAfter = state.stopped.after;
  return result;
}

export async function runEngine(input: EngineInput): Promise<EngineResult> {
  const { rt } = input;
  const { only, mode, lifecycle } = input.options;
  const state = new RunState({
    ...input,
    runId: input.runRef.run,
    now: rt.clock.now(),
    ...(only ? { only } : {}),
    ...(mode ? { mode } : {}),
    ...(lifecycle ? { lifecycle } : {}),
  });
  const workspace = new Workspace(input.runRef.run, input.materialize);
  const ctx = contextOf(input, state, workspace);
  try {
    await applyWaves(ctx);
    await ctx.commits.flush();
    // A hold delivered while the last wave ran still applies: the unit is held as it ran.
    if (!rt.cancel.aborted && !input.lease.lost) await ctx.signals.poll(true);
    noteStops(ctx);
    return resultOf(ctx, state.plan());
  } finally {
    workspace.remove();
  }
}
