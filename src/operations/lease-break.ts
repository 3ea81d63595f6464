/**
 * `nyl lease break -e ENV --reason` (spec 02): declares the lease holder gone. The holder is the
 * lease, or a live run whose lease ref is already gone. The lease ref then carries
 * `broken: {by, reason, at}`; only an importer (reconcile, teardown, recover -e) takes it over,
 * every other writer refuses with NYL-LEASE-BROKEN. A still-running holder can no longer renew or
 * write state: each of its pushes expects the lease it had.
 */
import { hostname } from 'node:os';
import { diagnostic, fail } from '../errors/diagnostic';
import { writeCommits } from '../git/object-writer';
import { formatIdentity, readLease, readRunHeaders } from '../lease/lease';
import { type LeaseRecord, newLeaseRecord, serializeLease } from '../lease/record';
import type { StateOperationReport } from '../report/types';
import { leaseRef } from '../state/location';
import { isoSeconds } from '../util/clock';
import type { Runtime } from '../util/runtime';
import { type EnvironmentRequest, openEnvironment } from './context';
import { stateOperationReport } from './report-base';

export interface LeaseBreakRequest extends EnvironmentRequest {
  reason?: string;
}

export async function leaseBreak(rt: Runtime, req: LeaseBreakRequest): Promise<StateOperationReport> {
  if (!req.reason?.trim()) fail('NYL-REASON-REQUIRED', 'breaking a lease needs a --reason, recorded with the break', { operation: 'lease break' });
  const opened = await openEnvironment(rt, req, { writes: true, renders: false });
  try {
    const { store, env } = opened;
    const author = opened.author!;
    await store.ensureOpen();
    const report = stateOperationReport('lease-break', env.name);
    for (let attempt = 0; attempt < 10; attempt++) {
      const refs = await store.snapshot();
      const current = await readLease(store, refs);
      const now = rt.clock.now();
      let target: { record: LeaseRecord; parent?: string; expect: string | null } | undefined;
      if (current) {
        if (current.record.broken) {
          report.details = { holder: current.record.holder, run: current.record.run, operation: current.record.operation, broken: current.record.broken };
          const b = current.record.broken;
          report.notes.push(diagnostic('NYL-UNCHANGED', 'note', `the lease of ${env.name} is already broken (by ${b.by} at ${b.at}: ${b.reason})`, { env: env.name }));
          return report;
        }
        target = { record: current.record, parent: current.oid, expect: current.oid };
      } else {
        const live = (await readRunHeaders(store, refs)).find((h) => h.doc && !h.doc.ended && Date.parse(h.doc.deadline) > now);
        if (live?.doc) {
          target = {
            record: newLeaseRecord({ environment: env.name, run: live.run, operation: live.doc.operation, holder: live.doc.holder, acquiredAt: live.doc.startedAt, deadline: live.doc.deadline }),
            expect: null,
          };
        }
      }
      if (!target) {
        report.notes.push(diagnostic('NYL-UNCHANGED', 'note', `nothing holds the lease of ${env.name}; there is nothing to break`, { env: env.name }));
        return report;
      }
      const broken = { by: formatIdentity(author), reason: req.reason!, at: isoSeconds(now) };
      const record: LeaseRecord = { ...target.record, broken };
      const [oid] = await writeCommits(rt.git, store.workDir, [
        {
          ...(target.parent ? { parent: target.parent } : {}),
          clearTree: true,
          changes: new Map([['lease.yaml', serializeLease(record)]]),
          message: `nyl: break lease ${env.name}\n\nrun: ${record.run}\nby: ${broken.by} on ${hostname()}\n\nNyl-Reason: ${req.reason!.replace(/\s*\n\s*/g, ' ')}\n`,
          author,
          timeMs: now,
        },
      ]);
      const result = await store.write([{ ref: leaseRef(store.loc), expect: target.expect, to: oid! }]);
      if (result.ok) {
        report.result = 'done';
        report.details = { holder: record.holder, run: record.run, operation: record.operation, broken, lease: oid };
        report.notes.push(
          diagnostic('NYL-LEASE-BROKEN', 'note', `the lease of ${env.name} held by ${record.operation} run ${record.run} of ${record.holder.name} is broken; import its run with \`nyl recover -e ${env.name}\` or \`nyl reconcile -e ${env.name}\``, { env: env.name }),
        );
        return report;
      }
      if (result.kind === 'unreachable') fail('NYL-STATE-UNAVAILABLE', `cannot push to the state repository of ${env.name}: ${result.message}`, { env: env.name });
      // The holder renewed or released meanwhile: look again.
    }
    fail('NYL-STATE-CONFLICT', `the lease of ${env.name} kept changing while breaking it`, { env: env.name });
  } finally {
    opened.close();
  }
}
