/**
 * `nyl reconcile -e ENV`: plans the environment; with nothing to do it takes no lease and
 * writes nothing. Otherwise, as a run: takes the lease with a run ref, imports what dead runs left
 * (takeover), lets the engine apply the planner's waves, and publishes one transition commit per
 * state ref it changes in the same atomic push that releases the lease.
 */
import { closest } from '../../util/closest';
import { createHash } from 'node:crypto';
import { diagnostic, fail, NylError } from '../../errors/diagnostic';
import { isLifecycleWork, type Plan, writesDesiredOnly } from '../../plan/actions';
import type { LifecycleOptions } from '../../plan/lifecycle';
import { planEnvironment, type RunMode } from '../../plan/planner';
import { formatIdentity } from '../../lease/lease';
import { requestedUnits, unknownUnits, withRequests } from '../../run/teardown-requests';
import type { DesiredUnitDoc, TeardownRequest } from '../../state/documents';
import type { ReconcileReport } from '../../report/types';
import { type EngineResult, runEngine } from '../../run/engine';
import type { RunTransaction } from '../../run/run-transaction';
import { withRun } from '../../run/run-transaction';
import { rememberWritten } from '../../run/transition-plan';
import { type HoldSignal, readHoldSignals, signalDeletions } from '../../run/signals';
import { coordinationUpdates, reapLeftovers, takeOver, type Takeover } from '../../run/takeover';
import { coordinationNamespace, damagedPrefix, signalsPrefix } from '../../state/location';
import { type EnvironmentStateView, primeUnitDocs, readEnvironmentState } from '../../state/read';
import type { RefSnapshot } from '../../state/store';
import { isoSeconds } from '../../util/clock';
import type { Runtime } from '../../util/runtime';
import { selectedUnits, shellTextWarnings } from '../shared/selection';
import { type EnvironmentRequest, openEnvironment, type OpenedEnvironment, planInputOf, worktreeWarning } from '../shared/context';
import { uncommittedWarnings } from '../shared/source-warnings';
import { applyLateHolds } from './late-holds';
import { quietReport, runReport, unitWarnings } from './reconcile-report';
import { settleRun, type SettledRun } from './reconcile-settle';
import { divergedWarnings, keyFileWarnings } from '../shared/report-base';
import { requireActive, stateUnderLease } from '../state/state-checks';
import type { TeardownAll } from '../state/state-delete';
import { type ApprovalOptions, approvalGrants, approverOf } from './approvals';
import type { ApprovalGrants } from '../../plan/input';
import type { Approver } from '../../run/run-state';

interface ReconcileOptions extends LifecycleOptions {
  reason?: string;
  units?: string[];
  failFast: boolean;
  concurrency: number;
  waitMs?: number;
  quietUnitOutput?: boolean;
  unitLogDir?: string;
  /** --leaving: only the lifecycle work of units outside the ownership set. */
  leaving?: boolean;
  /** `nyl teardown`: the units whose teardown it requests and carries out. */
  teardown?: { units: string[] | 'all' };
  /** --approve, --approve-all, --approved-by, --approval-source. */
  approval?: ApprovalOptions;
  /** --reapply: the units --unit names execute although their receipts are current. */
  reapply?: boolean;
  /** --local. */
  local?: boolean;
}

/** The run's approvals, reapplied units and --local, as the planner and the engine take them. */
interface RunChoices {
  approvals?: ApprovalGrants;
  reapply?: ReadonlySet<string>;
  /** --reason of a --reapply: the operator's acknowledgement a driver may wait for (a lost Terraform state). */
  reapplyReason?: string;
  local?: boolean;
}

function choicesOf(opened: OpenedEnvironment, req: ReconcileOptions, only: ReadonlySet<string> | undefined): RunChoices {
  const approvals = req.approval ? approvalGrants(opened, req.approval, only) : undefined;
  const reapply = req.reapply && only ? { reapply: only, ...(req.reason ? { reapplyReason: req.reason } : {}) } : {};
  return { ...(approvals ? { approvals } : {}), ...reapply, ...(req.local ? { local: true } : {}) };
}

/** The choices in a cache key: grants by unit, reapply, local. */
function choicesKey(c: RunChoices): unknown {
  return [c.approvals ? [[...c.approvals.units].sort(), c.approvals.all] : null, c.reapply ? [...c.reapply].sort() : null, c.local ?? false];
}

