/**
 * `nyl plan -e ENV`: what the next reconcile would do, per unit and why, without doing it. It
 * resolves the environment as reconcile's first look does (the planner over the state, --unit as
 * the run's selection), prepares the units whose key needs their driver (as the run would), and
 * for every unit that would execute shows the digest a plan-bound approval names: with the
 * driver's own plan (its change summary) for a kind that plans, else the execution key.
 *
 * It takes no lease and writes nothing: no state ref, no run ref, and no ref of the clone either
 * (it reads a remote's refs with ls-remote instead of mirroring them, and judges the clone's
 * known branches without fast-forwarding them, as status would). Driver phases run in a scratch
 * copy of the source commit that is removed afterwards (./plan-drivers.ts). It warns
 * NYL-SOURCE-SHELL-REFERENCE for a unit whose `run:` hands a reference to a shell (sh -c TEXT),
 * NYL-SOURCE-UNDECLARED-READ for one whose action names source paths its key does not cover, and
 * NYL-SOURCE-UNCOMMITTED when working files the rendering reads differ from HEAD, the commit it
 * renders (../shared/source-warnings.ts).
 */
import { diagnostic, type Diagnostic } from '../../errors/diagnostic';
import type { Failure } from '../../drivers/contract';
import { isNylCode } from '../../errors/catalog';
import { describeHolder, readLease } from '../../lease/lease';
import type { Plan, UnitPlan } from '../../plan/actions';
import { planEnvironment, type Prepared } from '../../plan/planner';
import { preparationFrom } from '../../plan/preparation';
import type { ReconcileReport } from '../../report/types';
import { runPool } from '../../run/pool';
import { coordinationNamespace, runsPrefix } from '../../state/location';
import { keyFileWarnings, localWorkWarnings } from '../shared/report-base';
import { type EnvironmentStateView, readEnvironmentState } from '../../state/read';
import type { RefSnapshot } from '../../state/store';
import type { Runtime } from '../../util/runtime';
import { selectedUnits, shellTextWarnings } from '../shared/selection';
import { type EnvironmentRequest, openEnvironment, type OpenedEnvironment, planInputOf, worktreeWarning } from '../shared/context';
import { PlanPhases } from './plan-drivers';
import { describeRows, digestOf, joined, wouldExecute } from './plan-rows';
import { quietReport } from '../reconcile/reconcile-report';
import { inactiveStateOf, requireActive } from '../state/state-checks';
import { uncommittedWarnings, undeclaredReadWarnings } from '../shared/source-warnings';

interface PlanOptions {
  /** --unit/--units: plan only these, as `reconcile --unit` would run them. */
  units?: string[];
}

interface PlanRequest extends EnvironmentRequest, PlanOptions {}

/** Driver phases at once, as a reconcile's default --concurrency. */
const CONCURRENCY = 4;

/** The state the plan starts from, read without moving any ref. */
interface Start {
  refs: RefSnapshot;
  view: EnvironmentStateView;
  generation: number;
  /** No state yet (state init has not run): the plan previews every unit executing, with this warning. */
  missing?: Diagnostic;
}

/** The plan after the driver's preparations, and the units whose preparation failed. */
interface Resolved {
  plan: Plan;
  unprepared: Map<string, Failure>;
}

export async function plan(rt: Runtime, req: PlanRequest): Promise<ReconcileReport> {
  const opened = await openEnvironment(rt, req, { writes: false });
  try {
    const report = await planOpened(rt, opened, req);
    if (opened.worktree) report.sourceWorktree = true;
    report.warnings.unshift(...worktreeWarning(opened, 'plan'), ...(await uncommittedWarnings(opened, 'plan')), ...keyFileWarnings(opened.env.name, rt.env));
    return report;
  } finally {
    opened.close();
  }
}

