/**
 * Validation rules of the source format.
 *
 * Two layers live here: field rules (names, Git branch names, ref prefixes, relative paths,
 * environment variable names), which schema.ts attaches to string fields so that each problem is
 * reported at its own JSON pointer; and cross-resource checks over the typed resources of a whole
 * project (duplicates, unknown names, dependency cycles), which need every file loaded first.
 * Nothing here reads files: locations come from a `Locate` function the loader passes in.
 */
import { type Diagnostic, type SourceLocation, diagnostic } from '../errors/diagnostic';
import { findCycles } from './graph';
import type {
  EnvironmentGroupResource,
  EnvironmentResource,
  GitRepositoryResource,
  Origin,
  StateSpec,
  UnitResource,
} from './types';

/** A field rule: a problem with its fix, or undefined when the value is fine. */
export type Rule = (value: string) => { message: string; fix: string } | undefined;

export const NAME_PATTERN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
export const ENV_VAR_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const nameRule: Rule = (value) =>
  NAME_PATTERN.test(value)
    ? undefined
    : {
        message: `invalid name "${value}"`,
        fix:
          'use 1 to 63 lowercase letters, digits and "-", starting and ending with a letter or digit: ' +
          'names become Git ref and state path components, so nothing else is safe in every Git host and file system',
      };

export const envVarNameRule: Rule = (value) => {
  if (!ENV_VAR_PATTERN.test(value)) {
    return {
      message: `invalid environment variable name "${value}"`,
      fix: 'use letters, digits and "_", not starting with a digit',
    };
  }
  if (value.startsWith('NYL_')) {
    return {
      message: `environment variable ${value} is reserved`,
      fix: 'names starting with NYL_ are set by Nyl for the process (NYL_OUTPUTS, NYL_ENVIRONMENT, ...); pick another name',
    };
  }
  return undefined;
};

/** A path inside the source or state tree: relative, not escaping its root. */
export const relativePathRule: Rule = (value) => {
  const problem = relativePathProblem(value);
  return problem === undefined
    ? undefined
    : { message: `invalid path "${value}": ${problem}`, fix: 'write a path relative to the project root (e.g. infra/network), without ".." segments' };
};

/** A branch name by the rules of `git check-ref-format --branch`. */
export const branchNameRule: Rule = (value) => {
  const problem = refNameProblem(value);
  return problem === undefined
    ? undefined
    : { message: `invalid branch name "${value}": ${problem}`, fix: 'use a valid Git branch name, e.g. nyl/dev/desired' };
};

export const refPrefixRule: Rule = (value) => {
  let problem: string | undefined;
  if (!value.startsWith('refs/')) problem = 'it must start with refs/';
  else if (!value.endsWith('/')) problem = 'it must end with /';
  else problem = refNameProblem(`${value}x`);
  return problem === undefined
    ? undefined
    : { message: `invalid coordinationRefPrefix "${value}": ${problem}`, fix: 'use a ref namespace such as refs/nyl/ or refs/heads/nyl-run/' };
};

export function relativePathProblem(value: string): string | undefined {
  if (value === '') return 'it is empty';
  if (value.startsWith('/') || /^[A-Za-z]:/.test(value)) return 'it is absolute';
  if (value.includes('\\')) return 'it contains a backslash; use /';
  if (value.split('/').includes('..')) return 'it contains ".."';
  return undefined;
}

/** The rules of git check-ref-format (with --allow-onelevel), as one problem sentence. */
export function refNameProblem(value: string): string | undefined {
  if (value === '') return 'it is empty';
  if (value === '@') return 'it is "@"';
  if (value.startsWith('-')) return 'it starts with "-"';
  if (value.startsWith('/') || value.endsWith('/')) return 'it starts or ends with "/"';
  if (value.includes('//')) return 'it contains "//"';
  if (value.includes('..')) return 'it contains ".."';
  if (value.includes('@{')) return 'it contains "@{"';
  if (value.endsWith('.')) return 'it ends with "."';
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(value)) return 'it contains a space, a control character or one of ~^:?*[\\';
  for (const component of value.split('/')) {
    if (component.startsWith('.')) return `component "${component}" starts with "."`;
    if (component.endsWith('.lock')) return `component "${component}" ends with ".lock"`;
  }
  return undefined;
}

