/**
 * `nyl lease break -e ENV --reason`: declares the lease holder gone. The holder is the
 * lease, or a live run whose lease ref is already gone. The lease ref then carries
 * `broken: {by, reason, at}`; only an importer (reconcile, teardown, recover -e) takes it over,
 * every other writer refuses with NYL-LEASE-BROKEN. A still-running holder can no longer renew or
 * write state: each of its pushes expects the lease it had.
 */
import { hostname } from 'node:os';
import { diagnostic, fail } from '../../errors/diagnostic';
import { breakLease } from '../../lease/lease';
import { type LeaseRecord, leaseTiming } from '../../lease/record';
import { type Damage, whereOf } from '../../state/damage';
import type { StateOperationReport } from '../../report/types';
import type { Runtime } from '../../util/runtime';
import { type EnvironmentRequest, openEnvironment, type OpenedEnvironment } from '../shared/context';
import { stateOperationReport } from '../shared/report-base';

interface LeaseBreakRequest extends EnvironmentRequest {
  reason?: string;
  /** Gives the holder this long to release the lease by itself before breaking it. */
  waitMs?: number;
}

type LeaseBreakOptions = Omit<LeaseBreakRequest, keyof EnvironmentRequest> & { reason: string };

export async function leaseBreak(rt: Runtime, req: LeaseBreakRequest): Promise<StateOperationReport> {
  if (!req.reason?.trim()) fail('NYL-REASON-REQUIRED', 'breaking a lease needs a --reason, recorded with the break', { operation: 'lease break' });
  const opened = await openEnvironment(rt, req, { writes: true, renders: false });
  try {
    return await leaseBreakOpened(rt, opened, { reason: req.reason!, ...(req.waitMs !== undefined ? { waitMs: req.waitMs } : {}) });
  } finally {
    opened.close();
  }
}

function breakMessage(env: string, reason: string, record: LeaseRecord, damage: Damage | undefined): string {
  const damaged = damage ? `damaged: ${whereOf(damage)} (${damage.problem})\n` : '';
  return `nyl: break lease ${env}\n\nrun: ${record.run}\nby: ${record.broken!.by} on ${hostname()}\n${damaged}\nNyl-Reason: ${reason.replace(/\s*\n\s*/g, ' ')}\n`;
}

export async function leaseBreakOpened(rt: Runtime, opened: OpenedEnvironment, req: LeaseBreakOptions): Promise<StateOperationReport> {
  const { store, env } = opened;
  const reason = req.reason;
  await store.ensureOpen();
  const report = stateOperationReport('lease-break', env.name);
  const skewMs = leaseTiming(env.spec.lease).skewMs;
  const message = (record: LeaseRecord, damage: Damage | undefined) => breakMessage(env.name, reason, record, damage);
  const result = await breakLease(rt, store, opened.author!, { reason, skewMs, message, ...(req.waitMs !== undefined ? { waitMs: req.waitMs } : {}) });
  if (result.kind === 'nothing-held') {
    report.notes.push(diagnostic('NYL-UNCHANGED', 'note', `nothing holds the lease of ${env.name}; there is nothing to break`, { env: env.name }));
    return report;
  }
  if (result.kind === 'released') {
    const since = result.now ? `; run ${result.now} holds it since and is not broken` : '';
    report.notes.push(
      diagnostic('NYL-UNCHANGED', 'note', `run ${result.run} released the lease of ${env.name} while lease break waited${since}`, { env: env.name }),
    );
    return report;
  }
  const r = result.record;
  const b = r.broken!;
  report.details = { holder: r.holder, run: r.run, operation: r.operation, broken: b };
  if (result.kind === 'already-broken') {
    report.notes.push(
      diagnostic('NYL-UNCHANGED', 'note', `the lease of ${env.name} is already broken (by ${b.by} at ${b.at}: ${b.reason})`, { env: env.name }),
    );
    return report;
  }
  report.result = 'done';
  report.details.lease = result.oid;
  if (result.damage) {
    // Nobody can tell who held a damaged lease: the note says what was broken and where it is kept.
    report.details.damaged = { object: result.damage.object, problem: result.damage.problem, keptAt: result.keptAt };
    report.notes.push(
      diagnostic(
        'NYL-LEASE-BROKEN',
        'note',
        `the damaged lease of ${env.name} (${whereOf(result.damage)}: ${result.damage.problem}) is broken and kept at ${result.keptAt}; import what its holder left with \`nyl recover -e ${env.name}\` or \`nyl reconcile -e ${env.name}\``,
        { env: env.name },
      ),
    );
    return report;
  }
  report.notes.push(
    diagnostic(
      'NYL-LEASE-BROKEN',
      'note',
      `the lease of ${env.name} held by ${r.operation} run ${r.run} of ${r.holder.name} is broken; import its run with \`nyl recover -e ${env.name}\` or \`nyl reconcile -e ${env.name}\``,
      { env: env.name },
    ),
  );
  return report;
}
