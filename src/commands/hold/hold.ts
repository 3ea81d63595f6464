/**
 * `nyl hold -e ENV --unit U --reason R`: freezes a unit without touching its resources.
 * Writes one desired commit, never renders source. While a reconcile or teardown run holds the
 * lease, the hold is delivered to that run through a signal ref instead (NYL-HOLD-DELIVERED); the
 * run applies it. If the run finished before it read the signal, hold takes the signal back (a
 * compare-and-swap delete: exactly one of them applies it) and holds the unit itself.
 */
import { closest } from '../../util/closest';
import { diagnostic, fail, NylError } from '../../errors/diagnostic';
import { brokenError, formatIdentity, type LeaseView, readLease } from '../../lease/lease';
import { leaseStatus, leaseTiming, RUN_OPERATIONS } from '../../lease/record';
import { isHeld, isRetained } from '../../plan/unit-view';
import type { StateOperationReport } from '../../report/types';
import type { HoldRequest as HoldRequestDoc } from '../../run/apply-holds';
import { writeHoldSignal } from '../../run/signals';
import { leaseRef, stateRefsOf } from '../../state/location';
import { type EnvironmentStateView, readEnvironmentState } from '../../state/read';
import type { RefSnapshot } from '../../state/store';
import { isoSeconds } from '../../util/clock';
import type { Runtime } from '../../util/runtime';
import { type EnvironmentRequest, openEnvironment, type OpenedEnvironment } from '../shared/context';
import { commitHolds } from './hold-commit';
import { requireActive, type StateRead } from '../state/state-checks';
import { stateOperationReport } from '../shared/report-base';

