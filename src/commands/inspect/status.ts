/**
 * `nyl status -e ENV`: what each unit of the environment is now, who holds or broke the lease,
 * and what needs attention. Reads state and renders source; writes nothing but the clone's
 * known branches (fast-forward only).
 *
 * Damage (NYL-STATE-CORRUPT) is an error of status, whatever the document: each damaged
 * document stops every writer until it is repaired, so a pipeline that checks status must see it.
 * Status still shows what it can: a damaged unit is `blocked`, the others as they are; only a
 * damaged state.yaml leaves it nothing to show.
 */
import { hostname } from 'node:os';
import { diagnostic, type Diagnostic, NylError } from '../../errors/diagnostic';
import { describeHolder, type LeaseSighting, type LeaseView, readLease, sightLease, skewDiagnostic } from '../../lease/lease';
import { carriesBreak, clockSkewOf, type LeaseRecord, type LeaseStatus, leaseStatus, leaseTiming } from '../../lease/record';
import type { UnitPlan } from '../../plan/actions';
import { planEnvironment } from '../../plan/planner';
import { statusDetail, statusPhase } from '../../plan/reasons';
import { observesIncarnation } from '../../plan/unit-view';
import { emptyDiagnostics, FORMAT_VERSION, REPORT_API_VERSION, type StatusReport, type UnitStatus } from '../../report/types';
import { importRuns } from '../../run/import';
import { readSignals } from '../../run/signals';
import { type Damage, damageDiagnostic, whereOf } from '../../state/damage';
import { coordinationNamespace, describeLocation } from '../../state/location';
import { readEnvironmentState } from '../../state/read';
import { type RecordedRun, readRecordedRuns, runIsLive } from '../../state/run-record';
import type { ObservedUnitDoc } from '../../state/documents';
import type { EnvironmentStateView } from '../../state/read';
import type { RefSnapshot } from '../../state/store';
import { isoSeconds } from '../../util/clock';
import { byCodeUnits } from '../../util/compare';
import type { Runtime } from '../../util/runtime';
import { type EnvironmentRequest, openEnvironment, type OpenedEnvironment, planInputOf } from '../shared/context';
import { statusLeavingWarnings } from '../reconcile/lifecycle-report';
import { approvalWarning, ownedNames } from '../reconcile/reconcile-report';
import { divergedWarnings, localWorkWarnings, stateLostObserved } from '../shared/report-base';
import { cacheDivergedDiagnostic } from '../../state/local-work';
import { inactiveStateOf } from '../state/state-checks';
import { uncommittedWarnings } from '../shared/source-warnings';

type StatusRequest = EnvironmentRequest;

/** The RECEIPT column: a unit awaiting its dependencies resolves no key to compare its receipt with yet. */
function receiptState(state: UnitStatus['state'], hasReceipt: boolean): UnitStatus['receipt'] {
  if (!hasReceipt) return 'none';
  if (state === 'awaiting-dependencies') return 'unresolved';
  // A unit on its way out keeps the receipt of what runs until it is gone.
  return ['current', 'held', 'retained', 'leaving', 'pending-teardown', 'tearing-down', 'drifted'].includes(state) ? 'current' : 'outdated';
}

/** Drift observations and an approval wait, as status shows them. */
function driftAndApproval(p: UnitPlan, s: UnitStatus): void {
  const observed = p.observed;
  // Only the current incarnation's observations count.
  if (observesIncarnation(observed, p.uid) && observed.drift) s.drift = observed.drift;
  if (observesIncarnation(observed, p.uid) && observed.driftHistory) s.driftHistory = observed.driftHistory;
  const a = p.action;
  if (a.type !== 'awaiting-approval') return;
  s.approval = { reason: a.reason, requireDigest: a.requireDigest, ...(a.digest ? { digest: a.digest } : {}) };
  // Awaiting approval to run again with a current receipt (a repair, a reapply): the receipt is current.
  if (p.observed?.receipt && p.executionKey === p.observed.receipt.executionKey) s.receipt = 'current';
}

