/**
 * Executes one unit through its driver's phases (plan when the driver has one, then apply) and
 * turns whatever happens into an outcome, never an exception: a driver that throws makes this
 * unit failed (retryable) when none of its processes started, and uncertain once one did,
 * because then its effects are unknown. Siblings are never affected.
 */
import type { ApplyOutcome, Driver, DriverContext } from '../drivers/contract';
import { oneLine } from '../drivers/contract';
import type { ProcessRunner } from '../exec/process';

/** Wraps the context's runner to tell whether the driver started a process (one that could not start does not count). */
function countingRunner(runner: ProcessRunner): { runner: ProcessRunner; started: () => boolean } {
  let started = 0;
  let pending = 0;
  return {
    runner: {
      run: async (argv, options) => {
        pending++;
        try {
          const result = await runner.run(argv, options);
          if (!result.spawnError) started++;
          return result;
        } finally {
          pending--;
        }
      },
    },
    // A process still running when the driver threw has started as far as anyone can tell.
    started: () => started > 0 || pending > 0,
  };
}

async function phases(driver: Driver, ctx: DriverContext): Promise<ApplyOutcome> {
  if (!driver.plan) return driver.apply(ctx);
  const planned = await driver.plan(ctx);
  if (planned.result !== 'planned') return planned;
  return driver.apply(ctx, planned.plan);
}

/** The unit's outcome; reasons are one line (tables, progress lines, commit bodies). */
export async function executeUnit(driver: Driver | undefined, ctx: DriverContext): Promise<ApplyOutcome> {
  if (!driver) return { result: 'failed', reason: `no driver for kind ${ctx.kind} yet`, retryable: true };
  const counted = countingRunner(ctx.runner);
  try {
    const outcome = await phases(driver, { ...ctx, runner: counted.runner });
    return outcome.result === 'receipt' ? outcome : { ...outcome, reason: oneLine(outcome.reason) };
  } catch (error) {
    const why = oneLine(`the ${ctx.kind} driver failed: ${(error as Error)?.message ?? String(error)}`);
    return counted.started() ? { result: 'uncertain', reason: why } : { result: 'failed', reason: why, retryable: true };
  }
}
