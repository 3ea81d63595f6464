/**
 * Units whose external state another environment or unit would share: a Terraform module whose
 * backend renders the same for dev and prod (a hard-coded `path`, a `key` without the
 * environment in it) gives both one tfstate, so prod adopts dev's resources and a teardown of one
 * destroys the other's. Decided from source alone, before anything runs: the fields a kind names
 * as its state's location (KindDescriptor.stateLocationFields: a module, its backendConfig and
 * workspace) are rendered for this environment and compared with
 * - every other declared Environment whose ownership set has the unit,
 * - another instance of each EnvironmentTemplate (a probe name: if the location does not change
 *   with the instance's name, every instance shares it),
 * - the other units of this environment of a kind with the same fields.
 * A location that references another unit's output cannot be told from source: it is left to the
 * driver, which refuses a state that already holds resources no receipt of the unit recorded.
 * `sharedState: true` on the unit allows the sharing. Pure; computed once per project and
 * environment.
 */
import { withoutCredentials } from '../util/credentials';
import type { KindSet } from '../drivers/kinds';
import { diagnostic, type Diagnostic } from '../errors/diagnostic';
import { canonicalJson } from '../project/execution-key';
import { probeInstance } from '../project/instances';
import { renderUnit } from '../project/render';
import { ownershipSet } from '../project/selectors';
import type { EnvironmentResource, Project, UnitResource } from '../project/types';
import type { DesiredUnitDoc } from '../state/documents';

/** A unit's state location as rendered: its fields, and a text to compare them by. */
interface Location {
  key: string;
  fields: Record<string, unknown>;
}

/** The rendered location of the unit's state in `env`, or undefined when source alone cannot tell it. */
function locationIn(unit: UnitResource, env: EnvironmentResource, kinds: KindSet): Location | undefined {
  const fields = kinds.descriptor(unit.kind)?.stateLocationFields ?? [];
  const spec = Object.fromEntries(fields.filter((f) => unit.spec[f] !== undefined).map((f) => [f, unit.spec[f]]));
  const rendered = renderUnit({ ...unit, spec }, env, () => undefined, kinds);
  return rendered.ok ? locationOf(fields, rendered.rendering) : undefined;
}

/** A location from a rendering of the fields; kinds that locate their state by the same fields read the same backends (Terraform and OpenTofu). */
function locationOf(fields: readonly string[], rendering: Record<string, unknown>): Location {
  // Credentials say nothing of where the state is (one bucket read with two keys is one state), and never reach a message.
  const present = Object.fromEntries(
    Object.entries(rendering)
      .filter(([f, v]) => fields.includes(f) && v !== undefined)
      .map(([f, v]) => [f, withoutCredentials(v)]),
  );
  return { key: canonicalJson({ fields, ...keyFields(fields, present) }), fields: present };
}

/**
 * What says where the state is (KindDescriptor.stateLocationFields: the directory, its
 * configuration, then qualifiers): the directory (a module, whose own backend block holds the
 * location) counts only while the configuration is empty; a backend configuration that names the
 * location does so whichever module reads it (two modules with one `path` share one file).
 */
function keyFields(fields: readonly string[], rendering: Record<string, unknown>): Record<string, unknown> {
  const [dir, config] = fields;
  const value = config === undefined ? undefined : rendering[config];
  const configured = value !== undefined && value !== null && !(typeof value === 'object' && Object.keys(value).length === 0);
  if (!configured || dir === undefined) return rendering;
  const { [dir]: _dir, ...others } = rendering;
  return others;
}

/** A location as a person reads it: `module infra/app, backendConfig path=/srv/app.tfstate`. */
function describeLocation(fields: Record<string, unknown>): string {
  const text = (v: unknown) =>
    v !== null && typeof v === 'object'
      ? Object.entries(v)
          .map(([k, x]) => `${k}=${String(x)}`)
          .join(' ')
      : String(v);
  const shown = Object.entries(fields)
    .map(([k, v]) => `${k} ${text(v)}`)
    .join(', ');
  return shown.length > 300 ? `${shown.slice(0, 297)}...` : shown;
}

function isShareable(unit: UnitResource, kinds: KindSet): boolean {
  return (kinds.descriptor(unit.kind)?.stateLocationFields?.length ?? 0) > 0 && unit.spec.sharedState !== true;
}

/** Another environment that may share a unit's state, with the names of the units it owns. */
interface Other {
  env: EnvironmentResource;
  owns: ReadonlySet<string>;
}

/** Environments other than `env`: the declared ones, and a probe instance of each template (see the module header). */
function otherEnvironments(project: Project, env: EnvironmentResource): Other[] {
  const out: EnvironmentResource[] = [];
  for (const other of project.environments.values()) if (other.name !== env.name) out.push(other);
  for (const template of project.templates?.values() ?? []) {
    // A probe name the pattern cannot take: nothing to compare with.
    const instance = probeInstance(template, env.name);
    if (instance) out.push(instance);
  }
  return out.map((o) => ({ env: o, owns: new Set(ownershipSet(project, o).map((u) => u.name)) }));
}

