/**
 * `nyl recover`: imports the run of a broken lease without executing anything, clears a
 * unit's uncertain condition or non-retryable failure (--retry), or adopts the receipt a run
 * checkpointed for it (--accept RUN). One transition commit, operation `recover`; no run record.
 *
 * recover takes a broken lease over keeping its `broken` mark, so a recover that dies leaves the
 * lease broken for the next importer; one that fails before its commit lands puts the broken lease
 * back (the lease transaction does), and the run refs stay.
 */
import { diagnostic, fail, NylError } from '../errors/diagnostic';
import { formatIdentity, type LeaseView, readLease } from '../lease/lease';
import { leaseStatus, leaseTiming, RUN_OPERATIONS } from '../lease/record';
import { type LeaseTransaction, withLease } from '../lease/transaction';
import type { StateOperationReport } from '../report/types';
import { applyHolds } from '../run/apply-holds';
import { readHoldSignals } from '../run/signals';
import { breakFields, coordinationUpdates, takeOver, type Takeover } from '../run/takeover';
import { buildTransitions } from '../run/transition-plan';
import type { EnvironmentStateDoc } from '../state/documents';
import { readEnvironmentState } from '../state/read';
import type { RefSnapshot } from '../state/store';
import { isoSeconds } from '../util/clock';
import type { Runtime } from '../util/runtime';
import { uuidv7 } from '../util/uuid';
import { type EnvironmentRequest, openEnvironment, type OpenedEnvironment } from './context';
import { decideUnit, type RecoverOptions, type RecoverWork } from './recover-unit';
import { stateOperationReport } from './report-base';

export type { RecoverOptions, RecoverWork } from './recover-unit';

export interface RecoverRequest extends EnvironmentRequest, RecoverOptions {}

function checkUsage(req: RecoverOptions): void {
  if (req.unit && req.retry === (req.accept !== undefined)) {
    fail('NYL-USAGE', '--unit takes exactly one of --retry and --accept <run>', { fix: 'pass --unit U --retry, or --unit U --accept <run> --reason <why>' });
  }
  if (!req.unit && (req.retry || req.accept !== undefined)) fail('NYL-USAGE', '--retry and --accept need --unit', { fix: 'pass --unit <name>' });
  if (req.accept !== undefined && !req.reason?.trim()) fail('NYL-USAGE', '--accept needs --reason', { fix: 'pass --reason "<why the checkpoint can be adopted>"' });
}

export async function recover(rt: Runtime, req: RecoverRequest): Promise<StateOperationReport> {
  checkUsage(req);
  const opened = await openEnvironment(rt, req, { writes: true });
  try {
    return await recoverOpened(rt, opened, req);
  } finally {
    opened.close();
  }
}

export async function recoverOpened(rt: Runtime, opened: OpenedEnvironment, req: RecoverOptions): Promise<StateOperationReport> {
  checkUsage(req);
  const { store, env } = opened;
  await store.ensureOpen();
  const refs = await store.snapshot();
  await store.requireNoUnpublishedWork(refs);
  refuseWithoutImport(rt, opened, await readLease(store, refs), req);
  const options = { operation: 'recover', run: uuidv7(rt.clock.now()), author: opened.author!, durationMs: env.spec.lease.durationMs, initial: refs, keepBroken: true, ...(req.waitMs !== undefined ? { waitMs: req.waitMs } : {}) };
  return withLease(rt, store, options, (tx) => recoverUnderLease(rt, opened, req, tx));
}

/**
 * Recover imports only the run of a broken lease: a dead run whose lease merely expired is
 * imported by the next reconcile (or broken first); without a break, only --unit has work.
 */
function refuseWithoutImport(rt: Runtime, opened: OpenedEnvironment, lease: LeaseView | undefined, req: RecoverOptions): void {
  const name = opened.env.name;
  const importing = lease?.record.broken !== undefined;
  const timing = leaseTiming(opened.env.spec.lease.durationMs);
  if (lease && !importing && RUN_OPERATIONS.has(lease.record.operation) && leaseStatus(lease.record, rt.clock.now(), timing.skewMs) === 'expired') {
    fail('NYL-LEASE-BROKEN', `the lease of ${name} expired at ${lease.record.deadline} while ${lease.record.operation} run ${lease.record.run} held it; its run is not imported yet`, { env: name, expired: true });
  }
  if (!importing && !req.unit) fail('NYL-RECOVER-NOTHING', `the lease of ${name} is not broken, so there is no run to import`, { env: name });
}

async function recoverUnderLease(rt: Runtime, opened: OpenedEnvironment, req: RecoverOptions, tx: LeaseTransaction): Promise<StateOperationReport> {
  const { store, loc, env } = opened;
  const report = stateOperationReport('recover', env.name);
  const broken = tx.replaced?.record.broken !== undefined;
  // Another importer may have taken the broken lease over and imported its run while we waited.
  if (!broken && !req.unit) fail('NYL-RECOVER-NOTHING', `the lease of ${env.name} is no longer broken: another importer imported its run`, { env: env.name });
  const view = await readEnvironmentState(store.reader, loc, tx.snapshot, store.cache);
  if (!view.state || view.state.status !== 'active') return recoverInactive(opened, req, tx, view.state, broken, report);
  const takeover = broken ? await takeOver(store, tx.snapshot, { project: opened.project, env, generation: view.state.generation, desired: view.desiredUnits, observed: view.observedUnits, now: isoSeconds(rt.clock.now()), drivers: opened.drivers }, undefined, tx.replaced) : undefined;
  const work: RecoverWork = {
    desired: new Map(takeover?.imported.desired ?? view.desiredUnits),
    observed: new Map(takeover?.imported.observed ?? view.observedUnits),
    units: {},
    recovered: [...(takeover?.imported.recovered ?? [])],
  };
  report.warnings.push(...(takeover?.imported.diagnostics ?? []));
  if (req.unit) await decideUnit(rt, opened, tx.snapshot, view.state.generation, req, work, report);
  return publishRecovery(rt, opened, req, tx, { refs: tx.snapshot, view, takeover, work, broken }, report);
}

