/**
 * What the read-only inspection commands (`nyl log`, `nyl show`, `nyl outputs`) share: the
 * environment opened without rendering its units (they read state only, so the Environment's
 * source ref need not resolve), the state refs read without moving any ref, and missing, deleted
 * or moved state reported as `nyl status` reports it.
 */
import { closest } from '../../util/closest';
import { diagnostic, NylError } from '../../errors/diagnostic';
import type { Diagnostic } from '../../errors/diagnostic';
import { type EnvironmentStateView, readEnvironmentState } from '../../state/read';
import { damageDiagnostic } from '../../state/damage';
import { describeLocation } from '../../state/location';
import type { RefSnapshot } from '../../state/store';
import type { Runtime } from '../../util/runtime';
import { type EnvironmentRequest, openEnvironment, type OpenedEnvironment } from '../shared/context';
import { inactiveStateOf } from '../state/state-checks';

/** The refs one read saw, or the errors that kept it from reading them. */
type RefsRead = { refs: RefSnapshot; errors?: undefined } | { refs?: undefined; errors: Diagnostic[] };

/**
 * Opens the environment for reading (no author; no rendering unless `renders`, which status
 * needs), runs `fn`, and closes it.
 */
export async function withEnvironmentRead<T>(
  rt: Runtime,
  req: EnvironmentRequest,
  fn: (opened: OpenedEnvironment) => Promise<T>,
  { renders = false } = {},
): Promise<T> {
  const opened = await openEnvironment(rt, { path: req.path, environment: req.environment, ...(req.local ? { local: true } : {}) }, { writes: false, renders });
  try {
    return await fn(opened);
  } finally {
    opened.close();
  }
}

/**
 * The state refs as they are now, moving no ref (not even the clone's known branches): a state
 * location that cannot be opened is an error of the report, as in status. `known`: the refs a
 * caller read a moment ago in the same opening (status, for the web view), used as they are.
 */
export async function readRefs(opened: OpenedEnvironment, known?: RefSnapshot): Promise<RefsRead> {
  if (known) return { refs: known };
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

/** An inspection's read of state: the refs and the documents, and whether there is state to show. */
interface ActiveStateRead {
  refs: RefSnapshot;
  view: EnvironmentStateView;
  /** False for missing, deleted or moved state (reported in the errors). */
  active: boolean;
}

/**
 * Reads the state for an inspection, reporting into `errors` what status reports: a location
 * that cannot be opened (then undefined), damaged documents, and missing, deleted or moved
 * state (then not active).
 */
export async function readActiveState(opened: OpenedEnvironment, errors: Diagnostic[], known?: RefSnapshot): Promise<ActiveStateRead | undefined> {
  const read = await readRefs(opened, known);
  if (!read.refs) {
    errors.push(...read.errors);
    return undefined;
  }
  const view = await readEnvironmentState(opened.store.reader, opened.loc, read.refs, opened.store.cache, { tolerate: true });
  errors.push(...view.damage.map((d) => damageDiagnostic(opened.env.name, d)));
  const inactive = view.damage.some((d) => d.document === 'state') ? undefined : await inactiveStateOf(opened, read.refs, view.state);
  if (inactive) errors.push(inactive);
  return { refs: read.refs, view, active: view.state !== undefined && !inactive };
}

/**
 * NYL-UNIT-UNKNOWN for a unit the state holds in neither ref, unless a damaged document of it
 * (already reported as such) is why: true when the unit is missing.
 */
export function unknownUnit(opened: OpenedEnvironment, view: EnvironmentStateView, unit: string, errors: Diagnostic[]): boolean {
  if (view.desiredUnits.has(unit) || view.observedUnits.has(unit)) return false;
  const env = opened.env.name;
  if (!view.damage.some((d) => d.unit === unit))
    errors.push(
      diagnostic('NYL-UNIT-UNKNOWN', 'error', `the state of ${env} holds no unit ${unit}`, {
        env,
        unit,
        units: [unit],
        guess: closest(unit, [...view.desiredUnits.keys(), ...view.observedUnits.keys()]),
      }),
    );
  return true;
}