function unitStatus(p: UnitPlan): UnitStatus {
  const receipt = p.observed?.receipt;
  const state = statusPhase(p);
  const s: UnitStatus = {
    name: p.name,
    kind: p.desired?.kind ?? p.unit?.kind ?? '-',
    state,
    receipt: receiptState(state, receipt !== undefined),
    detail: statusDetail(p),
    action: p.action.type,
    reason: p.action.reason,
  };
  if (state === 'held' && !p.desired?.kind) s.kind = '-';
  if (p.uid && !p.newIncarnation) s.uid = p.uid;
  if (p.executionKey) s.executionKey = p.executionKey;
  if (receipt) s.receiptKey = receipt.executionKey;
  if (p.observed?.lastRun) s.lastRun = p.observed.lastRun;
  else if (receipt) s.lastRun = { run: receipt.run, result: 'executed', at: receipt.finishedAt };
  if (p.observed?.condition) {
    const c = p.observed.condition;
    s.condition = { type: c.type, retryable: c.retryable, reason: c.reason, run: c.run, since: c.since, ...(c.code ? { code: c.code } : {}) };
  }
  if (p.desired?.hold) s.hold = p.desired.hold;
  const a = p.action;
  if (a.type === 'wait' || (a.type === 'blocked' && a.reason === 'dependency-blocked')) s.waits = a.waits;
  driftAndApproval(p, s);
  return s;
}

/**
 * Released units: state keeps their record (no desired file) until `nyl state forget` or
 * `nyl state delete`; their resources were left in place. One the ownership set has again is a
 * new incarnation, shown by its plan instead.
 */
function releasedRecords(observed: ReadonlyMap<string, ObservedUnitDoc>, plan: { units: ReadonlyMap<string, unknown> }): UnitStatus[] {
  const out: UnitStatus[] = [];
  for (const [name, doc] of [...observed].sort(([a], [b]) => byCodeUnits(a, b))) {
    if (!doc.released || plan.units.has(name)) continue;
    const r = doc.released;
    const s: UnitStatus = {
      name,
      kind: doc.receipt?.desired.kind ?? '-',
      state: 'released',
      receipt: 'none',
      detail: `released by ${r.by} in run ${r.run} at ${r.at}: its resources were left in place`,
    };
    if (doc.uid) s.uid = doc.uid;
    out.push(s);
  }
  return out;
}

/**
 * A drifted unit: under driftRepair converge the next reconcile repairs it; under manual it waits
 * for --reapply. A lost tool state is worse than drift: its own code, whose fix no reconcile does alone.
 */
function driftedWarning(env: string, u: UnitStatus, driftRepair: 'converge' | 'manual'): Diagnostic {
  if (u.drift?.code === 'NYL-BACKEND-STATE-LOST') return stateLostObserved(env, u.name, u.drift.detail);
  return diagnostic('NYL-UNIT-DRIFTED', 'warning', `${u.name} ${u.detail}`, {
    env,
    unit: u.name,
    units: [u.name],
    ...(driftRepair === 'converge' ? { repair: 'converge' } : {}),
  });
}

/** Failure codes status reports with their own fix instead of NYL-UNIT-FAILED's: a refusal that needs a decision. */
const OWN_FAILURE_CODES = new Set(['NYL-BACKEND-STATE-LOST', 'NYL-BACKEND-SHARED']);

/**
 * Warnings of the units that need attention. `unimported` names the units whose condition only an
 * import by the next reconcile brings into state: their fixes name that reconcile first.
 */
function unitWarnings(env: string, units: UnitStatus[], unimported: ReadonlySet<string>, driftRepair: 'converge' | 'manual'): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const u of units) {
    const pending = unimported.has(u.name) ? { unimported: true } : {};
    if (u.state === 'held' && u.hold) {
      out.push(
        diagnostic('NYL-UNIT-HELD', 'warning', `${u.name} is held by ${u.hold.by}${u.hold.reason ? ` (${u.hold.reason})` : ''} since ${u.hold.since}`, {
          env,
          unit: u.name,
          units: [u.name],
        }),
      );
    }
    if (u.state === 'awaiting-approval' && u.approval) out.push(approvalWarning(env, u.name, u.detail, u.approval));
    if (u.state === 'drifted') out.push(driftedWarning(env, u, driftRepair));
    if (u.condition?.type === 'uncertain') {
      out.push(
        diagnostic('NYL-UNIT-UNCERTAIN', 'warning', `${u.name} may have had effects without a recorded result: ${u.condition.reason}`, {
          env,
          unit: u.name,
          units: [u.name],
          ...pending,
        }),
      );
    } else if (u.condition?.type === 'failed' && u.condition.code && OWN_FAILURE_CODES.has(u.condition.code)) {
      const teardown = u.action === 'teardown' || u.action === 'pending-teardown' ? { teardown: true } : {};
      out.push(
        diagnostic(u.condition.code as 'NYL-BACKEND-STATE-LOST', 'warning', `${u.name} failed in run ${u.condition.run}: ${u.condition.reason}`, {
          env,
          unit: u.name,
          units: [u.name],
          ...pending,
          ...teardown,
        }),
      );
    } else if (u.state === 'failed' && u.condition) {
      out.push(
        diagnostic('NYL-UNIT-FAILED', 'warning', `${u.name} failed in run ${u.condition.run}: ${u.condition.reason}`, {
          env,
          unit: u.name,
          units: [u.name],
          retryable: u.condition.retryable,
          acknowledge: u.condition.retryable === false,
          ...pending,
        }),
      );
    }
  }
  return out;
}