/** Where source declares the unit's backend: its backendConfig, else its module. */
function sourceLocation(unit: UnitResource) {
  const field = unit.spec.backendConfig !== undefined ? '/backendConfig' : '/module';
  const line = Object.entries(unit.locations ?? {}).find(([p]) => p.startsWith(field))?.[1];
  return { file: unit.origin.file, line: line?.line ?? unit.origin.line, ...(line ? { column: line.column } : {}), pointer: `/spec${field}` };
}

/** NYL-BACKEND-SHARED of a unit (`unit`: its source, absent for one that left it). */
function sharedError(
  name: string,
  unit: UnitResource | undefined,
  env: EnvironmentResource,
  withWhat: string,
  location: Location,
  otherUnit?: string,
): Diagnostic {
  const message = `the Terraform state of ${name} in ${env.name} would be shared with ${withWhat}: its backend renders alike for both (${describeLocation(location.fields)}). A teardown of one would destroy the resources of the other`;
  return diagnostic('NYL-BACKEND-SHARED', 'error', message, {
    env: env.name,
    unit: name,
    units: [name],
    rendered: true,
    ...(otherUnit ? { otherUnit } : {}),
    ...(unit ? { location: sourceLocation(unit) } : {}),
  });
}

/** What the checks of one environment share, made once per project and environment. */
interface Scope {
  env: EnvironmentResource;
  kinds: KindSet;
  /** Where each shareable unit of the environment keeps its state, rendered once (undefined: source cannot tell). */
  located: ReadonlyMap<string, Location | undefined>;
  /** The other environments, listed when a check first needs them. */
  others: () => readonly Other[];
}

/**
 * The conflict of unit `name` whose state is at `mine` in the scope's environment: another
 * environment that owns the unit (`unit`: its source, if it has one) renders it there too, or
 * another unit of the environment does.
 */
function conflictWith(scope: Scope, name: string, unit: UnitResource | undefined, mine: Location): Diagnostic | undefined {
  const { env, kinds } = scope;
  for (const other of unit ? scope.others() : []) {
    if (!other.owns.has(name) || locationIn(unit!, other.env, kinds)?.key !== mine.key) continue;
    return sharedError(
      name,
      unit,
      env,
      other.env.instance ? `every instance of its EnvironmentTemplate (such as ${other.env.name})` : `environment ${other.env.name}`,
      mine,
    );
  }
  for (const [other, at] of scope.located) {
    if (other !== name && at?.key === mine.key) return sharedError(name, unit, env, `unit ${other}`, mine, other);
  }
  return undefined;
}

interface Found {
  scope: Scope;
  conflicts: Map<string, Diagnostic>;
}

const cache = new WeakMap<Project, WeakMap<EnvironmentResource, Found>>();

/** The scope and the source conflicts of an environment, computed once. */
function foundIn(project: Project, env: EnvironmentResource, kinds: KindSet): Found {
  const perEnv = cache.get(project) ?? new WeakMap<EnvironmentResource, Found>();
  cache.set(project, perEnv);
  let found = perEnv.get(env);
  if (!found) {
    const shareable = ownershipSet(project, env).filter((u) => isShareable(u, kinds));
    const located = new Map(shareable.map((u) => [u.name, locationIn(u, env, kinds)]));
    let others: Other[] | undefined;
    const scope: Scope = { env, kinds, located, others: () => (others ??= otherEnvironments(project, env)) };
    found = { scope, conflicts: new Map() };
    for (const unit of shareable) {
      const mine = located.get(unit.name);
      const conflict = mine ? conflictWith(scope, unit.name, unit, mine) : undefined;
      if (conflict) found.conflicts.set(unit.name, conflict);
    }
    perEnv.set(env, found);
  }
  return found;
}

/** Unit name -> NYL-BACKEND-SHARED, for the units of `env` whose state would be shared. */
export function sharedStates(project: Project, env: EnvironmentResource, kinds: KindSet): ReadonlyMap<string, Diagnostic> {
  return foundIn(project, env, kinds).conflicts;
}

/**
 * A teardown of a unit whose state, as its last desired document renders it, another environment
 * or unit of source renders alike: destroying it would destroy theirs (`nyl teardown -e prod` of a
 * state dev shares). Unless that rendering says `sharedState: true`.
 */
export function sharedTeardown(project: Project, env: EnvironmentResource, name: string, desired: DesiredUnitDoc, kinds: KindSet): Diagnostic | undefined {
  const rendering = desired.rendering;
  const fields = desired.kind ? (kinds.descriptor(desired.kind)?.stateLocationFields ?? []) : [];
  if (!rendering || fields.length === 0 || rendering.sharedState === true) return undefined;
  return conflictWith(foundIn(project, env, kinds).scope, name, project.units.get(name), locationOf(fields, rendering));
}
