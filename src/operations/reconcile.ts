/**
 * `nyl reconcile -e ENV` (spec 03): takes the lease with a run ref, executes waves of ready
 * units, writes one transition commit per state ref it changes and releases the lease in the
 * same atomic push. A run with nothing to do takes no lease and writes nothing.
 */
import { hostname } from 'node:os';
import { diagnostic, fail, NylError } from '../errors/diagnostic';
import { defaultRecovery } from '../drivers/registry';
import { materializeCommit } from '../git/materialize';
import { acquireLease, formatIdentity } from '../lease/lease';
import { publishTransition } from '../lease/publish';
import { resolveEnvironment, type Resolution } from '../plan/resolve';
import { ownershipSet } from '../project/selectors';
import type { ReconcileReport } from '../report/types';
import { applyHolds } from '../run/apply-holds';
import { runEngine } from '../run/engine';
import { newRunDoc, RunRecordWriter } from '../run/run-record';
import { readHoldSignals } from '../run/signals';
import { coordinationUpdates, takeOver } from '../run/takeover';
import { buildTransitions, changedUnits } from '../run/transition-plan';
import type { UnitOutcome } from '../run/unit-result';
import { leaseRef, runsPrefix, signalsPrefix } from '../state/location';
import { primeUnitDocs, readEnvironmentState } from '../state/read';
import { isoSeconds } from '../util/clock';
import { byCodeUnits } from '../util/compare';
import type { Runtime } from '../util/runtime';
import { uuidv7 } from '../util/uuid';
import { type EnvironmentRequest, openEnvironment } from './context';
import { applyLateHolds } from './late-holds';
import { baseReport, fastPathReport, fillUnits, unitWarnings } from './reconcile-report';
import { requireActiveState } from './state-checks';

export interface ReconcileRequest extends EnvironmentRequest {
  reason?: string;
  units?: string[];
  failFast: boolean;
  concurrency: number;
  waitMs?: number;
  quietUnitOutput?: boolean;
  unitLogDir?: string;
}

/** How long a tool may run after a forwarded cancellation signal before it is killed. */
const KILL_GRACE_MS = 30_000;

/** True when a reconcile of these units would execute nothing. */
function nothingToDo(resolution: Resolution, only: Set<string> | undefined): boolean {
  for (const [name, r] of resolution.units) {
    if (only && !only.has(name)) continue;
    // Units that left the ownership set wait for lifecycle work this version does not do yet.
    if (r.phase === 'pending' || r.phase === 'outdated') return false;
    if (r.phase === 'leaving' && !r.desired?.uid && !only) return false; // a resumed marker to drop
    if (r.phase === 'failed' && r.observed?.condition?.retryable) return false;
    // An uncertain unit runs again only under recovery: converge; otherwise it waits for recover.
    if (r.phase === 'uncertain' && r.unit && ((r.unit.spec.recovery as string | undefined) ?? defaultRecovery(r.unit.kind)) === 'converge') return false;
  }
  return true;
}

