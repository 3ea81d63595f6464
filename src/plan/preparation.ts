/**
 * What a unit's prepare outcome gives the next plan: a preparation, or the failure that is the
 * unit's in this run. A run's prepare waves (src/run/prepare-wave.ts) and `nyl plan` both apply
 * the planner's decision through it, so that they read an outcome the same way. Pure.
 *
 * An input absent on this machine (an image not present locally) is no failure of a unit that its
 * recorded preparation keeps current: the planner said so ahead (`recordedStands` of its prepare
 * action), and that preparation stands in, marked absent, so that the next plan says why the unit
 * is current. A unit without it must execute, and needs the input: the absent outcome's failure,
 * which says how to make the input present, is its failure.
 */
import type { Failure, PrepareOutcome } from '../drivers/contract';
import { firstLine } from '../util/text';
import type { UnitPlan } from './actions';
import { type Prepared, recordedPreparation, renderingDigest } from './input';

/** The preparation to plan `plan`'s unit with after its driver's prepare phase, or its failure. */
export function preparationFrom(plan: UnitPlan, outcome: PrepareOutcome): Prepared | Failure {
  if (outcome.result === 'prepared') return { from: renderingDigest(plan.rendering!), rendering: outcome.rendering };
  if (outcome.result !== 'absent') return outcome;
  const stands = plan.action.type === 'prepare' && plan.action.recordedStands === true;
  const recorded = stands ? recordedPreparation(plan.desired) : undefined;
  return recorded ? { ...recorded, absent: firstLine(outcome.failure.reason) } : outcome.failure;
}
