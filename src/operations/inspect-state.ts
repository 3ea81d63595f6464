/**
 * What the read-only inspection commands (`nyl log`, `nyl show`, `nyl outputs`) share: the
 * environment opened without rendering its units (they read state only, so the Environment's
 * source ref need not resolve), the state refs read without moving any ref, and missing, deleted
 * or moved state reported as `nyl status` reports it.
 */
import { NylError } from '../errors/diagnostic';
import type { Diagnostic } from '../errors/diagnostic';
import { describeLocation } from '../state/location';
import type { RefSnapshot } from '../state/store';
import type { Runtime } from '../util/runtime';
import { type EnvironmentRequest, openEnvironment, type OpenedEnvironment } from './context';

/** The refs one read saw, or the errors that kept it from reading them. */
export type RefsRead = { refs: RefSnapshot; errors?: undefined } | { refs?: undefined; errors: Diagnostic[] };

/** Opens the environment for reading (no author, no rendering), runs `fn`, and closes it. */
export async function withEnvironmentRead<T>(rt: Runtime, req: EnvironmentRequest, fn: (opened: OpenedEnvironment) => Promise<T>): Promise<T> {
  const opened = await openEnvironment(rt, { path: req.path, environment: req.environment, ...(req.local ? { local: true } : {}) }, { writes: false, renders: false });
  try {
    return await fn(opened);
  } finally {
    opened.close();
  }
}

/**
 * The state refs as they are now, moving no ref (not even the clone's known branches): a state
 * location that cannot be opened is an error of the report, as in status.
 */
export async function readRefs(opened: OpenedEnvironment): Promise<RefsRead> {
  try {
    await opened.store.ensureOpen();
    return { refs: await opened.store.snapshot({ readOnly: true }) };
  } catch (error) {
    if (!(error instanceof NylError)) throw error;
    return { errors: error.diagnostics };
  }
}

/** The details every inspection report carries: where state lives. */
export function locationDetails(opened: OpenedEnvironment): Record<string, unknown> {
  return { location: describeLocation(opened.loc, opened.store.localRepository) };
}
