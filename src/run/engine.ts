/**
 * The run engine: an applier of the planner's decisions. It asks the planner, applies a wave of
 * what it says (prepare, or execute), and asks again, until nothing is left to apply; then it
 * waits for the last checkpoints and returns the final plan with what it dispatched.
 *
 * Durability: before a wave's drivers start, one write records that they started, carrying the
 * lease (so a holder that lost it starts nothing); each unit's checkpoint is written as soon as
 * it ends (group commit). The engine never decides what a unit does: a unit it did not dispatch
 * is reported by its final action.
 */
import type { LeaseHandle } from '../lease/lease';
import { executable, type Plan } from '../plan/actions';
import type { ObservedUnitDoc } from '../state/documents';
import type { Runtime } from '../util/runtime';
import { GroupCommit } from './checkpoints';
import { executeWave, noteStops, type WaveContext } from './execute-wave';
import { prepareWave } from './prepare-wave';
import type { RunRef } from './run-ref';
import { type RunInputs, RunState, type UnitOutcome } from './run-state';
import type { HoldSignal } from './signals';
import { type SignalSource, SignalWatch } from './signal-watch';
import { UnitOutput, type UnitOutputOptions } from './unit-output';
import { Workspace } from './workspace';

export interface EngineOptions {
  /** --unit/--units: execute only these. */
  only?: ReadonlySet<string>;
  failFast: boolean;
  concurrency: number;
  killGraceMs: number;
  /** --quiet-unit-output and --unit-log-dir. */
  output?: UnitOutputOptions;
  /** Minimum time between signal reads inside a wave; a network remote wants it longer. */
  signalPollMs?: number;
}

export interface EngineInput extends RunInputs {
  rt: Runtime;
  runRef: RunRef;
  lease: LeaseHandle;
  /** Unpacks the source commit into a directory (once, on first use). */
  materialize: (dest: string) => Promise<string>;
  signals?: SignalSource;
  options: EngineOptions;
}

export interface EngineResult {
  /** The planner's final word on every unit. */
  plan: Plan;
  /** Units whose driver ran, with what happened. */
  outcomes: Map<string, UnitOutcome>;
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
}

/** Applies waves until the planner has nothing left to execute. */
async function applyWaves(ctx: WaveContext): Promise<void> {
  for (;;) {
    await ctx.signals.poll(true);
    noteStops(ctx);
    const plan = ctx.state.plan();
    if (await prepareWave(plan, ctx)) continue;
    const wave = executable(plan);
    if (wave.length === 0) return;
    await executeWave(wave, ctx);
  }
}

function contextOf(input: EngineInput, state: RunState, workspace: Workspace): WaveContext {
  const { rt, options } = input;
  return {
    rt,
    state,
    runRef: input.runRef,
    lease: input.lease,
    commits: new GroupCommit(rt, input.runRef),
    signals: new SignalWatch(input.signals, rt.clock, state, options.signalPollMs),
    output: new UnitOutput(input.env.name, options.output ?? { quiet: false }, rt.log),
    drivers: input.drivers,
    workspace,
    concurrency: options.concurrency,
    failFast: options.failFast,
    killGraceMs: options.killGraceMs,
  };
}

function resultOf(ctx: WaveContext, plan: Plan): EngineResult {
  const { state } = ctx;
  const result: EngineResult = {
    plan,
    outcomes: state.outcomes,
    dispatchOrder: state.dispatchOrder,
    cancelled: ctx.rt.cancel.aborted,
    lost: ctx.lease.lost,
    unavailable: state.stopped?.reason === 'state-unavailable',
    unpushed: ctx.commits.unpushed(),
    observed: state.observed,
    signals: ctx.signals.seen,
  };
  if (state.stopped?.reason === 'fail-fast' && state.stopped.after) result.stoppedAfter = state.stopped.after;
  return result;
}

export async function runEngine(input: EngineInput): Promise<EngineResult> {
  const { rt } = input;
  const state = new RunState({ ...input, runId: input.runRef.run, now: rt.clock.now(), ...(input.options.only ? { only: input.options.only } : {}) });
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
