/**
 * Validation rules of the source format beyond the schema of one field.
 *
 * Field rules (names, Git branch names, ref prefixes, relative paths, environment variable names)
 * live in src/util/fields.ts, which the schemas attach to string fields so that each problem is
 * reported at its own JSON pointer. Here: the NUL byte and __proto__ key checks of whole documents, and the
 * cross-resource checks over the typed resources of a whole project (duplicates, unknown names,
 * dependency cycles), which need every file loaded first. Nothing here reads files: locations
 * come from a `Locate` function the loader passes in.
 */
import { UNIT_KINDS } from '../drivers/kinds';
import { type Diagnostic, type SourceLocation, diagnostic } from '../errors/diagnostic';
import { closest } from '../util/closest';
import { type SchemaProblem, childPointer } from '../util/schema';
import { findCycles, triggersOf } from './graph';
import { patternSuffix, patternsOverlap } from './name-pattern';
import type {
  EnvironmentGroupResource,
  EnvironmentResource,
  EnvironmentTemplateResource,
  GitRepositoryResource,
  Origin,
  StateSpec,
  UnitResource,
} from './types';

/**
 * Every string of a document, key or value, that holds a NUL byte. No process can take one in
 * an argument or environment variable, Git cannot store one in a path, and it cuts C strings
 * short: refused in source, wherever it is, so that it never reaches a run.
 */
export function nulBytes(value: unknown, pointer = ''): SchemaProblem[] {
  const out: SchemaProblem[] = [];
  const visit = (v: unknown, p: string): void => {
    if (typeof v === 'string') {
      if (v.includes('\0')) out.push(nulProblem(p, 'value'));
    } else if (Array.isArray(v)) {
      v.forEach((item: unknown, i) => visit(item, childPointer(p, i)));
    } else if (typeof v === 'object' && v !== null) {
      for (const [key, item] of Object.entries(v)) {
        const child = childPointer(p, key);
        if (key.includes('\0')) out.push(nulProblem(child, 'key'));
        visit(item, child);
      }
    }
  };
  visit(value, pointer);
  return out;
}

function nulProblem(pointer: string, what: 'key' | 'value'): SchemaProblem {
  return {
    pointer,
    message: `the ${what} at ${pointer === '' ? 'the document' : pointer} contains a NUL byte`,
    fix: `remove the NUL byte (\\0) from the ${what}: no process argument, environment variable or Git path can hold one`,
  };
}

/**
 * Every mapping key `__proto__` of a document. The YAML parser keeps it as an ordinary key, but
 * JavaScript code that copies a mapping by assignment sets the copy's prototype instead, so the
 * entry would vanish on its way to a process or to state (`env: {__proto__: x}` was accepted and
 * silently dropped). Refused wherever it is, like a NUL byte.
 */
export function prototypeKeys(value: unknown, pointer = ''): SchemaProblem[] {
  const out: SchemaProblem[] = [];
  const visit = (v: unknown, p: string): void => {
    if (Array.isArray(v)) return v.forEach((item: unknown, i) => visit(item, childPointer(p, i)));
    if (typeof v !== 'object' || v === null) return;
    for (const [key, item] of Object.entries(v)) {
      const child = childPointer(p, key);
      if (key === '__proto__') {
        out.push({
          pointer: child,
          message: `the key __proto__ at ${child} is refused`,
          fix: 'rename the key: JavaScript reads __proto__ as the prototype of a mapping, so Nyl could not pass it on',
        });
      }
      visit(item, child);
    }
  };
  visit(value, pointer);
  return out;
}

/** "Command, Terraform, OpenTofu and OciImage": every unit kind, for messages. */
function unitKindList(): string {
  const kinds: readonly string[] = UNIT_KINDS;
  return kinds.length < 2 ? kinds.join('') : `${kinds.slice(0, -1).join(', ')} and ${kinds[kinds.length - 1]!}`;
}

/** Maps a pointer inside a resource document to file, line and column. */
type Locate = (origin: Origin, pointer: string) => SourceLocation;

const originLocate: Locate = (origin, pointer) => ({ file: origin.file, line: origin.line, pointer });

export function sourceError(location: SourceLocation, message: string, fix: string, units?: string[]): Diagnostic {
  return diagnostic('NYL-SOURCE-INVALID', 'error', message, { location, fix, ...(units ? { units } : {}) });
}

