/**
 * Runs one phase of a unit's driver for the engine and turns its outcome into the unit's
 * checkpoint: the driver context (the run's copy of the source, or a teardown's own commit), the
 * sensitive values the unit consumes (opened for this execution only, masked in what it prints),
 * and its outputs as state records them (sensitive ones sealed or digested: ./secrets.ts).
 */
import { type ApplyOutcome, type DriverContext, type DriverPlan, type Failure, failure, type TeardownOutcome, type Uncertain } from '../drivers/contract';
import type { DriverSet } from '../drivers/registry';
import type { UnitPlan } from '../plan/actions';
import { receiptOfIncarnation } from '../plan/unit-view';
import type { Checkpoint } from '../state/run-record';
import { isoSeconds } from '../util/clock';
import type { WaveContext } from './wave-context';
import {
  keyNeededFirst,
  maskText,
  maskTexts,
  openSecrets,
  sensitiveValues,
  unitMaskTexts,
  type ReadBack,
  type RecordedOutputs,
  recordOutputs,
  secretReadsOf,
  withSecretsIn,
} from './secrets';
import { executeUnit, type PlanGate, teardownUnit } from './unit-execution';
import { type PhaseScope, phaseContext, readBackIn, recordsOf } from './phase-context';
import { approvalDigest } from '../plan/digest';

/** Is this unit torn down (not executed) in the wave? */
export function tearsDown(plan: UnitPlan): boolean {
  return plan.action.type === 'teardown';
}

/**
 * A teardown's checkpoint. A driver that cannot claim the removal fails the unit with
 * NYL-TEARDOWN-INCOMPLETE (retryable: the next run with --allow-incomplete removes it), or under
 * --allow-incomplete removes it all the same, marked incomplete.
 */
function teardownCheckpointOf(result: TeardownOutcome, finishedAt: string, allowIncomplete: boolean): Checkpoint {
  if (result.result === 'removed') return { result: 'removed', finishedAt };
  if (result.result === 'incomplete') {
    if (allowIncomplete) return { result: 'removed', finishedAt, incomplete: true, reason: result.reason };
    return {
      result: 'failed',
      finishedAt,
      reason: `${result.reason}; --allow-incomplete removes it from state all the same`,
      retryable: true,
      code: 'NYL-TEARDOWN-INCOMPLETE',
    };
  }
  return checkpointOf(result, finishedAt);
}

/** The checkpoint of an execution's end: its recorded outputs, or its failure or uncertainty. */
export function checkpointOf(result: Failure | Uncertain | { result: 'receipt'; recorded: RecordedOutputs }, finishedAt: string): Checkpoint {
  if (result.result === 'receipt') return { result: 'receipt', finishedAt, ...result.recorded };
  const cp: Checkpoint = { result: result.result, finishedAt, reason: result.reason, retryable: result.result === 'failed' ? result.retryable : false };
  if (result.result === 'failed' && result.acknowledgementRequired) cp.acknowledgementRequired = true;
  if (result.result === 'failed' && result.code) cp.code = result.code;
  if (result.toolState) cp.toolState = result.toolState;
  return cp;
}

/** The phases of a run share its runtime, run id, workspace and output. */
function scopeOf(ctx: WaveContext): PhaseScope {
  return { rt: ctx.rt, environment: ctx.state.input.env.name, run: ctx.state.input.runId, workspace: ctx.workspace, output: ctx.output };
}

/** What a driver gets for one unit of the run; a teardown also the outputs of the receipt it removes. */
function driverContext(plan: UnitPlan, ctx: WaveContext, projectDir: string): DriverContext {
  const dctx = {
    ...phaseContext(scopeOf(ctx), { name: plan.name, kind: plan.kind, uid: plan.uid, rendering: plan.rendering! }, projectDir),
    ...recordsOf(plan),
    ...reappliedBy(plan, ctx),
  };
  return tearsDown(plan) ? { ...dctx, receiptOutputs: receiptOfIncarnation(plan)?.outputs ?? {} } : dctx;
}

