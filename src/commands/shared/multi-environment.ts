/**
 * Commands over several environments (repeated -e, -l, -g): `reconcile`, `teardown`, `plan`,
 * `status` and `verify` run each selected environment as its own single-environment command and
 * report one section per environment.
 *
 * Invariants:
 * - Each environment is its own transaction: its command runs through the single-environment
 *   operation (its own lease, run id, run ref and commits); nothing is shared between
 *   environments but the process.
 * - Order and gate, by command (CommandTraits, which the command's registry entry gives):
 *   - reconcile: dependencies first; an environment starts only when every selected environment
 *     it depends on (transitively, project/environment-selection.ts) ended with exit 0, otherwise
 *     it is not started and reported blocked (NYL-ENVIRONMENT-BLOCKED, exit 2) naming them;
 *   - teardown: consumers first, the same gate the other way round: shared networking is torn
 *     down only once every selected environment on it was;
 *   - plan, status, verify: dependencies first, no gate. They change no resource, and their own
 *     exit codes say "something to do" (2) as often as "broken", so every environment reports.
 * - At most `environmentConcurrency` environments run at once (default 1: one after another in
 *   the order); two that one gate orders never run together.
 * - A signal (rt.cancel) reaches the running environments through their own commands; none starts
 *   after it, and those not started report NYL-RUN-CANCELLED.
 * - The exit code of each environment is decided by the one rule (report/exit-code.ts), as its own
 *   single-environment command would exit; the command's is the most severe across environments.
 * - `--unit UNIT` must name a unit of every selected environment, `--unit ENV/UNIT` one of ENV,
 *   each by the rule of the environment's own command (a teardown: a unit its state holds an
 *   incarnation of): checked for all environments before the first one starts.
 */
import { type Diagnostic, diagnostic, NylError } from '../../errors/diagnostic';
import { resolveEnvironment } from '../../project/instances';
import { ownershipSet } from '../../project/selectors';
import { exitCodeOf } from '../../report/exit-code';
import { refusalDocument } from '../../report/refusal';
import {
  emptyDiagnostics,
  FORMAT_VERSION,
  type MultiEnvironmentReport,
  type RefusalDocument,
  REPORT_API_VERSION,
  type SingleEnvironmentReport,
} from '../../report/types';
import { type EnvironmentStateView, readEnvironmentState } from '../../state/read';
import { requestedUnits } from '../../run/teardown-requests';
import type { Runtime } from '../../util/runtime';
import { openEnvironment, type OpenedEnvironment, readDeclarations } from './context';
import { readRefs } from '../inspect/inspect-state';
import { verifiableUnits } from '../verify/verify';
import {
  dependentsFirst,
  type EnvironmentOrder,
  type EnvironmentSelector,
  qualifiedUnits,
  resolveSelection,
  unitsByEnvironment,
} from './environment-selection';

type MultiEnvironmentOperation = MultiEnvironmentReport['operation'];

/** How one command runs over several environments: its caller (the command's registry entry) says. */
export interface CommandTraits {
  /** The kind of an environment's refusal section: the kind the command's own refusals have. */
  kind: RefusalDocument['kind'];
  /** The operation its refusal sections name, as its own refusals do (none for status). */
  refusalOperation: string | undefined;
  /** Which environments must have ended 0 before one starts (see the header). */
  gate: 'dependencies' | 'dependents' | 'none';
  /**
   * Which `--unit` names the command's own single-environment run accepts: the ownership set's
   * (reconcile, plan, status), those verify accepts (verifiableUnits), or those a teardown can
   * tear down: the units state holds an incarnation of (requestedUnits).
   */
  unitsFrom: 'source' | 'verifiable' | 'incarnations';
}

/** The traits of runSchedule's callers that give no sections of their own: a reconcile's. */
const RECONCILE_TRAITS: CommandTraits = { kind: 'ReconcileReport', refusalOperation: 'reconcile', gate: 'dependencies', unitsFrom: 'source' };

/** What selects the environments and their units; the rest of each command's options stay with `RunEnvironment`. */
interface MultiEnvironmentRequest {
  path: string;
  selector: EnvironmentSelector;
  /** `--unit`/`--units` names as given: `UNIT` (in every selected environment) or `ENV/UNIT`. */
  units?: string[];
  /** How many environments may run at once (>= 1). */
  environmentConcurrency: number;
  /** --source and --local, as each environment's command will open it (for the --unit check). */
  source?: string;
  local?: boolean;
}

