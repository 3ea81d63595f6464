/**
 * Which environments a command selects (`-e NAME...`, `-l key=value[,key=value]`, `-g GROUP`), in
 * which order they run, and which units each runs (`--unit ENV/UNIT`). Pure over a loaded Project:
 * no I/O, nothing rendered. The orchestration of a multi-environment run builds on these results.
 *
 * Invariants:
 * - A selection is never empty: an empty one is an error with a fix, never a no-op.
 * - `-e` names resolve through one function (`LookupEnvironment`), so that a name the project
 *   does not declare can later resolve to an EnvironmentTemplate instance; `-l` and `-g` select
 *   declared environments only (instances are never selected by labels or groups).
 * - The order is a topological order of Environment `spec.dependsOn` (dependencies first), ties
 *   broken by name in code-unit order, so that every machine runs the same order.
 */
import { fail } from '../errors/diagnostic';
import { closest } from '../util/closest';
import { dependencyOrder } from './graph';
import { groupMembers, matchesLabels } from './selectors';
import type { EnvironmentResource, Project } from './types';

/** The one form of selection a command line used: repeated -e, -l pairs (AND), or -g. */
export type EnvironmentSelector = { names: string[] } | { labels: Record<string, string> } | { group: string };

/**
 * The environment a `-e` name means, or undefined when none. The default looks up declared
 * environments; EnvironmentTemplate instances plug in here (a name matching a namePattern).
 */
export type LookupEnvironment = (name: string) => EnvironmentResource | undefined;

export function declaredEnvironments(project: Project): LookupEnvironment {
  return (name) => project.environments.get(name);
}

