/**
 * `nyl resume -e ENV --unit U --reason R`: lifts a hold. Deletes nothing and keeps the
 * unit's uid, receipt and condition; the next reconcile renders the unit again and applies what
 * changed. Takes the lease like every state operation.
 */
import { diagnostic, fail } from '../errors/diagnostic';
import { withLease } from '../lease/transaction';
import type { StateOperationReport } from '../report/types';
import { buildTransitions } from '../run/transition-plan';
import { resumeDocument } from '../state/hold';
import type { DesiredUnitDoc } from '../state/documents';
import { type EnvironmentStateView, readEnvironmentState } from '../state/read';
import type { Runtime } from '../util/runtime';
import { type EnvironmentRequest, leaseOptionsOf, openEnvironment, type OpenedEnvironment, trailersOf } from './context';
import { requireActiveState, stateUnderLease } from './state-checks';
import { stateOperationReport } from './report-base';

export interface ResumeRequest extends EnvironmentRequest {
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

/** The document after resume, or undefined when the unit is not held; unknown units refuse. */
function resumed(opened: OpenedEnvironment, view: EnvironmentStateView, unit: string): DesiredUnitDoc | undefined {
  const d = view.desiredUnits.get(unit);
  if (!d && !view.observedUnits.has(unit)) fail('NYL-UNIT-UNKNOWN', `the state of ${opened.env.name} holds no unit ${unit}`, { env: opened.env.name, unit });
  return resumeDocument(d);
}

function unchanged(opened: OpenedEnvironment, report: StateOperationReport, unit: string): StateOperationReport {
  report.notes.push(diagnostic('NYL-UNCHANGED', 'note', `${unit} is not held; nothing changed`, { env: opened.env.name, unit }));
  return report;
}

export async function resumeOpened(rt: Runtime, opened: OpenedEnvironment, req: Omit<ResumeRequest, keyof EnvironmentRequest>): Promise<StateOperationReport> {
  const { store, env, loc } = opened;
  await store.ensureOpen();
  const report = stateOperationReport('resume', env.name);
  report.details.unit = req.unit;
  const refs0 = await store.snapshot();
  const view0 = await readEnvironmentState(store.reader, loc, refs0, store.cache);
  requireActiveState(env.name, view0, loc);
  await store.requireNoUnpublishedWork(refs0);
  if (!resumed(opened, view0, req.unit)) {
    report.desired = view0.desiredOid;
    return unchanged(opened, report, req.unit);
  }
  return withLease(rt, store, leaseOptionsOf(rt, opened, 'resume', { initial: refs0, waitMs: req.waitMs }), async (tx) => {
    const refs = tx.snapshot;
    const view = await stateUnderLease(opened, { refs: refs0, view: view0 }, refs);
    requireActiveState(env.name, view, loc);
    const next = resumed(opened, view, req.unit);
    if (!next) {
      await tx.end('nothing-to-write');
      return unchanged(opened, report, req.unit);
    }
    const before = { desired: view.desiredUnits, observed: view.observedUnits };
    const after = { desired: new Map(view.desiredUnits).set(req.unit, next), observed: view.observedUnits };
    const body = { operation: 'resume', units: { [req.unit]: { action: 'resume' } } };
    const published = await tx.publish(buildTransitions(loc, refs, env.name, before, after, body, trailersOf(opened, req.reason), [req.unit]));
    report.result = 'done';
    report.desired = published.refs.get(loc.desiredRef);
    await store.syncKnownBranches(published.refs);
    return report;
  });
}