export async function reconcile(rt: Runtime, req: ReconcileRequest): Promise<ReconcileReport> {
  const opened = await openEnvironment(rt, req, { writes: true });
  try {
    const { loc, store, env } = opened;
    const author = opened.author!;
    await store.ensureOpen();
    let refs = await store.snapshot();
    let view = await readEnvironmentState(store.reader, loc, refs, store.cache);
    let generation = requireActiveState(env.name, view, loc);
    await store.requireNoUnpublishedWork(refs);

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

    const resolution = resolveEnvironment({ project: opened.project, env, generation, desired: view.desiredUnits, observed: view.observedUnits, sourceCommit: opened.sourceCommit });
    const runsBusy = [...refs.keys()].some((r) => r.startsWith(runsPrefix(loc)) || r.startsWith(signalsPrefix(loc)) || r === leaseRef(loc));
    if (!runsBusy && nothingToDo(resolution, only)) {
      const report = fastPathReport(opened, resolution, view, only);
      if (only) report.selected = [...only];
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
    lease.onRenewed = (deadline) => record.renew(deadline);
    lease.startRenewal();
    let finished = false;
    try {
      await rt.faults.reach('lease-acquired');
      if (acquired.snapshot.get(loc.desiredRef) !== refs.get(loc.desiredRef) || acquired.snapshot.get(loc.observedRef) !== refs.get(loc.observedRef)) {
        view = await readEnvironmentState(store.reader, loc, acquired.snapshot, store.cache);
        generation = requireActiveState(env.name, view, loc);
      }
      refs = acquired.snapshot;
      const report = baseReport(opened);
      report.run = runId;
      if (only) report.selected = [...only];

      const takeover = await takeOver(
        store,
        refs,
        { project: opened.project, env, generation, desired: view.desiredUnits, observed: view.observedUnits, now: isoSeconds(rt.clock.now()) },
        runId,
        acquired.replaced,
      );
      const imp = takeover.imported;
      report.warnings.push(...imp.diagnostics);
      if (takeover.leaseBroken) report.details.leaseBroken = takeover.leaseBroken;
      if (takeover.leaseBrokenEarlier) report.details.leaseBrokenEarlier = takeover.leaseBrokenEarlier;
      if (imp.imported.length > 0) report.details.imported = imp.imported;
      if (imp.recovered.length > 0) report.details.recovered = imp.recovered;

      const engine = await runEngine({
        rt,
        runId,
        author,
        project: opened.project,
        env,
        sourceCommit: opened.sourceCommit,
        generation,
        desired: imp.desired,
        observed: imp.observed,
        record,
        lease,
        projectDir: async (dest) => {
          const root = await materializeCommit(rt.git, opened.checkout.workTree, opened.sourceCommit, dest);
          return opened.checkout.projectPrefix ? `${root}/${opened.checkout.projectPrefix}` : root;
        },
        signals: () => readHoldSignals(store),
        signalsMayExist: () => store.mayHaveRefsUnder(signalsPrefix(loc)),
        options: {
          ...(only ? { only } : {}),
          failFast: req.failFast,
          concurrency: req.concurrency,
          killGraceMs: killGraceMs(rt.env),
          output: { quiet: req.quietUnitOutput === true, ...(req.unitLogDir ? { logDir: req.unitLogDir } : {}) },
          // A signal read costs a fetch on a network remote: at most one a second between waves' checks.
          ...(loc.kind === 'remote' ? { signalPollMs: 1000 } : {}),
        },
      }).catch(async (error: unknown) => {
        if (error instanceof NylError && error.code === 'NYL-LEASE-LOST') await record.markEnded('lease-lost').catch(() => undefined);
        throw error;
      });
      report.errors.push(...engine.errors);
      const outcomes = engine.order.map((n) => engine.outcomes.get(n)).filter((o): o is UnitOutcome => o !== undefined && (!only || only.has(o.name)));
      for (const name of imp.imported) {
        const o = engine.outcomes.get(name);
        if (o && o.result === 'current') o.result = 'imported';
      }
      for (const name of imp.recovered) {
        const o = engine.outcomes.get(name);
        if (o && !o.dispatched && o.result === 'uncertain') o.result = 'recovered';
      }
      // A held unit that left the ownership set is not deleted: it is reported held, its deletion pending.
      if (!only) {
        for (const [name, doc] of [...imp.desired].sort(([a], [b]) => byCodeUnits(a, b))) {
          if (owned.has(name) || doc.lifecycle?.state !== 'held') continue;
          outcomes.push({ name, kind: doc.kind ?? '-', result: 'held', detail: 'held with a pending deletion: it left the ownership set', dispatched: false });
        }
      }
      fillUnits(report, outcomes, engine.dispatchOrder.filter((n) => !only || only.has(n)));
      report.warnings.push(...unitWarnings(env.name, outcomes));
      if (engine.stoppedAfter) {
        report.warnings.push(
          diagnostic('NYL-RUN-STOPPED', 'warning', `--fail-fast stopped the run of ${env.name} after unit ${engine.stoppedAfter}: it started no further unit`, { env: env.name, unit: engine.stoppedAfter }),
        );
      }
      if (engine.cancelled) {
        // Cancelled: the checkpoints stay in the run ref for the next run to take over; no transition.
        await record.markEnded('cancelled').catch(() => undefined);
        await lease.end(acquired.replaced).catch(() => undefined);
        finished = true;
        report.errors.push(diagnostic('NYL-RUN-CANCELLED', 'error', `the run ${runId} of ${env.name} was cancelled by a signal; its run ref stays for the next run to take over`, { env: env.name }));
        return report;
      }

      let finalDesired = new Map(imp.desired);
      for (const o of engine.outcomes.values()) if (o.desired) finalDesired.set(o.name, o.desired);
      // Holds delivered to the run: a unit it did not start is held as it was, one it ran as it ran.
      const delivered = [...engine.holds.values()].map((h) => ({ unit: h.unit, by: h.by, at: h.at, ...(h.reason ? { reason: h.reason } : {}) }));
      const holds = applyHolds(env.name, finalDesired, engine.observed, delivered);
      finalDesired = holds.desired;
      report.warnings.push(...holds.diagnostics.map((d) => ({ ...d, severity: 'warning' as const })));
      for (const name of [...holds.held, ...holds.alreadyHeld]) {
        const o = engine.outcomes.get(name);
        if (o && o.result !== 'held') {
          o.detail = o.dispatched ? `held as it ran (${o.result})` : 'held by a hold delivered to this run';
          o.result = 'held';
        }
        const u = report.units[name];
        if (u && o) {
          u.result = o.result;
          u.detail = o.detail;
        }
      }
      // A resumed held marker whose unit left the ownership set has no incarnation: drop its file.
      const removed: string[] = [];
      if (!only) {
        for (const [name, doc] of finalDesired) {
          if (!owned.has(name) && !doc.uid && doc.lifecycle?.state !== 'held') {
            finalDesired.delete(name);
            removed.push(name);
          }
        }
      }
      const before = { desired: view.desiredUnits, observed: view.observedUnits };
      const after = { desired: finalDesired, observed: engine.observed };
      const units: Record<string, string> = {};
      for (const name of engine.order) {
        const o = engine.outcomes.get(name);
        if (o && o.result !== 'current') units[name] = o.result;
      }
      const body = {
        operation: 'reconcile',
        run: runId,
        source: opened.sourceCommit,
        ...(opened.sourceOverride ? { sourceOverride: true } : {}),
        units,
        executed: engine.order.filter((n) => engine.outcomes.get(n)?.result === 'executed'),
        imported: imp.imported,
        recovered: imp.recovered,
        held: holds.held,
        removed,
        ...(takeover.leaseBroken ? { leaseBroken: takeover.leaseBroken } : {}),
        ...(takeover.leaseBrokenEarlier ? { leaseBrokenEarlier: takeover.leaseBrokenEarlier } : {}),
      };
      const transitions = buildTransitions(
        loc,
        refs,
        env.name,
        before,
        after,
        body,
        { requestedBy: formatIdentity(author), sourceOverride: opened.sourceOverride, ...(req.reason ? { reason: req.reason } : {}) },
        changedUnits(before, after),
        takeover.leaseBroken !== undefined,
      );
      const coordination = coordinationUpdates(store, refs, takeover, engine.observed);
      const signalDeletions = engine.signals.map((sig) => ({ ref: sig.ref, expect: sig.oid, to: null }));
      const extraUpdates = () => [...coordination, ...signalDeletions, record.deletion()];
      const published = await publishTransition(rt, store, lease, transitions, author, { release: true, known: refs, extraUpdates }).catch(async (error: unknown) => {
        if (error instanceof NylError && error.code === 'NYL-LEASE-LOST') await record.markEnded('lease-lost').catch(() => undefined);
        throw error;
      });
      finished = true;
      report.committed = transitions.length > 0;
      await Promise.all([
        primeUnitDocs(store.reader, loc, published.commits.get(loc.desiredRef), finalDesired, store.cache),
        primeUnitDocs(store.reader, loc, published.commits.get(loc.observedRef), engine.observed, store.cache),
      ]);
      report.desired = published.refs.get(loc.desiredRef);
      report.observed = published.refs.get(loc.observedRef);
      report.details.held = holds.held;
      const moved = await applyLateHolds(rt, opened, report);
      const diverged = await store.syncKnownBranches(moved ? await store.snapshot() : published.refs);
      for (const ref of diverged) {
        report.warnings.push(diagnostic('NYL-STATE-DIVERGED', 'warning', `the clone's ${ref} diverged from the state repository and was left as it is`, { env: env.name, ref }));
      }
      return report;
    } finally {
      lease.stopRenewal();
      if (!finished && !lease.lost) {
        // An error before the transition: keep the run ref (it may hold checkpoints) and end it.
        await record.markEnded('error').catch(() => undefined);
        await lease.end(acquired.replaced).catch(() => undefined);
      }
    }
  } finally {
    opened.close();
  }
}

/** Grace after a forwarded signal before a tool is killed: 30 s; tests may shorten it. */
function killGraceMs(env: NodeJS.ProcessEnv): number {
  const override = Number(env.NYL_TEST_KILL_GRACE_MS);
  return Number.isFinite(override) && override > 0 ? override : KILL_GRACE_MS;
}
