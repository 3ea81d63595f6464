/**
 * EnvironmentTemplate instances: which Environment `-e NAME` names, for every command.
 *
 * A declared Environment wins; otherwise a name that matches exactly one template's namePattern
 * (validation refuses overlapping patterns, and an Environment whose name matches one) names an
 * instance: an Environment built from the template's `spec.environment` and `metadata.labels`
 * with `${{ instance.name }}` and `${{ instance.suffix }}` resolved, then validated and
 * defaulted like a declared one (state refs nyl/<instance>/desired ...). Its origin and field
 * locations are the template's, so errors name the template's file and line.
 *
 * Instances exist only while a command names them: they are not in Project.environments, so no
 * label (`-l`) or group (`-g`) selection, group membership or group shared state ever sees them
 * (isInstance tells one apart). Pure: no I/O.
 */
import { type Diagnostic, NylError, fail } from '../errors/diagnostic';
import { closest } from '../util/closest';
import { nameRule } from '../util/fields';
import { type SchemaProblem, childPointer, validateSchema } from '../util/schema';
import { patternSuffix } from './name-pattern';
import { INSTANCE_GRAMMAR, type InstanceReference, hasReference, parseTemplate, renderValue } from './references';
import { buildResource } from './resources';
import { API_VERSION, resourceSchema } from './schema';
import type { EnvironmentResource, EnvironmentTemplateResource, FieldLocations, Project } from './types';
import { sourceError } from './validate';

/** The suffix a load-time check renders a template with (a placeholder instance). */
const PLACEHOLDER_SUFFIX = '0';

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The environment `-e NAME` names: the declared Environment, else the instance of the template
 * whose namePattern matches, else undefined. Throws NYL-SOURCE-INVALID when the instance's spec
 * is invalid with these values (a suffix that makes a bad branch name), and
 * NYL-ENVIRONMENT-UNKNOWN when the name matches a pattern but is no valid environment name.
 */
export function resolveEnvironment(project: Project, name: string): EnvironmentResource | undefined {
  const declared = project.environments.get(name);
  if (declared) return declared;
  const match = templateMatching(project, name);
  if (!match) return undefined;
  const invalid = nameRule(name);
  if (invalid) {
    const suggest = validName(project, name);
    fail(
      'NYL-ENVIRONMENT-UNKNOWN',
      `${name} matches namePattern ${match.template.spec.namePattern} of EnvironmentTemplate ${match.template.name}, but ${invalid.message}: ${invalid.fix}`,
      {
        env: name,
        ...knownEnvironments(project),
        ...(suggest ? { suggest } : {}),
      },
    );
  }
  return instantiate(match.template, name, match.suffix);
}

/**
 * A valid instance name close to an invalid one, for its fix: lowercase, every other character a
 * `-`, no `-` at either end; only when a template's namePattern matches it too.
 */
function validName(project: Project, name: string): string | undefined {
  const candidate = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return !nameRule(candidate) && templateMatching(project, candidate) ? candidate : undefined;
}

/** The template whose namePattern matches a name, and the suffix its `*` matched. */
function templateMatching(project: Project, name: string): { template: EnvironmentTemplateResource; suffix: string } | undefined {
  for (const template of project.templates?.values() ?? []) {
    const suffix = patternSuffix(template.spec.namePattern, name);
    if (suffix !== undefined) return { template, suffix };
  }
  return undefined;
}

/**
 * What NYL-ENVIRONMENT-UNKNOWN lists: the declared names and the templates' patterns, sorted;
 * with the name given, the declared name closest to it (a did-you-mean).
 */
export function knownEnvironments(project: Project, name?: string): { known: string[]; patterns: string[]; guess?: string } {
  const known = [...project.environments.keys()].sort();
  const guess = name === undefined ? undefined : closest(name, known);
  return {
    known,
    patterns: [...(project.templates?.values() ?? [])].map((t) => t.spec.namePattern).sort(),
    ...(guess !== undefined && guess !== name ? { guess } : {}),
  };
}

/**
 * True for an instance of an EnvironmentTemplate. Multi-environment selection (`-l`, `-g`) and
 * group membership leave instances out: a preview environment is named one by one (`-e pr-7`).
 */
export function isInstance(env: EnvironmentResource): boolean {
  return env.instance !== undefined;
}

/** Suffixes to probe a template with: two, so that one whose name is the asker's still leaves another. */
const PROBE_SUFFIXES = ['nyl-probe-a', 'nyl-probe-b'];

/**
 * An instance of a template other than the environment `notName`, for checks of what every
 * instance would share with it (a Terraform backend, a state ref name that does not change with
 * the instance's name); undefined when the template cannot make it.
 */
export function probeInstance(template: EnvironmentTemplateResource, notName: string): EnvironmentResource | undefined {
  const suffix = PROBE_SUFFIXES.find((p) => template.spec.namePattern.replace('*', p) !== notName)!;
  try {
    return instantiate(template, template.spec.namePattern.replace('*', suffix), suffix);
  } catch {
    return undefined;
  }
}