/**
 * A unit that --reapply names executes because an operator said so, with a reason (whether its
 * receipt was current, its key changed or a failure is retried): that is the acknowledgement a
 * driver waits for before it goes on (a lost Terraform state), as `recover --retry --reason`
 * records one.
 */
function reappliedBy(plan: UnitPlan, ctx: WaveContext): Pick<DriverContext, 'acknowledgement'> {
  const input = ctx.state.input;
  if (plan.action.type !== 'execute' || !input.reapply?.has(plan.name) || !input.reapplyReason) return {};
  return { acknowledgement: { by: input.by, reason: input.reapplyReason, at: isoSeconds(ctx.rt.clock.now()) } };
}

/**
 * Runs a phase of the unit's driver in the run's copy of the source (a teardown in the commit its
 * desired document was rendered from: the files it needs may be gone from the run's); a source
 * that cannot be unpacked is the unit's retryable failure. Never throws when `phase` does not.
 */
export function inProjectDir<T>(
  plan: UnitPlan,
  ctx: WaveContext,
  phase: (driver: ReturnType<DriverSet['driver']>, dctx: DriverContext) => Promise<T | Failure>,
  commitOf = tearsDown(plan) ? plan.desired?.source : undefined,
): Promise<T | Failure> {
  // The run's own source is unpacked once for every unit: a teardown of that commit shares it.
  const commit = commitOf !== ctx.state.input.sourceCommit ? commitOf : undefined;
  return ctx.workspace.projectDir(commit).then(
    (projectDir) => phase(ctx.drivers.driver(plan.kind), driverContext(plan, ctx, projectDir)),
    (error: Error) => failure(`cannot unpack the source commit for the run: ${error.message}`, true),
  );
}

/** A producer's outputs read back from its tool, in the commit its receipt was produced from. */
function readBack(ctx: WaveContext): ReadBack {
  // The run's own source is unpacked once for every unit: a receipt of that commit shares it.
  return readBackIn(scopeOf(ctx), ctx.drivers, (source) => (source !== ctx.state.input.sourceCommit ? source : undefined));
}

/** Replaces every masked text in an outcome's reason. */
function masked<T extends { result: string }>(outcome: T, texts: readonly string[]): T {
  const reason = (outcome as { reason?: unknown }).reason;
  if (texts.length === 0 || typeof reason !== 'string') return outcome;
  return { ...outcome, reason: maskText(reason, texts) };
}

/**
 * A failed or stopped execution without the outputs it wrote (never recorded), and with their
 * sensitive values masked in its reason and in the lines the unit keeps.
 */
function withoutUnrecorded<T extends Failure | Uncertain>(outcome: T, unit: string, ctx: WaveContext, masks: readonly string[]): T {
  const { unrecorded, ...rest } = outcome;
  const texts = unrecorded ? maskTexts(sensitiveValues(unrecorded)) : [];
  ctx.output.maskKept(unit, texts);
  return masked(rest as T, [...masks, ...texts]);
}

/** An execution's outcome with its outputs recorded (sealed where needed), or the unit's failure. */
function recorded(
  plan: UnitPlan,
  outcome: ApplyOutcome,
  ctx: WaveContext,
  consumed: readonly string[],
): Failure | Uncertain | { result: 'receipt'; recorded: RecordedOutputs } {
  if (outcome.result !== 'receipt') return withoutUnrecorded(outcome, plan.name, ctx, consumed);
  const r = recordOutputs(plan.name, ctx.state.input.runId, outcome.outputs, ctx.drivers.driver(plan.kind), ctx.keys, consumed);
  // Not recorded (no key to seal them): the values it printed are masked in what the failure keeps.
  if ('result' in r) return withoutUnrecorded({ ...r, unrecorded: outcome.outputs }, plan.name, ctx, consumed);
  const tool = {
    ...(outcome.toolState ? { toolState: outcome.toolState } : {}),
    ...(outcome.toolReads && outcome.toolReads.length > 0 ? { toolReads: outcome.toolReads } : {}),
  };
  return { result: 'receipt', recorded: { ...r, ...tool } };
}

