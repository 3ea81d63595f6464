/**
 * One execution wave (or a lifecycle wave's teardowns): record that its units start (one push that carries the lease, so a holder
 * that lost it starts nothing), then run them with bounded concurrency. Before each unit
 * starts, the run looks for delivered holds and for a reason to stop; a unit it then does not
 * start gets a `not-started` checkpoint, so an importer never mistakes it for an uncertain one.
 * Each unit's checkpoint goes to the group commit as soon as the unit ends.
 */
import { type ApplyOutcome, type DriverContext, type Failure, failure, type TeardownOutcome } from '../drivers/contract';
import type { DriverSet } from '../drivers/registry';
import type { LeaseHandle } from '../lease/lease';
import type { UnitPlan } from '../plan/actions';
import { receiptOfIncarnation } from '../plan/incarnation';
import { describeStop, startReason } from '../plan/reasons';
import { type Checkpoint, type RunUnitDoc, serializeRunUnit, unitFile, withCheckpoint } from '../state/run-record';
import { isoSeconds } from '../util/clock';
import { firstLine } from '../util/text';
import type { Runtime } from '../util/runtime';
import type { GroupCommit } from './checkpoints';
import { runPool } from './pool';
import type { RunRef } from './run-ref';
import { type RunState, splitOutputs } from './run-state';
import type { SignalWatch } from './signal-watch';
import type { UnitOutput } from './unit-output';
import { executeUnit, teardownUnit } from './unit-execution';
import type { Workspace } from './workspace';