export async function status(rt: Runtime, req: StatusRequest): Promise<StatusReport> {
  const opened = await openEnvironment(rt, req, { writes: false });
  try {
    const report = await statusOpened(rt, opened);
    report.warnings.unshift(...(await uncommittedWarnings(opened, 'status')));
    return report;
  } finally {
    opened.close();
  }
}

function emptyReport(opened: OpenedEnvironment): StatusReport {
  return {
    apiVersion: REPORT_API_VERSION,
    formatVersion: FORMAT_VERSION,
    kind: 'StatusReport',
    environment: opened.env.name,
    source: opened.sourceCommit,
    units: {},
    unitOrder: [],
    details: { location: describeLocation(opened.loc, opened.store.localRepository) },
    ...emptyDiagnostics(),
  };
}

/** The clock read and the lease's status that status decides everything on, taken once. */
interface LeaseAt {
  now: number;
  skewMs: number;
  lease?: { view: LeaseView; status: LeaseStatus };
}

/** Why a broken lease waits: its break, and the recover that carried it and died, if one did. */
function brokenMessage(env: string, r: LeaseRecord): string {
  const b = r.broken!;
  const broke = `the lease of ${env} was broken by ${b.by} at ${b.at} (${b.reason})`;
  if (!carriesBreak(r)) return `${broke}; its run is not imported yet`;
  return `${broke}; ${describeHolder(r)} took it over to import run ${r.brokenHolder!.run} and ended before its commit (its lease expired at ${r.deadline}), so that run is not imported yet`;
}

/** Who holds or broke the lease, as the report and its notes show it. */
function reportLease(opened: OpenedEnvironment, lease: LeaseView, st: LeaseStatus, at: LeaseAt, report: StatusReport): void {
  const env = opened.env.name;
  const r = lease.record;
  const ahead = clockSkewOf(r, at.now, at.skewMs);
  if (ahead !== undefined) report.warnings.push(skewDiagnostic(env, lease, ahead, at.skewMs, 'warning'));
  report.lease = { status: st, run: r.run, operation: r.operation, holder: r.holder, acquiredAt: r.acquiredAt, deadline: r.deadline };
  // The break a live recover carries is the one it is importing: its lease shows as live alone.
  if (st === 'broken') {
    report.lease.broken = r.broken!;
    report.warnings.push(diagnostic('NYL-LEASE-BROKEN', 'warning', brokenMessage(env, r), { env }));
  } else if (st === 'live') {
    report.notes.push(diagnostic('NYL-LEASE-HELD', 'note', `the lease of ${env} is held by ${describeHolder(r)} until ${r.deadline}`, { env, expired: false }));
  } else {
    report.notes.push(
      diagnostic('NYL-LEASE-BROKEN', 'note', `the lease of ${env} expired at ${r.deadline}; ${describeHolder(r)} held it`, { env, expired: true }),
    );
  }
}

/**
 * What this host saw of the lease beside its stamps: a holder that renewed a lease whose deadline
 * had passed here (the clocks disagree by more than the margin: NYL-CLOCK-SKEW, a warning), a
 * holder of this machine that is gone (taken over at once), or how long an expired lease still
 * has to stay unchanged before a taker takes it over.
 */
