/**
 * Prepare phases: units whose driver must look something up before their execution key exists
 * (an image tag -> its digest) run their driver's `prepare` phase, which has no effects, so no
 * started marker is needed; they take a slot of the ready queue like an execution. The prepared
 * rendering feeds the next plan (the engine asks again when the phase ends); a failed prepare is the
 * unit's failure in this run. An input absent on this machine is read as the planner decided
 * (../plan/preparation.ts): the recorded preparation stands for a unit it keeps current, else the
 * absence is the unit's failure.
 */
import type { PrepareOutcome } from '../drivers/contract';
import type { Plan, UnitPlan } from '../plan/actions';
import { preparationFrom } from '../plan/preparation';
import { isoSeconds } from '../util/clock';
import { firstLine } from '../util/text';
import type { WaveContext } from './wave-context';
import { checkpointOf, inProjectDir } from './run-driver';
import type { ReadyQueue } from './ready-queue';
import { prepareUnit } from './unit-execution';

/** The driver's prepare phase for one unit; whatever goes wrong is the unit's failure, never the run's. */
async function prepared(plan: UnitPlan, ctx: WaveContext): Promise<PrepareOutcome> {
  return inProjectDir(plan, ctx, (driver, dctx) => prepareUnit(driver!, dctx));
}

async function prepareOne(plan: UnitPlan, ctx: WaveContext): Promise<void> {
  const began = ctx.rt.clock.now();
  const taken = preparationFrom(plan, await prepared(plan, ctx));
  if (!('result' in taken)) {
    ctx.state.prepared.set(plan.name, taken);
    if (taken.absent) ctx.output.event(plan.name, `${taken.absent}: it stays on the preparation its desired document recorded`);
    return;
  }
  const now = ctx.rt.clock.now();
  ctx.state.record(plan, checkpointOf(taken, isoSeconds(now)), now - began);
  ctx.output.event(plan.name, `failed to prepare: ${firstLine(taken.reason)}`);
}

/** Queues the prepare phase of every unit the plan says needs it and the queue does not have yet; false when there is none. */
export function queuePrepares(plan: Plan, queue: ReadyQueue, ctx: WaveContext): boolean {
  const wave = plan.order.map((n) => plan.units.get(n)!).filter((u) => u.action.type === 'prepare' && !queue.has(u.name));
  queue.add(wave.map((u) => ({ name: u.name, kind: 'prepare', run: () => prepareOne(u, ctx).then(() => undefined) })));
  return wave.length > 0;
}