/**
 * A failed or uncertain checkpoint keeps the last lines the tool printed in this phase (masked by
 * ctx.output), for its condition: a tool's own words about why.
 */
function withOutputTail(cp: Checkpoint, unit: string, ctx: WaveContext): Checkpoint {
  const output = ctx.output.takeTail(unit);
  if (cp.result !== 'failed' && cp.result !== 'uncertain') return cp;
  return output.length > 0 ? { ...cp, output } : cp;
}

/** Runs the unit's driver (apply, or teardown) with the sensitive values it consumes, and makes its checkpoint; never throws. */
export async function runDriver(plan: UnitPlan, ctx: WaveContext): Promise<Checkpoint> {
  ctx.output.tailFrom(plan.name);
  return withOutputTail(await runPhase(plan, ctx), plan.name, ctx);
}

async function runPhase(plan: UnitPlan, ctx: WaveContext): Promise<Checkpoint> {
  const now = () => isoSeconds(ctx.rt.clock.now());
  const reads = secretReadsOf(plan);
  const values = reads.length > 0 ? await openSecrets(reads, ctx.state.observed, ctx.keys, readBack(ctx)) : new Map<string, unknown>();
  if (!(values instanceof Map)) return checkpointOf(values, now());
  const unready = tearsDown(plan) ? undefined : keyNeededFirst(plan.name, ctx.state.observed.get(plan.name), ctx.drivers.driver(plan.kind), ctx.keys);
  if (unready) return checkpointOf(unready, now());
  const texts = unitMaskTexts(plan.name, values, ctx.state.observed.get(plan.name), ctx.keys);
  ctx.output.mask(plan.name, texts);
  if (tearsDown(plan)) {
    const outcome = await inProjectDir(plan, ctx, (driver, dctx) => teardownUnit(driver, withSecretsIn(dctx, reads, values)));
    return teardownCheckpointOf(masked(outcome, texts), now(), ctx.state.input.lifecycle?.allowIncomplete === true);
  }
  const outcome = await inProjectDir(plan, ctx, (driver, dctx) => executeUnit(driver, withSecretsIn(dctx, reads, values), planGateOf(plan)));
  if (outcome.result === 'unapproved') {
    // The plan made now is not the one reviewed: nothing was applied, and the unit waits again.
    ctx.state.unapproved(plan.name, outcome.digest);
    const approved = (plan.action as { approval?: { digest?: string } }).approval?.digest;
    return { result: 'not-started', finishedAt: now(), reason: `the plan's digest is ${outcome.digest}, not the approved ${approved}: nothing was applied` };
  }
  return checkpointOf(recorded(plan, outcome, ctx, texts), now());
}

/**
 * A plan-bound approval of a unit whose driver plans: apply only a plan whose digest (its changes,
 * bound to the execution key and the receipt it starts from) is the approved one.
 */
function planGateOf(plan: UnitPlan): PlanGate | undefined {
  const a = plan.action;
  if (a.type !== 'execute' || a.approval?.form !== 'plan') return undefined;
  const prior = receiptOfIncarnation(plan);
  const executionKey = a.approval.executionKey;
  return { approved: a.approval.digest, digestOf: (p) => approvalDigest({ executionKey, changes: planDigestOf(p), ...(prior ? { prior } : {}) }) };
}

/** A plan's digest, which a plan made for a gate always has: without it, nothing may be approved by mistake. */
function planDigestOf(p: DriverPlan): string {
  if (p.digest === undefined) throw new Error('the driver planned without the digest the approval binds to');
  return p.digest;
}
