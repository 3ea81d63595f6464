/**
 * The view source port: everything the web view shows, read from the state refs.
 *
 * Contract: every method reads, none writes state or takes a lease. A method either returns its
 * data (diagnostics about state, such as missing or damaged state, are part of the reports) or
 * throws NylError when the environment itself cannot be opened (unknown, a source ref that does
 * not resolve). `version` changes exactly when the state refs it covers change.
 * The server calls one method at a time (it serializes them), so an implementation need not be
 * safe for concurrent calls. The real one is `stateRefsSource` (operations over Git); unit tests
 * of the server and pages use an in-memory fake.
 */
import type { Diagnostic } from '../errors/diagnostic';
import type { LogReport } from '../report/types';
import {
  environmentPage,
  type EnvironmentPageData,
  historyPage,
  projectOverview,
  type ProjectOverview,
  type ReadGuard,
  runPage,
  type RunPageData,
  stateVersion,
  throwUnreachable,
  unitPage,
  type UnitPageData,
} from '../commands/inspect/web-view';
import type { Runtime } from '../util/runtime';

export interface ViewSource {
  /** Every environment's summary, each environment (and each template's listing) read through `guard`. */
  overview(guard: ReadGuard): Promise<ProjectOverview>;
  environment(name: string): Promise<EnvironmentPageData>;
  unit(environment: string, unit: string): Promise<UnitPageData>;
  /** At most `limit` operations, newest first (0: all). */
  history(environment: string, limit: number): Promise<LogReport>;
  run(environment: string, run: string): Promise<RunPageData>;
  /** The version of the state refs of the declared environments, the instances state holds, and `environment` (the one a page shows). */
  version(environment: string | undefined, guard: ReadGuard): Promise<string>;
}

/** The view source as the pages read it: every read of one environment already guarded. */
export interface GuardedSource extends Omit<ViewSource, 'overview' | 'version'> {
  overview(): Promise<ProjectOverview>;
  version(environment?: string): Promise<string>;
}

/**
 * The source with every read of one environment through `guard` (environment-reads.ts): the
 * pages of one environment as a whole, the overview and the version environment by environment.
 */
export function guardedSource(source: ViewSource, guard: ReadGuard): GuardedSource {
  // A page's reports say that the state repository cannot be read among their errors: thrown, the guard remembers it.
  const checked = <T>(read: Promise<T>, errors: (data: T) => readonly Diagnostic[]) =>
    read.then((data) => {
      throwUnreachable(errors(data));
      return data;
    });
  return {
    overview: () => source.overview(guard),
    environment: (name) => guard(name, () => checked(source.environment(name), (d) => d.status.errors)),
    unit: (environment, unit) => guard(environment, () => checked(source.unit(environment, unit), (d) => d.status.errors)),
    history: (environment, limit) => guard(environment, () => checked(source.history(environment, limit), (d) => d.errors)),
    run: (environment, run) => guard(environment, () => checked(source.run(environment, run), (d) => d.status.errors)),
    version: (environment) => source.version(environment, guard),
  };
}

/** The view source over the project at `path` and its state refs. */
export function stateRefsSource(rt: Runtime, path: string, local: boolean): ViewSource {
  const req = (environment: string) => ({ path, environment, ...(local ? { local: true } : {}) });
  return {
    overview: (guard) => projectOverview(rt, path, local, guard),
    environment: (name) => environmentPage(rt, req(name)),
    unit: (environment, unit) => unitPage(rt, { ...req(environment), unit }),
    history: (environment, limit) => historyPage(rt, { ...req(environment), limit }),
    run: (environment, run) => runPage(rt, { ...req(environment), run }),
    version: (environment, guard) => stateVersion(rt, path, environment, local, guard),
  };
}