export interface ProjectResources {
  environments: EnvironmentResource[];
  /** Absent: none. */
  templates?: EnvironmentTemplateResource[];
  repositories: GitRepositoryResource[];
  groups: EnvironmentGroupResource[];
  units: UnitResource[];
}

/** Names declared by documents that failed validation: existing, so not reported as unknown again. */
interface DeclaredNames {
  environments: ReadonlySet<string>;
  repositories: ReadonlySet<string>;
  units: ReadonlySet<string>;
  /** Some source could not be read: it may declare any name, so none is reported unknown. */
  incomplete?: boolean;
}

const NO_NAMES: DeclaredNames = { environments: new Set(), repositories: new Set(), units: new Set() };

interface Named {
  kind: string;
  name: string;
  origin: Origin;
}

/** Cross-resource checks of a whole project; returns every problem found. */
export function validateProject(resources: ProjectResources, locate: Locate = originLocate, invalid: DeclaredNames = NO_NAMES): Diagnostic[] {
  const out: Diagnostic[] = [];
  const unique: UniqueResources = {
    units: firstByName(resources.units, 'unit', `unit names are unique across ${unitKindList()}`, locate, out),
    environments: firstByName(resources.environments, 'environment', 'environment names are unique in a project', locate, out),
    repositories: firstByName(resources.repositories, 'GitRepository', 'GitRepository names are unique in a project', locate, out),
    groups: resources.groups,
  };
  firstByName(resources.groups, 'EnvironmentGroup', 'EnvironmentGroup names are unique in a project', locate, out);
  const templates = firstByName(resources.templates ?? [], 'EnvironmentTemplate', 'EnvironmentTemplate names are unique in a project', locate, out);
  out.push(...templateClashes([...templates.values()], resources.environments, locate));
  // Why: an unknown name is then no finding of its own, only a consequence of what was not read.
  if (!invalid.incomplete) out.push(...unknownNames(unique, invalid, locate), ...templateUnknownNames([...templates.values()], unique, invalid, locate));
  out.push(...unitCycles(unique.units, locate));
  out.push(...environmentCycles(unique.environments, locate));
  return out;
}

/** The first resource of each name, which references resolve to. */
interface UniqueResources {
  units: Map<string, UnitResource>;
  environments: Map<string, EnvironmentResource>;
  repositories: Map<string, GitRepositoryResource>;
  groups: EnvironmentGroupResource[];
}