export interface WaveContext {
  rt: Runtime;
  state: RunState;
  runRef: RunRef;
  lease: LeaseHandle;
  commits: GroupCommit;
  signals: SignalWatch;
  output: UnitOutput;
  drivers: DriverSet;
  workspace: Workspace;
  concurrency: number;
  failFast: boolean;
  killGraceMs: number;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** Is this unit torn down (not executed) in the wave? */
function tearsDown(plan: UnitPlan): boolean {
  return plan.action.type === 'teardown';
}

/** Where the unit's record goes in the run ref: a teardown has its own (a kind change also executes the unit). */
function recordFile(plan: UnitPlan): string {
  return unitFile(plan.name, tearsDown(plan) ? 'teardown' : undefined);
}

/**
 * A unit's started marker, and its text (its checkpoint is written in front of it later). A
 * teardown's carries its deleting document and the key of the receipt it removes (`none` without one).
 */
function startedMarker(plan: UnitPlan, startedAt: string): string {
  const doc: RunUnitDoc = { unit: plan.name, uid: plan.uid!, kind: plan.kind, executionKey: plan.executionKey ?? 'none', startedAt, desired: plan.next! };
  if (tearsDown(plan)) doc.phase = 'teardown';
  return serializeRunUnit(doc);
}

/**
 * The lease with a started-markers push: unchanged (a fence) while its deadline is far, renewed
 * once half of it has passed, so that the wave's units start well within the deadline.
 */
function startMode(lease: LeaseHandle, now: number): 'fence' | 'renew' {
  return lease.deadlineMs - now < lease.timing.durationMs / 2 ? 'renew' : 'fence';
}

/** A unit of the wave ended without starting: its record says so, so no importer takes it for uncertain. */
function notStartedRecord(marker: string, reason: string, ctx: WaveContext): string {
  return withCheckpoint(marker, { result: 'not-started', finishedAt: isoSeconds(ctx.rt.clock.now()), reason });
}

/**
 * Pushes the wave's started markers (with the previous wave's last checkpoints, if any wait),
 * with the lease: a holder that lost its lease starts nothing. False when the units may not start.
 */
async function recordStarts(wave: UnitPlan[], markers: Map<string, string>, ctx: WaveContext): Promise<boolean> {
  const files = new Map(wave.map((u) => [recordFile(u), markers.get(u.name)!]));
  ctx.runRef.queue(files);
  const riding = ctx.commits.takeNames();
  const message = `nyl: start ${wave.map((u) => u.name).join(', ')}${riding.length > 0 ? `; checkpoint ${riding.join(', ')}` : ''}\n`;
  const written = await ctx.runRef.push(startMode(ctx.lease, ctx.rt.clock.now()), message).catch(() => undefined);
  if (!written?.ok) {
    ctx.state.stop(written?.lost || ctx.lease.lost ? 'lease-lost' : 'state-unavailable');
    // A renewal may have carried the markers before this push failed: each unit's record says it
    // never started (written when the run marks its end), so an importer never takes it for uncertain.
    const why = describeStop(ctx.state.stopped!.reason);
    ctx.runRef.queue(new Map(wave.map((u) => [recordFile(u), notStartedRecord(markers.get(u.name)!, why, ctx)])));
    return false;
  }
  ctx.commits.resume();
  await ctx.rt.faults.reach('after-started-push', wave.map((u) => u.name));
  return true;
}

/** Run-wide reasons to start nothing more: cancellation, a lost lease, checkpoints that cannot be pushed. */
export function noteStops(ctx: Pick<WaveContext, 'rt' | 'lease' | 'commits' | 'state'>): void {
  if (ctx.rt.cancel.aborted) ctx.state.stop('cancelled');
  if (ctx.lease.lost) ctx.state.stop('lease-lost');
  const failed = ctx.commits.failure;
  if (failed) ctx.state.stop(failed.lost ? 'lease-lost' : 'state-unavailable');
}

/** A queued unit starts only if a write confirmed the lease within this long (one taken over meanwhile stops it). */
const CONFIRM_WITHIN_MS = 1000;

/** Why this unit must not start now, if anything; also notes a stop that applies to the whole run. */
async function reasonNotToStart(plan: UnitPlan, ctx: WaveContext): Promise<string | undefined> {
  await ctx.signals.poll(false);
  const hold = ctx.state.holds.get(plan.name);
  if (hold) return `held by ${hold.by}`;
  noteStops(ctx);
  if (!ctx.state.stopped && !(await ctx.lease.confirm(CONFIRM_WITHIN_MS))) ctx.state.stop(ctx.lease.lost ? 'lease-lost' : 'state-unavailable');
  if (ctx.state.stopped) return describeStop(ctx.state.stopped.reason, ctx.state.stopped.after);
  // Not sticky: the next wave's started markers renew the lease (its deadline is near), and the unit may start then.
  if (!ctx.lease.mayStartUnit()) return describeStop('lease-deadline');
  return undefined;
}

/**
 * A teardown's checkpoint. A driver that cannot claim the removal fails the unit with
 * NYL-TEARDOWN-INCOMPLETE (retryable: the next run with --allow-incomplete removes it), or under
 * --allow-incomplete removes it all the same, marked incomplete.
 */
export function teardownCheckpointOf(result: TeardownOutcome, finishedAt: string, allowIncomplete: boolean): Checkpoint {
  if (result.result === 'removed') return { result: 'removed', finishedAt };
  if (result.result === 'incomplete') {
    if (allowIncomplete) return { result: 'removed', finishedAt, incomplete: true, reason: result.reason };
    return { result: 'failed', finishedAt, reason: `${result.reason}; --allow-incomplete removes it from state all the same`, retryable: true, code: 'NYL-TEARDOWN-INCOMPLETE' };
  }
  return checkpointOf(result, finishedAt);
}

export function checkpointOf(result: ApplyOutcome, finishedAt: string): Checkpoint {
  if (result.result === 'receipt') return { result: 'receipt', finishedAt, ...splitOutputs(result.outputs) };
  const cp: Checkpoint = { result: result.result, finishedAt, reason: result.reason, retryable: result.result === 'failed' ? result.retryable : false };
  if (result.result === 'failed' && result.acknowledgementRequired) cp.acknowledgementRequired = true;
  return cp;
}

/** What a driver gets for one unit of the run. */
export function driverContext(plan: UnitPlan, ctx: WaveContext, projectDir: string): DriverContext {
  const { rt, workspace } = ctx;
  return {
    environment: ctx.state.input.env.name,
    unit: plan.name,
    uid: plan.uid ?? '',
    run: ctx.state.input.runId,
    kind: plan.kind,
    rendering: plan.rendering!,
    projectDir,
    // What a teardown removes: the outputs of its incarnation's receipt.
    ...(tearsDown(plan) ? { receiptOutputs: receiptOfIncarnation(plan)?.outputs ?? {} } : {}),
    scratchDir: () => workspace.scratchDir(plan.name),
    outputsPath: workspace.outputsPath(plan.name),
    runner: rt.runner,
    clock: rt.clock,
    baseEnv: rt.env,
    cancel: rt.cancel,
    killGraceMs: ctx.killGraceMs,
    toolOutput: (line) => ctx.output.tool(plan.name, line),
  };
}

/**
 * Runs a phase of the unit's driver in the run's copy of the source (a teardown in the commit its
 * desired document was rendered from: the files it needs may be gone from the run's); a source
 * that cannot be unpacked is the unit's retryable failure. Never throws when `phase` does not.
 */
export function inProjectDir<T>(plan: UnitPlan, ctx: WaveContext, phase: (driver: ReturnType<DriverSet['driver']>, dctx: DriverContext) => Promise<T | Failure>): Promise<T | Failure> {
  const own = tearsDown(plan) ? plan.desired?.source : undefined;
  // The run's own source is unpacked once for every unit: a teardown of that commit shares it.
  const commit = own !== ctx.state.input.sourceCommit ? own : undefined;
  return ctx.workspace.projectDir(commit).then(
    (projectDir) => phase(ctx.drivers.driver(plan.kind), driverContext(plan, ctx, projectDir)),
    (error: Error) => failure(`cannot unpack the source commit for the run: ${error.message}`, true),
  );
}

/** Runs the unit's driver (apply, or teardown) in the run's copy of the source, and makes its checkpoint; never throws. */
async function runDriver(plan: UnitPlan, ctx: WaveContext): Promise<Checkpoint> {
  if (tearsDown(plan)) {
    const outcome = await inProjectDir(plan, ctx, teardownUnit);
    return teardownCheckpointOf(outcome, isoSeconds(ctx.rt.clock.now()), ctx.state.input.lifecycle?.allowIncomplete === true);
  }
  return checkpointOf(await inProjectDir(plan, ctx, executeUnit), isoSeconds(ctx.rt.clock.now()));
}

/** A unit's end line: the first line of a failure reason (the report and state keep all of it). */
function endLine(cp: Checkpoint, durationMs: number): string {
  const took = `in ${seconds(durationMs)}`;
  if (cp.result === 'receipt') return `executed ${took}`;
  if (cp.result === 'removed') return cp.incomplete ? `removed ${took} (incomplete: ${firstLine(cp.reason ?? '')})` : `removed ${took}`;
  return `${cp.result} ${took}: ${firstLine(cp.reason ?? '')}`;
}

/** Runs one unit of the wave, or records why it did not start; its checkpoint is always queued. */
async function runUnit(plan: UnitPlan, marker: string, ctx: WaveContext): Promise<void> {
  const { rt, state } = ctx;
  const notStarted = await reasonNotToStart(plan, ctx);
  if (notStarted) {
    ctx.commits.add(plan.name, recordFile(plan), notStartedRecord(marker, notStarted, ctx));
    return;
  }
  state.dispatched(plan.name);
  ctx.output.event(plan.name, `starting ${plan.kind} (${tearsDown(plan) ? 'teardown' : 'reconcile'}): ${startReason(plan)}`);
  const began = rt.clock.now();
  const cp = await runDriver(plan, ctx);
  ctx.commits.add(plan.name, recordFile(plan), withCheckpoint(marker, cp));
  const durationMs = rt.clock.now() - began;
  if (tearsDown(plan)) state.recordTeardown(plan, cp, durationMs);
  else state.record(plan, cp, durationMs);
  ctx.output.event(plan.name, endLine(cp, durationMs));
  if (ctx.failFast && cp.result !== 'receipt' && cp.result !== 'removed') state.stop('fail-fast', plan.name);
}

/**
 * Records the wave's starts, then runs its units; returns when every started unit has ended and
 * the checkpoint push in flight, if any, has landed.
 */
export async function executeWave(wave: UnitPlan[], ctx: WaveContext): Promise<void> {
  const startedAt = isoSeconds(ctx.rt.clock.now());
  const markers = new Map(wave.map((u) => [u.name, startedMarker(u, startedAt)]));
  // Units run in the source commit's files: unpack them (once per run) while the markers are written.
  ctx.workspace.projectDir().catch(() => undefined);
  if (!(await recordStarts(wave, markers, ctx))) return;
  try {
    await runPool(wave, ctx.concurrency, (u) => runUnit(u, markers.get(u.name)!, ctx));
  } finally {
    await ctx.commits.settle();
  }
}