/** The closest candidate within a small edit distance, for "did you mean" hints. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      next.push(Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + cost));
    }
    row = next;
  }
  return row[b.length]!;
}

/** Maps a pointer inside a resource document to file, line and column. */
export type Locate = (origin: Origin, pointer: string) => SourceLocation;

export const originLocate: Locate = (origin, pointer) => ({ file: origin.file, line: origin.line, pointer });

export function sourceError(location: SourceLocation, message: string, fix: string, units?: string[]): Diagnostic {
  return diagnostic('NYL-SOURCE-INVALID', 'error', message, { location, fix, ...(units ? { units } : {}) });
}

export interface ProjectResources {
  environments: EnvironmentResource[];
  repositories: GitRepositoryResource[];
  groups: EnvironmentGroupResource[];
  units: UnitResource[];
}

/** Names declared by documents that failed validation: existing, so not reported as unknown again. */
export interface DeclaredNames {
  environments: ReadonlySet<string>;
  repositories: ReadonlySet<string>;
  units: ReadonlySet<string>;
}

const NO_NAMES: DeclaredNames = { environments: new Set(), repositories: new Set(), units: new Set() };

interface Named {
  kind: string;
  name: string;
  origin: Origin;
}

/** Cross-resource checks of a whole project; returns every problem found, in source order. */
export function validateProject(
  resources: ProjectResources,
  locate: Locate = originLocate,
  invalid: DeclaredNames = NO_NAMES,
): Diagnostic[] {
  const out: Diagnostic[] = [];
  const units = firstByName(resources.units, 'unit', 'unit names are unique across Command, Terraform, OpenTofu and OciImage', locate, out);
  const environments = firstByName(resources.environments, 'environment', 'environment names are unique in a project', locate, out);
  const repositories = firstByName(resources.repositories, 'GitRepository', 'GitRepository names are unique in a project', locate, out);
  firstByName(resources.groups, 'EnvironmentGroup', 'EnvironmentGroup names are unique in a project', locate, out);

  const unitNames = union(units.keys(), invalid.units);
  const envNames = union(environments.keys(), invalid.environments);
  const repoNames = union(repositories.keys(), invalid.repositories);

  for (const unit of units.values()) {
    unit.declaredDependsOn.forEach((dep, i) => {
      if (unitNames.has(dep)) return;
      out.push(
        unknownName(locate(unit.origin, `/spec/dependsOn/${i}`), `unit ${unit.name} depends on unknown unit "${dep}"`, dep, 'unit', unitNames, [unit.name]),
      );
    });
    for (const ref of unit.references) {
      if (unitNames.has(ref.unit)) continue;
      out.push(
        unknownName(
          locate(unit.origin, `/spec${ref.pointer}`),
          `unit ${unit.name} references outputs of unknown unit "${ref.unit}"`,
          ref.unit,
          'unit',
          unitNames,
          [unit.name],
        ),
      );
    }
  }
  out.push(...unitCycles(units, locate));

  for (const env of environments.values()) {
    env.spec.dependsOn.forEach((dep, i) => {
      if (envNames.has(dep)) return;
      out.push(unknownName(locate(env.origin, `/spec/dependsOn/${i}`), `environment ${env.name} depends on unknown environment "${dep}"`, dep, 'Environment', envNames));
    });
    checkRepositoryRef(env.spec.state, env, '/spec/state', repoNames, locate, out);
  }
  out.push(...environmentCycles(environments, locate));

  for (const group of resources.groups) {
    (group.spec.environments ?? []).forEach((name, i) => {
      if (envNames.has(name)) return;
      out.push(unknownName(locate(group.origin, `/spec/environments/${i}`), `group ${group.name} lists unknown environment "${name}"`, name, 'Environment', envNames));
    });
    checkRepositoryRef(group.spec.shared?.state, group, '/spec/shared/state', repoNames, locate, out);
  }
  return out;
}

