/**
 * `nyl reconcile -e ENV` (spec 03): takes the lease with a run ref, executes waves of ready
 * units, writes one transition commit per state ref it changes and releases the lease in the
 * same atomic push. A run with nothing to do takes no lease and writes nothing.
 */
import { diagnostic, fail, type Diagnostic, NylError } from '../errors/diagnostic';
import { materializeCommit } from '../git/materialize';
import { acquireLease, formatIdentity, readLease } from '../lease/lease';
import { ownershipSet } from '../project/selectors';
import { resolveEnvironment, type Resolution } from '../plan/resolve';
import { emptyDiagnostics, FORMAT_VERSION, type ReconcileReport, REPORT_API_VERSION } from '../report/types';
import { runEngine, type EngineResult } from '../run/engine';
import { newRunDoc, RunRecordWriter } from '../run/run-record';
import type { UnitOutcome } from '../run/unit-result';
import { hostname } from 'node:os';
import { toYaml } from '../state/documents';
import { canonicalJson } from '../project/execution-key';
import { coordinationNamespace, runsPrefix } from '../state/location';
import { publishTransition, type RefTransition } from '../state/publish';
import { type EnvironmentStateView, readEnvironmentState } from '../state/read';
import { cacheRoot, type RefSnapshot } from '../state/store';
import { transitionMessage } from '../state/transition';
import { isoSeconds } from '../util/clock';
import type { Runtime } from '../util/runtime';
import { uuidv7 } from '../util/uuid';
import { type EnvironmentRequest, type OpenedEnvironment, openEnvironment } from './context';

export interface ReconcileRequest extends EnvironmentRequest {
  units?: string[];
  failFast: boolean;
  concurrency: number;
  waitMs?: number;
}

/** How long a tool may run after a forwarded cancellation signal before it is killed. */
const KILL_GRACE_MS = 30_000;

function requireActiveState(envName: string, view: EnvironmentStateView, loc: OpenedEnvironment['loc']): number {
  if (!view.state) {
    fail('NYL-STATE-MISSING', `${loc.desiredRef} of ${loc.url ?? 'the clone'} holds no state for ${envName}`, { env: envName });
  }
  if (view.state.status === 'deleted') fail('NYL-STATE-DELETED', `the state of ${envName} was deleted with \`nyl state delete\``, { env: envName });
  if (view.state.status === 'moved') fail('NYL-STATE-MOVED', `the state of ${envName} moved to ${view.state.movedTo ?? 'another location'}`, { env: envName, movedTo: view.state.movedTo });
  return view.state.generation;
}

/** True when a reconcile of these units would execute nothing. */
function nothingToDo(resolution: Resolution, only: Set<string> | undefined): boolean {
  for (const [name, r] of resolution.units) {
    if (only && !only.has(name)) continue;
    if (r.phase === 'pending' || r.phase === 'outdated' || r.phase === 'leaving') return false;
    if (r.phase === 'failed' && r.observed?.condition?.retryable) return false;
    if (r.phase === 'uncertain') return false;
  }
  return true;
}

function baseReport(opened: OpenedEnvironment): ReconcileReport {
  return {
    apiVersion: REPORT_API_VERSION,
    formatVersion: FORMAT_VERSION,
    kind: 'ReconcileReport',
    operation: 'reconcile',
    environment: opened.env.name,
    source: opened.sourceCommit,
    sourceOverride: opened.sourceOverride,
    committed: false,
    units: {},
    unitOrder: [],
    details: {},
    ...emptyDiagnostics(),
  };
}

function unitWarnings(env: string, outcomes: Iterable<UnitOutcome>): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const o of outcomes) {
    if (o.result === 'held') out.push(diagnostic('NYL-UNIT-HELD', 'warning', `${o.name} is held: ${o.detail}`, { env, unit: o.name, units: [o.name] }));
    if (o.result === 'uncertain') out.push(diagnostic('NYL-UNIT-UNCERTAIN', 'warning', `${o.name} may have had effects without a recorded result: ${o.detail}`, { env, unit: o.name, units: [o.name] }));
  }
  return out;
}

