/**
 * `nyl hold -e ENV --unit U --reason R` (spec 05): freezes a unit without touching its resources.
 * Writes one desired commit, never renders source. While a reconcile or teardown run holds the
 * lease, the hold is delivered to that run through a signal ref instead (NYL-HOLD-DELIVERED); the
 * run applies it. If the run finished before it read the signal, hold takes the signal back (a
 * compare-and-swap delete: exactly one of them applies it) and holds the unit itself.
 */
import { diagnostic, fail, NylError } from '../errors/diagnostic';
import { formatIdentity, readLease } from '../lease/lease';
import { leaseStatus, leaseTiming, RUN_OPERATIONS } from '../lease/record';
import type { StateOperationReport } from '../report/types';
import { writeHoldSignal } from '../run/signals';
import { readEnvironmentState } from '../state/read';
import { isoSeconds } from '../util/clock';
import type { Runtime } from '../util/runtime';
import { type EnvironmentRequest, openEnvironment, type OpenedEnvironment } from './context';
import { commitHolds } from './hold-commit';
import { requireActiveState } from './state-checks';
import { stateOperationReport } from './report-base';

export interface HoldRequest extends EnvironmentRequest {
  unit: string;
  reason?: string;
  waitMs?: number;
}

export async function hold(rt: Runtime, req: HoldRequest): Promise<StateOperationReport> {
  const opened = await openEnvironment(rt, req, { writes: true, renders: false });
  try {
    return await holdOpened(rt, opened, req);
  } finally {
    opened.close();
  }
}

export async function holdOpened(rt: Runtime, opened: OpenedEnvironment, req: Omit<HoldRequest, keyof EnvironmentRequest>): Promise<StateOperationReport> {
  const { store, env, loc } = opened;
  const author = opened.author!;
  const by = formatIdentity(author);
  await store.ensureOpen();
  const report = stateOperationReport('hold', env.name);
  report.details.unit = req.unit;
  for (let attempt = 0; attempt < 50; attempt++) {
    const refs = await store.snapshot();
    const view = await readEnvironmentState(store.reader, loc, refs, store.cache);
    requireActiveState(env.name, view, loc);
    if (attempt === 0) await store.requireNoUnpublishedWork(refs);
    const d = view.desiredUnits.get(req.unit);
    if (!d && !view.observedUnits.has(req.unit) && !opened.project.units.has(req.unit)) {
      fail('NYL-UNIT-UNKNOWN', `neither the source nor the state of ${env.name} has a unit ${req.unit}`, { env: env.name, unit: req.unit });
    }
    if (d?.lifecycle?.state === 'held') {
      report.desired = view.desiredOid;
      report.notes.push(diagnostic('NYL-UNCHANGED', 'note', `${req.unit} is already held by ${d.hold?.by ?? 'someone'}; nothing changed`, { env: env.name, unit: req.unit }));
      return report;
    }
    if (d?.lifecycle?.state === 'retained') {
      fail('NYL-HOLD-REFUSED', `${req.unit} is a retained tombstone: nothing reconciles it, so it cannot be held`, { env: env.name, unit: req.unit });
    }
    const lease = await readLease(store, refs);
    const live = lease && leaseStatus(lease.record, rt.clock.now(), leaseTiming(env.spec.lease.durationMs).skewMs) === 'live';
    if (lease?.record.broken) {
      throw new NylError(diagnostic('NYL-LEASE-BROKEN', 'error', `the lease of ${env.name} was broken by ${lease.record.broken.by} (${lease.record.broken.reason}); its run is not imported yet`, { env: env.name }));
    }
    if (lease && live && RUN_OPERATIONS.has(lease.record.operation)) {
      const run = lease.record.run;
      const signal = await writeHoldSignal(rt, store, run, { unit: req.unit, by, ...(req.reason ? { reason: req.reason } : {}), at: isoSeconds(rt.clock.now()) }, author);
      if (!signal) continue;
      await rt.faults.reach('hold-signal-written');
      const after = await store.snapshot();
      const now = await readLease(store, after);
      if (now && now.record.run === run && !now.record.broken) {
        report.result = 'delivered';
        report.details.deliveredTo = { run, runner: lease.record.holder, operation: lease.record.operation };
        report.notes.push(diagnostic('NYL-HOLD-DELIVERED', 'note', `the hold of ${req.unit} was delivered to ${lease.record.operation} run ${run} of ${lease.record.holder.name}; the run records it`, { env: env.name }));
        return report;
      }
      // The run finished: take the signal back, unless the run already applied (deleted) it.
      const takenBack = await store.write([{ ref: signal.ref, expect: signal.oid, to: null }]);
      if (!takenBack.ok) {
        report.result = 'delivered';
        report.details.deliveredTo = { run, runner: lease.record.holder, operation: lease.record.operation };
        report.notes.push(diagnostic('NYL-HOLD-DELIVERED', 'note', `the hold of ${req.unit} was applied by ${lease.record.operation} run ${run}`, { env: env.name }));
        return report;
      }
      continue;
    }
    try {
      const result = await commitHolds(rt, opened, [{ unit: req.unit, by, ...(req.reason ? { reason: req.reason } : {}), at: isoSeconds(rt.clock.now()) }], {
        operation: 'hold',
        requestedBy: by,
        ...(req.reason ? { reason: req.reason } : {}),
        ...(req.waitMs !== undefined ? { waitMs: req.waitMs } : {}),
      });
      report.result = result.applied.held.length > 0 ? 'done' : 'unchanged';
      report.desired = result.desired;
      report.details.marker = result.applied.markers.includes(req.unit);
      if (result.applied.alreadyHeld.includes(req.unit)) {
        report.notes.push(diagnostic('NYL-UNCHANGED', 'note', `${req.unit} is already held; nothing changed`, { env: env.name, unit: req.unit }));
      }
      report.errors.push(...result.applied.diagnostics);
      return report;
    } catch (error) {
      // A run took the lease meanwhile (deliver to it), or a run applies late holds right now
      // (a short hold operation): look again.
      const holder = String(error instanceof NylError ? error.diagnostics[0]?.data?.operation : '');
      if (error instanceof NylError && error.code === 'NYL-LEASE-HELD' && (RUN_OPERATIONS.has(holder) || holder === 'hold')) {
        await rt.clock.sleep(100 + attempt * 50, rt.cancel);
        if (rt.cancel.aborted) throw error;
        continue;
      }
      throw error;
    }
  }
  fail('NYL-STATE-CONFLICT', `the lease of ${env.name} kept changing while delivering the hold`, { env: env.name });
}