/** Runs the command for one environment; `units` are its `--unit` names when any were given. */
type RunEnvironment = (environment: string, units: string[] | undefined) => Promise<SingleEnvironmentReport>;

/** One environment's end: its own document and its exit code. */
interface Ended {
  document: SingleEnvironmentReport | RefusalDocument;
  exit: number;
}

/** The environments that run (with --unit, those some unit option names) and what each waits for. */
interface Schedule extends EnvironmentOrder {
  units: Map<string, string[]> | undefined;
}

export async function runEnvironments(
  rt: Runtime,
  operation: MultiEnvironmentOperation,
  traits: CommandTraits,
  req: MultiEnvironmentRequest,
  runOne: RunEnvironment,
): Promise<MultiEnvironmentReport> {
  const schedule = await scheduleOf(rt, req, traits);
  const run = (env: string): Promise<Ended> => endOf(operation, traits, env, () => runOne(env, schedule.units?.get(env)));
  const ended = await runSchedule(rt, schedule, Math.max(1, req.environmentConcurrency), run, sectionsOf(operation, traits));
  const environments: MultiEnvironmentReport['environments'] = {};
  const exitCodes: Record<string, number> = {};
  for (const env of schedule.order) {
    environments[env] = ended.get(env)!.document;
    exitCodes[env] = ended.get(env)!.exit;
  }
  return {
    apiVersion: REPORT_API_VERSION,
    formatVersion: FORMAT_VERSION,
    kind: 'MultiEnvironmentReport',
    operation,
    environmentOrder: schedule.order,
    environments,
    exitCodes,
    ...emptyDiagnostics(),
  };
}

/** Runs one environment's command; a refusal becomes its section, with the exit it would have. */
async function endOf(
  operation: MultiEnvironmentOperation,
  traits: CommandTraits,
  environment: string,
  run: () => Promise<SingleEnvironmentReport>,
): Promise<Ended> {
  try {
    const report = await run();
    return { document: report, exit: exitCodeOf(report, report.errors, operation) };
  } catch (error) {
    const errors = error instanceof NylError ? error.diagnostics : [diagnostic('NYL-INTERNAL', 'error', (error as Error)?.stack ?? String(error))];
    const details = error instanceof NylError ? (error.details ?? {}) : {};
    return { document: refusalOf(traits, environment, errors, details), exit: exitCodeOf(undefined, errors, operation) };
  }
}

/** The short refusal form of one environment's section. */
function refusalOf(traits: CommandTraits, environment: string, errors: Diagnostic[], details: Record<string, unknown>): RefusalDocument {
  return refusalDocument(traits.kind, traits.refusalOperation, environment, errors, details);
}

/** The sections of environments that do not run: blocked by the gate, or not started after a signal. */
interface UnrunSections {
  blocked(environment: string, waitedFor: string[], ended: ReadonlyMap<string, Ended>): Ended;
  notStarted(environment: string): Ended;
}

function sectionsOf(operation: MultiEnvironmentOperation, traits: CommandTraits): UnrunSections {
  return {
    blocked(environment, waitedFor, ended) {
      const failing = waitedFor.filter((d) => ended.get(d)!.exit !== 0);
      const how = failing.map((d) => `${d} (exit ${ended.get(d)!.exit})`).join(', ');
      const message =
        traits.gate === 'dependents'
          ? `environment ${environment} was not torn down: ${failing.length === 1 ? 'an environment that depends' : 'environments that depend'} on it, ${how}, did not end with exit 0`
          : `environment ${environment} was not started: it depends on ${how}, which did not end with exit 0`;
      const error = diagnostic('NYL-ENVIRONMENT-BLOCKED', 'error', message, { env: environment, blockedBy: failing, data: { blockedBy: failing } });
      return { document: refusalOf(traits, environment, [error], { blockedBy: failing }), exit: 2 };
    },
    notStarted(environment) {
      const error = diagnostic('NYL-RUN-CANCELLED', 'error', `environment ${environment} was not started: the command was cancelled by a signal`, {
        env: environment,
      });
      return { document: refusalOf(traits, environment, [error], { notStarted: true }), exit: exitCodeOf(undefined, [error], operation) };
    },
  };
}

