/**
 * The shapes of the documents Nyl keeps in Git, in the schema DSL that validates source. Every
 * document is checked against its shape when it is read, so that a hand edit or a broken tool
 * (a misspelt field, a number where a uid belongs) is reported as damage instead of being read
 * as something else: a desired document without its `uid` would otherwise start a new
 * incarnation and run the unit again.
 *
 * The shapes list exactly the fields Nyl writes; any other field is damage, as a field of a newer
 * version would be: this version cannot know what it means. Free data (renderings, outputs) is
 * only checked to be JSON.
 */
import { boolean, constant, integer, json, list, object, oneOf, required, type Rule, type Schema, type SchemaProblem, string } from '../util/schema';
import { UNIT_FORMAT } from './unit-format';

/** A time Nyl decides on (a deadline): one that Date.parse cannot read would never pass. */
export const timeRule: Rule = (value) =>
  Number.isNaN(Date.parse(value))
    ? { message: `${JSON.stringify(value)} is not an ISO 8601 time`, fix: 'write a time such as 2026-11-30T12:00:00.000Z' }
    : undefined;

const text = () => string({ nonEmpty: true });
const time = () => string({ nonEmpty: true, rule: timeRule });

const holder = object({ name: required(text()), host: required(string()), pid: required(integer()) });

const desiredFields = {
  uid: text(),
  kind: text(),
  generation: integer({ minimum: 1 }),
  source: string(),
  rendering: json('object'),
  reads: object({ sources: json('object'), triggers: json('object'), secrets: list(json('object')) }),
  readFiles: json('object'),
  preparedFrom: string(),
  dependsOn: list(text()),
  lifecycle: required(object({ state: required(oneOf(['active', 'held', 'deleting', 'pending-teardown', 'retained'])) })),
  hold: object({ by: required(text()), reason: string(), since: required(text()), pending: string() }),
  deletion: object({
    cause: required(oneOf(['source', 'request', 'kind-change'])),
    policy: required(oneOf(['Teardown', 'Retain', 'Release'])),
    since: required(text()),
    run: string(),
  }),
  teardownRequest: object({ by: required(text()), reason: string(), at: required(text()), run: string() }),
  approvals: list(json('object')),
};

/** A desired document as it is copied into a receipt or a run record. */
const DESIRED_COPY: Schema = object(desiredFields);

const sensitive = json('object');

/** A Git object id (SHA-1 or SHA-256 repositories). */
const oid = () =>
  string({
    nonEmpty: true,
    rule: (value) =>
      /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(value)
        ? undefined
        : { message: `${JSON.stringify(value)} is not a Git object id`, fix: "write the 40-hex id of the desired document's blob" },
  });

/** Form 2 of unit documents (./unit-format.ts): the field that says so. */
const formatVersion = () => integer({ minimum: UNIT_FORMAT });

/** Form 1 carries `desired` (a copy); form 2 `desiredBlob` (a reference), or `desired` for a receipt that keeps its copy. */
const receipt = object({
  run: required(text()),
  executionKey: required(text()),
  finishedAt: required(text()),
  outputs: required(json('object')),
  sensitiveOutputs: sensitive,
  toolState: json('object'),
  toolReads: list(text()),
  desired: DESIRED_COPY,
  desiredBlob: oid(),
});

const condition = object({
  type: required(oneOf(['uncertain', 'failed'])),
  retryable: required(boolean()),
  reason: required(string()),
  run: required(text()),
  since: required(text()),
  evidence: list(text()),
  code: text(),
  acknowledgementRequired: boolean(),
  output: list(string()),
  toolState: json('object'),
});

const driftRecord = object({
  status: required(oneOf(['in-sync', 'drifted', 'unknown'])),
  observedAt: required(text()),
  run: required(text()),
  receipt: text(),
  detail: string(),
  code: text(),
});

