/**
 * Executes one unit through its driver's phases (plan when the driver has one, then apply) and
 * turns whatever happens into an outcome, never an exception: a driver that throws makes this
 * unit failed (retryable) when none of its processes started, and uncertain once one did,
 * because then its effects are unknown; processes it left running are ended first. Outputs
 * beyond OUTPUT_LIMITS fail the unit (retryable) and none of them is kept, so no later writer
 * has to take them. Siblings are never affected.
 */
import type {
  ApplyOutcome,
  CheckOutcome,
  Driver,
  DriverContext,
  DriverPlan,
  Outputs,
  PlanOutcome,
  PrepareOutcome,
  ReadOutcome,
  TeardownOutcome,
} from '../drivers/contract';
import { OUTPUT_LIMITS, describeSize, failure } from '../drivers/contract';
import type { ProcessResult, ProcessRunner, RunOptions } from '../exec/process';
import { nestingDepth } from '../util/nesting';
import { tidyLines } from '../util/text';

/**
 * Wraps the context's runner to tell whether the driver started a process (one that could not
 * start does not count), and to end the processes a driver left running when it threw.
 */
class CountingRunner implements ProcessRunner {
  private started = 0;
  private readonly pending = new Set<Promise<ProcessResult>>();
  /** Follows the run's cancellation, and also aborts when the driver threw (one per unit). */
  private readonly abandon = new AbortController();
  private readonly follow = () => this.abandon.abort(this.runCancel.reason);

  constructor(
    private readonly inner: ProcessRunner,
    private readonly runCancel: AbortSignal,
  ) {
    if (runCancel.aborted) this.follow();
    else runCancel.addEventListener('abort', this.follow, { once: true });
  }

  run(argv: string[], options: RunOptions = {}): Promise<ProcessResult> {
    // Drivers pass the run's signal (the contract): this unit's own follows it. Any other is
    // combined, which Node makes costlier.
    const own = this.abandon.signal;
    const cancel = !options.cancel || options.cancel === this.runCancel ? own : AbortSignal.any([options.cancel, own]);
    const running = this.inner.run(argv, { ...options, cancel }).then((result) => {
      if (!result.spawnError) this.started++;
      return result;
    });
    this.pending.add(running);
    void running.finally(() => this.pending.delete(running));
    return running;
  }

  /** Did a process start? One still running when the driver threw has, as far as anyone can tell. */
  anyStarted(): boolean {
    return this.started > 0 || this.pending.size > 0;
  }

  /** Terminates the processes still running (SIGTERM, then SIGKILL after the grace) and waits for them. */
  async endAbandoned(): Promise<void> {
    if (this.pending.size === 0) return;
    this.abandon.abort('SIGTERM');
    await Promise.all([...this.pending]);
  }

  /** The unit is over: stop following the run's cancellation. */
  close(): void {
    this.runCancel.removeEventListener('abort', this.follow);
  }
}

/**
 * A plan-bound approval's check between plan and apply: the digest the plan it made binds to, and
 * the digest approved. Apply runs only when they are equal.
 */
export interface PlanGate {
  digestOf: (plan: DriverPlan) => string;
  approved: string;
}

/** The plan this run made is not the one approved: nothing was applied (no effects). */
type Unapproved = { result: 'unapproved'; digest: string };

async function phases(driver: Driver, ctx: DriverContext, gate: PlanGate | undefined): Promise<ApplyOutcome | Unapproved> {
  // Only a plan-bound approval binds the apply to a plan; without one the driver plans and
  // applies in one step (Terraform: `apply -auto-approve`), a tool start less.
  if (!driver.plan || !gate) return driver.apply(ctx);
  const planned = await driver.plan(ctx, { digest: true });
  if (planned.result !== 'planned') return planned;
  const digest = gate.digestOf(planned.plan);
  if (digest !== gate.approved) return { result: 'unapproved', digest };
  return driver.apply(ctx, planned.plan);
}

/**
 * Runs one driver phase with its processes counted, and turns a throw into `onThrow(why,
 * started)` once every process the phase left running has ended: a unit's record must not be
 * written while one of its processes still runs.
 */
async function contained<T>(
  ctx: DriverContext,
  phase: (ctx: DriverContext) => Promise<T>,
  what: string,
  onThrow: (why: string, started: boolean) => T,
): Promise<T> {
  const counted = new CountingRunner(ctx.runner, ctx.cancel);
  try {
    return await phase({ ...ctx, runner: counted });
  } catch (error) {
    const why = tidyLines(`the ${ctx.kind} driver ${what}: ${(error as Error)?.message ?? String(error)}`);
    const started = counted.anyStarted();
    await counted.endAbandoned();
    return onThrow(why, started);
  } finally {
    counted.close();
  }
}

/** An output's name in a reason: as it is when it is plain, else quoted and cut short. */
function shownName(name: string): string {
  return /^[\w.-]{1,100}$/.test(name) ? name : JSON.stringify(name.length > 100 ? `${name.slice(0, 100)}...` : name);
}

/**
 * Why these outputs cannot be recorded, if they cannot. Depth first, without recursion: only
 * shallow enough values are then serialized to measure their size.
 */