interface HoldRequest extends EnvironmentRequest {
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

type Outcome = StateOperationReport | 'again';

/** The unit as state and source know it: refuses unknown units and tombstones; says when already held. */
function checkUnit(opened: OpenedEnvironment, view: EnvironmentStateView, unit: string, report: StateOperationReport): StateOperationReport | undefined {
  const { env } = opened;
  const d = view.desiredUnits.get(unit);
  if (!d && !view.observedUnits.has(unit) && !opened.project.units.has(unit)) {
    const known = [...view.desiredUnits.keys(), ...view.observedUnits.keys(), ...opened.project.units.keys()];
    fail('NYL-UNIT-UNKNOWN', `neither the source nor the state of ${env.name} has a unit ${unit}`, { env: env.name, unit, guess: closest(unit, known) });
  }
  if (isRetained(d)) fail('NYL-HOLD-REFUSED', `${unit} is a retained tombstone: nothing reconciles it, so it cannot be held`, { env: env.name, unit });
  if (!isHeld(d)) return undefined;
  report.desired = view.desiredOid;
  report.notes.push(diagnostic('NYL-UNCHANGED', 'note', `${unit} is already held by ${d.hold?.by ?? 'someone'}; nothing changed`, { env: env.name, unit }));
  return report;
}

function delivered(opened: OpenedEnvironment, report: StateOperationReport, lease: LeaseView, unit: string, applied: boolean): StateOperationReport {
  const r = lease.record;
  report.result = 'delivered';
  report.details.deliveredTo = { run: r.run, runner: r.holder, operation: r.operation };
  const message = applied
    ? `the hold of ${unit} was applied by ${r.operation} run ${r.run}`
    : `the hold of ${unit} was delivered to ${r.operation} run ${r.run} of ${r.holder.name}; the run records it`;
  report.notes.push(diagnostic('NYL-HOLD-DELIVERED', 'note', message, { env: opened.env.name }));
  return report;
}

/**
 * Delivers the hold to the run holding the lease through its signal ref. If the run finished
 * meanwhile, the signal is taken back (a compare-and-swap delete: exactly one of them applies it)
 * and the caller looks again.
 */
async function deliver(rt: Runtime, opened: OpenedEnvironment, lease: LeaseView, request: HoldRequestDoc, report: StateOperationReport): Promise<Outcome> {
  const { store } = opened;
  await rt.faults.reach('before-hold-signal', [request.unit]);
  const signal = await writeHoldSignal(rt, store, lease.record.run, request, opened.author!);
  if (!signal) return 'again';
  await rt.faults.reach('hold-signal-written');
  const now = await readLease(store, await store.snapshot());
  if (now && now.record.run === lease.record.run && !now.record.broken) return delivered(opened, report, lease, request.unit, false);
  const takenBack = await store.write([{ ref: signal.ref, expect: signal.oid, to: null }]);
  return takenBack.ok ? 'again' : delivered(opened, report, lease, request.unit, true);
}

/** Holds the unit with a hold commit of its own; 'again' when a run took the lease meanwhile. */
async function commitHold(
  rt: Runtime,
  opened: OpenedEnvironment,
  request: HoldRequestDoc,
  req: HoldOptions,
  look: StateRead,
  report: StateOperationReport,
  attempt: number,
): Promise<Outcome> {
  try {
    const options = {
      operation: 'hold',
      requestedBy: request.by,
      ...(req.reason ? { reason: req.reason } : {}),
      ...(req.waitMs !== undefined ? { waitMs: req.waitMs } : {}),
      first: look,
    };
    const result = await commitHolds(rt, opened, [request], options);
    report.result = result.applied.held.length > 0 ? 'done' : 'unchanged';
    report.desired = result.desired;
    report.details.marker = result.applied.markers.includes(request.unit);
    if (result.applied.alreadyHeld.includes(request.unit))
      report.notes.push(diagnostic('NYL-UNCHANGED', 'note', `${request.unit} is already held; nothing changed`, { env: opened.env.name, unit: request.unit }));
    report.errors.push(...result.applied.diagnostics);
    return report;
  } catch (error) {
    // A run took the lease meanwhile (deliver to it), or a run applies late holds right now (a
    // short hold operation): look again.
    const holder = String(error instanceof NylError ? error.diagnostics[0]?.data?.operation : '');
    if (!(error instanceof NylError) || error.code !== 'NYL-LEASE-HELD' || !(RUN_OPERATIONS.has(holder) || holder === 'hold')) throw error;
    await rt.clock.sleep(100 + attempt * 50, rt.cancel);
    if (rt.cancel.aborted) throw error;
    return 'again';
  }
}

type HoldOptions = Omit<HoldRequest, keyof EnvironmentRequest>;

/** How a look reads the refs: `cached` decides on what this machine last saw, `checkLocal` checks the clone's local work. */
interface Look {
  attempt: number;
  cached: boolean;
  checkLocal: boolean;
}

/**
 * A look on the refs this machine last saw (no read of a network remote) may only lead to a hold
 * commit, whose lease push fences every ref it decided on (lease/lease.ts, decisionFences): the
 * state refs are there, no lease is, and the unit can be held. Anything else looks again with a
 * read, so that no answer ("already held", delivered, refused) comes from refs that may be old.
 */
async function cachedMayCommit(opened: OpenedEnvironment, refs: RefSnapshot, view: EnvironmentStateView, unit: string, look: Look): Promise<boolean> {
  const { loc } = opened;
  if (stateRefsOf(loc).some((r) => !refs.has(r)) || refs.has(leaseRef(loc))) return false;
  const d = view.desiredUnits.get(unit);
  if (isHeld(d) || isRetained(d) || (!d && !view.observedUnits.has(unit) && !opened.project.units.has(unit))) return false;
  try {
    await requireActive(opened, { refs, view });
    if (look.checkLocal) await opened.local.requireNoUnpublishedWork(refs);
    return true;
  } catch {
    return false;
  }
}

/** One look at the environment: already held, delivered to a running run, or held by a commit. */
async function holdOnce(rt: Runtime, opened: OpenedEnvironment, req: HoldOptions, report: StateOperationReport, look: Look): Promise<Outcome> {
  const { store, env, loc } = opened;
  const refs = await store.snapshot(look.cached ? { cached: true } : {});
  const view = await readEnvironmentState(store.reader, loc, refs, store.cache);
  if (look.cached && !(await cachedMayCommit(opened, refs, view, req.unit, look))) return 'again';
  await requireActive(opened, { refs, view });
  if (look.checkLocal) await opened.local.requireNoUnpublishedWork(refs);
  const unchanged = checkUnit(opened, view, req.unit, report);
  if (unchanged) return unchanged;
  const lease = await readLease(store, refs);
  // A live recover carries the break it imports: its lease is held, not broken (waited for below).
  const status = lease && leaseStatus(lease.record, rt.clock.now(), leaseTiming(env.spec.lease).skewMs);
  if (lease && status === 'broken') throw brokenError(env.name, lease, false);
  const request: HoldRequestDoc = {
    unit: req.unit,
    by: formatIdentity(opened.author!),
    ...(req.reason ? { reason: req.reason } : {}),
    at: isoSeconds(rt.clock.now()),
  };
  const live = status === 'live';
  if (lease && live && RUN_OPERATIONS.has(lease.record.operation)) return deliver(rt, opened, lease, request, report);
  return commitHold(rt, opened, request, req, { refs, view }, report, look.attempt);
}

export async function holdOpened(rt: Runtime, opened: OpenedEnvironment, req: HoldOptions): Promise<StateOperationReport> {
  await opened.store.ensureOpen();
  const report = stateOperationReport('hold', opened.env.name);
  report.details.unit = req.unit;
  // On a network remote the first look decides on the refs this machine last saw: when the hold
  // commit follows, its lease push proves them current, and the hold costs one round trip less.
  let cached = opened.loc.kind === 'remote';
  // The clone's local work is checked at the first look that reads, as at a cached one.
  let checkedFresh = false;
  for (let attempt = 0; attempt < 50; attempt++) {
    const outcome = await holdOnce(rt, opened, req, report, { attempt, cached, checkLocal: cached || !checkedFresh });
    if (outcome !== 'again') return outcome;
    checkedFresh ||= !cached;
    cached = false;
  }
  fail('NYL-STATE-CONFLICT', `the lease of ${opened.env.name} kept changing while delivering the hold`, { env: opened.env.name });
}
