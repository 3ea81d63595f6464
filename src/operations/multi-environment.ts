/**
 * `nyl reconcile` over several environments (repeated -e, -l, -g): the orchestration of
 * single-environment reconciles.
 *
 * Invariants:
 * - Each environment is its own transaction: it runs through `reconcile` (its own lease, run id,
 *   run ref and commits); nothing is shared between environments but the process.
 * - An environment starts only when every selected environment it depends on (transitively,
 *   project/environment-selection.ts) has ended, and only when each ended with exit 0; otherwise
 *   it is not started and reported blocked (NYL-ENVIRONMENT-BLOCKED, exit 2) naming them.
 * - At most `environmentConcurrency` environments run at once (default 1: one after another in
 *   the run order); two that depend on each other never run together, by the rule above.
 * - A signal (rt.cancel) reaches the running environments through their own runs; none starts
 *   after it, and those not started report NYL-RUN-CANCELLED.
 * - The exit code of each environment is decided by the one rule (report/exit-code.ts), as its own
 *   single-environment run would exit; the run's is the most severe across environments.
 */
import { type Diagnostic, diagnostic, NylError } from '../errors/diagnostic';
import { resolveEnvironment } from '../project/instances';
import { ownershipSet } from '../project/selectors';
import { exitCodeOf } from '../report/exit-code';
import { emptyDiagnostics, FORMAT_VERSION, type MultiEnvironmentReport, type ReconcileReport, type RefusalDocument, REPORT_API_VERSION } from '../report/types';
import type { Runtime } from '../util/runtime';
import { openEnvironment, readDeclarations } from './context';
import { type EnvironmentSelection, type EnvironmentSelector, resolveSelection, unitsByEnvironment } from './environment-selection';
import { reconcile, type ReconcileRequest } from './reconcile';

/** A reconcile request without its one environment and units: what every environment runs with. */
export interface MultiReconcileRequest extends Omit<ReconcileRequest, 'environment' | 'units' | 'worktree'> {
  selector: EnvironmentSelector;
  /** `--unit`/`--units` names as given: `UNIT` (in every selected environment) or `ENV/UNIT`. */
  units?: string[];
  /** How many independent environments may run at once (>= 1). */
  environmentConcurrency: number;
}

/** One environment's end: its own document and its exit code. */
interface Ended {
  document: ReconcileReport | RefusalDocument;
  exit: number;
}

/** The short refusal form of one environment's section. */
function refusalOf(environment: string, errors: Diagnostic[], details: Record<string, unknown> = {}): RefusalDocument {
  return {
    apiVersion: REPORT_API_VERSION,
    formatVersion: FORMAT_VERSION,
    kind: 'ReconcileReport',
    operation: 'reconcile',
    environment,
    result: 'refused',
    ...emptyDiagnostics(),
    errors,
    details,
  };
}

/** Runs one environment as a single-environment reconcile; a refusal becomes its section. */
async function runOne(rt: Runtime, base: ReconcileRequest): Promise<Ended> {
  try {
    const report = await reconcile(rt, base);
    return { document: report, exit: exitCodeOf(report, report.errors, 'reconcile') };
  } catch (error) {
    const errors = error instanceof NylError ? error.diagnostics : [diagnostic('NYL-INTERNAL', 'error', (error as Error)?.stack ?? String(error))];
    const details = error instanceof NylError ? (error.details ?? {}) : {};
    return { document: refusalOf(base.environment, errors, details), exit: exitCodeOf(undefined, errors, 'reconcile') };
  }
}

function blocked(environment: string, deps: string[], ended: ReadonlyMap<string, Ended>): Ended {
  const failing = deps.filter((d) => ended.get(d)!.exit !== 0);
  const how = failing.map((d) => `${d} (exit ${ended.get(d)!.exit})`).join(', ');
  const error = diagnostic('NYL-ENVIRONMENT-BLOCKED', 'error', `environment ${environment} was not started: it depends on ${how}, which did not end with exit 0`, {
    env: environment,
    blockedBy: failing,
    data: { blockedBy: failing },
  });
  return { document: refusalOf(environment, [error], { blockedBy: failing }), exit: 2 };
}

function notStarted(environment: string): Ended {
  const error = diagnostic('NYL-RUN-CANCELLED', 'error', `environment ${environment} was not started: the run was cancelled by a signal`, { env: environment });
  return { document: refusalOf(environment, [error], { notStarted: true }), exit: 4 };
}