/** The report of a run that found nothing to do, from the read-only resolution. */
function fastPathReport(opened: OpenedEnvironment, resolution: Resolution, view: EnvironmentStateView, only: Set<string> | undefined): ReconcileReport {
  const report = baseReport(opened);
  if (view.desiredOid) report.desired = view.desiredOid;
  if (view.observedOid) report.observed = view.observedOid;
  const outcomes: UnitOutcome[] = [];
  for (const name of resolution.order) {
    if (only && !only.has(name)) continue;
    const r = resolution.units.get(name)!;
    if (r.phase === 'leaving') continue;
    const result = r.phase === 'current' ? 'current' : r.phase === 'held' ? 'held' : r.phase === 'failed' ? 'failed' : r.phase === 'uncertain' ? 'uncertain' : 'blocked';
    const o: UnitOutcome = { name, kind: r.kind, result, detail: r.detail, dispatched: false };
    if (r.uid) o.uid = r.uid;
    if (r.executionKey) o.executionKey = r.executionKey;
    if (r.waits.length > 0) o.waits = r.waits;
    outcomes.push(o);
    report.errors.push(...r.errors);
  }
  fillUnits(report, outcomes, []);
  report.warnings.push(...unitWarnings(opened.env.name, outcomes));
  return report;
}

function fillUnits(report: ReconcileReport, outcomes: UnitOutcome[], dispatchOrder: string[]): void {
  const byName = new Map(outcomes.map((o) => [o.name, o]));
  const order = [...dispatchOrder, ...outcomes.map((o) => o.name).filter((n) => !dispatchOrder.includes(n))];
  for (const name of order) {
    const o = byName.get(name)!;
    const u: ReconcileReport['units'][string] = { kind: o.kind, result: o.result, detail: o.detail, dispatched: o.dispatched };
    if (o.uid) u.uid = o.uid;
    if (o.executionKey) u.executionKey = o.executionKey;
    if (o.durationMs !== undefined) u.durationMs = o.durationMs;
    if (o.waits && o.waits.length > 0) u.waits = o.waits;
    if (o.receipt) u.outputs = Object.keys(o.receipt.outputs).sort();
    report.units[name] = u;
  }
  report.unitOrder = order;
}

function transitions(
  opened: OpenedEnvironment,
  refs: RefSnapshot,
  view: EnvironmentStateView,
  engine: EngineResult,
  runId: string,
  author: string,
): RefTransition[] {
  const { loc } = opened;
  const desiredChanges = new Map<string, string | null>();
  const observedChanges = new Map<string, string | null>();
  const changed = new Set<string>();
  for (const o of engine.outcomes.values()) {
    const file = `units/${o.name}.yaml`;
    if (o.desired) {
      desiredChanges.set(file, toYaml(o.desired));
      changed.add(o.name);
    }
    const next = engine.observed.get(o.name);
    const prev = view.observedUnits.get(o.name);
    // Only documents whose content changed: a run that changes nothing writes no commit.
    if (next && (!prev || canonicalJson(next) !== canonicalJson(prev))) {
      observedChanges.set(file, toYaml(next));
      changed.add(o.name);
    }
  }
  const units: Record<string, string> = {};
  const executed: string[] = [];
  for (const name of engine.order) {
    const o = engine.outcomes.get(name);
    if (!o || o.result === 'current') continue;
    units[name] = o.result;
    if (o.result === 'executed') executed.push(name);
  }
  const body = {
    operation: 'reconcile',
    run: runId,
    source: opened.sourceCommit,
    ...(opened.sourceOverride ? { sourceOverride: true } : {}),
    units,
    executed,
  };
  const message = transitionMessage(opened.env.name, body, { requestedBy: author, sourceOverride: opened.sourceOverride }, [...changed].sort());
  const list: RefTransition[] = [];
  if (desiredChanges.size > 0) list.push({ ref: loc.desiredRef, base: refs.get(loc.desiredRef), changes: desiredChanges, message });
  if (observedChanges.size > 0) list.push({ ref: loc.observedRef, base: refs.get(loc.observedRef), changes: observedChanges, message });
  return list;
}

