/**
 * `nyl resume -e ENV --unit U --reason R` (spec 05): lifts a hold. Deletes nothing and keeps the
 * unit's uid, receipt and condition; the next reconcile renders the unit again and applies what
 * changed. Takes the lease like every state operation.
 */
import { diagnostic, fail } from '../errors/diagnostic';
import { acquireLease, formatIdentity } from '../lease/lease';
import type { StateOperationReport } from '../report/types';
import { buildTransitions } from '../run/transition-plan';
import { resumeDocument } from '../state/hold';
import { publishTransition } from '../lease/publish';
import { readEnvironmentState } from '../state/read';
import type { Runtime } from '../util/runtime';
import { uuidv7 } from '../util/uuid';
import { type EnvironmentRequest, openEnvironment } from './context';
import { requireActiveState } from './state-checks';
import { stateOperationReport } from './report-base';

export interface ResumeRequest extends EnvironmentRequest {
  unit: string;
  reason?: string;
  waitMs?: number;
}

export async function resume(rt: Runtime, req: ResumeRequest): Promise<StateOperationReport> {
  const opened = await openEnvironment(rt, req, { writes: true, renders: false });
  try {
    const { store, env, loc } = opened;
    const author = opened.author!;
    await store.ensureOpen();
    const report = stateOperationReport('resume', env.name);
    report.details.unit = req.unit;
    const refs0 = await store.snapshot();
    const view0 = await readEnvironmentState(store.reader, loc, refs0, store.cache);
    requireActiveState(env.name, view0, loc);
    await store.requireNoUnpublishedWork(refs0);
    const check = (view: typeof view0) => {
      const d = view.desiredUnits.get(req.unit);
      if (!d && !view.observedUnits.has(req.unit)) {
        fail('NYL-UNIT-UNKNOWN', `the state of ${env.name} holds no unit ${req.unit}`, { env: env.name, unit: req.unit });
      }
      return resumeDocument(d);
    };
    if (!check(view0)) {
      report.desired = view0.desiredOid;
      report.notes.push(diagnostic('NYL-UNCHANGED', 'note', `${req.unit} is not held; nothing changed`, { env: env.name, unit: req.unit }));
      return report;
    }
    const acquired = await acquireLease(rt, store, {
      operation: 'resume',
      run: uuidv7(rt.clock.now()),
      author,
      durationMs: env.spec.lease.durationMs,
      initial: refs0,
      ...(req.waitMs !== undefined ? { waitMs: req.waitMs } : {}),
    });
    const lease = acquired.handle;
    lease.startRenewal();
    let landed = false;
    try {
      const refs = acquired.snapshot;
      const view = refs === refs0 ? view0 : await readEnvironmentState(store.reader, loc, refs, store.cache);
      requireActiveState(env.name, view, loc);
      const next = check(view);
      if (!next) {
        await lease.release();
        landed = true;
        report.notes.push(diagnostic('NYL-UNCHANGED', 'note', `${req.unit} is not held; nothing changed`, { env: env.name, unit: req.unit }));
        return report;
      }
      const desired = new Map(view.desiredUnits);
      desired.set(req.unit, next);
      const requestedBy = formatIdentity(author);
      const transitions = buildTransitions(
        loc,
        refs,
        env.name,
        { desired: view.desiredUnits, observed: view.observedUnits },
        { desired, observed: view.observedUnits },
        { operation: 'resume', units: { [req.unit]: { action: 'resume' } } },
        { requestedBy, ...(req.reason ? { reason: req.reason } : {}) },
        [req.unit],
      );
      const published = await publishTransition(rt, store, lease, transitions, author, { release: true, known: refs });
      landed = true;
      report.result = 'done';
      report.desired = published.refs.get(loc.desiredRef);
      await store.syncKnownBranches(published.refs);
      return report;
    } finally {
      lease.stopRenewal();
      if (!landed && !lease.lost) await lease.release().catch(() => undefined);
    }
  } finally {
    opened.close();
  }
}
