/**
 * The schema of every source resource, in the DSL of src/util/schema.ts: one description serves
 * both validation and the published JSON Schema (`sourceJsonSchema()`, draft 2020-12), so that
 * the two can never disagree.
 *
 * The kinds of the source model (Project, Environment, GitRepository, EnvironmentGroup) are
 * declared here. Unit kinds are not: each unit kind's own spec fields live next to its driver
 * (src/drivers/<kind>/spec.ts) and come from the driver registry; this module adds the fields
 * every unit shares.
 */
import { BUILTIN_KINDS, UNIT_KINDS, type UnitKind } from '../drivers/kinds';
import { GRACE_BOUNDS, LEASE_BOUNDS, SKEW_MARGIN_BOUNDS, TIMEOUT_BOUNDS } from '../util/duration';
import { branchField, nameField, nameRule, refPrefixRule, relativePathField } from '../util/fields';
import {
  type JsonSchemaObject,
  type ObjectSchema,
  type Rule,
  type Schema,
  boolean,
  constant,
  duration,
  json,
  list,
  object,
  oneOf,
  required,
  string,
  stringMap,
  toJsonSchema,
} from '../util/schema';

export const API_VERSION = 'nyl.io/v1';

// --- the source format ----------------------------------------------------------------------

const matchLabels = object({ matchLabels: required(stringMap({ description: 'labels that must all be equal' })) });

/** Where an environment's state lives (an Environment's or an EnvironmentGroup's `state`). */
export const stateSchema = object(
  {
    repository: object({
      repoURL: required(string({ nonEmpty: true, description: 'where state is read (and written, without publishURL)' })),
      publishURL: string({ nonEmpty: true, description: 'where state is pushed' }),
    }),
    repositoryRef: nameField('name of a GitRepository holding the state'),
    desiredRef: branchField('desired state branch; default nyl/<env>/desired'),
    observedRef: branchField('observed state branch; default nyl/<env>/observed'),
    path: relativePathField("this environment's directory on shared state refs"),
    coordinationRefPrefix: string({
      rule: refPrefixRule,
      pattern: '^refs/.*/$',
      description: 'namespace of lease, run, signal and evidence refs; default refs/nyl/',
    }),
  },
  { atMostOne: [['repository', 'repositoryRef']] },
);

/** The fields of every unit's spec, whatever its kind. */
const UNIT_COMMON: Record<string, Schema> = {
  dependsOn: list(string({ nonEmpty: true }), { description: 'unit names this unit runs after' }),
  recovery: oneOf(['converge', 'manual'], 'converge: safe to run again; manual: an uncertain or drifted unit waits for an operator'),
  approval: object({ required: boolean(), requireDigest: boolean() }),
  deletionPolicy: oneOf(['Teardown', 'Retain', 'Release'], 'what happens when the unit leaves the ownership set'),
  timeout: duration(TIMEOUT_BOUNDS, 'deadline of one execution'),
  terminationGracePeriod: duration(
    GRACE_BOUNDS,
    "how long the unit's tools may take to stop after SIGTERM (cancellation, timeout, or the death of Nyl) before SIGKILL; default 30s",
  ),
  inputs: list(relativePathField('glob of source files (relative to the project root) whose Git object ids enter the execution key')),
  triggers: list(string({ nonEmpty: true }), { description: 'units whose every execution makes this unit run again' }),
};

/** The spec schema of a unit kind: the common fields, then the kind's own from its driver. */
function unitSpec(kind: UnitKind): ObjectSchema {
  const own = BUILTIN_KINDS.descriptor(kind)?.spec;
  if (!own) throw new Error(`the driver registry has no spec schema for the unit kind ${kind}`);
  const clash = Object.keys(own.fields).filter((f) => f in UNIT_COMMON);
  if (clash.length > 0) throw new Error(`the spec schema of ${kind} redeclares common unit fields: ${clash.join(', ')}`);
  const groups = { ...(own.exactlyOne ? { exactlyOne: own.exactlyOne } : {}), ...(own.atMostOne ? { atMostOne: own.atMostOne } : {}) };
  return object({ ...UNIT_COMMON, ...own.fields }, { ...(own.description ? { description: own.description } : {}), ...groups });
}

/**
 * An EnvironmentTemplate's namePattern: a name (src/util/fields.ts) with exactly one `*` in
 * place of one or more of its characters.
 */
const namePatternRule: Rule = (value) => {
  const stars = value.split('*').length - 1;
  if (stars !== 1) {
    return {
      message: `invalid namePattern "${value}": it has ${stars === 0 ? 'no' : stars} "*"`,
      fix: 'write exactly one "*" for the part that varies between instances, e.g. pr-*',
    };
  }
  if (nameRule(value.replace('*', '0')) === undefined) return undefined;
  return {
    message: `invalid namePattern "${value}": its instances would not be valid names`,
    fix: 'use lowercase letters, digits and "-" around the "*" (instance names become Git ref and state path components), e.g. pr-*',
  };
};

