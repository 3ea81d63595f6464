/**
 * `nyl teardown -e ENV --cancel (--unit U... | --all)`: withdraws teardown requests whose teardown
 * has not started (plan/teardown-cancel.ts decides which). A state operation, like `nyl resume`:
 * it takes the lease, decides under it and writes one desired commit (operation
 * `teardown-cancel`); nothing runs and no resources change. A named unit whose teardown started is
 * refused with NYL-TEARDOWN-STARTED and nothing is written; --all withdraws what it can and warns
 * about the rest.
 */
import { diagnostic, type Diagnostic, fail, NylError } from '../../errors/diagnostic';
import { withLease } from '../../lease/transaction';
import { type CancelResult, cancelTeardowns, type StartedTeardown } from '../../plan/teardown-cancel';
import type { StateOperationReport } from '../../report/types';
import { buildTransitions } from '../../run/transition-plan';
import { readRecordedRuns } from '../../state/run-record';
import { type EnvironmentStateView, readEnvironmentState } from '../../state/read';
import type { RefSnapshot } from '../../state/store';
import type { Runtime } from '../../util/runtime';
import { type EnvironmentRequest, leaseOptionsOf, openEnvironment, type OpenedEnvironment, trailersOf } from '../shared/context';
import { stateOperationReport } from '../shared/report-base';
import { requireActive, stateUnderLease } from '../state/state-checks';

interface CancelOptions {
  units: string[] | 'all';
  reason?: string;
  waitMs?: number;
}

export async function teardownCancel(rt: Runtime, req: EnvironmentRequest & CancelOptions): Promise<StateOperationReport> {
  const opened = await openEnvironment(rt, req, { writes: true, renders: false });
  try {
    return await teardownCancelOpened(rt, opened, req);
  } finally {
    opened.close();
  }
}

/** Units whose teardown a run not imported yet (live or dead) recorded as started: unit -> run. */
async function startedInRuns(opened: OpenedEnvironment, refs: RefSnapshot): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const run of await readRecordedRuns(opened.store.reader, opened.loc, refs)) for (const unit of run.teardowns.keys()) out.set(unit, run.run);
  return out;
}

/** The decision on one read; a named unit the state does not hold, or whose teardown started, refuses. */
async function decide(opened: OpenedEnvironment, refs: RefSnapshot, view: EnvironmentStateView, req: CancelOptions): Promise<CancelResult> {
  const result = cancelTeardowns(view.desiredUnits, view.observedUnits, req.units, await startedInRuns(opened, refs));
  const env = opened.env.name;
  if (result.unknown.length > 0)
    fail('NYL-UNIT-UNKNOWN', `the state of ${env} holds no unit ${result.unknown.join(', ')}`, {
      env,
      units: result.unknown,
      fix: `check the unit names with \`nyl status -e ${env}\``,
    });
  if (req.units !== 'all' && result.started.length > 0) throw new NylError(result.started.map((s) => startedDiagnostic(env, s, 'error')));
  return result;
}

function startedDiagnostic(env: string, s: StartedTeardown, severity: 'error' | 'warning'): Diagnostic {
  const what = s.why === 'in-run' ? `run ${s.run!} recorded its start` : s.why === 'uncertain' ? 'it is uncertain' : 'the unit is deleting';
  return diagnostic('NYL-TEARDOWN-STARTED', severity, `the teardown of ${s.unit} started (${what}): its request cannot be withdrawn`, {
    env,
    unit: s.unit,
    units: [s.unit],
    why: s.why,
    ...(s.run ? { run: s.run } : {}),
    data: { why: s.why, ...(s.run ? { run: s.run } : {}) },
  });
}

function describe(report: StateOperationReport, env: string, result: CancelResult): void {
  report.details.withdrawn = result.withdrawn;
  if (result.started.length > 0) report.details.started = result.started.map((s) => s.unit);
  report.warnings.push(...result.started.map((s) => startedDiagnostic(env, s, 'warning')));
}

function unchanged(env: string, report: StateOperationReport, result: CancelResult, req: CancelOptions): StateOperationReport {
  describe(report, env, result);
  const what = req.units === 'all' ? `no teardown request of ${env} can be withdrawn` : `${result.notRequested.join(', ')}: no teardown request to withdraw`;
  report.notes.push(diagnostic('NYL-UNCHANGED', 'note', `${what}; nothing changed`, { env, units: result.notRequested }));
  return report;
}

/**
 * Decides under the lease, like every state operation: a run that holds it may be recording a
 * request or starting a teardown. A named unit refused before the lease is refused without it.
 */
export async function teardownCancelOpened(rt: Runtime, opened: OpenedEnvironment, req: CancelOptions): Promise<StateOperationReport> {
  const { store, env, loc } = opened;
  await store.ensureOpen();
  const report = stateOperationReport('teardown-cancel', env.name);
  const refs0 = await store.snapshot();
  const view0 = await readEnvironmentState(store.reader, loc, refs0, store.cache);
  await requireActive(opened, { refs: refs0, view: view0 });
  await opened.local.requireNoUnpublishedWork(refs0);
  await decide(opened, refs0, view0, req);
  return withLease(rt, store, leaseOptionsOf(rt, opened, 'teardown-cancel', { initial: refs0, waitMs: req.waitMs }), async (tx) => {
    const refs = tx.snapshot;
    const view = await stateUnderLease(opened, { refs: refs0, view: view0 }, refs);
    await requireActive(opened, { refs, view });
    const result = await decide(opened, refs, view, req);
    report.desired = view.desiredOid;
    if (result.withdrawn.length === 0) {
      await tx.end('nothing-to-write');
      return unchanged(env.name, report, result, req);
    }
    const before = { desired: view.desiredUnits, observed: view.observedUnits };
    const after = { desired: new Map(result.after), observed: view.observedUnits };
    const units = Object.fromEntries(result.withdrawn.map((u) => [u, { action: 'withdraw' }]));
    const body = { operation: 'teardown-cancel', units, withdrawn: result.withdrawn };
    const published = await tx.publish(buildTransitions(loc, refs, env.name, before, after, body, trailersOf(opened, req.reason), result.withdrawn));
    describe(report, env.name, result);
    report.result = 'done';
    report.desired = published.refs.get(loc.desiredRef);
    await opened.local.syncKnownBranches(published.refs);
    return report;
  });
}
