/**
 * The run engine: an applier of the planner's decisions. It asks the planner, applies a wave of
 * what it says (prepare, or execute), and asks again, until nothing is left to execute; then a
 * lifecycle wave (tombstones, releases, and teardowns consumers first), and again, since a
 * teardown lets the next consumer-first one go and a kind change's new incarnation execute. Then
 * it waits for the last checkpoints and returns the final plan with what it dispatched.
 *
 * Durability: before a wave's drivers start, one write records that they started, carrying the
 * lease (so a holder that lost it starts nothing); each unit's checkpoint is written as soon as
 * it ends (group commit). The engine never decides what a unit does: a unit it did not dispatch
 * is reported by its final action.
 */
import type { LeaseHandle } from '../lease/lease';
import { executable, type Plan, teardowns } from '../plan/actions';
import type { LifecycleOptions } from '../plan/lifecycle';
import type { RunMode } from '../plan/planner';
import type { DesiredUnitDoc, ObservedUnitDoc } from '../state/documents';
import type { Runtime } from '../util/runtime';
import { RunKeys } from './secrets';
import { GroupCommit } from './checkpoints';
import { executeWave, noteStops } from './execute-wave';
import { prepareWave } from './prepare-wave';
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

/** Applies waves until the planner has nothing left to execute, tear down, retain or release. */
async function applyWaves(ctx: WaveContext): Promise<void> {
  for (;;) {
    await ctx.signals.poll(true);
    noteStops(ctx);
    const plan = stopAtApprovalWait(ctx, ctx.state.plan());
    if (await prepareWave(plan, ctx)) continue;
    const wave = executable(plan);
    if (wave.length > 0) await executeWave(wave, ctx);
    else if (!(await lifecycleWave(plan, ctx))) return;
  }
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

/**
 * A lifecycle wave: tombstones and releases need no driver and apply at once; the teardowns the
 * planner allows now (consumers first: their consumers are gone) run like an execution wave.
 * False when there is no lifecycle work left.
 */
async function lifecycleWave(plan: Plan, ctx: WaveContext): Promise<boolean> {
  const instant = [...plan.units.values()].filter((u) => u.action.type === 'retain' || u.action.type === 'release');
  for (const unit of instant) ctx.state.applyInstant(unit);
  const wave = teardowns(plan);
  if (wave.length > 0) await executeWave(wave, ctx);
  return instant.length > 0 || wave.length > 0;
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
