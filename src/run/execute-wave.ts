/**
 * One wave of the ready queue: the units the planner lets start at one dispatch point (an
 * execution, or a lifecycle wave's teardowns). One write records that they start, carrying the
 * lease (so a holder that lost it starts nothing) and the checkpoints of the units whose end let
 * them go; then they join the ready queue (./ready-queue.ts), which runs them as slots free.
 * Before each unit starts, the run looks for delivered holds and for a reason to stop; a unit it
 * then does not start gets a `not-started` checkpoint, so an importer never mistakes it for an
 * uncertain one. A unit's checkpoint goes to the group commit as soon as the unit ends, or rides
 * on the started markers its end lets go.
 */
import { seconds } from '../drivers/tool';
import type { UnitPlan } from '../plan/actions';
import { describeStop, startReason } from '../plan/reasons';
import { type Checkpoint, type RunUnitDoc, serializeRunUnit, unitFile, withCheckpoint } from '../state/run-record';
import { isoSeconds } from '../util/clock';
import { firstLine } from '../util/text';
import type { Checkpointed } from './checkpoints';
import type { ReadyQueue } from './ready-queue';
import { runDriver, tearsDown } from './run-driver';
import type { WaveContext } from './wave-context';

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

/** A unit of the wave ended without starting: its record says so, so no importer takes it for uncertain. */
function notStartedRecord(marker: string, reason: string, ctx: WaveContext): string {
  return withCheckpoint(marker, { result: 'not-started', finishedAt: isoSeconds(ctx.rt.clock.now()), reason });
}

/**
 * Pushes the wave's started markers (with the checkpoints of the units whose end let them go, and
 * any other pending), with the lease: a holder that lost its lease starts nothing. False when the
 * units may not start.
 */
async function recordStarts(wave: UnitPlan[], markers: Map<string, string>, riding: Checkpointed[], ctx: WaveContext): Promise<boolean> {
  const files = new Map(wave.map((u) => [recordFile(u), markers.get(u.name)!]));
  const names = wave.map((u) => u.name);
  const written = await ctx.commits.start(names, files, riding);
  if (!written?.ok) {
    ctx.state.stop(written?.lost || ctx.lease.lost ? 'lease-lost' : 'state-unavailable');
    // A renewal may have carried the markers before this push failed: each unit's record says it
    // never started (written when the run marks its end), so an importer never takes it for uncertain.
    const why = describeStop(ctx.state.stopped!.reason);
    ctx.runRef.queue(new Map(wave.map((u) => [recordFile(u), notStartedRecord(markers.get(u.name)!, why, ctx)])));
    return false;
  }
  await ctx.rt.faults.reach('after-started-push', names);
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

/** A unit's end line: the first line of a failure reason (the report and state keep all of it). */
function endLine(cp: Checkpoint, durationMs: number): string {
  const took = `in ${seconds(durationMs)}`;
  if (cp.result === 'receipt') return `executed ${took}`;
  if (cp.result === 'removed') return cp.incomplete ? `removed ${took} (incomplete: ${firstLine(cp.reason ?? '')})` : `removed ${took}`;
  return `${cp.result} ${took}: ${firstLine(cp.reason ?? '')}`;
}

/** `; approved (plan sha256:...)` on the start line of an execution an approval allowed. */
function approvedNote(plan: UnitPlan): string {
  const grant = plan.action.type === 'execute' ? plan.action.approval : undefined;
  if (!grant) return '';
  return grant.form === 'plan' ? `; approved plan ${grant.digest}` : grant.all ? '; approved by --approve-all' : '; approved';
}

/** Runs one unit of the wave, or records why it did not start; returns its checkpoint. */
async function runUnit(plan: UnitPlan, marker: string, ctx: WaveContext): Promise<Checkpointed> {
  const { rt, state } = ctx;
  const file = recordFile(plan);
  const notStarted = await reasonNotToStart(plan, ctx);
  if (notStarted) return { unit: plan.name, file, content: notStartedRecord(marker, notStarted, ctx) };
  state.dispatched(plan.name);
  ctx.output.event(plan.name, `starting ${plan.kind} (${tearsDown(plan) ? 'teardown' : 'reconcile'}): ${startReason(plan)}${approvedNote(plan)}`);
  const began = rt.clock.now();
  const ended = ctx.progress.begin(plan.name);
  const cp = await runDriver(plan, ctx).finally(ended);
  const checkpointed = { unit: plan.name, file, content: withCheckpoint(marker, cp) };
  const durationMs = rt.clock.now() - began;
  if (cp.result === 'not-started') {
    // Planned, not applied (an approval named another plan): the planner says it waits again.
    ctx.output.event(plan.name, `not applied in ${seconds(durationMs)}: ${firstLine(cp.reason ?? '')}`);
    if (ctx.failFast) state.stop('fail-fast', plan.name);
    return checkpointed;
  }
  if (tearsDown(plan)) state.recordTeardown(plan, cp, durationMs);
  else state.record(plan, cp, durationMs);
  ctx.output.event(plan.name, endLine(cp, durationMs));
  if (ctx.failFast && cp.result !== 'receipt' && cp.result !== 'removed') state.stop('fail-fast', plan.name);
  return checkpointed;
}

/**
 * Records the wave's starts (one write, with `riding`: the checkpoints of the units whose end let
 * it go), then queues its units in the ready queue, which runs them as slots free.
 */
export async function startWave(wave: UnitPlan[], riding: Checkpointed[], queue: ReadyQueue, ctx: WaveContext): Promise<void> {
  const startedAt = isoSeconds(ctx.rt.clock.now());
  const markers = new Map(wave.map((u) => [u.name, startedMarker(u, startedAt)]));
  // Units run in the source commit's files: unpack them (once per run) while the markers are written.
  ctx.workspace.projectDir().catch(() => undefined);
  if (!(await recordStarts(wave, markers, riding, ctx))) return;
  queue.add(wave.map((u) => ({ name: u.name, kind: tearsDown(u) ? 'teardown' : 'execute', run: () => runUnit(u, markers.get(u.name)!, ctx) })));
}
