/**
 * The prepare wave: units whose driver must look something up before their execution key exists
 * (an image tag -> its digest) run their driver's `prepare` phase, which has no effects, so no
 * started marker is needed. The prepared rendering feeds the next plan; a failed prepare is the
 * unit's failure in this run.
 */
import { failure } from '../drivers/contract';
import type { Plan, UnitPlan } from '../plan/actions';
import { canonicalJson } from '../project/execution-key';
import { isoSeconds } from '../util/clock';
import { driverContext, type WaveContext } from './execute-wave';
import { runPool } from './pool';

async function prepareUnit(plan: UnitPlan, ctx: WaveContext): Promise<void> {
  const driver = ctx.drivers.driver(plan.kind)!;
  const began = ctx.rt.clock.now();
  const dctx = driverContext(plan, ctx, await ctx.workspace.projectDir());
  const outcome = await driver.prepare!(dctx).catch((error: Error) => failure(`the ${plan.kind} driver failed to prepare: ${error.message}`, true));
  if (outcome.result === 'prepared') {
    ctx.state.prepared.set(plan.name, { from: canonicalJson(plan.rendering), rendering: outcome.rendering });
    return;
  }
  const now = ctx.rt.clock.now();
  ctx.state.record(plan, outcome, now - began, isoSeconds(now));
  ctx.output.event(plan.name, `failed to prepare: ${outcome.reason}`);
}

/** Runs the prepare phase of every unit the plan says needs it; false when there is none. */
export async function prepareWave(plan: Plan, ctx: WaveContext): Promise<boolean> {
  const wave = plan.order.map((n) => plan.units.get(n)!).filter((u) => u.action.type === 'prepare');
  if (wave.length === 0) return false;
  await runPool(wave, ctx.concurrency, (u) => prepareUnit(u, ctx));
  return true;
}