function union(a: Iterable<string>, b: Iterable<string>): Set<string> {
  return new Set([...a, ...b]);
}

function where(location: SourceLocation): string {
  return location.line === undefined ? location.file : `${location.file}:${location.line}`;
}

/** Keeps the first resource of each name and reports every later one with both locations. */
function firstByName<T extends Named>(list: T[], what: string, rule: string, locate: Locate, out: Diagnostic[]): Map<string, T> {
  const first = new Map<string, T>();
  for (const r of list) {
    const earlier = first.get(r.name);
    if (!earlier) {
      first.set(r.name, r);
      continue;
    }
    const before = locate(earlier.origin, '/metadata/name');
    const here = locate(r.origin, '/metadata/name');
    const d = sourceError(
      here,
      `duplicate ${what} name "${r.name}": ${earlier.kind} at ${where(before)} and ${r.kind} at ${where(here)}`,
      `rename or remove one of them; ${rule}`,
      what === 'unit' ? [r.name] : undefined,
    );
    d.data = { locations: [before, here] };
    out.push(d);
  }
  return first;
}

function unknownName(
  location: SourceLocation,
  message: string,
  name: string,
  kind: string,
  known: ReadonlySet<string>,
  units?: string[],
): Diagnostic {
  const guess = closest(name, known);
  const list = [...known].sort();
  const fix =
    (guess ? `did you mean ${guess}? ` : '') +
    `declare a ${kind} named ${name} or correct the name; known: ${list.length > 0 ? list.join(', ') : '(none)'}`;
  return sourceError(location, message, fix, units);
}

function checkRepositoryRef(
  state: StateSpec | undefined,
  owner: Named,
  base: string,
  repositories: ReadonlySet<string>,
  locate: Locate,
  out: Diagnostic[],
): void {
  const ref = state?.repositoryRef;
  if (ref === undefined || repositories.has(ref)) return;
  out.push(
    unknownName(
      locate(owner.origin, `${base}/repositoryRef`),
      `${owner.kind} ${owner.name} names unknown GitRepository "${ref}" in repositoryRef`,
      ref,
      'GitRepository',
      repositories,
    ),
  );
}

function unitCycles(units: Map<string, UnitResource>, locate: Locate): Diagnostic[] {
  return findCycles(units).map((cycle) => {
    const [first, second] = [cycle[0]!, cycle[1]!];
    const unit = units.get(first)!;
    const declared = unit.declaredDependsOn.indexOf(second);
    const ref = unit.references.find((r) => r.unit === second);
    const pointer = declared >= 0 ? `/spec/dependsOn/${declared}` : ref ? `/spec${ref.pointer}` : '/spec/dependsOn';
    return sourceError(
      locate(unit.origin, pointer),
      `dependency cycle: ${cycle.join(' -> ')}`,
      'remove one of these dependencies (a dependsOn entry or a ${{ units.NAME.outputs.KEY }} reference): a unit runs only after what it depends on, so a cycle can never start',
      [...new Set(cycle)],
    );
  });
}

function environmentCycles(environments: Map<string, EnvironmentResource>, locate: Locate): Diagnostic[] {
  const graph = new Map([...environments].map(([name, env]) => [name, { dependsOn: env.spec.dependsOn }]));
  return findCycles(graph).map((cycle) => {
    const env = environments.get(cycle[0]!)!;
    const index = env.spec.dependsOn.indexOf(cycle[1]!);
    return sourceError(
      locate(env.origin, `/spec/dependsOn/${index}`),
      `environment dependency cycle: ${cycle.join(' -> ')}`,
      'remove one of these environment dependsOn entries: a multi-environment run orders environments by them',
    );
  });
}