const SHAPES = {
  state: object({
    apiVersion: required(text()),
    kind: required(constant('EnvironmentState')),
    environment: required(text()),
    generation: required(integer({ minimum: 1 })),
    status: required(oneOf(['active', 'deleted', 'moved'])),
    movedTo: text(),
    coordinationRefPrefix: text(),
    events: required(
      list(
        object({
          type: required(oneOf(['initialized', 'fresh', 'state-deleted', 'moved'])),
          at: required(text()),
          by: required(text()),
          reason: string(),
          generation: integer({ minimum: 1 }),
          from: text(),
          to: text(),
        }),
      ),
    ),
  }),
  'desired-unit': object({ formatVersion: formatVersion(), ...desiredFields }),
  'observed-unit': object({
    formatVersion: formatVersion(),
    uid: text(),
    receipt,
    condition,
    drift: driftRecord,
    driftHistory: list(driftRecord),
    acknowledgement: object({ by: required(text()), reason: required(string()), at: required(text()) }),
    lastRun: object({ run: required(text()), result: required(text()), at: required(text()) }),
    released: object({ at: required(text()), run: required(text()), by: required(text()) }),
  }),
  run: object({
    apiVersion: required(text()),
    kind: required(constant('Run')),
    run: required(text()),
    environment: required(text()),
    operation: required(text()),
    holder: required(holder),
    startedAt: required(text()),
    deadline: required(time()),
    renewedAt: time(),
    source: required(text()),
    sourceOverride: boolean(),
    ended: object({ at: required(text()), reason: required(text()) }),
  }),
  'run-unit': object({
    unit: required(text()),
    uid: required(text()),
    kind: required(text()),
    executionKey: required(text()),
    startedAt: required(text()),
    phase: constant('teardown'),
    desired: required(DESIRED_COPY),
    checkpoint: object({
      result: required(oneOf(['receipt', 'removed', 'failed', 'uncertain', 'not-started'])),
      finishedAt: required(text()),
      outputs: json('object'),
      sensitiveOutputs: sensitive,
      toolState: json('object'),
      toolReads: list(text()),
      reason: string(),
      retryable: boolean(),
      acknowledgementRequired: boolean(),
      incomplete: boolean(),
      code: text(),
      output: list(string()),
    }),
  }),
  signal: object({
    apiVersion: required(text()),
    kind: required(constant('Signal')),
    type: required(constant('hold')),
    run: required(text()),
    unit: required(text()),
    by: required(text()),
    reason: string(),
    at: required(text()),
  }),
} satisfies Record<string, Schema>;

export type StateDocumentKind = keyof typeof SHAPES;

export function shapeOf(kind: StateDocumentKind): Schema {
  return SHAPES[kind];
}

/**
 * What the schema DSL cannot say: the desired document of an incarnation (one with a kind or a
 * rendering) names it by `uid`. Only a marker (held, or resumed before its unit ever ran) has none.
 */
export function extraProblems(kind: StateDocumentKind, value: unknown): SchemaProblem[] {
  if (kind !== 'desired-unit' && kind !== 'observed-unit') return [];
  const version = (value as { formatVersion?: unknown }).formatVersion;
  // A later form is a newer version's: this one cannot know what its fields mean.
  if (version !== undefined && version !== UNIT_FORMAT)
    return [
      {
        pointer: '/formatVersion',
        message: `formatVersion ${String(version)} is a form this version of Nyl does not know (it writes ${UNIT_FORMAT})`,
        fix: 'use the version of Nyl that wrote it',
      },
    ];
  if (kind === 'observed-unit') return receiptProblems(value as { formatVersion?: unknown; receipt?: { desired?: unknown; desiredBlob?: unknown } });
  const doc = value as { uid?: unknown; kind?: unknown; rendering?: unknown };
  if (doc.uid !== undefined || (doc.kind === undefined && doc.rendering === undefined)) return [];
  return [{ pointer: '/uid', message: 'the desired document of an incarnation (it has a kind or rendering) misses its uid', fix: 'add uid' }];
}

/** A receipt has its desired document once: a copy, or (form 2 only) a reference to its blob. */
function receiptProblems(doc: { formatVersion?: unknown; receipt?: { desired?: unknown; desiredBlob?: unknown } }): SchemaProblem[] {
  const r = doc.receipt;
  if (!r) return [];
  if (r.desired === undefined && r.desiredBlob === undefined)
    return [
      {
        pointer: '/receipt/desired',
        message: 'the receipt names no desired document: neither desired nor desiredBlob',
        fix: 'restore receipt.desired or receipt.desiredBlob',
      },
    ];
  if (r.desired !== undefined && r.desiredBlob !== undefined)
    return [
      {
        pointer: '/receipt/desiredBlob',
        message: 'the receipt has both a copy of its desired document and a reference to one',
        fix: 'keep one of receipt.desired and receipt.desiredBlob',
      },
    ];
  if (r.desiredBlob !== undefined && doc.formatVersion !== UNIT_FORMAT)
    return [
      {
        pointer: '/receipt/desiredBlob',
        message: `a reference to the desired document needs formatVersion: ${UNIT_FORMAT}`,
        fix: `add formatVersion: ${UNIT_FORMAT}, or replace desiredBlob by a copy under desired`,
      },
    ];
  return [];
}
