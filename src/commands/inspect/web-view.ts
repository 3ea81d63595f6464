/**
 * What the read-only web view (`nyl ui`, src/ui/) reads: the same reports as `nyl status`,
 * `nyl graph`, `nyl log` and `nyl show`, each page's reports from one opening of its
 * environment, and a version of the state refs that tells the view when to refresh.
 *
 * Nothing here takes a lease or writes state: status fast-forwards the clone's known branches,
 * as `nyl status` does, and that is all. An environment that cannot be opened (unknown, a source
 * ref that does not resolve) is reported with its diagnostics instead of failing the page of
 * every environment.
 */
import { createHash } from 'node:crypto';
import { type Diagnostic, NylError } from '../../errors/diagnostic';
import { knownEnvironments } from '../../project/instances';
import type { GraphReport, LogEntry, LogReport, ShowReport, StatusReport } from '../../report/types';
import { byCodeUnits } from '../../util/compare';
import type { Runtime } from '../../util/runtime';
import { type EnvironmentRequest, type OpenedEnvironment, readDeclarations } from '../shared/context';
import { graphOf } from './graph';
import { discoverInstances } from './instance-discovery';
import { readRefs, withEnvironmentRead } from './inspect-state';
import { logOpened } from './log';
import { showOpened } from './show';
import { statusWithRefs } from './status';

/** One environment on the page of environments: its status and its latest operation. */
export interface EnvironmentSummary {
  name: string;
  labels: Record<string, string>;
  status?: StatusReport;
  last?: LogEntry;
  /** Why it could not be opened (an unknown environment, a source ref that does not resolve). */
  errors: Diagnostic[];
}

export interface ProjectOverview {
  project?: string;
  environments: EnvironmentSummary[];
  /** The EnvironmentTemplates' namePatterns. */
  patterns: string[];
  /** The templates' instances found in state (instance-discovery.ts), but those whose state was deleted. */
  instances: EnvironmentSummary[];
  /** What kept instances from being listed (a state repository that cannot be read). */
  errors: Diagnostic[];
}

/** What an environment's page shows. */
export interface EnvironmentPageData {
  status: StatusReport;
  graph: GraphReport;
  recent: LogReport;
}

/** What a unit's page shows: the environment's status (the unit's state and why), the unit's documents, and the graph (its dependencies and dependents). */
export interface UnitPageData {
  status: StatusReport;
  show: ShowReport;
  graph: GraphReport;
}

/**
 * How the view reads one environment (the name of what is opened, and the read): `nyl ui`
 * remembers a failure for a while and cuts a slow read (src/ui/environment-reads.ts), so that an
 * unreachable state repository does not slow every page down. Plain reads by default.
 */
export type ReadGuard = <T>(environment: string, read: () => Promise<T>) => Promise<T>;

const unguarded: ReadGuard = (_environment, read) => read();

/**
 * Reports carry a state repository that cannot be read as data (NYL-STATE-UNAVAILABLE among their
 * errors) rather than throwing it: inside a guarded read it is thrown, so that the guard sees the
 * failure and remembers it.
 */
export function throwUnreachable(errors: readonly Diagnostic[]): void {
  const unreachable = errors.filter((d) => d.code === 'NYL-STATE-UNAVAILABLE');
  if (unreachable.length > 0) throw new NylError(unreachable);
}

/** How many operations an environment's page lists before linking to its history. */
const RECENT_OPERATIONS = 5;

/** Runs `fn` on the environment opened for reading with rendering (status needs the units rendered). */
function withRenderedEnvironment<T>(rt: Runtime, req: EnvironmentRequest, fn: (opened: OpenedEnvironment) => Promise<T>): Promise<T> {
  return withEnvironmentRead(rt, req, fn, { renders: true });
}

/** The declared environments and the instances state holds, each with its status and its latest operation, by name. */
export async function projectOverview(rt: Runtime, path: string, local = false, guard: ReadGuard = unguarded): Promise<ProjectOverview> {
  const project = await readDeclarations(rt, path);
  const { known, patterns } = knownEnvironments(project);
  const req = (environment: string) => ({ path, environment, ...(local ? { local: true } : {}) });
  const environments: EnvironmentSummary[] = [];
  for (const name of known) environments.push({ name, labels: project.environments.get(name)!.labels, ...(await summaryOf(rt, req(name), guard)) });
  const discovered = await discoverInstances(rt, path, project, local, guard);
  const instances: EnvironmentSummary[] = [];
  for (const name of discovered.names) {
    const summary = { name, labels: {}, ...(await summaryOf(rt, req(name), guard)) };
    // A closed preview's deleted state stays in Git; the list is of the live ones.
    if (!summary.status?.errors.some((d) => d.code === 'NYL-STATE-DELETED')) instances.push(summary);
  }
  return { ...(project.name !== undefined ? { project: project.name } : {}), environments, patterns, instances, errors: discovered.errors };
}

