/**
 * `nyl resume -e ENV --unit U --reason R`: lifts a hold. Deletes nothing and keeps the
 * unit's uid, receipt and condition; the next reconcile renders the unit again and applies what
 * changed. Takes the lease like every state operation.
 */
import { closest } from '../../util/closest';
import { diagnostic, fail } from '../../errors/diagnostic';
import { withLease } from '../../lease/transaction';
import type { StateOperationReport } from '../../report/types';
import { buildTransitions } from '../../run/transition-plan';
import { readSignals, type HoldSignal, signalDeletions } from '../../run/signals';
import { resumeDocument } from '../../plan/hold';
import type { RefSnapshot } from '../../state/store';
import type { DesiredUnitDoc } from '../../state/documents';
import { type EnvironmentStateView, readEnvironmentState } from '../../state/read';
import type { Runtime } from '../../util/runtime';
import { type EnvironmentRequest, leaseOptionsOf, openEnvironment, type OpenedEnvironment, trailersOf } from '../shared/context';
import { requireActive, stateUnderLease } from '../state/state-checks';
import { stateOperationReport } from '../shared/report-base';

interface ResumeRequest extends EnvironmentRequest {
  unit: string;
  reason?: string;
  waitMs?: number;
}

export async function resume(rt: Runtime, req: ResumeRequest): Promise<StateOperationReport> {
  const opened = await openEnvironment(rt, req, { writes: true, renders: false });
  try {
    return await resumeOpened(rt, opened, req);
  } finally {
    opened.close();
  }
}

/**
 * Refuses a unit the state does not hold. Before the lease only a unit source does not know
 * either (bad input changes nothing and needs no lease): one that source knows may be on its way
 * into state with a running run, so it is decided under the lease, where a hold delivered for it
 * and not yet applied counts as holding it.
 */
function requireKnownUnit(opened: OpenedEnvironment, view: EnvironmentStateView, unit: string, underLease: { signalled: boolean } | undefined): void {
  if (view.desiredUnits.has(unit) || view.observedUnits.has(unit)) return;
  if (underLease ? underLease.signalled : opened.project.units.has(unit)) return;
  const guess = closest(unit, [...view.desiredUnits.keys(), ...view.observedUnits.keys()]);
  fail('NYL-UNIT-UNKNOWN', `the state of ${opened.env.name} holds no unit ${unit}`, { env: opened.env.name, unit, guess });
}

function unchanged(opened: OpenedEnvironment, report: StateOperationReport, unit: string): StateOperationReport {
  report.notes.push(diagnostic('NYL-UNCHANGED', 'note', `${unit} is not held; nothing changed`, { env: opened.env.name, unit }));
  return report;
}

/**
 * Resume decides under the lease, like every state operation: while a run holds it, a hold may
 * be on its way to that run, so "not held" cannot be known. A hold delivered to a run that has
 * not applied it yet (the run released its lease before its late hold commit) is older than this
 * resume: the resume takes its signal back in the same push, so it never takes effect.
 */
export async function resumeOpened(rt: Runtime, opened: OpenedEnvironment, req: Omit<ResumeRequest, keyof EnvironmentRequest>): Promise<StateOperationReport> {
  const { store, env, loc } = opened;
  await store.ensureOpen();
  const report = stateOperationReport('resume', env.name);
  report.details.unit = req.unit;
  const refs0 = await store.snapshot();
  const view0 = await readEnvironmentState(store.reader, loc, refs0, store.cache);
  await requireActive(opened, { refs: refs0, view: view0 });
  await opened.local.requireNoUnpublishedWork(refs0);
  requireKnownUnit(opened, view0, req.unit, undefined);
  return withLease(rt, store, leaseOptionsOf(rt, opened, 'resume', { initial: refs0, waitMs: req.waitMs }), async (tx) => {
    const refs = tx.snapshot;
    const view = await stateUnderLease(opened, { refs: refs0, view: view0 }, refs);
    await requireActive(opened, { refs, view });
    const superseded = (await readSignals(store, refs)).signals.filter((s) => s.unit === req.unit);
    requireKnownUnit(opened, view, req.unit, { signalled: superseded.length > 0 });
    const next = resumeDocument(view.desiredUnits.get(req.unit));
    report.desired = view.desiredOid;
    if (!next && superseded.length === 0) {
      await tx.end('nothing-to-write');
      return unchanged(opened, report, req.unit);
    }
    const published = await tx.publish(resumeTransitions(opened, refs, view, req, next, superseded), () => signalDeletions(superseded));
    report.result = 'done';
    report.desired = published.refs.get(loc.desiredRef);
    if (superseded.length > 0) report.details.superseded = superseded.map((s) => s.run);
    await opened.local.syncKnownBranches(published.refs);
    return report;
  });
}

/** One desired commit: the hold lifted, and the delivered holds it supersedes listed. */
function resumeTransitions(
  opened: OpenedEnvironment,
  refs: RefSnapshot,
  view: EnvironmentStateView,
  req: { unit: string; reason?: string },
  next: DesiredUnitDoc | undefined,
  superseded: HoldSignal[],
) {
  const before = { desired: view.desiredUnits, observed: view.observedUnits };
  const after = { desired: next ? new Map(view.desiredUnits).set(req.unit, next) : view.desiredUnits, observed: view.observedUnits };
  const delivered = superseded.map((s) => ({ run: s.run, by: s.by, at: s.at }));
  const body = { operation: 'resume', units: { [req.unit]: { action: 'resume' } }, ...(delivered.length > 0 ? { supersededHolds: delivered } : {}) };
  return buildTransitions(opened.loc, refs, opened.env.name, before, after, body, trailersOf(opened, req.reason), [req.unit], next === undefined);
}