interface ReconcileRequest extends EnvironmentRequest, ReconcileOptions {}

/** The state a reconcile starts from, read without the lease. */
interface Start {
  refs: RefSnapshot;
  view: EnvironmentStateView;
  generation: number;
}

/** The operation a run of these options is: `nyl teardown`, or reconcile. */
function operationOf(req: ReconcileOptions): 'reconcile' | 'teardown' {
  return req.teardown ? 'teardown' : 'reconcile';
}

function modeOf(req: ReconcileOptions): RunMode | undefined {
  return req.teardown ? 'teardown' : req.leaving ? 'leaving' : undefined;
}

function lifecycleOf(req: ReconcileOptions): LifecycleOptions {
  return { allowTeardown: req.allowTeardown === true, allowDependents: req.allowDependents === true, allowIncomplete: req.allowIncomplete === true };
}

export async function reconcile(rt: Runtime, req: ReconcileRequest): Promise<ReconcileReport> {
  const opened = await openEnvironment(rt, req, { writes: true });
  try {
    const report = await reconcileOpened(rt, opened, req);
    if (opened.worktree) report.sourceWorktree = true;
    const shellText = shellTextWarnings(opened, selectedUnits(opened, req.units));
    const uncommitted = await uncommittedWarnings(opened, 'reconcile');
    report.warnings.unshift(
      ...worktreeWarning(opened, report.committed ? 'retained' : 'unwritten'),
      ...uncommitted,
      ...keyFileWarnings(opened.env.name, rt.env),
      ...shellText,
    );
    return report;
  } finally {
    opened.close();
  }
}

/** `state delete --teardown`'s first step: `nyl teardown --all`, a run of its own. */
export const teardownAll: TeardownAll = (rt, opened, options) =>
  reconcileOpened(rt, opened, {
    failFast: false,
    concurrency: 4,
    teardown: { units: 'all' },
    allowDependents: options.allowDependents,
    allowIncomplete: options.allowIncomplete,
    ...(options.reason !== undefined ? { reason: options.reason } : {}),
    ...(options.waitMs !== undefined ? { waitMs: options.waitMs } : {}),
  });

export async function reconcileOpened(rt: Runtime, opened: OpenedEnvironment, req: ReconcileOptions): Promise<ReconcileReport> {
  await opened.store.ensureOpen();
  const refs = await opened.store.snapshot();
  const busy = coordinationBusy(opened, refs);
  const only = selectedUnits(opened, req.units);
  // Checked before anything is read or taken: an approval that cannot mean anything is an error.
  const choices = choicesOf(opened, req, only);
  // A teardown records requests, a reapply always runs: neither is answered from the cache.
  const key =
    busy || req.teardown || choices.reapply ? undefined : quietKey(opened, refs, req.units, [lifecycleOf(req), modeOf(req) ?? '', choicesKey(choices)]);
  const cached = key ? opened.store.cache.get<ReconcileReport>('quiet', key) : undefined;
  if (cached) {
    // The same state commits as when the report was made: the state was active then, and is now.
    await opened.local.requireNoUnpublishedWork(refs);
    return cached;
  }
  const start = await readStart(opened, refs);
  const requested = requestedOf(opened, start, req);
  const desired = requestsRecorded(rt, opened, req, requested, start.view.desiredUnits, '');
  const mode = modeOf(req);
  const preview = planEnvironment({
    ...startInput(opened, start),
    desired,
    lifecycle: lifecycleOf(req),
    run: { runId: '', ...(only ? { only } : {}), ...(mode ? { mode } : {}), ...choices },
  });
  if (!busy && desired === start.view.desiredUnits && !hasWork(preview))
    return remember(opened, key, quietReport(opened, preview, start.view, only, operationOf(req)));
  return withRun(
    rt,
    opened.store,
    {
      operation: operationOf(req),
      author: opened.author!,
      ...opened.env.spec.lease,
      source: opened.sourceCommit,
      sourceOverride: opened.sourceOverride,
      initial: start.refs,
      ...(req.waitMs !== undefined ? { waitMs: req.waitMs } : {}),
    },
    (run) => reconcileAsRun(rt, opened, req, only, start, run, choices),
  );
}