export async function reconcile(rt: Runtime, req: ReconcileRequest): Promise<ReconcileReport> {
  const opened = await openEnvironment(rt, req, { writes: true });
  try {
    const { loc, store, env } = opened;
    const author = opened.author!;
    await store.ensureOpen();
    let refs = await store.snapshot();
    let view = await readEnvironmentState(store.reader, loc, refs);
    let generation = requireActiveState(env.name, view, loc);

    const owned = new Set(ownershipSet(opened.project, env).map((u) => u.name));
    let only: Set<string> | undefined;
    if (req.units && req.units.length > 0) {
      const unknown = req.units.filter((u) => !owned.has(u));
      if (unknown.length > 0) {
        fail('NYL-UNIT-UNKNOWN', `environment ${env.name} has no unit ${unknown.join(', ')}`, {
          env: env.name,
          units: unknown,
          fix: `pick units of ${env.name}: ${[...owned].sort().join(', ') || '(none)'}`,
        });
      }
      only = new Set(req.units);
    }

    const resolution = resolveEnvironment({ project: opened.project, env, generation, desired: view.desiredUnits, observed: view.observedUnits });
    const namespace = coordinationNamespace(loc);
    const coordinationBusy = [...refs.keys()].some((r) => r.startsWith(namespace));
    if (!coordinationBusy && nothingToDo(resolution, only)) {
      const report = fastPathReport(opened, resolution, view, only);
      if (only) report.selected = [...only];
      await store.syncKnownBranches(refs);
      return report;
    }

    const now = rt.clock.now();
    const runId = uuidv7(now);
    const record = new RunRecordWriter(rt, store, runId, author);
    const durationMs = env.spec.lease.durationMs;
    const runCommit = await record.createCommit(
      newRunDoc({
        run: runId,
        environment: env.name,
        operation: 'reconcile',
        holder: { name: formatIdentity(author), host: hostname(), pid: process.pid },
        startedAt: isoSeconds(now),
        deadline: isoSeconds(now + durationMs),
        source: opened.sourceCommit,
        ...(opened.sourceOverride ? { sourceOverride: true } : {}),
      }),
    );
    const acquired = await acquireLease(rt, store, {
      operation: 'reconcile',
      run: runId,
      author,
      durationMs,
      initial: refs,
      extraUpdates: () => [record.creationUpdate(runCommit)],
      ...(req.waitMs !== undefined ? { waitMs: req.waitMs } : {}),
    });
    record.oid = runCommit;
    const lease = acquired.handle;
    lease.startRenewal();
    try {
      await rt.faults.reach('lease-acquired');
      if (acquired.snapshot.get(loc.desiredRef) !== refs.get(loc.desiredRef) || acquired.snapshot.get(loc.observedRef) !== refs.get(loc.observedRef)) {
        view = await readEnvironmentState(store.reader, loc, acquired.snapshot);
        generation = requireActiveState(env.name, view, loc);
      }
      refs = acquired.snapshot;
      const leftovers = [...refs.keys()].filter((r) => r.startsWith(runsPrefix(loc)) && r !== record.ref);
      const report = baseReport(opened);
      report.run = runId;
      if (only) report.selected = [...only];
      if (leftovers.length > 0) {
        report.warnings.push(
          diagnostic('NYL-RUN-UNIMPORTED', 'warning', `runs ${leftovers.map((r) => r.slice(runsPrefix(loc).length)).join(', ')} ended without their transition commit; this version does not import them yet`, { env: env.name }),
        );
      }
      const engine = await runEngine({
        rt,
        runId,
        author,
        project: opened.project,
        env,
        sourceCommit: opened.sourceCommit,
        generation,
        desired: view.desiredUnits,
        observed: view.observedUnits,
        record,
        lease,
        projectDir: async () => {
          const root = await materializeCommit(rt.git, opened.checkout.workTree, opened.sourceCommit, cacheRoot(rt.env));
          return opened.checkout.projectPrefix ? `${root}/${opened.checkout.projectPrefix}` : root;
        },
        options: { ...(only ? { only } : {}), failFast: req.failFast, concurrency: req.concurrency, killGraceMs: KILL_GRACE_MS },
      });
      report.errors.push(...engine.errors);
      const outcomes = engine.order.map((n) => engine.outcomes.get(n)).filter((o): o is UnitOutcome => o !== undefined && (!only || only.has(o.name)));
      fillUnits(report, outcomes, engine.dispatchOrder.filter((n) => !only || only.has(n)));
      report.warnings.push(...unitWarnings(env.name, outcomes));
      if (engine.stoppedAfter) {
        report.warnings.push(
          diagnostic('NYL-RUN-STOPPED', 'warning', `--fail-fast stopped the run of ${env.name} after unit ${engine.stoppedAfter}: it started no further unit`, { env: env.name, unit: engine.stoppedAfter }),
        );
      }
      if (engine.cancelled) {
        throw new NylError(diagnostic('NYL-RUN-CANCELLED', 'error', `the run ${runId} of ${env.name} was cancelled by a signal; its run ref stays for the next run to take over`, { env: env.name }));
      }
      const list = transitions(opened, refs, view, engine, runId, formatIdentity(author));
      const published = await publishTransition(rt, store, lease, list, author, { release: true, known: refs, extraUpdates: [record.deletion()] });
      report.committed = list.length > 0;
      report.desired = published.refs.get(loc.desiredRef);
      report.observed = published.refs.get(loc.observedRef);
      const diverged = await store.syncKnownBranches(published.refs);
      for (const ref of diverged) {
        report.warnings.push(diagnostic('NYL-STATE-DIVERGED', 'warning', `the clone's ${ref} diverged from the state repository and was left as it is`, { env: env.name, ref }));
      }
      return report;
    } finally {
      lease.stopRenewal();
      if (!lease.lost) await lease.release().catch(() => undefined);
    }
  } finally {
    opened.close();
  }
}