function reportSighting(opened: OpenedEnvironment, lease: { view: LeaseView; status: LeaseStatus }, seen: LeaseSighting, report: StatusReport): void {
  const env = opened.env.name;
  const r = lease.view.record;
  if (seen.renewedWhileExpired) {
    const message = `the lease of ${env} was renewed by ${describeHolder(r)} while its deadline had passed by this host's clock (${hostname()}): its timestamps and the renewals this host saw disagree by more than the skew margin; a taker does not take it over while it is renewed`;
    report.warnings.push(
      diagnostic('NYL-CLOCK-SKEW', 'warning', message, {
        env,
        data: { hosts: [r.holder.host, hostname()], holder: r.holder, run: r.run, observedRenewal: true },
      }),
    );
  } else if (lease.status !== 'broken' && seen.gone) {
    report.notes.push(
      diagnostic(
        'NYL-LEASE-BROKEN',
        'note',
        `the holder of the lease of ${env}, pid ${r.holder.pid} on this machine, is gone: the next reconcile takes its lease over at once`,
        { env, expired: true },
      ),
    );
  } else if (lease.status === 'expired' && seen.remainingMs > 0) {
    report.notes.push(
      diagnostic(
        'NYL-LEASE-BROKEN',
        'note',
        `a taker takes the lease of ${env} over once it stayed unchanged for ${Math.ceil(seen.windowMs / 1000)} s (as this host saw it, ${Math.floor(seen.unchangedMs / 1000)} s so far): a live holder renews in that time`,
        { env, expired: true },
      ),
    );
  }
}

/** A unit a live run started and has no result of yet. */
interface Started {
  run: string;
  startedAt: string;
}

/**
 * Units that live runs started without a checkpoint yet. Status shows them running, not pending:
 * their effects may be under way (or the run could not record them, and its lease holds until
 * its deadline).
 */
function startedByLiveRuns(live: RecordedRun[]): Map<string, Started> {
  const started = new Map<string, Started>();
  for (const r of live)
    for (const [name, doc] of [...r.teardowns, ...r.units]) if (!doc.checkpoint) started.set(name, { run: r.run, startedAt: doc.startedAt });
  return started;
}

function showRunning(s: UnitStatus, started: Started): void {
  s.state = 'running';
  s.running = { run: started.run, startedAt: started.startedAt };
  s.detail = `started by run ${started.run} at ${started.startedAt}; its result is not recorded yet`;
}

/**
 * Runs that ended without their transition commit wait for import: status shows what that import
 * will find. A live run's records show which units it started.
 */
async function withUnimported(opened: OpenedEnvironment, refs: RefSnapshot, at: LeaseAt, view: EnvironmentStateView, report: StatusReport) {
  const { store, env } = opened;
  const { now, skewMs, lease } = at;
  const runs = await readRecordedRuns(store.reader, store.loc, refs);
  const isLive = (r: RecordedRun) =>
    r.run === lease?.view.record.run ? lease.status === 'live' : Boolean(r.doc && runIsLive(r.doc, now, skewMs) && !lease?.view.record.broken);
  const dead = runs.filter((r) => !isLive(r));
  const docs = { desired: view.desiredUnits, observed: view.observedUnits, started: startedByLiveRuns(runs.filter(isLive)) };
  if (dead.length === 0) return docs;
  for (const r of dead) {
    reportDamage(opened, r.damage, report);
    if (r.damage.some((d) => d.document === 'run')) continue;
    const why = r.doc?.ended ? `ended (${r.doc.ended.reason})` : 'died';
    report.warnings.push(
      diagnostic('NYL-RUN-UNIMPORTED', 'warning', `run ${r.run} ${why} without its transition commit; its ${r.units.size} unit record(s) wait for import`, {
        env: env.name,
        data: { run: r.run },
      }),
    );
  }
  const preview = importRuns({ ...planInputOf(opened, view.state!.generation, docs), runs: dead, now: isoSeconds(now) });
  return { desired: preview.desired, observed: preview.observed, started: docs.started };
}

/**
 * Units whose condition comes from a dead run's records, not from state, where `recover --unit`
 * cannot reach it: recover imports only the run of a broken lease, so a cancelled run, one that
 * lost its lease or one whose lease merely expired waits for the next reconcile's import.
 */
function awaitingImport(at: LeaseAt, state: ReadonlyMap<string, ObservedUnitDoc>, preview: ReadonlyMap<string, ObservedUnitDoc>): Set<string> {
  const out = new Set<string>();
  if (at.lease?.view.record.broken) return out;
  for (const [name, doc] of preview) {
    const c = doc.condition;
    const recorded = state.get(name)?.condition;
    if (c && (recorded?.run !== c.run || recorded.since !== c.since || recorded.type !== c.type)) out.add(name);
  }
  return out;
}