/** Builds, validates and defaults the Environment of one instance. */
function instantiate(template: EnvironmentTemplateResource, name: string, suffix: string): EnvironmentResource {
  const document = instanceDocument(template, name, suffix);
  const problems = validateSchema(resourceSchema('Environment'), document);
  if (problems.length > 0) throw new NylError(problems.map((p) => instanceProblem(template, name, p)));
  const env = buildResource('Environment', document, template.origin, undefined, instanceLocations(template)) as EnvironmentResource;
  env.instance = { template: template.name, namePattern: template.spec.namePattern, suffix };
  return env;
}

/** The Environment document of an instance: the template's labels and environment spec, references resolved. */
function instanceDocument(template: Pick<EnvironmentTemplateResource, 'labels' | 'spec'>, name: string, suffix: string): Json {
  const resolve = (ref: InstanceReference): string => (ref.kind === 'instance.name' ? name : suffix);
  return {
    apiVersion: API_VERSION,
    kind: 'Environment',
    metadata: { name, labels: renderValue(template.labels, resolve, '/metadata/labels', INSTANCE_GRAMMAR) },
    spec: renderValue(template.spec.environment, resolve, '/spec/environment', INSTANCE_GRAMMAR),
  };
}

/** The template's pointer of an instance document's pointer: /spec/X is /spec/environment/X there. */
function templatePointer(pointer: string): string {
  return pointer.startsWith('/spec') ? `/spec/environment${pointer.slice('/spec'.length)}` : pointer;
}

/** The template's field locations, keyed by the instance's pointers (for location.ts's errors). */
function instanceLocations(template: EnvironmentTemplateResource): FieldLocations | undefined {
  const entries = Object.entries(template.locations ?? {})
    .filter(([p]) => p.startsWith('/spec/environment/'))
    .map(([p, l]) => [`/spec${p.slice('/spec/environment'.length)}`, l] as const);
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

function instanceProblem(template: EnvironmentTemplateResource, name: string, problem: SchemaProblem): Diagnostic {
  const pointer = templatePointer(problem.pointer);
  const l = template.locations?.[pointer];
  const location = { file: template.origin.file, line: l?.line ?? template.origin.line, ...(l ? { column: l.column } : {}), pointer };
  return sourceError(location, `EnvironmentTemplate ${template.name}, instance ${name}: ${problem.message}`, problem.fix);
}

/**
 * The references of a template document, checked by the instance grammar: every string of
 * metadata.labels and spec.environment that holds one (pointers, for locations), and every
 * malformed or unknown one, or one in a mapping key (problems).
 */
export function scanInstanceReferences(document: Json): { pointers: string[]; problems: SchemaProblem[] } {
  const out: { pointers: string[]; problems: SchemaProblem[] } = { pointers: [], problems: [] };
  const visit = (value: unknown, pointer: string): void => {
    if (typeof value === 'string') {
      if (!hasReference(value)) return;
      out.pointers.push(pointer);
      for (const p of parseTemplate(value, INSTANCE_GRAMMAR).problems) out.problems.push({ pointer, ...p });
    } else if (Array.isArray(value)) {
      value.forEach((v: unknown, i) => visit(v, childPointer(pointer, i)));
    } else if (isRecord(value)) {
      for (const [key, v] of Object.entries(value)) {
        const child = childPointer(pointer, key);
        if (hasReference(key))
          out.problems.push({ pointer: child, message: `a reference in the key "${key}"`, fix: 'references are allowed in values only, never in keys' });
        visit(v, child);
      }
    }
  };
  if (isRecord(document.metadata)) visit(document.metadata.labels, '/metadata/labels');
  if (isRecord(document.spec)) visit(document.spec.environment, '/spec/environment');
  return out;
}

/**
 * A template document as a placeholder instance sees it (suffix PLACEHOLDER_SUFFIX), for the
 * schema: field rules (branch names, paths, durations) then apply to what an instance writes.
 */
export function placeholderDocument(document: Json): Json {
  const spec = isRecord(document.spec) ? document.spec : {};
  const pattern = typeof spec.namePattern === 'string' && spec.namePattern.includes('*') ? spec.namePattern : 'instance-*';
  const name = pattern.replace('*', PLACEHOLDER_SUFFIX);
  const metadata = isRecord(document.metadata) ? document.metadata : undefined;
  const labels = metadata && isRecord(metadata.labels) ? metadata.labels : undefined;
  const rendered = instanceDocument(
    { labels: (labels ?? {}) as Record<string, string>, spec: { namePattern: pattern, environment: isRecord(spec.environment) ? spec.environment : {} } },
    name,
    PLACEHOLDER_SUFFIX,
  );
  return {
    ...document,
    ...(metadata ? { metadata: { ...metadata, ...(labels ? { labels: (rendered.metadata as Json).labels } : {}) } } : {}),
    ...(isRecord(document.spec)
      ? { spec: { ...spec, ...(spec.environment !== undefined && isRecord(spec.environment) ? { environment: rendered.spec } : {}) } }
      : {}),
  };
}
