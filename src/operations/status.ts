/**
 * `nyl status -e ENV`: what each unit of the environment is now, who holds or broke the lease,
 * and what needs attention. Reads state and renders source; writes nothing but the clone's
 * known branches (fast-forward only).
 */
import { diagnostic, type Diagnostic, NylError } from '../errors/diagnostic';
import { describeHolder, readLease } from '../lease/lease';
import { leaseStatus } from '../lease/record';
import { resolveEnvironment, type ResolvedUnit } from '../plan/resolve';
import { emptyDiagnostics, FORMAT_VERSION, REPORT_API_VERSION, type StatusReport, type UnitStatus } from '../report/types';
import { describeLocation } from '../state/location';
import { readEnvironmentState } from '../state/read';
import { readRecordedRuns } from '../run/dead-runs';
import { importRuns } from '../run/import';
import { isoSeconds } from '../util/clock';
import type { Runtime } from '../util/runtime';
import { type EnvironmentRequest, openEnvironment } from './context';

export type StatusRequest = EnvironmentRequest;

function unitStatus(r: ResolvedUnit): UnitStatus {
  const receipt = r.observed?.receipt;
  const s: UnitStatus = {
    name: r.name,
    kind: r.desired?.kind ?? r.unit?.kind ?? '-',
    state: r.phase,
    receipt: !receipt ? 'none' : r.phase === 'current' || (r.phase === 'held' && receipt) ? 'current' : 'outdated',
    detail: r.detail,
  };
  if (r.phase === 'held' && !r.desired?.kind) s.kind = '-';
  if (r.uid) s.uid = r.uid;
  if (r.executionKey) s.executionKey = r.executionKey;
  if (receipt) s.receiptKey = receipt.executionKey;
  if (r.observed?.lastRun) s.lastRun = r.observed.lastRun;
  else if (receipt) s.lastRun = { run: receipt.run, result: 'executed', at: receipt.finishedAt };
  if (r.observed?.condition) {
    const c = r.observed.condition;
    s.condition = { type: c.type, retryable: c.retryable, reason: c.reason, run: c.run, since: c.since };
  }
  if (r.desired?.hold) s.hold = r.desired.hold;
  if (r.waits.length > 0) s.waits = r.waits;
  return s;
}

function unitWarnings(env: string, units: UnitStatus[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const u of units) {
    if (u.state === 'held' && u.hold) {
      out.push(
        diagnostic('NYL-UNIT-HELD', 'warning', `${u.name} is held by ${u.hold.by}${u.hold.reason ? ` (${u.hold.reason})` : ''} since ${u.hold.since}`, {
          env,
          unit: u.name,
          units: [u.name],
        }),
      );
    }
    if (u.condition?.type === 'uncertain') {
      out.push(diagnostic('NYL-UNIT-UNCERTAIN', 'warning', `${u.name} may have had effects without a recorded result: ${u.condition.reason}`, { env, unit: u.name, units: [u.name] }));
    } else if (u.state === 'failed' && u.condition) {
      out.push(
        diagnostic('NYL-UNIT-FAILED', 'warning', `${u.name} failed in run ${u.condition.run}: ${u.condition.reason}`, {
          env,
          unit: u.name,
          units: [u.name],
          retryable: u.condition.retryable,
          acknowledge: u.condition.retryable === false,
        }),
      );
    }
  }
  return out;
}

