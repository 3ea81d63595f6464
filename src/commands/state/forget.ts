/**
 * `nyl state forget -e ENV --unit U --reason R`: drops from state, without touching any resource,
 * a unit nothing reconciles any more: a retained tombstone, a pending-teardown unit, or a released
 * record (see plan/forget.ts). Its desired and observed files go in one transition commit per
 * state ref that holds one (operation forget), and its evidence refs are deleted in the same
 * atomic push that releases the lease. A unit that returns to source later has no desired file,
 * so the next reconcile starts a new incarnation with a new uid.
 *
 * Refusals are decided before the lease when the state read shows them (bad input takes no
 * lease), and decided again under the lease on the state as it is then.
 */
import { closest } from '../../util/closest';
import { fail } from '../../errors/diagnostic';
import { withLease } from '../../lease/transaction';
import type { StateOperationReport } from '../../report/types';
import { evidenceRefs } from '../../run/evidence';
import { buildTransitions } from '../../run/transition-plan';
import { forgetDecision, type ForgottenKind, refusedDetail } from '../../plan/forget';
import { isHeld } from '../../plan/unit-view';
import { type EnvironmentStateView, readEnvironmentState } from '../../state/read';
import type { RefSnapshot } from '../../state/store';
import type { Runtime } from '../../util/runtime';
import { type EnvironmentRequest, leaseOptionsOf, openEnvironment, type OpenedEnvironment, trailersOf } from '../shared/context';
import { stateOperationReport } from '../shared/report-base';
import { requireActive, stateUnderLease } from './state-checks';

interface ForgetRequest extends EnvironmentRequest {
  unit: string;
  reason?: string;
  waitMs?: number;
}

type ForgetOptions = Omit<ForgetRequest, keyof EnvironmentRequest> & { reason: string };

export async function forget(rt: Runtime, req: ForgetRequest): Promise<StateOperationReport> {
  // Forgetting loses what state knew about the unit's resources: the reason is the only record of why.
  if (!req.reason?.trim()) fail('NYL-REASON-REQUIRED', `forgetting ${req.unit} needs a --reason, recorded with the forget`, { operation: 'state forget' });
  const opened = await openEnvironment(rt, req, { writes: true, renders: false });
  try {
    return await forgetOpened(rt, opened, { unit: req.unit, reason: req.reason!, ...(req.waitMs !== undefined ? { waitMs: req.waitMs } : {}) });
  } finally {
    opened.close();
  }
}

/** What forget drops of the unit; refuses a unit state does not hold, or one it must not drop. */
function requireForgettable(opened: OpenedEnvironment, view: EnvironmentStateView, unit: string): ForgottenKind {
  const env = opened.env.name;
  const d = forgetDecision(view.desiredUnits.get(unit), view.observedUnits.get(unit));
  if (d.kind === 'unknown')
    fail('NYL-UNIT-UNKNOWN', `the state of ${env} holds no unit ${unit}`, {
      env,
      unit,
      guess: closest(unit, [...view.desiredUnits.keys(), ...view.observedUnits.keys()]),
    });
  if (d.kind === 'refused') fail('NYL-FORGET-REFUSED', refusedDetail(unit, d), { env, unit, ...(isHeld(view.desiredUnits.get(unit)) ? { held: true } : {}) });
  return d.was;
}

async function forgetOpened(rt: Runtime, opened: OpenedEnvironment, req: ForgetOptions): Promise<StateOperationReport> {
  const { store, env, loc } = opened;
  await store.ensureOpen();
  const report = stateOperationReport('forget', env.name, { unit: req.unit });
  const refs0 = await store.snapshot();
  const view0 = await readEnvironmentState(store.reader, loc, refs0, store.cache);
  await requireActive(opened, { refs: refs0, view: view0 });
  await opened.local.requireNoUnpublishedWork(refs0);
  requireForgettable(opened, view0, req.unit);
  return withLease(rt, store, leaseOptionsOf(rt, opened, 'forget', { initial: refs0, waitMs: req.waitMs }), async (tx) => {
    const refs = tx.snapshot;
    const view = await stateUnderLease(opened, { refs: refs0, view: view0 }, refs);
    await requireActive(opened, { refs, view });
    const was = requireForgettable(opened, view, req.unit);
    // Each evidence ref only as it was read: one that changed since fails the push whole.
    const evidence = evidenceRefs(store, refs).filter((e) => e.unit === req.unit);
    const published = await tx.publish(forgetTransitions(opened, refs, view, req, was), () => evidence.map((e) => ({ ref: e.ref, expect: e.oid, to: null })));
    report.result = 'done';
    report.details.was = was;
    report.desired = published.refs.get(loc.desiredRef);
    report.observed = published.refs.get(loc.observedRef);
    await opened.local.syncKnownBranches(published.refs);
    return report;
  });
}

/** One commit per state ref that holds a file of the unit: both files removed. */
function forgetTransitions(opened: OpenedEnvironment, refs: RefSnapshot, view: EnvironmentStateView, req: ForgetOptions, was: ForgottenKind) {
  const before = { desired: view.desiredUnits, observed: view.observedUnits };
  const after = { desired: without(view.desiredUnits, req.unit), observed: without(view.observedUnits, req.unit) };
  const body = { operation: 'forget', units: { [req.unit]: { action: 'forget', was } } };
  return buildTransitions(opened.loc, refs, opened.env.name, before, after, body, trailersOf(opened, req.reason), [req.unit]);
}

function without<T>(docs: Map<string, T>, name: string): Map<string, T> {
  const next = new Map(docs);
  next.delete(name);
  return next;
}
