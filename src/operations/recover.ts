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
import { brokenError, type LeaseView, readLease } from '../lease/lease';
import { leaseStatus, leaseTiming, RUN_OPERATIONS } from '../lease/record';
import { type LeaseTransaction, withLease } from '../lease/transaction';
import type { StateOperationReport } from '../report/types';
import { applyHolds } from '../run/apply-holds';
import { readHoldSignals, signalDeletions } from '../run/signals';
import { breakFields, coordinationUpdates, takeOver, type Takeover } from '../run/takeover';
import { buildTransitions } from '../run/transition-plan';
import type { EnvironmentStateDoc } from '../state/documents';
import { type EnvironmentStateView, readEnvironmentState } from '../state/read';
import type { RefSnapshot } from '../state/store';
import { isoSeconds } from '../util/clock';
import type { Runtime } from '../util/runtime';
import { type EnvironmentRequest, leaseOptionsOf, openEnvironment, type OpenedEnvironment, planInputOf, trailersOf } from './context';
import { decideUnit, type RecoverOptions, type RecoverWork } from './recover-unit';
import { stateOperationReport } from './report-base';
import { inactiveStateDiagnostic } from './state-checks';

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
  const { store } = opened;
  await store.ensureOpen();
  const refs = await store.snapshot();
  await store.requireNoUnpublishedWork(refs);
  refuseWithoutImport(rt, opened, await readLease(store, refs), req);
  const options = leaseOptionsOf(rt, opened, 'recover', { initial: refs, keepBroken: true, waitMs: req.waitMs });
  return withLease(rt, store, options, (tx) => recoverUnderLease(rt, opened, req, tx));
}

/**
 * Recover imports only the run of a broken lease: a dead run whose lease merely expired is
 * imported by the next reconcile (or broken first); without a break, only --unit has work.
 */
function refuseWithoutImport(rt: Runtime, opened: OpenedEnvironment, lease: LeaseView | undefined, req: RecoverOptions): void {
  const name = opened.env.name;
  const importing = lease?.record.broken !== undefined;
  const timing = leaseTiming(opened.env.spec.lease);
  if (lease && !importing && RUN_OPERATIONS.has(lease.record.operation) && leaseStatus(lease.record, rt.clock.now(), timing.skewMs) === 'expired') {
    throw brokenError(name, lease, true);
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
  const docs = { desired: view.desiredUnits, observed: view.observedUnits };
  const takeover = broken ? await takeOver(store, tx.snapshot, { ...planInputOf(opened, view.state.generation, docs), now: isoSeconds(rt.clock.now()) }, undefined, tx.replaced) : undefined;
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
  view: EnvironmentStateView;
  takeover: Takeover | undefined;
  work: RecoverWork;
  broken: boolean;
}

async function publishRecovery(rt: Runtime, opened: OpenedEnvironment, req: RecoverOptions, tx: LeaseTransaction, r: Recovery, report: StateOperationReport): Promise<StateOperationReport> {
  const { store, loc, env } = opened;
  // Holds delivered to runs that died take effect here: a delivered hold always takes effect.
  const signals = await readHoldSignals(store, r.refs);
  const holds = applyHolds(env.name, r.work.desired, r.work.observed, signals);
  const breaks = r.broken ? breakFields(tx.replaced) : {};
  const body = { operation: 'recover', units: r.work.units, imported: r.takeover?.imported.imported ?? [], recovered: r.work.recovered, held: holds.held, ...breaks };
  const before = { desired: r.view.desiredUnits, observed: r.view.observedUnits };
  const after = { desired: holds.desired, observed: r.work.observed };
  const transitions = buildTransitions(loc, r.refs, env.name, before, after, body, trailersOf(opened, req.reason), req.unit ? [req.unit] : [], breaks.leaseBroken !== undefined);
  const extra = [...coordinationUpdates(store, r.refs, r.takeover, r.work.observed), ...signalDeletions(signals)];
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

/**
 * Where state cannot be imported into, recover still clears the break: an unchanged
 * commit records it when state.yaml exists, else the lease is simply released.
 */
async function recoverInactive(opened: OpenedEnvironment, req: RecoverOptions, tx: LeaseTransaction, state: EnvironmentStateDoc | undefined, broken: boolean, report: StateOperationReport): Promise<StateOperationReport> {
  const { loc, env } = opened;
  // With --unit there is nothing to decide on: a refusal. Else a warning beside the cleared break.
  const finding = inactiveStateDiagnostic(env.name, state, loc, req.unit ? 'error' : 'warning')!;
  if (req.unit) throw new NylError(finding);
  if (!broken) throw new NylError(diagnostic('NYL-RECOVER-NOTHING', 'error', `the lease of ${env.name} is not broken`, { env: env.name }));
  const breaks = breakFields(tx.replaced);
  if (state) {
    const empty = { desired: new Map(), observed: new Map() };
    const transitions = buildTransitions(loc, tx.snapshot, env.name, empty, empty, { operation: 'recover', ...breaks }, trailersOf(opened, req.reason), [], true);
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