/** `nyl teardown`: the units it names, each with an incarnation in state (else NYL-UNIT-UNKNOWN). */
function requestedOf(opened: OpenedEnvironment, start: Start, req: ReconcileOptions): string[] | undefined {
  if (!req.teardown) return undefined;
  const names = requestedUnits(start.view.desiredUnits, start.generation, req.teardown.units);
  const unknown = unknownUnits(start.view.desiredUnits, start.generation, names);
  if (unknown.length > 0) {
    const known = requestedUnits(start.view.desiredUnits, start.generation, 'all');
    fail('NYL-UNIT-UNKNOWN', `the state of ${opened.env.name} holds no incarnation of ${unknown.join(', ')}, so there is nothing to tear down`, {
      env: opened.env.name,
      units: unknown,
      guess: closest(unknown[0]!, known),
      fix:
        known.length > 0
          ? `pick units the state of ${opened.env.name} holds: ${known.join(', ')}`
          : `the state of ${opened.env.name} holds no unit to tear down`,
    });
  }
  return names;
}

/** The desired documents with the teardownRequest a `nyl teardown` run records on each requested unit. */
function requestsRecorded(
  rt: Runtime,
  opened: OpenedEnvironment,
  req: ReconcileOptions,
  requested: string[] | undefined,
  desired: ReadonlyMap<string, DesiredUnitDoc>,
  run: string,
): ReadonlyMap<string, DesiredUnitDoc> {
  if (!requested) return desired;
  const request: TeardownRequest = {
    by: formatIdentity(opened.author!),
    at: isoSeconds(rt.clock.now()),
    ...(req.reason ? { reason: req.reason } : {}),
    ...(run ? { run } : {}),
  };
  return withRequests(desired, requested, request);
}

async function readStart(opened: OpenedEnvironment, refs: RefSnapshot): Promise<Start> {
  const { store, loc } = opened;
  const view = await readEnvironmentState(store.reader, loc, refs, store.cache);
  const generation = await requireActive(opened, { refs, view });
  await opened.local.requireNoUnpublishedWork(refs);
  return { refs, view, generation };
}

/**
 * The key of a reconcile that finds nothing to do: the planner is pure, so the same inputs (the
 * opened environment's input key, the state commits, the selected units) give the same plan and
 * the same report. A no-op reconcile then costs little more than reading the refs.
 */
function quietKey(opened: OpenedEnvironment, refs: RefSnapshot, units: string[] | undefined, lifecycle: unknown): string | undefined {
  if (!opened.inputKey) return undefined;
  const { desiredRef, observedRef } = opened.loc;
  const inputs = [
    opened.inputKey,
    opened.env.name,
    opened.sourceOverride,
    refs.get(desiredRef) ?? '',
    refs.get(observedRef) ?? '',
    [...new Set(units ?? [])].sort(),
    lifecycle,
  ];
  return createHash('sha1').update(JSON.stringify(inputs)).digest('hex');
}

function remember(opened: OpenedEnvironment, key: string | undefined, report: ReconcileReport): ReconcileReport {
  if (key) opened.store.cache.set('quiet', key, report);
  return report;
}

/**
 * A lease, run or signal ref: a run must look at it (import, apply, or wait). Evidence and damaged
 * refs set aside are kept for people to inspect; no run acts on them.
 */
function coordinationBusy(opened: OpenedEnvironment, refs: RefSnapshot): boolean {
  const prefix = coordinationNamespace(opened.loc);
  const inert = [`${prefix}evidence/`, damagedPrefix(opened.loc)];
  return [...refs.keys()].some((r) => r.startsWith(prefix) && !inert.some((p) => r.startsWith(p)));
}

/**
 * Something a run would apply: an execution, a driver's prepare phase, lifecycle work (a teardown,
 * a tombstone, a release), a file to drop, a desired document to write again.
 */
function hasWork(plan: Plan): boolean {
  return [...plan.units.values()].some(
    (u) => u.action.type === 'execute' || u.action.type === 'prepare' || u.action.type === 'drop' || isLifecycleWork(u) || writesDesiredOnly(u),
  );
}

/** The state under the lease: read again only when the refs moved since the first read. */
async function startUnderLease(opened: OpenedEnvironment, start: Start, snapshot: RefSnapshot): Promise<Start> {
  const view = await stateUnderLease(opened, start, snapshot);
  return view === start.view ? { ...start, refs: snapshot } : { refs: snapshot, view, generation: await requireActive(opened, { refs: snapshot, view }) };
}

/** What the planner (and an import) reads of the start. */
function startInput(opened: OpenedEnvironment, start: Start) {
  return planInputOf(opened, start.generation, { desired: start.view.desiredUnits, observed: start.view.observedUnits });
}