interface Recovery {
  refs: RefSnapshot;
  view: Awaited<ReturnType<typeof readEnvironmentState>>;
  takeover: Takeover | undefined;
  work: RecoverWork;
  broken: boolean;
}

async function publishRecovery(rt: Runtime, opened: OpenedEnvironment, req: RecoverOptions, tx: LeaseTransaction, r: Recovery, report: StateOperationReport): Promise<StateOperationReport> {
  const { store, loc, env } = opened;
  // Holds delivered to runs that died take effect here: a delivered hold always takes effect.
  const signals = await readHoldSignals(store, r.refs);
  const holds = applyHolds(env.name, r.work.desired, r.work.observed, signals.map((s) => ({ unit: s.unit, by: s.by, at: s.at, ...(s.reason ? { reason: s.reason } : {}) })));
  const breaks = r.broken ? breakFields(tx.replaced) : {};
  const body = { operation: 'recover', units: r.work.units, imported: r.takeover?.imported.imported ?? [], recovered: r.work.recovered, held: holds.held, ...breaks };
  const before = { desired: r.view.desiredUnits, observed: r.view.observedUnits };
  const after = { desired: holds.desired, observed: r.work.observed };
  const transitions = buildTransitions(loc, r.refs, env.name, before, after, body, trailersOf(opened, req), req.unit ? [req.unit] : [], breaks.leaseBroken !== undefined);
  const extra = [...coordinationUpdates(store, r.refs, r.takeover, r.work.observed), ...signals.map((s) => ({ ref: s.ref, expect: s.oid, to: null }))];
  await rt.faults.reach('before-recover-push');
  const published = await tx.publish(transitions, () => extra);
  report.result = 'done';
  report.desired = published.refs.get(loc.desiredRef);
  report.observed = published.refs.get(loc.observedRef);
  if (r.takeover) {
    report.details.imported = r.takeover.imported.imported;
    report.details.runs = r.takeover.imported.consumed.map((run) => run.run);
  }
  report.details.recovered = r.work.recovered;
  if (holds.held.length > 0) report.details.held = holds.held;
  Object.assign(report.details, breaks);
  const uncertain = [...r.work.observed].filter(([, o]) => o.condition?.type === 'uncertain').map(([n]) => n);
  if (uncertain.length > 0) report.warnings.push(diagnostic('NYL-UNIT-UNCERTAIN', 'warning', `units left uncertain: ${uncertain.join(', ')}`, { env: env.name, units: uncertain, unit: uncertain[0] }));
  await store.syncKnownBranches(published.refs);
  return report;
}

function trailersOf(opened: OpenedEnvironment, req: RecoverOptions) {
  return { requestedBy: formatIdentity(opened.author!), ...(req.reason ? { reason: req.reason } : {}) };
}

/** The state's finding where nothing can be imported into: missing, deleted or moved. */
function inactiveFinding(name: string, state: EnvironmentStateDoc | undefined, desiredRef: string) {
  if (!state) return diagnostic('NYL-STATE-MISSING', 'warning', `${desiredRef} holds no state for ${name}`, { env: name });
  if (state.status === 'deleted') return diagnostic('NYL-STATE-DELETED', 'warning', `the state of ${name} was deleted with \`nyl state delete\``, { env: name });
  return diagnostic('NYL-STATE-MOVED', 'warning', `the state of ${name} moved to ${state.movedTo ?? 'another location'}`, { env: name, movedTo: state.movedTo });
}

/**
 * Where state cannot be imported into, recover still clears the break: an unchanged
 * commit records it when state.yaml exists, else the lease is simply released.
 */
async function recoverInactive(opened: OpenedEnvironment, req: RecoverOptions, tx: LeaseTransaction, state: EnvironmentStateDoc | undefined, broken: boolean, report: StateOperationReport): Promise<StateOperationReport> {
  const { loc, env } = opened;
  const finding = inactiveFinding(env.name, state, loc.desiredRef);
  if (req.unit) throw new NylError({ ...finding, severity: 'error' });
  if (!broken) throw new NylError(diagnostic('NYL-RECOVER-NOTHING', 'error', `the lease of ${env.name} is not broken`, { env: env.name }));
  const breaks = breakFields(tx.replaced);
  if (state) {
    const empty = { desired: new Map(), observed: new Map() };
    const transitions = buildTransitions(loc, tx.snapshot, env.name, empty, empty, { operation: 'recover', ...breaks }, trailersOf(opened, req), [], true);
    const published = await tx.publish(transitions);
    report.desired = published.commits.get(loc.desiredRef);
  } else {
    await tx.release();
  }
  report.result = 'done';
  Object.assign(report.details, breaks);
  report.warnings.push(finding);
  return report;
}