function sortedNames(names: Iterable<string>): string[] {
  return [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * `-l` values (each `key=value[,key=value]`, repeatable) as one label map: every pair must match
 * (AND). Strict: a pair without `=`, with an empty key, or a key given two different values is
 * NYL-USAGE. An empty value is a literal empty label value (`tier=`).
 */
export function parseLabelSelector(values: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const value of values) {
    for (const pair of value.split(',')) {
      const eq = pair.indexOf('=');
      const key = eq < 0 ? '' : pair.slice(0, eq).trim();
      if (eq < 0 || key === '') {
        fail('NYL-USAGE', `-l ${value}: "${pair}" is not a key=value pair`, {
          fix: 'pass -l key=value, or -l key=value,key2=value2 for environments that have both labels',
        });
      }
      const label = pair.slice(eq + 1).trim();
      if (key in labels && labels[key] !== label) {
        fail('NYL-USAGE', `-l gives label ${key} two values (${labels[key]}, ${label}): no environment has both`, { fix: `pass -l ${key}=<value> once` });
      }
      labels[key] = label;
    }
  }
  return labels;
}

/** The selected environments, before ordering: -e in the order given, -l and -g by name. */
export function selectEnvironments(
  project: Project,
  selector: EnvironmentSelector,
  lookup: LookupEnvironment = declaredEnvironments(project),
): EnvironmentResource[] {
  if ('names' in selector) return byNames(project, selector.names, lookup);
  const selected = 'labels' in selector ? byLabels(project, selector.labels) : byGroup(project, selector.group);
  return [...selected].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function byNames(project: Project, names: readonly string[], lookup: LookupEnvironment): EnvironmentResource[] {
  if (names.length === 0) fail('NYL-USAGE', 'no environment selected', { fix: 'pass -e <environment> (repeatable), -l key=value, or -g <group>' });
  const unknown = [...new Set(names)].filter((n) => !lookup(n));
  if (unknown.length > 0) {
    const known = sortedNames(project.environments.keys());
    fail('NYL-ENVIRONMENT-UNKNOWN', `the project declares no Environment ${unknown.join(', ')}`, {
      env: unknown[0],
      unknown,
      known,
      guess: closest(unknown[0]!, known),
    });
  }
  return [...new Set(names)].map((n) => lookup(n)!);
}

function byLabels(project: Project, labels: Record<string, string>): EnvironmentResource[] {
  const pairs = Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  if (pairs === '') fail('NYL-USAGE', '-l selects by no label', { fix: 'pass -l key=value' });
  const selected = [...project.environments.values()].filter((env) => matchesLabels(env.labels, labels));
  if (selected.length === 0) {
    const labelled = [...project.environments.values()].filter((env) => Object.keys(env.labels).length > 0);
    const known = labelled.map(
      (env) =>
        `${env.name} (${Object.entries(env.labels)
          .map(([k, v]) => `${k}=${v}`)
          .join(',')})`,
    );
    fail('NYL-ENVIRONMENT-NONE-SELECTED', `no declared Environment has every label of -l ${pairs}`, {
      selection: `-l ${pairs}`,
      fix: `pass -l with labels an Environment has: ${known.join(', ') || '(no Environment has labels)'}; or name environments with -e <environment>`,
    });
  }
  return selected;
}

function byGroup(project: Project, name: string): EnvironmentResource[] {
  const group = project.groups.get(name);
  if (!group) {
    fail('NYL-GROUP-UNKNOWN', `the project declares no EnvironmentGroup ${name}`, { group: name, known: sortedNames(project.groups.keys()) });
  }
  const members = groupMembers(project, group);
  if (members.length === 0) {
    const how = group.spec.environments ? 'its spec.environments list is empty' : 'no Environment has the labels of its spec.selector.matchLabels';
    fail('NYL-ENVIRONMENT-NONE-SELECTED', `EnvironmentGroup ${name} selects no Environment: ${how}`, {
      selection: `-g ${name}`,
      fix: `add Environments to EnvironmentGroup ${name} (${group.origin.file}:${group.origin.line}), or name environments with -e <environment>`,
    });
  }
  return members;
}

/** A resolved selection: the environments in run order, and what each waits for. */
export interface EnvironmentSelection extends EnvironmentOrder {
  environments: EnvironmentResource[];
}

/** selectEnvironments, then orderEnvironments: what a multi-environment command runs, in order. */
export function resolveSelection(
  project: Project,
  selector: EnvironmentSelector,
  lookup: LookupEnvironment = declaredEnvironments(project),
): EnvironmentSelection {
  const selected = selectEnvironments(project, selector, lookup);
  const byName = new Map(selected.map((env) => [env.name, env]));
  const order = orderEnvironments(selected, lookup);
  return { ...order, environments: order.order.map((name) => byName.get(name)!) };
}

/** The run order of a selection and, per environment, the selected environments it waits for. */
export interface EnvironmentOrder {
  /** Dependencies first; ties by name. */
  order: string[];
  /**
   * For each selected environment, the selected environments it depends on directly or through
   * other environments (selected or not), sorted by name: it starts only when each ended 0.
   */
  dependencies: Map<string, string[]>;
}

/**
 * Orders selected environments by `spec.dependsOn`. An environment outside the selection does
 * not run and is not waited for, but its own dependencies still order the selection: with
 * app -> network -> base and `-e app -e base`, base runs first and app waits for it. `lookup`
 * resolves the dependsOn names (validation refused unknown names and cycles; an unresolved name
 * is skipped).
 */
export function orderEnvironments(selected: readonly EnvironmentResource[], lookup: LookupEnvironment): EnvironmentOrder {
  const names = new Set(selected.map((e) => e.name));
  const dependencies = new Map<string, string[]>();
  for (const env of selected)
    dependencies.set(
      env.name,
      sortedNames(reachable(env, lookup)).filter((n) => names.has(n) && n !== env.name),
    );
  const graph = new Map([...dependencies].map(([name, deps]) => [name, { dependsOn: deps }]));
  return { order: dependencyOrder(graph), dependencies };
}

/**
 * The teardown order of a selection: consumers first. Each environment comes after every selected
 * environment that depends on it (ties by name), and `dependencies` lists, for each, those
 * dependents (sorted by name): it is torn down only when each of them ended 0, so that shared
 * networking outlives the environments that run on it.
 */
export function dependentsFirst(order: EnvironmentOrder): EnvironmentOrder {
  const dependents = new Map<string, string[]>(order.order.map((name) => [name, []]));
  for (const [env, deps] of order.dependencies) for (const d of deps) dependents.get(d)?.push(env);
  const sorted = new Map([...dependents].map(([name, list]) => [name, sortedNames(list)]));
  const graph = new Map([...sorted].map(([name, list]) => [name, { dependsOn: list }]));
  return { order: dependencyOrder(graph), dependencies: sorted };
}

/** Every environment name reachable from env through dependsOn (not env itself unless on a cycle). */
function reachable(env: EnvironmentResource, lookup: LookupEnvironment): Set<string> {
  const seen = new Set<string>();
  const queue = [...env.spec.dependsOn];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (seen.has(name)) continue;
    seen.add(name);
    queue.push(...(lookup(name)?.spec.dependsOn ?? []));
  }
  return seen;
}

/** `--unit` names after qualification: per selected environment, the units it runs. */
export type UnitsByEnvironment = Map<string, string[]>;

/**
 * `--unit`/`--units` names of a multi-environment command, as per-environment lists. `ENV/UNIT`
 * names a unit of one environment, which must be selected (else NYL-USAGE); a plain `UNIT` names
 * it in every selected environment and must exist in each (else NYL-UNIT-UNKNOWN naming the
 * environments without it). `unitsOf` gives an environment's units (its ownership set). Returns
 * undefined when no unit is named; an environment named by no unit option gets an empty list
 * when others are named (it runs no unit: `--unit` limits the run to the units named).
 */
export function unitsByEnvironment(
  selected: readonly string[],
  units: readonly string[],
  unitsOf: (env: string) => ReadonlySet<string>,
): UnitsByEnvironment | undefined {
  if (units.length === 0) return undefined;
  const out = qualifiedUnits(selected, units);
  checkUnitsExist(out, unitsOf);
  return out;
}

/**
 * The syntactic half of unitsByEnvironment: `ENV/UNIT` and `UNIT` names spread over the selected
 * environments (each list in the order given, without repeats), without checking that the units
 * exist. A single-environment command uses it to accept `--unit ENV/UNIT` of its environment.
 */
export function qualifiedUnits(selected: readonly string[], units: readonly string[]): UnitsByEnvironment {
  const out: UnitsByEnvironment = new Map(selected.map((env) => [env, []]));
  const add = (env: string, unit: string): void => {
    const list = out.get(env)!;
    if (!list.includes(unit)) list.push(unit);
  };
  for (const name of units) {
    const slash = name.indexOf('/');
    if (slash < 0) {
      for (const env of selected) add(env, name);
      continue;
    }
    const [env, unit] = [name.slice(0, slash), name.slice(slash + 1)];
    if (env === '' || unit === '' || unit.includes('/')) {
      fail('NYL-USAGE', `--unit ${name} is neither UNIT nor ENV/UNIT`, {
        fix: 'pass --unit <unit> for every selected environment, or --unit <env>/<unit> for one of them',
      });
    }
    if (!out.has(env)) {
      fail('NYL-USAGE', `--unit ${name} names environment ${env}, which this command does not select`, {
        fix: `pass --unit with a selected environment (${selected.join(', ')}), such as --unit ${selected[0]}/${unit}, or select ${env} too`,
      });
    }
    add(env, unit);
  }
  return out;
}

function checkUnitsExist(byEnv: UnitsByEnvironment, unitsOf: (env: string) => ReadonlySet<string>): void {
  const missing = new Map<string, string[]>();
  for (const [env, units] of byEnv) {
    const known = unitsOf(env);
    for (const unit of units) if (!known.has(unit)) missing.set(unit, [...(missing.get(unit) ?? []), env]);
  }
  if (missing.size === 0) return;
  const sorted = new Map([...missing].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const where = [...sorted].map(([unit, envs]) => `${unit} (not in ${envs.join(', ')})`);
  const [unit, envs] = [...sorted][0]!;
  fail('NYL-UNIT-UNKNOWN', `no unit ${where.join('; ')}`, {
    env: envs[0],
    // A unit that some selected environment has is no typo: only a name none has gets a guess.
    ...([...byEnv.keys()].some((env) => unitsOf(env).has(unit)) ? {} : { guess: closest(unit, unitsOf(envs[0]!)) }),
    units: [...sorted.keys()],
    environments: Object.fromEntries(sorted),
    fix: `pass --unit <env>/${unit} for only the selected environments that have ${unit}, or check the unit name`,
  });
}