/** Units with a damaged document, and the detail status shows for them. */
function damagedUnits(env: string, damage: readonly Damage[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const d of damage) if (d.unit) out.set(d.unit, `damaged: ${whereOf(d)}: ${d.problem}; repair it with \`nyl recover -e ${env} --reason "<why>"\``);
  return out;
}

/** Damage as status reports it: an error each (see the module header). */
function reportDamage(opened: OpenedEnvironment, damage: readonly Damage[], report: StatusReport): void {
  report.errors.push(...damage.map((d) => damageDiagnostic(opened.env.name, d)));
}

/** The lease and what status decides on it; a damaged lease is an error and decides nothing. */
async function leaseAt(rt: Runtime, opened: OpenedEnvironment, refs: RefSnapshot, report: StatusReport): Promise<LeaseAt> {
  const lease = await readLease(opened.store, refs);
  const now = rt.clock.now();
  const skewMs = leaseTiming(opened.env.spec.lease).skewMs;
  if (lease?.damage) {
    reportDamage(opened, [lease.damage], report);
    return { now, skewMs };
  }
  const at: LeaseAt = { now, skewMs, ...(lease ? { lease: { view: lease, status: leaseStatus(lease.record, now, skewMs) } } : {}) };
  if (at.lease) {
    reportLease(opened, at.lease.view, at.lease.status, at, report);
    reportSighting(opened, at.lease, sightLease(rt, opened.store, refs, at.lease.view, opened.env.spec.lease), report);
  }
  return at;
}

export async function statusOpened(rt: Runtime, opened: OpenedEnvironment): Promise<StatusReport> {
  return (await statusWithRefs(rt, opened)).report;
}

/**
 * Status, and the state refs it read (none when the location could not be opened: the report
 * says why), for a caller that reads more of the same state at once (the web view's pages) and
 * need not read the refs again.
 */
export async function statusWithRefs(rt: Runtime, opened: OpenedEnvironment): Promise<{ report: StatusReport; refs?: RefSnapshot }> {
  const report = emptyReport(opened);
  try {
    await opened.store.ensureOpen();
  } catch (error) {
    if (!(error instanceof NylError)) throw error;
    report.errors.push(...error.diagnostics);
    return { report };
  }
  const refs = await opened.store.snapshot();
  await statusOf(rt, opened, refs, report);
  return { report, refs };
}

async function statusOf(rt: Runtime, opened: OpenedEnvironment, refs: RefSnapshot, report: StatusReport): Promise<void> {
  const { loc, store, env } = opened;
  const view = await readEnvironmentState(store.reader, loc, refs, store.cache, { tolerate: true });
  if (view.desiredOid) report.desired = view.desiredOid;
  if (view.observedOid) report.observed = view.observedOid;
  const at = await leaseAt(rt, opened, refs, report);
  reportDamage(opened, view.damage, report);
  const inactive = view.damage.some((d) => d.document === 'state') ? undefined : await inactiveStateOf(opened, refs, view.state);
  if (inactive) report.errors.push(inactive);
  if (!view.state || inactive) return;
  reportDamage(opened, (await readSignals(store, refs)).damaged, report);
  const docs = await withUnimported(opened, refs, at, view, report);
  const plan = planEnvironment({ ...planInputOf(opened, view.state.generation, docs), damaged: damagedUnits(env.name, view.damage) });
  const statuses = [...plan.order.map((n) => unitStatus(plan.units.get(n)!)), ...releasedRecords(docs.observed, plan)];
  for (const s of statuses) if (docs.started.has(s.name)) showRunning(s, docs.started.get(s.name)!);
  for (const s of statuses) report.units[s.name] = s;
  report.unitOrder = statuses.map((s) => s.name);
  report.warnings.push(...unitWarnings(env.name, statuses, awaitingImport(at, view.observedUnits, docs.observed), env.spec.driftRepair));
  report.warnings.push(...statusLeavingWarnings(env.name, plan, new Map(statuses.map((s) => [s.name, s])), ownedNames(opened)));
  for (const u of plan.units.values()) if (u.action.type === 'blocked' && u.action.reason === 'render-error') report.errors.push(...u.action.errors);
  report.warnings.push(...divergedWarnings(env.name, await opened.local.syncKnownBranches(refs)));
  const cacheWork = await opened.local.cacheWork(refs);
  if (cacheWork) report.warnings.push(cacheDivergedDiagnostic(opened.loc, cacheWork, 'warning'));
  report.warnings.push(...localWorkWarnings(env.name, coordinationNamespace(opened.loc), await opened.local.localRunRefs(refs)));
}