function outputsProblem(outputs: Outputs): string | undefined {
  const { bytes: maxBytes, depth: maxDepth } = OUTPUT_LIMITS;
  const values: Record<string, unknown> = {};
  for (const [name, output] of Object.entries(outputs)) {
    if (nestingDepth(output.value, maxDepth) > maxDepth) {
      return `output ${shownName(name)} nests deeper than ${maxDepth} levels of objects and arrays, the limit for outputs; none of the outputs is recorded`;
    }
    values[name] = output.value;
  }
  let bytes: number;
  try {
    bytes = Buffer.byteLength(JSON.stringify(values) ?? '', 'utf8');
  } catch (error) {
    // A driver's bug (a BigInt, a cycle): this unit fails, not the run.
    return `the outputs cannot be written as JSON (${(error as Error).message}); none of them is recorded`;
  }
  if (bytes <= maxBytes) return undefined;
  return `the outputs take ${describeSize(bytes)} as JSON, more than the ${describeSize(maxBytes)} a unit may record; none of them is recorded`;
}

/** The unit's outcome; reasons keep every line, tidied (a driver's own outcome too). */
export async function executeUnit(driver: Driver | undefined, ctx: DriverContext, gate?: PlanGate): Promise<ApplyOutcome | Unapproved> {
  if (!driver) return { result: 'failed', reason: `no driver for kind ${ctx.kind} yet`, retryable: true };
  const outcome = await contained<ApplyOutcome | Unapproved>(
    ctx,
    (c) => phases(driver, c, gate),
    'failed',
    (why, started) => (started ? { result: 'uncertain', reason: why } : { result: 'failed', reason: why, retryable: true }),
  );
  if (outcome.result === 'unapproved') return outcome;
  if (outcome.result !== 'receipt') return { ...outcome, reason: tidyLines(outcome.reason) };
  const problem = outputsProblem(outcome.outputs);
  // Outputs past the limits are not recorded; their sensitive values are still masked in what the failure keeps.
  return problem ? { ...failure(problem, true), unrecorded: outcome.outputs } : outcome;
}

/**
 * The teardown phase: like an execution, a throw once a process started is uncertain. A driver
 * without a teardown phase cannot claim any removal: incomplete.
 */
export async function teardownUnit(driver: Driver | undefined, ctx: DriverContext): Promise<TeardownOutcome> {
  if (!driver) return { result: 'failed', reason: `no driver for kind ${ctx.kind} yet`, retryable: true };
  if (!driver.teardown) return { result: 'incomplete', reason: `the ${ctx.kind} driver has no teardown, so nothing can claim the removal of ${ctx.unit}` };
  const outcome = await contained<TeardownOutcome>(
    ctx,
    (c) => driver.teardown!(c),
    'failed to tear down',
    (why, started) => (started ? { result: 'uncertain', reason: why } : { result: 'failed', reason: why, retryable: true }),
  );
  return outcome.result === 'removed' ? outcome : { ...outcome, reason: tidyLines(outcome.reason) };
}

/** The prepare phase of a unit whose driver has one; it has no effects, so a throw is a retryable failure. */
export async function prepareUnit(driver: Driver, ctx: DriverContext): Promise<PrepareOutcome> {
  const outcome = await contained<PrepareOutcome>(
    ctx,
    (c) => driver.prepare!(c),
    'failed to prepare',
    (why) => failure(why, true),
  );
  if (outcome.result === 'prepared') return outcome;
  if (outcome.result === 'absent') return { ...outcome, failure: { ...outcome.failure, reason: tidyLines(outcome.failure.reason) } };
  return { ...outcome, reason: tidyLines(outcome.reason) };
}

/**
 * The plan phase alone, for `nyl plan`: no apply follows. It has no effects, so a throw (after its
 * processes ended) is a retryable failure, as for prepare.
 */
export async function planUnit(driver: Driver, ctx: DriverContext): Promise<PlanOutcome> {
  const outcome = await contained<PlanOutcome>(
    ctx,
    (c) => driver.plan!(c, { digest: true }),
    'failed to plan',
    (why) => failure(why, true),
  );
  return outcome.result === 'planned' ? outcome : { ...outcome, reason: tidyLines(outcome.reason) };
}

/** Reads a producer's outputs back from its tool; it has no effects, so a throw is a retryable failure. */
export async function readOutputsOf(driver: Driver | undefined, ctx: DriverContext): Promise<ReadOutcome> {
  if (!driver?.readOutputs) return failure(`the ${ctx.kind} driver cannot read outputs back`, true);
  const outcome = await contained<ReadOutcome>(
    ctx,
    (c) => driver.readOutputs!(c),
    'failed to read outputs',
    (why) => failure(why, true),
  );
  return outcome.result === 'read' ? outcome : { ...outcome, reason: tidyLines(outcome.reason) };
}

/**
 * The drift check of a unit (`nyl verify`): it has no effects, so a throw, or an outcome that is
 * neither checked nor failed (a driver's bug), is a failed check. A kind without the phase
 * cannot tell: drift unknown.
 */
export async function checkUnit(driver: Driver | undefined, ctx: DriverContext): Promise<CheckOutcome> {
  if (!driver) return failure(`no driver for kind ${ctx.kind} yet`, true);
  if (!driver.check) return { result: 'checked', drift: 'unknown', detail: `the ${ctx.kind} driver has no drift check` };
  const outcome = await contained<CheckOutcome>(
    ctx,
    (c) => driver.check!(c),
    'failed to check',
    (why) => failure(why, true),
  );
  if (outcome.result === 'checked') return outcome;
  const reason = (outcome as { reason?: unknown }).reason;
  return failure(
    typeof reason === 'string' ? reason : `the ${ctx.kind} driver answered the check with ${String((outcome as { result?: unknown }).result)}`,
    true,
  );
}