async function takeOverDeadRuns(rt: Runtime, opened: OpenedEnvironment, start: Start, run: RunTransaction): Promise<Takeover> {
  const takeover = await takeOver(opened.store, start.refs, { ...startInput(opened, start), now: isoSeconds(rt.clock.now()) }, run.runRef.run, run.tx.replaced);
  await reapLeftovers(takeover, opened.drivers, opened.env.name, rt);
  return takeover;
}

function engineOf(
  rt: Runtime,
  opened: OpenedEnvironment,
  req: ReconcileOptions,
  only: Set<string> | undefined,
  start: Start,
  takeover: Takeover,
  run: RunTransaction,
  requested: string[] | undefined,
  choices: RunChoices & { approver?: Approver },
): Promise<EngineResult> {
  const { store, loc } = opened;
  const desired = requestsRecorded(rt, opened, req, requested, takeover.imported.desired, run.runRef.run);
  const mode = modeOf(req);
  return runEngine({
    rt,
    runRef: run.runRef,
    lease: run.tx.lease,
    project: opened.project,
    env: opened.env,
    sourceCommit: opened.sourceCommit,
    generation: start.generation,
    desired,
    observed: takeover.imported.observed,
    drivers: opened.drivers,
    by: formatIdentity(opened.author!),
    materialize: (dest, commit) => opened.materialize(dest, commit),
    signals: { read: signalReader(rt, opened, run), mayExist: () => store.mayHaveRefsUnder(signalsPrefix(loc)) },
    ...choices,
    options: {
      ...(only ? { only } : {}),
      ...(mode ? { mode } : {}),
      lifecycle: lifecycleOf(req),
      failFast: req.failFast,
      concurrency: req.concurrency,
      output: { quiet: req.quietUnitOutput === true, ...(req.unitLogDir ? { logDir: req.unitLogDir } : {}) },
      // A signal read costs a fetch on a network remote: at most one a second between waves' checks.
      ...(loc.kind === 'remote' ? { signalPollMs: 1000 } : {}),
    },
  });
}

/** How long after taking the lease its refs still serve as the run's first look at signals. */
const FIRST_LOOK_FRESH_MS = 1000;

/**
 * Reads the hold signals delivered to the run. On a network remote the first look, when it comes
 * within FIRST_LOOK_FRESH_MS of taking the lease (the poll interval of a remote's reads), reads
 * the signals from the refs the lease was taken on instead of fetching them again: no hold can
 * name this run before its lease push landed (`nyl hold` delivers to the run it sees holding the
 * lease), so only a hold sent in that moment waits for the next look, as one sent a moment later
 * would (issue 33: one round trip less per run).
 */
function signalReader(rt: Runtime, opened: OpenedEnvironment, run: RunTransaction): () => Promise<HoldSignal[]> {
  const { store, loc } = opened;
  const takenAt = run.tx.lease.confirmedAt;
  let first: RefSnapshot | undefined = loc.kind === 'remote' ? run.tx.snapshot : undefined;
  return () => {
    const refs = first && rt.clock.now() - takenAt < FIRST_LOOK_FRESH_MS ? first : undefined;
    first = undefined;
    return readHoldSignals(store, refs);
  };
}

function leaseLost(env: string): NylError {
  return new NylError(
    diagnostic(
      'NYL-LEASE-LOST',
      'error',
      `the lease of ${env} was taken over or deleted; this run pushes nothing more to state and its run ref stays for the next run to import`,
      { env },
    ),
  );
}