/**
 * The per-environment unit lists of --unit (undefined when none is named). A plain UNIT must be a
 * unit of every selected environment: each environment is opened (read only) for its rendered
 * ownership set, as its own run will check it.
 */
async function unitsOf(rt: Runtime, req: MultiReconcileRequest, selection: EnvironmentSelection): Promise<Map<string, string[]> | undefined> {
  if (!req.units || req.units.length === 0) return undefined;
  const owned = new Map<string, Set<string>>();
  for (const env of selection.order) {
    const opened = await openEnvironment(rt, { path: req.path, environment: env, ...(req.source !== undefined ? { source: req.source } : {}), ...(req.local ? { local: true } : {}) }, { writes: false });
    try {
      owned.set(env, new Set(ownershipSet(opened.project, opened.env).map((u) => u.name)));
    } finally {
      opened.close();
    }
  }
  return unitsByEnvironment(selection.order, req.units, (env) => owned.get(env) ?? new Set());
}

/** The environments that run (with --unit, those some unit option names) and what each waits for. */
interface Schedule {
  order: string[];
  dependencies: Map<string, string[]>;
  units: Map<string, string[]> | undefined;
}

async function scheduleOf(rt: Runtime, req: MultiReconcileRequest): Promise<Schedule> {
  const project = await readDeclarations(rt, req.path);
  const selection = resolveSelection(project, req.selector, (name) => resolveEnvironment(project, name));
  const units = await unitsOf(rt, req, selection);
  // An environment that no --unit names runs no unit: it is left out, and waited for by nobody.
  const runs = (env: string): boolean => !units || (units.get(env)?.length ?? 0) > 0;
  const order = selection.order.filter(runs);
  const dependencies = new Map(order.map((env) => [env, selection.dependencies.get(env)!.filter(runs)]));
  return { order, dependencies, units };
}

export async function reconcileEnvironments(rt: Runtime, req: MultiReconcileRequest): Promise<MultiEnvironmentReport> {
  const schedule = await scheduleOf(rt, req);
  const { selector: _selector, units: _units, environmentConcurrency: _concurrency, ...common } = req;
  const requestOf = (env: string): ReconcileRequest => {
    const units = schedule.units?.get(env);
    return { ...common, environment: env, ...(units ? { units } : {}) };
  };
  const ended = await runSchedule(rt, schedule, Math.max(1, req.environmentConcurrency), (env) => runOne(rt, requestOf(env)));
  const environments: MultiEnvironmentReport['environments'] = {};
  const exitCodes: Record<string, number> = {};
  for (const env of schedule.order) {
    environments[env] = ended.get(env)!.document;
    exitCodes[env] = ended.get(env)!.exit;
  }
  return { apiVersion: REPORT_API_VERSION, formatVersion: FORMAT_VERSION, kind: 'MultiEnvironmentReport', operation: 'reconcile', environmentOrder: schedule.order, environments, exitCodes, ...emptyDiagnostics() };
}

/**
 * Runs the schedule: in run order, starts each environment whose dependencies all ended (blocked
 * at once when one did not end 0), at most `limit` at a time, and none after a signal.
 */
export async function runSchedule(rt: Pick<Runtime, 'cancel'>, schedule: Pick<Schedule, 'order' | 'dependencies'>, limit: number, run: (env: string) => Promise<Ended>): Promise<Map<string, Ended>> {
  const ended = new Map<string, Ended>();
  const running = new Map<string, Promise<void>>();
  let pending = [...schedule.order];
  while (pending.length > 0 || running.size > 0) {
    if (rt.cancel.aborted) {
      for (const env of pending) ended.set(env, notStarted(env));
      pending = [];
    }
    for (const env of [...pending]) {
      const deps = schedule.dependencies.get(env) ?? [];
      if (!deps.every((d) => ended.has(d))) continue;
      if (deps.some((d) => ended.get(d)!.exit !== 0)) {
        ended.set(env, blocked(env, deps, ended));
      } else {
        if (running.size >= limit) continue;
        running.set(env, run(env).then((end) => void ended.set(env, end)).finally(() => running.delete(env)));
      }
      pending = pending.filter((p) => p !== env);
    }
    if (running.size > 0) await Promise.race(running.values());
    else if (pending.length > 0) throw new Error(`environments ${pending.join(', ')} wait for environments outside the schedule`);
  }
  return ended;
}