export async function planOpened(rt: Runtime, opened: OpenedEnvironment, options: PlanOptions = {}): Promise<ReconcileReport> {
  const start = await readStart(opened);
  const only = selectedUnits(opened, options.units);
  const phases = new PlanPhases(rt, opened, start.view.observedUnits);
  try {
    const resolved = await resolvePlan(opened, start, only, phases);
    const report = quietReport(opened, resolved.plan, start.view, only, 'plan');
    report.warnings.unshift(...(start.missing ? [start.missing] : []), ...shellTextWarnings(opened, only));
    report.warnings.push(...undeclaredReadWarnings(opened, resolved.plan, only));
    describeRows(report, resolved.plan);
    reportUnprepared(report, resolved);
    await addDigests(opened, report, resolved.plan, phases);
    report.warnings.push(...(await coordinationWarnings(opened, start.refs)));
    report.warnings.push(...localWorkWarnings(opened.env.name, coordinationNamespace(opened.loc), await opened.local.localRunRefs(start.refs)));
    return report;
  } finally {
    phases.close();
  }
}

/**
 * The state as reconcile reads it before it takes the lease, with its refusals (missing, deleted
 * or moved state, the clone's unpublished work), but read-only: see the module header.
 */
async function readStart(opened: OpenedEnvironment): Promise<Start> {
  const { store, loc } = opened;
  await store.ensureOpen();
  const refs = await store.snapshot({ readOnly: true });
  const view = await readEnvironmentState(store.reader, loc, refs, store.cache);
  const missing = await missingState(opened, refs, view);
  const generation = missing ? 1 : await requireActive(opened, { refs, view });
  await opened.local.requireNoUnpublishedWork(refs, { readOnly: true });
  return { refs, view, generation, ...(missing ? { missing } : {}) };
}

/**
 * State that does not exist yet, as before `nyl state init`: previewed, as `terraform plan` does
 * without a state, rather than refused; the warning keeps NYL-STATE-MISSING's fix. Not when the
 * clone's own branches hold the state (a move is the way there, and refused as reconcile would).
 */
async function missingState(opened: OpenedEnvironment, refs: RefSnapshot, view: EnvironmentStateView): Promise<Diagnostic | undefined> {
  if (view.state || (await opened.local.knownStateBeyond(refs)).size > 0) return undefined;
  const d = await inactiveStateOf(opened, refs, undefined, 'warning');
  if (d?.code !== 'NYL-STATE-MISSING') return undefined;
  return { ...d, message: `state missing: every unit would execute; a reconcile refuses until it exists (${d.message})` };
}

/** Reconcile's first look: the planner over the state, without lifecycle permissions, --unit as the run's selection. */
function previewOf(opened: OpenedEnvironment, start: Start, only: Set<string> | undefined, prepared: ReadonlyMap<string, Prepared>): Plan {
  const docs = { desired: start.view.desiredUnits, observed: start.view.observedUnits };
  return planEnvironment({
    ...planInputOf(opened, start.generation, docs),
    lifecycle: { allowTeardown: false, allowDependents: false, allowIncomplete: false },
    ...(prepared.size > 0 ? { prepared } : {}),
    ...(only ? { run: { runId: '', only } } : {}),
  });
}

/**
 * The plan once the driver prepared what it must (an image's digest), as the run's prepare waves
 * would: a unit that is prepared may let a dependent resolve, which may need preparing in turn.
 * Each unit is prepared once; a failed preparation leaves it at `prepare`. An input absent here
 * is read as a run reads it (../plan/preparation.ts): a unit its recorded preparation keeps
 * current shows `current` (`input-absent`), any other fails its preparation.
 */
async function resolvePlan(opened: OpenedEnvironment, start: Start, only: Set<string> | undefined, phases: PlanPhases): Promise<Resolved> {
  const prepared = new Map<string, Prepared>();
  const unprepared = new Map<string, Failure>();
  for (;;) {
    const plan = previewOf(opened, start, only, prepared);
    const wave = [...plan.units.values()].filter((u) => u.action.type === 'prepare' && u.rendering && !unprepared.has(u.name) && !prepared.has(u.name));
    if (wave.length === 0) return { plan, unprepared };
    await runPool(wave, CONCURRENCY, async (u) => {
      const taken = preparationFrom(u, await phases.prepare(u));
      if ('result' in taken) unprepared.set(u.name, taken);
      else prepared.set(u.name, taken);
    });
  }
}