/** Every reference to a unit, environment or GitRepository that nothing declares. */
function unknownNames(unique: UniqueResources, invalid: DeclaredNames, locate: Locate): Diagnostic[] {
  const out: Diagnostic[] = [];
  const unitNames = union(unique.units.keys(), invalid.units);
  const envNames = union(unique.environments.keys(), invalid.environments);
  const repoNames = union(unique.repositories.keys(), invalid.repositories);
  for (const unit of unique.units.values()) {
    unit.declaredDependsOn.forEach((dep, i) => {
      if (unitNames.has(dep)) return;
      out.push(
        unknownName(locate(unit.origin, `/spec/dependsOn/${i}`), `unit ${unit.name} depends on unknown unit "${dep}"`, dep, 'unit', unitNames, {
          name: unit.name,
          unit: true,
        }),
      );
    });
    triggersOf(unit).forEach((name, i) => {
      if (unitNames.has(name)) return;
      out.push(
        unknownName(locate(unit.origin, `/spec/triggers/${i}`), `unit ${unit.name} is triggered by unknown unit "${name}"`, name, 'unit', unitNames, {
          name: unit.name,
          unit: true,
        }),
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
          { name: unit.name, unit: true },
        ),
      );
    }
  }
  for (const env of unique.environments.values()) {
    env.spec.dependsOn.forEach((dep, i) => {
      if (envNames.has(dep)) return;
      out.push(
        unknownName(
          locate(env.origin, `/spec/dependsOn/${i}`),
          `environment ${env.name} depends on unknown environment "${dep}"`,
          dep,
          'Environment',
          envNames,
          env,
        ),
      );
    });
    checkRepositoryRef(env.spec.state, env, '/spec/state', repoNames, locate, out);
  }
  for (const group of unique.groups) {
    (group.spec.environments ?? []).forEach((name, i) => {
      if (envNames.has(name)) return;
      out.push(
        unknownName(locate(group.origin, `/spec/environments/${i}`), `group ${group.name} lists unknown environment "${name}"`, name, 'Environment', envNames),
      );
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

/**
 * `self`: the resource that holds the reference when it names its own kind (a unit naming a unit,
 * an environment an environment): never offered as what it meant (a unit b naming a is no typo
 * of b's own name). A unit's name is also the diagnostic's unit.
 */
function unknownName(
  location: SourceLocation,
  message: string,
  name: string,
  kind: string,
  known: ReadonlySet<string>,
  self?: { name: string; unit?: boolean },
): Diagnostic {
  const guess = closest(
    name,
    [...known].filter((k) => k !== self?.name),
  );
  const list = [...known].sort();
  const fix =
    (guess ? `did you mean ${guess}? ` : '') + `declare a ${kind} named ${name} or correct the name; known: ${list.length > 0 ? list.join(', ') : '(none)'}`;
  return sourceError(location, message, fix, self?.unit ? [self.name] : undefined);
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
    const trigger = triggersOf(unit).indexOf(second);
    const pointer =
      declared >= 0 ? `/spec/dependsOn/${declared}` : trigger >= 0 ? `/spec/triggers/${trigger}` : ref ? `/spec${ref.pointer}` : '/spec/dependsOn';
    return sourceError(
      locate(unit.origin, pointer),
      `dependency cycle: ${cycle.join(' -> ')}`,
      'remove one of these dependencies (a dependsOn or triggers entry, or a ${{ units.NAME.outputs.KEY }} reference): a unit runs only after what it depends on, so a cycle can never start',
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

/**
 * Names that would name two environments: two templates whose patterns some name matches, or a
 * declared Environment whose name a template's pattern matches (`-e` could not tell which).
 */
function templateClashes(templates: EnvironmentTemplateResource[], environments: EnvironmentResource[], locate: Locate): Diagnostic[] {
  const out: Diagnostic[] = [];
  templates.forEach((t, i) => {
    const here = locate(t.origin, '/spec/namePattern');
    for (const earlier of templates.slice(0, i)) {
      if (!patternsOverlap(earlier.spec.namePattern, t.spec.namePattern)) continue;
      const before = locate(earlier.origin, '/spec/namePattern');
      out.push(
        sourceError(
          here,
          `EnvironmentTemplate ${t.name}: namePattern ${t.spec.namePattern} and namePattern ${earlier.spec.namePattern} of EnvironmentTemplate ${earlier.name} at ${where(before)} can match the same name`,
          'make the patterns disjoint (e.g. pr-* and review-*): an environment name must name one template',
        ),
      );
    }
  });
  for (const env of environments) {
    const t = templates.find((x) => patternSuffix(x.spec.namePattern, env.name) !== undefined);
    if (!t) continue;
    const pattern = locate(t.origin, '/spec/namePattern');
    out.push(
      sourceError(
        locate(env.origin, '/metadata/name'),
        `Environment ${env.name} matches namePattern ${t.spec.namePattern} of EnvironmentTemplate ${t.name} at ${where(pattern)}`,
        `rename the Environment or narrow the pattern: -e ${env.name} must name one environment, a declared one or an instance`,
      ),
    );
  }
  return out;
}

/** A template's environment dependsOn and repositoryRef name declared resources, like an Environment's. */
function templateUnknownNames(templates: EnvironmentTemplateResource[], unique: UniqueResources, invalid: DeclaredNames, locate: Locate): Diagnostic[] {
  const out: Diagnostic[] = [];
  const envNames = union(unique.environments.keys(), invalid.environments);
  const repoNames = union(unique.repositories.keys(), invalid.repositories);
  for (const t of templates) {
    const spec = t.spec.environment;
    const dependsOn = Array.isArray(spec.dependsOn) ? spec.dependsOn : [];
    dependsOn.forEach((dep: unknown, i) => {
      if (typeof dep !== 'string' || dep.includes('${{') || envNames.has(dep)) return;
      out.push(
        unknownName(
          locate(t.origin, `/spec/environment/dependsOn/${i}`),
          `EnvironmentTemplate ${t.name} depends on unknown environment "${dep}"`,
          dep,
          'Environment',
          envNames,
        ),
      );
    });
    const state = typeof spec.state === 'object' && spec.state !== null ? (spec.state as StateSpec) : undefined;
    if (state?.repositoryRef?.includes('${{')) continue;
    checkRepositoryRef(state, t, '/spec/environment/state', repoNames, locate, out);
  }
  return out;
}