async function scheduleOf(rt: Runtime, req: MultiEnvironmentRequest, traits: CommandTraits): Promise<Schedule> {
  const project = await readDeclarations(rt, req.path);
  const selection = resolveSelection(project, req.selector, (name) => resolveEnvironment(project, name));
  const units = await unitsOf(rt, req, selection.order, traits);
  // An environment that no --unit names runs no unit: it is left out, and waited for by nobody.
  const runs = (env: string): boolean => !units || (units.get(env)?.length ?? 0) > 0;
  const kept = selection.order.filter(runs);
  const order: EnvironmentOrder = { order: kept, dependencies: new Map(kept.map((env) => [env, selection.dependencies.get(env)!.filter(runs)])) };
  if (traits.gate === 'dependents') return { ...dependentsFirst(order), units };
  if (traits.gate === 'none') return { order: kept, dependencies: new Map(kept.map((env) => [env, []])), units };
  return { ...order, units };
}

/**
 * The per-environment unit lists of --unit (undefined when none is named). A plain UNIT must be a
 * unit of every selected environment: each environment some name targets is opened (read only)
 * for the units its own command would accept; one no name targets runs nothing and is not opened.
 */
async function unitsOf(rt: Runtime, req: MultiEnvironmentRequest, order: string[], traits: CommandTraits): Promise<Map<string, string[]> | undefined> {
  if (!req.units || req.units.length === 0) return undefined;
  const named = qualifiedUnits(order, req.units);
  const known = new Map<string, Set<string>>();
  for (const env of order) if (named.get(env)!.length > 0) known.set(env, await knownUnits(rt, req, env, traits));
  return unitsByEnvironment(order, req.units, (env) => known.get(env) ?? new Set());
}

/** One environment's units for --unit: those its own command accepts (CommandTraits.unitsFrom). */
async function knownUnits(rt: Runtime, req: MultiEnvironmentRequest, environment: string, traits: CommandTraits): Promise<Set<string>> {
  const opened = await openEnvironment(
    rt,
    { path: req.path, environment, ...(req.source !== undefined ? { source: req.source } : {}), ...(req.local ? { local: true } : {}) },
    { writes: false },
  );
  try {
    const owned = ownershipSet(opened.project, opened.env).map((u) => u.name);
    const view = traits.unitsFrom === 'source' ? undefined : await stateView(opened);
    // State that cannot be read here: the environment's own command reports why, in its section.
    if (!view) return new Set(owned);
    if (traits.unitsFrom === 'verifiable') return new Set(verifiableUnits(opened, view));
    return new Set(view.state ? requestedUnits(view.desiredUnits, view.state.generation, 'all') : owned);
  } finally {
    opened.close();
  }
}

/** An environment's state as read now (moving no ref), or undefined when it cannot be read. */
async function stateView(opened: OpenedEnvironment): Promise<EnvironmentStateView | undefined> {
  const read = await readRefs(opened);
  if (!read.refs) return undefined;
  try {
    return await readEnvironmentState(opened.store.reader, opened.loc, read.refs, opened.store.cache);
  } catch (error) {
    if (error instanceof NylError) return undefined;
    throw error;
  }
}

/**
 * Runs the schedule: in order, starts each environment whose gate is open (every environment it
 * waits for ended; blocked at once when one did not end 0), at most `limit` at a time, and none
 * after a signal.
 */
export async function runSchedule(
  rt: Pick<Runtime, 'cancel'>,
  schedule: EnvironmentOrder,
  limit: number,
  run: (env: string) => Promise<Ended>,
  unrun: UnrunSections = sectionsOf('reconcile', RECONCILE_TRAITS),
): Promise<Map<string, Ended>> {
  const ended = new Map<string, Ended>();
  const running = new Map<string, Promise<void>>();
  let pending = [...schedule.order];
  while (pending.length > 0 || running.size > 0) {
    if (rt.cancel.aborted) {
      for (const env of pending) ended.set(env, unrun.notStarted(env));
      pending = [];
    }
    for (const env of [...pending]) {
      const waitsFor = schedule.dependencies.get(env) ?? [];
      if (!waitsFor.every((d) => ended.has(d))) continue;
      if (waitsFor.some((d) => ended.get(d)!.exit !== 0)) {
        ended.set(env, unrun.blocked(env, waitsFor, ended));
      } else {
        if (running.size >= limit) continue;
        running.set(
          env,
          run(env)
            .then((end) => void ended.set(env, end))
            .finally(() => running.delete(env)),
        );
      }
      pending = pending.filter((p) => p !== env);
    }
    if (running.size > 0) await Promise.race(running.values());
    else if (pending.length > 0) throw new Error(`environments ${pending.join(', ')} wait for environments outside the schedule`);
  }
  return ended;
}