/** A driver phase that failed: on its row, and as a warning (the failure's own code, else NYL-UNIT-FAILED). */
function phaseFailed(report: ReconcileReport, name: string, what: string, f: Failure): Diagnostic {
  const row = report.units[name]!;
  row.detail = joined(row.detail, `${what}: ${f.reason}`);
  const code = f.code !== undefined && isNylCode(f.code) ? f.code : 'NYL-UNIT-FAILED';
  const message = `${what}, so this plan shows neither its changes nor its digest (a reconcile would fail it the same way): ${f.reason}`;
  return diagnostic(code, 'warning', `${name}: ${message}`, { env: report.environment, unit: name, units: [name], retryable: f.retryable });
}

/** Rows of units whose preparation failed: the reconcile would fail them in its prepare wave. */
function reportUnprepared(report: ReconcileReport, resolved: Resolved): void {
  for (const name of report.unitOrder) {
    const f = resolved.unprepared.get(name);
    if (f && resolved.plan.units.get(name)?.action.type === 'prepare')
      report.warnings.push(phaseFailed(report, name, `its ${report.units[name]!.kind} driver could not resolve what its execution key needs`, f));
  }
}

/**
 * The digest of every unit that would execute: the driver's plan first for a kind that plans (its
 * summary is the row's `changes`), the execution key for any other. Warnings follow row order.
 */
async function addDigests(opened: OpenedEnvironment, report: ReconcileReport, plan: Plan, phases: PlanPhases): Promise<void> {
  const units = report.unitOrder.map((n) => plan.units.get(n)).filter((u): u is UnitPlan => u !== undefined && wouldExecute(u));
  const failed = new Map<string, Failure>();
  await runPool(units, CONCURRENCY, async (u) => {
    const row = report.units[u.name]!;
    const outcome = opened.drivers.driver(u.kind)?.plan ? await phases.plan(u) : undefined;
    if (outcome && outcome.result !== 'planned') {
      failed.set(u.name, outcome);
      return;
    }
    if (outcome) row.changes = outcome.plan.summary;
    const digest = digestOf(u, outcome?.plan);
    if (digest) row.digest = digest;
  });
  for (const u of units) {
    const f = failed.get(u.name);
    if (f) report.warnings.push(phaseFailed(report, u.name, `its ${u.kind} plan failed`, f));
  }
}

/**
 * What the next reconcile looks at before it plans, which this plan cannot include: a lease (a
 * run under way, or one that ended without letting go) and runs that wait for their import.
 */
async function coordinationWarnings(opened: OpenedEnvironment, refs: RefSnapshot): Promise<Diagnostic[]> {
  const env = opened.env.name;
  const out: Diagnostic[] = [];
  const lease = await readLease(opened.store, refs);
  if (lease && !lease.damage) {
    const message = `the lease of ${env} is held by ${describeHolder(lease.record)} until ${lease.record.deadline}: the next reconcile waits for that run or takes over what it left, and may then find more than this plan shows`;
    out.push(diagnostic('NYL-LEASE-HELD', 'note', message, { env }));
  }
  const prefix = runsPrefix(opened.loc);
  const runs = [...refs.keys()].filter((r) => r.startsWith(prefix)).map((r) => r.slice(prefix.length));
  for (const run of runs.filter((r) => r !== lease?.record.run)) {
    out.push(
      diagnostic(
        'NYL-RUN-UNIMPORTED',
        'warning',
        `run ${run} ended without its transition commit: the next reconcile imports its records first, and this plan does not include them`,
        { env, data: { run } },
      ),
    );
  }
  return out;
}