export async function status(rt: Runtime, req: StatusRequest): Promise<StatusReport> {
  const opened = await openEnvironment(rt, req, { writes: false });
  try {
    const { loc, store, env } = opened;
    const report: StatusReport = {
      apiVersion: REPORT_API_VERSION,
      formatVersion: FORMAT_VERSION,
      kind: 'StatusReport',
      environment: env.name,
      source: opened.sourceCommit,
      units: {},
      unitOrder: [],
      details: { location: describeLocation(loc, store.workDir) },
      ...emptyDiagnostics(),
    };
    try {
      await store.ensureOpen();
    } catch (error) {
      if (error instanceof NylError) {
        report.errors.push(...error.diagnostics);
        return report;
      }
      throw error;
    }
    const refs = await store.snapshot();
    const view = await readEnvironmentState(store.reader, loc, refs, store.cache);
    if (view.desiredOid) report.desired = view.desiredOid;
    if (view.observedOid) report.observed = view.observedOid;
    const lease = await readLease(store, refs);
    if (lease) {
      const st = leaseStatus(lease.record, rt.clock.now());
      report.lease = { status: st, run: lease.record.run, operation: lease.record.operation, holder: lease.record.holder, acquiredAt: lease.record.acquiredAt, deadline: lease.record.deadline };
      if (lease.record.broken) report.lease.broken = lease.record.broken;
      if (st === 'broken') {
        const b = lease.record.broken!;
        report.warnings.push(diagnostic('NYL-LEASE-BROKEN', 'warning', `the lease of ${env.name} was broken by ${b.by} at ${b.at} (${b.reason}); its run is not imported yet`, { env: env.name }));
      } else {
        const code = st === 'live' ? 'NYL-LEASE-HELD' : 'NYL-LEASE-BROKEN';
        const message = st === 'live' ? `the lease of ${env.name} is held by ${describeHolder(lease.record)} until ${lease.record.deadline}` : `the lease of ${env.name} expired at ${lease.record.deadline}; ${describeHolder(lease.record)} held it`;
        report.notes.push(diagnostic(code, 'note', message, { env: env.name, expired: st === 'expired' }));
      }
    }
    if (!view.state) {
      report.errors.push(diagnostic('NYL-STATE-MISSING', 'error', `${loc.desiredRef} of ${loc.url ?? 'the clone'} holds no state for ${env.name}`, { env: env.name }));
      return report;
    }
    if (view.state.status === 'deleted') {
      report.errors.push(diagnostic('NYL-STATE-DELETED', 'error', `the state of ${env.name} was deleted with \`nyl state delete\``, { env: env.name }));
      return report;
    }
    if (view.state.status === 'moved') {
      report.errors.push(diagnostic('NYL-STATE-MOVED', 'error', `the state of ${env.name} moved to ${view.state.movedTo ?? 'another location'}`, { env: env.name, movedTo: view.state.movedTo }));
      return report;
    }
    // Runs that ended without their transition commit wait for import; show what it will find.
    const now = rt.clock.now();
    const liveRun = lease && leaseStatus(lease.record, now) === 'live' ? lease.record.run : undefined;
    const dead = (await readRecordedRuns(store, refs, liveRun)).filter((r) => (!r.doc || r.doc.ended || Date.parse(r.doc.deadline) <= now || lease?.record.broken));
    let desiredDocs = view.desiredUnits;
    let observedDocs = view.observedUnits;
    if (dead.length > 0) {
      for (const r of dead) {
        const why = r.doc?.ended ? `ended (${r.doc.ended.reason})` : 'died';
        report.warnings.push(
          diagnostic('NYL-RUN-UNIMPORTED', 'warning', `run ${r.run} ${why} without its transition commit; its ${r.units.size} unit record(s) wait for import`, { env: env.name, data: { run: r.run } }),
        );
      }
      const preview = importRuns({ project: opened.project, env, generation: view.state.generation, desired: desiredDocs, observed: observedDocs, runs: dead, now: isoSeconds(now) });
      desiredDocs = preview.desired;
      observedDocs = preview.observed;
    }
    const resolution = resolveEnvironment({
      project: opened.project,
      env,
      generation: view.state.generation,
      desired: desiredDocs,
      observed: observedDocs,
      sourceCommit: opened.sourceCommit,
    });
    const statuses = resolution.order.map((n) => unitStatus(resolution.units.get(n)!));
    for (const s of statuses) report.units[s.name] = s;
    report.unitOrder = resolution.order;
    report.warnings.push(...unitWarnings(env.name, statuses));
    for (const r of resolution.units.values()) report.errors.push(...r.errors);
    const diverged = await store.syncKnownBranches(refs);
    for (const ref of diverged) {
      report.warnings.push(diagnostic('NYL-STATE-DIVERGED', 'warning', `the clone's ${ref} diverged from the state repository and was left as it is`, { env: env.name, ref }));
    }
    return report;
  } finally {
    opened.close();
  }
}