async function reconcileAsRun(
  rt: Runtime,
  opened: OpenedEnvironment,
  req: ReconcileOptions,
  only: Set<string> | undefined,
  first: Start,
  run: RunTransaction,
  choices: RunChoices,
): Promise<ReconcileReport> {
  const start = await startUnderLease(opened, first, run.tx.snapshot);
  const takeover = await takeOverDeadRuns(rt, opened, start, run);
  // Decided under the lease, on the state the run starts from.
  const requested = requestedOf(opened, start, req);
  const approver = choices.approvals && req.approval ? { approver: approverOf(req.approval, rt.env, opened.author!) } : {};
  const engine = await engineOf(rt, opened, req, only, start, takeover, run, requested, { ...choices, ...approver });
  if (engine.lost) throw leaseLost(opened.env.name);
  const report = runReport(opened, run.runRef.run, takeover, engine, only, operationOf(req));
  if (requested) report.details.requested = requested;
  if (engine.cancelled) {
    // Cancelled: the checkpoints stay in the run ref for the next run to take over; no transition.
    await run.tx.end('cancelled');
    report.warnings.push(...unitWarnings(report, { unimported: true, plan: engine.plan }));
    report.errors.push(
      diagnostic(
        'NYL-RUN-CANCELLED',
        'error',
        `the run ${run.runRef.run} of ${opened.env.name} was cancelled by a signal; its run ref stays for the next run to take over`,
        { env: opened.env.name },
      ),
    );
    return report;
  }
  if (engine.unavailable) return endUnrecorded(opened, run, engine, report);
  const settled = settleRun(opened, start, takeover, engine, report, req.reason, operationOf(req));
  return publishRun(rt, opened, start, takeover, engine, settled, run, report);
}

/**
 * The state repository stayed out of reach (after retries): the run started nothing more, and
 * what ran is not recorded in state. It still tries to end its run ref, with the checkpoints that
 * wait, and to let the lease go; then says what is unrecorded and what to run once the repository
 * is back. Nothing ran: plain NYL-STATE-UNAVAILABLE.
 */
async function endUnrecorded(
  opened: OpenedEnvironment,
  run: RunTransaction,
  engine: EngineResult,
  report: ReconcileReport,
  cause?: string,
): Promise<ReconcileReport> {
  await run.tx.end('state-unavailable');
  report.warnings.push(...unitWarnings(report, { unimported: true, plan: engine.plan }));
  const env = opened.env.name;
  const why = `the state repository of ${env} could not be reached${cause ? ` (${cause})` : ''}`;
  if (engine.dispatchOrder.length === 0) {
    report.errors.push(diagnostic('NYL-STATE-UNAVAILABLE', 'error', `${why}; no unit was started`, { env }));
    return report;
  }
  // A unit that never started has a record that says so waiting too: only what ran counts.
  const lost = run.runRef.hasPending() ? engine.unpushed.filter((n) => engine.outcomes.has(n)) : [];
  const message = `${why}: the results of ${engine.dispatchOrder.join(', ')} are not recorded in state${lost.length > 0 ? `, and the checkpoints of ${lost.join(', ')} did not reach run ${run.runRef.run} either` : `; run ${run.runRef.run} holds their checkpoints`}`;
  report.errors.push(
    diagnostic('NYL-RUN-UNRECORDED', 'error', message, { env, units: engine.dispatchOrder, data: { run: run.runRef.run, withoutCheckpoint: lost } }),
  );
  return report;
}

async function publishRun(
  rt: Runtime,
  opened: OpenedEnvironment,
  start: Start,
  takeover: Takeover,
  engine: EngineResult,
  settled: SettledRun,
  run: RunTransaction,
  report: ReconcileReport,
): Promise<ReconcileReport> {
  const { store, loc } = opened;
  const coordination = coordinationUpdates(store, start.refs, takeover, engine.observed);
  const signals = signalDeletions(engine.signals);
  let published;
  try {
    // The snapshot a transition takes as a parent must be in the repository that pushes it.
    if (opened.worktree && settled.transitions.length > 0)
      await store.importObjects({ localRepository: opened.worktree.repository }, [opened.worktree.snapshot]);
    published = await run.tx.publish(settled.transitions, () => [...coordination, ...signals, run.runRef.deletion()]);
  } catch (error) {
    if (!(error instanceof NylError && error.code === 'NYL-STATE-UNAVAILABLE')) throw error;
    return endUnrecorded(opened, run, engine, report, error.diagnostics[0]!.message);
  }
  report.committed = settled.transitions.length > 0;
  rememberWritten(settled.changes);
  await Promise.all([
    primeUnitDocs(store.reader, loc, published.commits.get(loc.desiredRef), settled.desired, store.cache),
    primeUnitDocs(store.reader, loc, published.commits.get(loc.observedRef), engine.observed, store.cache),
  ]);
  report.desired = published.refs.get(loc.desiredRef);
  report.observed = published.refs.get(loc.observedRef);
  // A late hold commit synced the known branches past the run's push already: no second sync.
  const diverged = (await applyLateHolds(rt, opened, report)) ?? (await opened.local.syncKnownBranches(published.refs));
  report.warnings.push(...divergedWarnings(opened.env.name, diverged));
  return report;
}