const environmentSpec = object({
  source: object({ ref: string({ nonEmpty: true, description: 'branch, tag or commit to render; default HEAD' }) }),
  state: stateSchema,
  unitSelector: matchLabels,
  values: json('object', 'available to rendering as env.values'),
  driftRepair: oneOf(['converge', 'manual']),
  dependsOn: list(string({ nonEmpty: true }), { description: 'environment names' }),
  lease: object({
    duration: duration(LEASE_BOUNDS, 'lease deadline, renewed every third of it while a run lives; default 5m'),
    skewMargin: duration(
      SKEW_MARGIN_BOUNDS,
      'how far clocks may disagree: a lease is taken over only this long after its deadline, and a record stamped further in the future is reported as clock skew; default a tenth of the duration, at most 30s',
    ),
  }),
});

/** The spec schemas of the source model's own kinds; their TypeScript types are Infer of these (./types.ts). */
export const SOURCE_KINDS = {
  Project: object({ include: list(relativePathField('glob of resource files, relative to the project root')) }),
  Environment: environmentSpec,
  GitRepository: object({
    url: required(string({ nonEmpty: true })),
    publishURL: string({ nonEmpty: true }),
  }),
  EnvironmentGroup: object(
    {
      selector: matchLabels,
      environments: list(string({ nonEmpty: true })),
      shared: object({ state: stateSchema }),
    },
    { exactlyOne: [['selector', 'environments']] },
  ),
  EnvironmentTemplate: object(
    {
      namePattern: required(
        string({ rule: namePatternRule, description: 'the names of its instances: a name with one "*" (one or more characters), e.g. pr-*' }),
      ),
      environment: object(environmentSpec.fields, {
        description: 'the Environment spec of every instance; its strings may hold ${{ instance.name }} and ${{ instance.suffix }} (the part the "*" matched)',
      }),
    },
    { description: 'Environments made on demand: `-e NAME` matching namePattern names an instance, which no -l or -g selects' },
  ),
} as const satisfies Record<string, ObjectSchema>;

export type ResourceKind = keyof typeof SOURCE_KINDS | UnitKind;

/** The spec schema of every kind: the source model's kinds, then the unit kinds in registry order. */
export const SPEC_SCHEMAS: Readonly<Record<ResourceKind, ObjectSchema>> = {
  ...SOURCE_KINDS,
  ...(Object.fromEntries(UNIT_KINDS.map((kind) => [kind, unitSpec(kind)])) as Record<UnitKind, ObjectSchema>),
};

export const RESOURCE_KINDS = Object.keys(SPEC_SCHEMAS) as ResourceKind[];

/** Kinds whose spec has nothing required, so that `spec` itself may be left out. */
const SPEC_OPTIONAL: ReadonlySet<ResourceKind> = new Set<ResourceKind>(['Project', 'Environment']);

export function isResourceKind(value: unknown): value is ResourceKind {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(SPEC_SCHEMAS, value);
}

/** The schema of a whole document of one kind. */
export function resourceSchema(kind: ResourceKind): ObjectSchema {
  const isNamed = kind !== 'Project';
  return object({
    apiVersion: required(constant(API_VERSION)),
    kind: required(constant(kind)),
    metadata: required(
      object({
        name: required(isNamed ? nameField('becomes a Git ref and path component') : string({ nonEmpty: true })),
        labels: stringMap(),
      }),
    ),
    spec: SPEC_OPTIONAL.has(kind) ? SPEC_SCHEMAS[kind] : required(SPEC_SCHEMAS[kind]),
  });
}

// --- JSON Schema ----------------------------------------------------------------------------

/**
 * The JSON Schema (draft 2020-12) of one source document, any kind.
 *
 * The document's kind picks its definition (`if` kind is K `then` K's), rather than a oneOf of
 * every kind: a oneOf fails every branch at once, and a validator or an editor then reports each
 * branch's errors, or guesses a branch, so that "unknown field dependsOnn" drowns among "kind
 * must be Terraform". With `if`, only the document's own kind is applied, and an unknown kind is
 * one error at /kind.
 */
export function sourceJsonSchema(): JsonSchemaObject {
  const defs: Record<string, JsonSchemaObject> = {};
  for (const kind of RESOURCE_KINDS) defs[kind] = { title: kind, ...toJsonSchema(resourceSchema(kind)) };
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://nyl.io/schemas/v1/source.json',
    title: 'Nyl source resource',
    description: 'One YAML document of nyl.yaml or of a file it includes.',
    type: 'object',
    required: ['kind'],
    properties: { kind: { enum: [...RESOURCE_KINDS], description: 'The kind of the resource; it picks the fields of the document.' } },
    allOf: RESOURCE_KINDS.map((kind) => ({
      if: { properties: { kind: { const: kind } }, required: ['kind'] },
      then: { $ref: `#/$defs/${kind}` },
    })),
    $defs: defs,
  };
}