async function summaryOf(rt: Runtime, req: EnvironmentRequest, guard: ReadGuard): Promise<Omit<EnvironmentSummary, 'name' | 'labels'>> {
  try {
    return await guard(req.environment, () =>
      withRenderedEnvironment(rt, req, async (opened) => {
        const { report: status, refs } = await statusWithRefs(rt, opened);
        throwUnreachable(status.errors);
        const last = (await logOpened(opened, { ...req, limit: 1 }, refs)).entries[0];
        return { status, ...(last ? { last } : {}), errors: [] };
      }),
    );
  } catch (error) {
    if (!(error instanceof NylError)) throw error;
    return { errors: error.diagnostics };
  }
}

export async function environmentPage(rt: Runtime, req: EnvironmentRequest): Promise<EnvironmentPageData> {
  return withRenderedEnvironment(rt, req, async (opened) => {
    const { report: status, refs } = await statusWithRefs(rt, opened);
    return { status, graph: graphOf(opened, status), recent: await logOpened(opened, { ...req, limit: RECENT_OPERATIONS }, refs) };
  });
}

export async function unitPage(rt: Runtime, req: EnvironmentRequest & { unit: string }): Promise<UnitPageData> {
  return withRenderedEnvironment(rt, req, async (opened) => {
    const { report: status, refs } = await statusWithRefs(rt, opened);
    return { status, show: await showOpened(opened, req.unit, refs), graph: graphOf(opened, status) };
  });
}

/** The environment's history, newest first: at most `limit` operations (0: all). */
export async function historyPage(rt: Runtime, req: EnvironmentRequest & { limit: number }): Promise<LogReport> {
  return withEnvironmentRead(rt, req, (opened) => logOpened(opened, req));
}

/** What a run's page shows: its operations, and the environment's status (a live run's units are `running` there). */
export interface RunPageData {
  log: LogReport;
  /** The operations whose transition commits carry the run's id (Nyl-Run), newest first. */
  entries: LogEntry[];
  status: StatusReport;
}

export async function runPage(rt: Runtime, req: EnvironmentRequest & { run: string }): Promise<RunPageData> {
  return withRenderedEnvironment(rt, req, async (opened) => {
    const { report: status, refs } = await statusWithRefs(rt, opened);
    const log = await logOpened(opened, { ...req, limit: 0 }, refs);
    return { log, entries: log.entries.filter((e) => e.run === req.run), status };
  });
}

/**
 * A short digest of the state refs (desired, observed and everything under the coordination
 * prefix: the lease, run records, signals) of the declared environments, of the instances state
 * holds, and of `environment` (an instance a page shows), read without moving any ref. It changes
 * when one of them does, when an environment is declared or removed, and when one starts or stops
 * being readable.
 */
export async function stateVersion(rt: Runtime, path: string, environment: string | undefined, local = false, guard: ReadGuard = unguarded): Promise<string> {
  const project = await readDeclarations(rt, path);
  const { known } = knownEnvironments(project);
  const discovered = await discoverInstances(rt, path, project, local, guard);
  const named = environment === undefined ? [] : [environment];
  const hash = createHash('sha256');
  // Sorted: the same set of environments gives the same version, whatever order it was named in.
  for (const env of [...new Set([...known, ...discovered.names, ...named])].sort(byCodeUnits)) {
    hash.update(`${env}\n`);
    hash.update(`${JSON.stringify(await refsOf(rt, { path, environment: env, ...(local ? { local: true } : {}) }, guard))}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

async function refsOf(rt: Runtime, req: EnvironmentRequest, guard: ReadGuard): Promise<[string, string][] | string[]> {
  try {
    return await guard(req.environment, () =>
      withEnvironmentRead(rt, req, async (opened) => {
        const read = await readRefs(opened);
        throwUnreachable(read.errors ?? []);
        return read.refs ? [...read.refs].sort(([a], [b]) => byCodeUnits(a, b)) : read.errors.map((d) => d.code);
      }),
    );
  } catch (error) {
    if (!(error instanceof NylError)) throw error;
    return error.diagnostics.map((d) => d.code);
  }
}
