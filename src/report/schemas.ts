/**
 * The JSON Schemas (draft 2020-12) of the documents `-o json` prints: StatusReport,
 * ReconcileReport and StateOperationReport, with the short refusal form a command prints when it
 * fails before it has a report. scripts/gen-schemas.mjs writes them to schemas/, and the
 * end-to-end tests validate every `-o json` document they see against them.
 *
 * They are written next to the report types so that the compiler holds the two together:
 * `shape<T>()` takes exactly the fields of T, each required or optional as T declares it, and
 * `members<T>()` exactly the values of a string union. What `details` holds comes from layers this
 * one cannot import, so those parts are written out by hand. The unit kinds arrive as a parameter
 * for the same reason (the driver registry owns them).
 */
import type { Diagnostic, Severity, SourceLocation } from '../errors/diagnostic';
import {
  FORMAT_VERSION,
  type DoctorHostReport,
  type GraphEdge,
  type HostPrefixCheck,
  type GraphNode,
  type GraphReport,
  type LeaseSummary,
  type LogEntry,
  type LogReport,
  type MultiEnvironmentReport,
  type OutputsReport,
  type ReconcileReport,
  type ReconcileUnitReport,
  REPORT_API_VERSION,
  type RefusalDocument,
  type StateOperationReport,
  type ShownReceipt,
  type ShowReport,
  type StatusReport,
  type UnitStatus,
  type UnitStatusState,
} from './types';

export type JsonSchemaObject = { [key: string]: unknown };

const DRAFT = 'https://json-schema.org/draft/2020-12/schema';
const ID_BASE = 'https://nyl.io/schemas/v1/';

// --- helpers that tie a schema to its type ---------------------------------------------------

interface Prop<Required extends boolean> {
  readonly required: Required;
  readonly schema: JsonSchemaObject;
}
/** One entry per field of T: req() for a field T requires, opt() for one it may leave out. */
type Fields<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? Prop<false> : Prop<true> };

const req = (schema: JsonSchemaObject): Prop<true> => ({ required: true, schema });
const opt = (schema: JsonSchemaObject): Prop<false> => ({ required: false, schema });

/** A closed object with exactly T's fields: unknown fields are errors, as they are in source. */
function shape<T>(fields: Fields<T>, description?: string): JsonSchemaObject {
  const entries = Object.entries(fields) as [string, Prop<boolean>][];
  const required = entries.filter(([, f]) => f.required).map(([name]) => name);
  return {
    ...(description ? { description } : {}),
    type: 'object',
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
    properties: Object.fromEntries(entries.map(([name, f]) => [name, f.schema])),
  };
}

/** An enum of exactly the members of a string union (a record, so that none can be missed). */
function members<T extends string>(values: { [K in T]: true }, description?: string): JsonSchemaObject {
  return { enum: Object.keys(values), ...(description ? { description } : {}) };
}

/** A reference to a definition: a shared one of DEFS or one of the document's own. */
const ref = (name: string, description?: string): JsonSchemaObject => ({ $ref: `#/$defs/${name}`, ...(description ? { description } : {}) });
const str = (description?: string, extra: JsonSchemaObject = {}): JsonSchemaObject => ({ type: 'string', ...extra, ...(description ? { description } : {}) });
const bool = (description?: string): JsonSchemaObject => ({ type: 'boolean', ...(description ? { description } : {}) });
const arrayOf = (items: JsonSchemaObject, description?: string): JsonSchemaObject => ({ type: 'array', items, ...(description ? { description } : {}) });
const strings = (description?: string): JsonSchemaObject => arrayOf({ type: 'string' }, description);
const dateTime = (description?: string): JsonSchemaObject => str(description, { format: 'date-time' });
const diagnostics = (): JsonSchemaObject => arrayOf(ref('diagnostic'));

/**
 * The details of a report: closed like every other object, so that a field the code adds without
 * describing it here fails the end-to-end tests instead of reaching users undocumented. Every
 * field is optional: each operation sets its own.
 */
function closedDetails(description: string, properties: Record<string, JsonSchemaObject>): JsonSchemaObject {
  return { type: 'object', description, additionalProperties: false, properties };
}

/** A list of names as prose: "a, b or c". */
function orList(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}

// --- shared definitions ----------------------------------------------------------------------

const sourceLocation = shape<SourceLocation>(
  {
    file: req(str('Path relative to the project root.')),
    line: opt({ type: 'integer', minimum: 1 }),
    column: opt({ type: 'integer', minimum: 1 }),
    pointer: opt(str('JSON pointer inside the resource document.')),
  },
  'Where in source, for NYL-SOURCE-INVALID.',
);

const diagnostic = shape<Diagnostic>(
  {
    code: req(str(undefined, { pattern: '^NYL-[A-Z0-9]+(-[A-Z0-9]+)*$' })),
    severity: req(members<Severity>({ error: true, warning: true, note: true })),
    message: req(str()),
    fix: req(str()),
    units: opt({ ...strings(), minItems: 1 }),
    location: opt(sourceLocation),
    data: opt({
      type: 'object',
      description: 'Structured data for machines, such as the lease holder of NYL-LEASE-HELD, the evidence listing of a recover --unit refusal or the run and result of NYL-RUN-LATE-CHECKPOINT.',
    }),
  },
  'An error, warning or note: a stable code from the catalog (docs/error-codes.md), a message and its fix.',
);

const holder = shape<LeaseSummary['holder']>({
  name: req(str('"Name <email>" of the holder.')),
  host: req(str()),
  pid: req({ type: 'integer' }),
  boot: opt(str('The boot id of the holder\'s machine (Linux): with started, what proves a holder on the same machine gone.')),
  started: opt(str('When the holder\'s process started, in clock ticks since that boot (Linux).')),
});

const leaseBreakShort = shape<NonNullable<LeaseSummary['broken']>>({
  by: req(str('"Name <email>" of whoever broke the lease.')),
  reason: req(str()),
  at: req(dateTime()),
});

/** A lease break as a transition commit records it (src/run/takeover.ts, not importable here). */
const leaseBreak = {
  type: 'object',
  description: 'A lease break as a transition commit records it.',
  required: ['by', 'reason', 'at', 'run', 'operation', 'holder'],
  additionalProperties: false,
  properties: {
    by: str('"Name <email>" of whoever broke the lease.'),
    reason: str(),
    at: dateTime(),
    run: str('The run whose lease was broken.'),
    operation: str(undefined, { examples: ['reconcile'] }),
    holder: str('"Name <email>" of the holder whose lease was broken.'),
  },
};

type Wait = NonNullable<UnitStatus['waits']>[number];
const wait = shape<Wait>(
  {
    pointer: req(str()),
    unit: req(str()),
    reason: req(str(undefined, { examples: ['no-current-receipt'] })),
  },
  'What a unit waits for: the JSON pointer of the dependency inside its spec, such as /dependsOn/0 or /env/DB_URL.',
);

/** Where state lives, as src/state/location.ts describes it (describeLocation). */
const location = {
  type: 'object',
  description: "Where the environment's state lives, as resolved by the spec's order.",
  required: ['repository', 'desiredRef', 'observedRef', 'coordinationRefPrefix', 'localPath', 'chosenBy'],
  additionalProperties: false,
  properties: {
    repository: str("The state repository's URL; for state kept in the clone itself, the clone's path."),
    publishURL: str('Where pushes go, when it differs from repository.'),
    localPath: str('The local repository Nyl reads and writes objects in: the state repository itself, the checkout, or a bare cache repository.'),
    desiredRef: str(undefined, { pattern: '^refs/', examples: ['refs/heads/nyl/dev/desired'] }),
    observedRef: str(undefined, { pattern: '^refs/', examples: ['refs/heads/nyl/dev/observed'] }),
    path: str("The environment's directory on shared state refs (state.path)."),
    coordinationRefPrefix: str(undefined, { pattern: '^refs/.*/$', examples: ['refs/nyl/'] }),
    chosenBy: str('Which rule of the resolution order chose the repository.', { examples: ['Environment dev', "the checkout's origin", 'the clone itself (no remote)'] }),
    created: { const: 'true', description: 'Present when state init created the local bare repository.' },
  },
};

/** One checkpoint in the evidence listing of recover --unit (src/operations/recover-unit.ts). */
const evidence = {
  type: 'object',
  required: ['run', 'source', 'result', 'executionKey', 'uid', 'acceptable'],
  additionalProperties: false,
  properties: {
    run: str(),
    source: { enum: ['run', 'evidence'], description: 'A run ref, or an evidence ref a takeover kept.' },
    result: { enum: ['receipt', 'failed', 'uncertain', 'not-started', 'started'], description: "The checkpoint's result; started: the unit started without a checkpoint." },
    executionKey: ref('executionKey'),
    uid: str(),
    acceptable: bool("Would --accept adopt this checkpoint: a receipt for the unit's desired uid and execution key, which the source still resolves to, of a unit that is not held."),
  },
};

/** A unit's condition as observed state records it (src/state/shapes.ts). */
const condition = {
  type: 'object',
  required: ['type', 'retryable', 'reason', 'run', 'since'],
  additionalProperties: false,
  properties: {
    type: { enum: ['failed', 'uncertain'] },
    retryable: bool(),
    reason: str(),
    run: str(),
    since: dateTime(),
    code: str('The code that caused it, such as NYL-RUN-SUPERSEDED.'),
    evidence: strings(),
    acknowledgementRequired: bool('A retry needs recover --retry --reason (a Command timeout).'),
    output: strings('The last lines the tool printed in the execution that failed, masked.'),
    toolState: { type: 'object', description: "What the driver recorded of its tool's own state after the attempt that failed: a Terraform module's state, which the unit's next attempt recognizes as its own." },
  },
};

const DEFS = {
  oid: str('A Git object id.', { pattern: '^([0-9a-f]{40}|[0-9a-f]{64})$' }),
  executionKey: str(undefined, { pattern: '^sha256:[0-9a-f]{64}$' }),
  holder,
  break: leaseBreakShort,
  leaseBreak,
  wait,
  location,
  evidence,
  condition,
  diagnostic,
};
type DefName = keyof typeof DEFS;

// --- the common fields of every document ------------------------------------------------------

/** The fields every document starts with (the published order of the fields is the schema's). */
const head = {
  apiVersion: req({ const: REPORT_API_VERSION }),
  formatVersion: req({ const: FORMAT_VERSION }),
};
/** ... and ends with. */
const tail = {
  errors: req(diagnostics()),
  warnings: req(diagnostics()),
  notes: req(diagnostics()),
};

/** The short form of a command that failed before it had a report: status has no operation. */
function refusal(kind: 'StatusReport' | 'ReconcileReport'): JsonSchemaObject {
  const fields = {
    environment: req(str('The environment named by -e; empty when the command line had none.')),
    result: req({ const: 'refused' }),
    details: req({ type: 'object' }),
    ...tail,
    errors: req({ ...diagnostics(), minItems: 1 }),
  };
  if (kind === 'StatusReport') return shape<Omit<RefusalDocument, 'operation'>>({ ...head, kind: req({ const: kind }), ...fields });
  return shape<RefusalDocument & { operation: string }>({ ...head, kind: req({ const: kind }), operation: req({ enum: ['reconcile', 'teardown', 'plan'] }), ...fields });
}

// --- StatusReport ----------------------------------------------------------------------------

const UNIT_STATES = members<UnitStatusState>(
  {
    current: true,
    pending: true,
    outdated: true,
    'awaiting-dependencies': true,
    blocked: true,
    failed: true,
    uncertain: true,
    held: true,
    leaving: true,
    'pending-teardown': true,
    'tearing-down': true,
    retained: true,
    released: true,
    running: true,
    'awaiting-approval': true,
    drifted: true,
  },
  "current: the receipt's execution key equals the resolved one; pending: no receipt yet, the next reconcile executes it (after its dependencies, if it waits for them); outdated: a receipt for another execution key, the next reconcile executes it again; awaiting-dependencies: waits for dependencies the next reconcile executes first, and is re-evaluated after them: nothing of its own changed, so it may stay current without executing; blocked: waits for something that will not get a current receipt by itself, or cannot be rendered; failed; uncertain; held; leaving: no longer in the ownership set, and the next reconcile keeps a tombstone or releases it (deletionPolicy Retain or Release); pending-teardown: its teardown waits (for --allow-teardown, its dependents, or retained tombstones that cite it); tearing-down: the next reconcile or teardown tears it down, or its teardown started and goes on; retained: a tombstone that keeps its receipt; released: its resources were left in place, and state keeps a record; running: a live run started it and has not recorded its result yet; awaiting-approval: the next reconcile executes it only with an approval (--approve), and its dependents wait; drifted: nyl verify observed that its resources no longer match its receipt (the next reconcile repairs it under driftRepair converge; under manual it stays drifted until --reapply).",
);

const driftObservation = shape<NonNullable<UnitStatus['drift']>>(
  {
    status: req({ enum: ['in-sync', 'drifted', 'unknown'] }),
    observedAt: req(dateTime()),
    run: req(str('The nyl verify that observed it (its lease run id).')),
    receipt: opt(str('The run of the receipt it observed.')),
    detail: opt(str()),
    code: opt(str('A finding worse than drift, by its code: NYL-BACKEND-STATE-LOST (the Terraform state its receipt recorded is gone, emptied or replaced).')),
  },
  'One drift observation by nyl verify.',
);

function statusUnit(unitKinds: readonly string[]): JsonSchemaObject {
  return shape<UnitStatus>({
    name: req(str()),
    kind: req(str(`${orList(unitKinds)}; '-' for a held marker without a kind.`, { examples: [unitKinds[0]] })),
    state: req(UNIT_STATES),
    receipt: req(
      members<UnitStatus['receipt']>(
        { current: true, outdated: true, unresolved: true, none: true },
        'current or outdated: the receipt against the execution key the unit resolves to; unresolved: the unit awaits its dependencies, so its key is not known yet; none: no receipt.',
      ),
    ),
    uid: opt(str('The incarnation (a UUIDv7).')),
    executionKey: opt(ref('executionKey', 'The execution key the unit resolves to now.')),
    receiptKey: opt(ref('executionKey', "The execution key of the unit's receipt.")),
    lastRun: opt(
      shape<NonNullable<UnitStatus['lastRun']>>({
        run: req(str()),
        result: req(str(undefined, { examples: ['executed', 'failed', 'uncertain'] })),
        at: req(dateTime()),
      }),
    ),
    running: opt(
      shape<NonNullable<UnitStatus['running']>>({
        run: req(str('The live run that started the unit (its lease run id).')),
        startedAt: req(dateTime()),
      }),
    ),
    detail: req(str('What the planner decided and why, in words (rendered from reason).')),
    action: opt(str("The planner's action for the unit; absent for a released record.", { examples: ['execute', 'current', 'wait', 'blocked', 'held', 'awaiting-approval', 'failed', 'uncertain', 'teardown', 'pending-teardown'] })),
    reason: opt(str("The machine code of the action's reason: what detail is rendered from.", { examples: ['receipt-current', 'no-receipt', 'key-changed', 'dependency-pending', 'upstream-pending', 'dependency-blocked', 'held', 'needs-recovery', 'approval-required', 'consumers-first'] })),
    condition: opt(
      shape<NonNullable<UnitStatus['condition']>>({
        type: req({ enum: ['failed', 'uncertain'] }),
        retryable: req(bool('A retryable failure runs again at the next reconcile.')),
        reason: req(str()),
        run: req(str()),
        since: req(dateTime()),
        code: opt(str('The failure\'s own code, when it has one (NYL-BACKEND-STATE-LOST, NYL-SECRET-UNAVAILABLE, ...): status reports it with that code\'s fix.')),
      }),
    ),
    hold: opt(
      shape<NonNullable<UnitStatus['hold']>>({
        by: req(str()),
        reason: opt(str()),
        since: req(dateTime()),
        pending: opt(str('The source commit whose changes wait while held.')),
      }),
    ),
    waits: opt(arrayOf(ref('wait'))),
    drift: opt(driftObservation),
    driftHistory: opt(arrayOf(driftObservation)),
    approval: opt(
      shape<NonNullable<UnitStatus['approval']>>({
        reason: req({ enum: ['approval-required', 'manual-drift-repair', 'manual-reapply', 'manual-local', 'digest-mismatch'] }),
        requireDigest: req(bool('Only a plan-bound approval (--approve <unit>=<digest>) lets it run.')),
        digest: opt(str('The digest the last run planned, when an approval named another.')),
      }),
    ),
  });
}

const lease = shape<LeaseSummary>(
  {
    status: req(members<LeaseSummary['status']>({ live: true, expired: true, broken: true })),
    run: req(str()),
    operation: req(str(undefined, { examples: ['reconcile', 'state-init'] })),
    holder: req(ref('holder')),
    acquiredAt: req(dateTime()),
    deadline: req(dateTime()),
    broken: opt(ref('break', "Its break, when status is broken. A live recover's lease carries the break it imports and shows none.")),
  },
  "The environment's lease, when a ref holds one.",
);

const statusReport = shape<StatusReport>({
  ...head,
  kind: req({ const: 'StatusReport' }),
  environment: req(str()),
  source: opt(ref('oid', 'The source commit units were rendered at.')),
  desired: opt(ref('oid', "The desired ref's commit that was read.")),
  observed: opt(ref('oid', "The observed ref's commit that was read.")),
  lease: opt(ref('lease')),
  units: req({
    type: 'object',
    description: 'Every unit of the ownership set, and every unit state still holds that left it, keyed by name.',
    additionalProperties: ref('unit'),
  }),
  unitOrder: req(strings('Table order: the ownership set in dependency order (ties by name), then units that left it and that state still holds, by name (code-unit order).')),
  details: req(closedDetails('What status read: where state lives.', { location: ref('location') })),
  ...tail,
});

function statusSchema(unitKinds: readonly string[]): JsonSchemaObject {
  return document(
    'status-report',
    'Nyl StatusReport',
    'What `nyl status -e ENV -o json` prints on stdout: exactly one document (a MultiEnvironmentReport when it selects several environments: repeated -e, -l, -g). Units are resolved as the import of runs that wait for it (NYL-RUN-UNIMPORTED) will find them. A command that is refused before it can read state (an unknown environment, invalid source, a usage error) prints the short refusal form instead, with result: refused and the reasons under errors. State that is missing, deleted or moved is reported in the full form, with the code under errors and no units.',
    { oneOf: [{ $ref: '#/$defs/report' }, { $ref: '#/$defs/refusal' }, { $ref: '#/$defs/multiEnvironmentReport' }] },
    { report: statusReport, refusal: refusal('StatusReport'), multiEnvironmentReport: multiEnvironmentReport(['status']), unit: statusUnit(unitKinds), lease },
  );
}

// --- ReconcileReport -------------------------------------------------------------------------

const RECONCILE_RESULTS = [
  'executed', 'current', 'imported', 'recovered', 'removed', 'retained', 'released', 'failed', 'uncertain',
  'held', 'drifted', 'pending-teardown', 'tearing-down', 'blocked', 'awaiting-approval',
  // `nyl plan`: what the next reconcile would do.
  'execute', 'wait', 'teardown', 'retain', 'release',
];

function reconcileUnit(unitKinds: readonly string[]): JsonSchemaObject {
  return shape<ReconcileUnitReport>({
    kind: req(str("The unit's kind; '-' for a held marker without a kind.", { examples: [...unitKinds] })),
    result: req({
      enum: RECONCILE_RESULTS,
      description: "What the run did with the unit, as the specification's Runs page defines the results. This version produces executed, current, imported, recovered (a dead run left it uncertain and this run did not execute it: exit 4), removed (torn down, or a resumed held marker whose unit left the ownership set), retained (a tombstone kept), released (resources left in place), pending-teardown and tearing-down (a teardown that waits, or that started and did not end: exit 2), failed, uncertain, held, blocked, awaiting-approval (the unit executes only with an approval: exit 2, its dependents are blocked) and drifted (nyl verify observed drift and driftRepair is manual: exit 2). Under --unit the table also lists every other unit the transition commit changes (imported, recovered, held); only the units named in selected count for the exit code.",
    }),
    detail: req(str("The reason, such as the failure or the wait: '/dependsOn/0 waits for broken (no-current-receipt)'. A failure reason keeps every line its driver gave; the text table shows the first.")),
    uid: opt(str('The incarnation (a UUIDv7).')),
    executionKey: opt(ref('executionKey')),
    durationMs: opt({ type: 'integer', minimum: 0, description: 'How long the driver ran.' }),
    dispatched: req(bool("Whether the unit's driver started in this run.")),
    uncertain: opt(bool('A held unit whose condition is uncertain (exit 4, as in status).')),
    waits: opt(arrayOf(ref('wait'))),
    outputs: opt(strings('Names of the outputs of the receipt the run produced (values are in the observed state, not in the report).')),
    leaving: opt(bool('In the leaving section, printed first: the unit left the ownership set, or is torn down (a request, a kind change).')),
    incomplete: opt(bool('Removed under --allow-incomplete: its driver could not claim the removal.')),
    code: opt(str('The stable code of a failure that has one, such as NYL-SECRETS-KEY-MISSING; a warning with that code carries its fix.', { pattern: '^NYL-[A-Z0-9-]+$' })),
    action: opt(str("`nyl plan`: the planner's action for the unit.", { examples: ['execute', 'current', 'wait', 'blocked', 'held', 'awaiting-approval', 'drifted', 'teardown', 'retain', 'release', 'pending-teardown'] })),
    reason: opt(str("`nyl plan`: the machine code of the action's reason.", { examples: ['no-receipt', 'key-changed', 'receipt-current', 'dependency-pending', 'needs-allow-teardown'] })),
    digest: opt(str('`nyl plan`: what a plan-bound approval names (--approve <unit>=<digest>), for a unit that would execute: for a kind whose driver plans, sha256 of the execution key, the driver plan\'s digest and the receipt it starts from; for other kinds the execution key. Absent while the key is not decided (a new incarnation, a unit that waits for its dependencies) or when the driver could not plan.', { pattern: '^sha256:[0-9a-f]{64}$' })),
    changes: opt(str("`nyl plan`: the summary of the driver's plan, for a kind whose driver plans.", { examples: ['+1 ~0 -0'] })),
    diff: opt(strings("`nyl plan`: the unit's recorded rendering against the new one, as YAML (keys sorted) in unified-diff lines: '@@ -a,b +c,d @@' hunk heads, then lines starting with ' ', '-' or '+'.")),
    approval: opt(
      shape<NonNullable<ReconcileUnitReport['approval']>>({
        reason: req({ enum: ['approval-required', 'manual-drift-repair', 'manual-reapply', 'manual-local', 'digest-mismatch'] }),
        requireDigest: req(bool('Only a plan-bound approval (--approve <unit>=<digest>) lets it run.')),
        digest: opt(str('The digest to approve, when the run knows it (the execution key of a kind that does not plan; the plan a run made).')),
      }),
    ),
    approvedBy: opt(
      shape<NonNullable<ReconcileUnitReport['approvedBy']>>({
        by: req(strings('The approvers.')),
        source: req(str(undefined, { examples: ['github', 'gitlab', 'azure', 'git', 'asserted'] })),
        asserted: opt(bool('The approvers came from --approved-by/--approval-source.')),
        at: req(dateTime()),
        digest: opt(str('Plan-bound: the reviewed digest.')),
        executionKey: opt(ref('executionKey', 'Desired-bound: the execution key the approval covered.')),
      }),
    ),
  });
}

const reconcileDetails = closedDetails(
  'Operation-specific data. imported, recovered, leaseBroken and leaseBrokenEarlier are present only when the run has something to record; held is present after every run that published its transition.',
  {
    imported: strings("Units whose receipt or failure was imported from a dead run's checkpoints."),
    recovered: strings('Units a dead run left without a result: uncertain after the import.'),
    held: strings('Units held by holds delivered to this run, as written in its transition commit (possibly empty).'),
    heldAfterRun: strings('Units held by holds that reached the run after its last check, applied in a hold commit after the run released its lease.'),
    leaseBroken: ref('leaseBreak', 'The break of the broken lease this run took over.'),
    leaseBrokenEarlier: arrayOf(ref('leaseBreak'), 'Earlier breaks that an importer which died did not record, oldest first.'),
    removed: strings('Units whose files the run removed: torn down, or resumed held markers that left the ownership set.'),
    retained: strings('Units the run turned into retained tombstones.'),
    released: strings('Units the run released: their resources stay in place.'),
    incomplete: strings('Units removed under --allow-incomplete without a claim of removal.'),
    allowDependents: strings('Units torn down although retained tombstones cite them (--allow-dependents).'),
    requested: strings('`nyl teardown`: the units whose teardown the run recorded as requested.'),
    driftRepaired: strings('Units executed again because nyl verify observed drift of their receipt (driftRepair: converge).'),
    reapplied: strings('Units executed again although their receipts were current, because --reapply named them.'),
  },
);

const reconcileReport = shape<ReconcileReport>({
  ...head,
  kind: req({ const: 'ReconcileReport' }),
  operation: req({ enum: ['reconcile', 'teardown', 'plan'], description: 'reconcile, teardown for `nyl teardown`, or plan for `nyl plan` (what the next reconcile would do: nothing was run or written, and the rows carry action, reason, digest, changes and diff).' }),
  environment: req(str()),
  run: opt(str('The run id (a UUIDv7). Absent when the run found nothing to do and took no lease.')),
  source: req(ref('oid', 'The source commit units were rendered at.')),
  sourceOverride: req(bool('True when --source chose the source commit.')),
  sourceWorktree: opt(bool('True when --worktree made the source commit a snapshot of the working files (warning NYL-SOURCE-WORKTREE).')),
  desired: opt(ref('oid', "The desired ref's commit after the run.")),
  observed: opt(ref('oid', "The observed ref's commit after the run.")),
  committed: req(bool('Whether the run wrote a transition commit.')),
  units: req({
    type: 'object',
    description: 'The units of the run keyed by name; with --unit/--units only the named units (and every other unit the transition commit changes). Units leaving the ownership set are listed with leaving: true; a retained tombstone nothing changes is left out.',
    additionalProperties: ref('unit'),
  }),
  unitOrder: req(strings('Table order: the leaving section first (teardowns in dispatch order, consumers first; then tombstones and releases; then what waits), then dispatched units in dispatch order, then the rest in dependency order (ties by name, in code-unit order).')),
  selected: opt(strings('The units named by --unit/--units; only these count for the exit code.')),
  details: req(reconcileDetails),
  ...tail,
});

/**
 * A command over several environments (repeated -e, -l, -g), in the schema of its command's
 * family: `operations` are the commands of that family, and each section is a `report` or a
 * `refusal` of that schema.
 */
function multiEnvironmentReport(operations: MultiEnvironmentReport['operation'][]): JsonSchemaObject {
  return shape<MultiEnvironmentReport>(
    {
      ...head,
      kind: req({ const: 'MultiEnvironmentReport' }),
      operation: req({ enum: operations }),
      environmentOrder: req(strings('The environments in the order they ran (spec.dependsOn: dependencies first, for teardown consumers first; ties by name): the order of the text sections. With --unit, an environment that no unit option names is left out.')),
      environments: req({
        type: 'object',
        description: "Each environment's own document, keyed by name: the report its single-environment command prints, or the short refusal form when it was refused, blocked (reconcile: by a dependency environment, teardown: by a dependent one, that did not end 0; NYL-ENVIRONMENT-BLOCKED, details.blockedBy), or not started after a signal (NYL-RUN-CANCELLED, details.notStarted).",
        additionalProperties: { anyOf: [{ $ref: '#/$defs/report' }, { $ref: '#/$defs/refusal' }] },
      }),
      exitCodes: req({ type: 'object', description: "Each environment's exit code, as its own single-environment command would exit; the command exits with the most severe (4 > 3 > 1 > 2 > 0).", additionalProperties: { enum: [0, 1, 2, 3, 4] } }),
      ...tail,
    },
    'A command over several environments (repeated -e, -l, -g): each environment ran as its own command (for writers its own lease, run and commits).',
  );
}

function reconcileSchema(unitKinds: readonly string[]): JsonSchemaObject {
  return document(
    'reconcile-report',
    'Nyl ReconcileReport',
    'What `nyl reconcile -e ENV -o json` prints on stdout: exactly one document (a MultiEnvironmentReport when it selects several environments: repeated -e, -l, -g), while unit start and end lines and tool output go to stderr. A cancelled run prints the full report with NYL-RUN-CANCELLED under errors. A run that is refused, or fails before it has a report (an invalid source, NYL-STATE-MISSING, NYL-STATE-DIVERGED, NYL-LEASE-HELD, NYL-LEASE-LOST), prints the short refusal form instead, with result: refused and the reasons under errors. `nyl teardown` and `nyl plan` print the same document (operation teardown, plan); a plan takes no lease, runs no unit and writes nothing, and its driver plans print their tool output on stderr.',
    { oneOf: [{ $ref: '#/$defs/report' }, { $ref: '#/$defs/refusal' }, { $ref: '#/$defs/multiEnvironmentReport' }] },
    { report: reconcileReport, refusal: refusal('ReconcileReport'), multiEnvironmentReport: multiEnvironmentReport(['reconcile', 'teardown', 'plan']), unit: reconcileUnit(unitKinds) },
  );
}

// --- StateOperationReport ----------------------------------------------------------------------

/** One damaged state document recover repaired (src/operations/recover-damage.ts, RepairRecord). */
const repair = {
  type: 'object',
  required: ['ref', 'object', 'problem', 'action'],
  additionalProperties: false,
  properties: {
    ref: str('The ref that held it.', { examples: ['refs/heads/nyl/dev/desired'] }),
    path: str("The file of the ref's commit, relative to the environment's directory; absent when the ref is not a commit.", { examples: ['units/web.yaml'] }),
    object: str('The damaged object.'),
    problem: str('What is wrong with it.'),
    action: str('What recover did about it.'),
  },
};

const leaseDamage = {
  type: 'object',
  description: 'lease break of a damaged lease ref: what the ref pointed at, and the ref that keeps it.',
  required: ['object', 'problem', 'keptAt'],
  additionalProperties: false,
  properties: {
    object: str('The damaged object the lease ref pointed at.'),
    problem: str(),
    keptAt: str('The ref that keeps the damaged object.', { pattern: '^refs/' }),
  },
};

const stateInitState = {
  type: 'object',
  description: 'state init: state.yaml as the operation left it.',
  required: ['generation', 'status'],
  additionalProperties: false,
  properties: {
    generation: { type: 'integer', minimum: 1, description: 'Raised by state init --fresh.' },
    status: { enum: ['active', 'deleted', 'moved'] },
    fresh: bool('Whether this init started every unit over; absent when nothing changed.'),
  },
};

const deliveredTo = {
  type: 'object',
  description: 'hold: the running run the hold was delivered to.',
  required: ['run', 'runner', 'operation'],
  additionalProperties: false,
  properties: {
    run: str(),
    runner: ref('holder'),
    operation: str(undefined, { examples: ['reconcile'] }),
  },
};

/** One unit nyl verify checked (src/operations/verify.ts). */
const verifiedUnit = {
  type: 'object',
  required: ['drift', 'kind'],
  additionalProperties: false,
  properties: {
    drift: {
      enum: ['in-sync', 'drifted', 'unknown'],
      description: 'What the check observed. drifted: exit 2, with the warning NYL-UNIT-DRIFTED; unknown: the kind has no check, or the check failed (then also the error NYL-DRIFT-CHECK-FAILED, exit 1).',
    },
    kind: str("The kind of the unit's receipt, whose driver checked it."),
    detail: str('What the driver said, or why the check failed.'),
    code: str('A finding worse than drift (drift is then drifted): NYL-BACKEND-STATE-LOST, with its warning instead of NYL-UNIT-DRIFTED.'),
  },
};

const stateOperationDetails = closedDetails(
  'Operation-specific data. state init: location, state. state reset: discarded, branches, reason. state delete: removed, teardown (with --teardown). recover: unit, evidence, condition (with --unit), runs, imported (when it imported a broken run), recovered, held, repaired, leaseBroken, leaseBrokenEarlier. lease break: holder, run, operation, broken, lease, damaged. hold: unit, marker, deliveredTo. resume: unit, superseded. state forget: unit, was. state restore: restoredFrom, restored, resurrected, dropped, holdsKept. verify: run, units, skipped. state move: from, to, carried. state reseal: sealingKey, resealed, kept, unchanged, consumersToRun. The refusals of recover --unit keep unit, evidence and condition.',
  {
    location: ref('location'),
    state: stateInitState,
    unit: str('recover --unit, hold, resume, state forget: the unit.'),
    evidence: arrayOf(ref('evidence'), 'recover --unit: every checkpoint of the unit that a run ref or evidence ref holds, newest run first.'),
    condition: ref('condition', "recover --unit: the unit's condition before the command."),
    runs: strings('recover: the run refs it imported and consumed.'),
    imported: strings('recover: units whose receipt or failure was imported from a dead run.'),
    recovered: strings('recover: units left uncertain by the import, and the unit named by --unit.'),
    held: strings('recover: units held by hold signals left for dead runs.'),
    repaired: arrayOf(repair, 'recover: the damaged state documents it replaced or set aside.'),
    leaseBroken: ref('leaseBreak', 'recover: the break it recorded.'),
    leaseBrokenEarlier: arrayOf(ref('leaseBreak'), 'recover: earlier breaks an importer that died did not record, oldest first.'),
    holder: ref('holder', 'lease break: the holder of the lease.'),
    run: str('lease break: the run of the lease. verify: the run id of its lease, which its drift observations record as their run.'),
    operation: str('lease break: the operation of the lease.', { examples: ['reconcile'] }),
    broken: ref('break', 'lease break: the break, new or found.'),
    lease: ref('oid', 'lease break: the lease commit that records the break.'),
    damaged: leaseDamage,
    marker: bool('hold: whether the unit got a held marker (it never ran), rather than being held at its latest receipt.'),
    deliveredTo,
    was: { enum: ['retained', 'pending-teardown', 'released'], description: 'state forget: what the unit was in state before it was dropped: a retained tombstone, a unit whose teardown waited, or a released record.' },
    superseded: strings('resume: the runs whose hold signal for the unit it took back (a hold delivered to a run and not applied yet), so that the hold never takes effect.'),
    removed: strings('state delete: the units whose files the deletion removed from the state refs (desired and observed documents, held markers, released records), sorted.'),
    teardown: ref('teardownReport', 'state delete --teardown: the report of the teardown it ran first (nyl teardown --all), also when it stopped there.'),
    restoredFrom: {
      type: 'object',
      description: 'state restore: the commit --to named (full id), and the commits the desired and observed unit documents were taken from (absent: that ref had no commit then).',
      required: ['commit'],
      additionalProperties: false,
      properties: { commit: ref('oid'), desired: ref('oid'), observed: ref('oid') },
    },
    restored: { type: 'object', description: 'state restore: each unit whose documents the restore changes (or would change), by unit: restored (a document remains) or removed.', additionalProperties: { enum: ['restored', 'removed'] } },
    resurrected: { type: 'object', description: 'state restore: unit -> the uid the restore brings back, an incarnation the state no longer had (warning NYL-RESTORE-INCARNATIONS).', additionalProperties: str() },
    dropped: { type: 'object', description: 'state restore: unit -> the uid the restore takes away, an incarnation the restored commit does not have (warning NYL-RESTORE-INCARNATIONS).', additionalProperties: str() },
    holdsKept: strings('state restore: units held now, which stay held with their current hold.'),
    units: { type: 'object', description: 'verify: what the drift check of each checked unit observed, by unit.', additionalProperties: verifiedUnit },
    discarded: strings('state reset: the units whose local receipts the state repository lacked and the reset discarded, sorted.'),
    branches: arrayOf(
      {
        type: 'object',
        additionalProperties: false,
        required: ['repository', 'ref', 'from', 'to'],
        properties: {
          repository: str('The local repository of the branch: the checkout, or a cache repository.'),
          ref: str('The branch.'),
          from: ref('oid', 'Its tip before the reset.'),
          to: ref('oid', "The state repository's tip it was moved to."),
          fastForward: bool('The old tip was in the history of the new one: nothing was lost.'),
          keptAs: str('Where the old tip was kept (a branch that held local work), in the same repository.'),
        },
      },
      'state reset: each local branch it moved.',
    ),
    reason: str('state reset: the --reason given.'),
    skipped: { type: 'object', description: 'verify: the units it did not check, each with why (no receipt yet, held, a tombstone, left the ownership set).', additionalProperties: str() },
    from: str('state move: the old location: its repository (local for the clone\'s own branches), refs, path and coordination prefix, as its state.yaml names them.'),
    to: str('state move: the new location, in the same form; the old state.yaml\'s movedTo.'),
    carried: strings("state move: the old location's run and evidence refs it copied to the new location (under the new coordination prefix), for the next importer there."),
    sealingKey: str("state reseal: the id of the first key of the ring, which sealed and digested what it resealed (the first 16 hex digits of the key's sha256); absent when no usable key is configured."),
    resealed: strings('state reseal: each sensitive output (unit.output) whose record it changed: sealed again with the first key in the current form, or digested again with it, or both; sorted.'),
    kept: arrayOf(
      {
        type: 'object',
        additionalProperties: false,
        required: ['unit', 'output'],
        properties: {
          unit: str('The unit whose receipt records the digest.'),
          output: str('The sensitive output.'),
          keyId: str('The key the digest was made with, which consumers need to check it until the unit executes again; absent for an unkeyed digest (sha256 of the first format, or the execution that produced the value).'),
        },
      },
      "state reseal: digests of values a Terraform or OpenTofu backend keeps, not made by the first key: left as they are (warning NYL-RESEAL-KEPT), since only an execution of the unit digests them again.",
    ),
    unchanged: { type: 'integer', minimum: 0, description: 'state reseal: how many sensitive output records were already sealed and digested by the first key.' },
    consumersToRun: strings("state reseal: the units whose desired documents read an output whose digest changed: their execution keys cover it, so each executes once on the next reconcile (note NYL-RESEAL-CONSUMERS); sorted."),
  },
);

const STATE_OPERATION_RESULTS = members<StateOperationReport['result']>(
  { done: true, unchanged: true, delivered: true, refused: true },
  'done: a commit landed (for lease break: the lease was broken); unchanged: nothing needed to change (exit 0, with the note NYL-UNCHANGED); delivered: nyl hold delivered the hold to a running run (exit 0, with the note NYL-HOLD-DELIVERED); refused: see errors (state delete --teardown that stopped after its teardown keeps the teardown report under details.teardown).',
);

/**
 * The teardown a `state delete --teardown` ran: a ReconcileReport of operation teardown, with the
 * unit rows of a reconcile (own definitions of the state operation's schema, so that the file
 * reads on its own).
 */
function teardownDefinitions(unitKinds: readonly string[]): Record<string, JsonSchemaObject> {
  const properties = { ...(reconcileReport.properties as Record<string, JsonSchemaObject>), operation: { const: 'teardown' } };
  const teardownReport = { ...reconcileReport, description: 'The ReconcileReport of `nyl teardown --all`, as `nyl teardown -o json` prints it.', properties };
  return { teardownReport, unit: reconcileUnit(unitKinds) };
}

const stateOperationReport = shape<StateOperationReport>({
  ...head,
  kind: req({ const: 'StateOperationReport' }),
  operation: req(
    str("The operation, with the command's words joined by '-' (`nyl state forget`: forget, as its commits name it); for an unknown command, the word typed as the command (empty when the command line starts with an option).", {
      examples: ['state-init', 'state-move', 'state-restore', 'state-reseal', 'recover', 'lease-break', 'hold', 'resume', 'forget', 'verify'],
    }),
  ),
  environment: req(str('The environment named by -e; empty when the command line had none.')),
  result: req(STATE_OPERATION_RESULTS),
  desired: opt(ref('oid', "The desired ref's commit after the operation.")),
  observed: opt(ref('oid', "The observed ref's commit after the operation.")),
  details: req(stateOperationDetails),
  ...tail,
});

/** The short form of a section of `nyl verify` over several environments that did not run (blocked, not started). */
const stateOperationSection = shape<RefusalDocument & { operation: string }>({
  ...head,
  kind: req({ const: 'StateOperationReport' }),
  operation: req(str('The command of the multi-environment run.')),
  environment: req(str('The environment of the section.')),
  result: req({ const: 'refused' }),
  details: req({ type: 'object' }),
  ...tail,
  errors: req({ ...diagnostics(), minItems: 1 }),
});

function stateOperationSchema(unitKinds: readonly string[]): JsonSchemaObject {
  return document(
    'state-operation-report',
    'Nyl StateOperationReport',
    'What `nyl state init`, `nyl state delete`, `nyl state forget`, `nyl state restore`, `nyl state reseal`, `nyl recover`, `nyl lease break`, `nyl hold`, `nyl resume` and `nyl verify` print on stdout with -o json: exactly one document, also when the command refuses (result: refused, the reasons under errors); `nyl verify` over several environments (repeated -e, -l, -g) prints a MultiEnvironmentReport.',
    { oneOf: [{ $ref: '#/$defs/report' }, { $ref: '#/$defs/multiEnvironmentReport' }] },
    {
      report: {
        ...stateOperationReport,
        // A refusal names its reasons. (minItems needs its type beside it: strict validators refuse a
        // keyword whose type they cannot see.)
        allOf: [{ if: { properties: { result: { const: 'refused' } } }, then: { properties: { errors: { type: 'array', minItems: 1 } } } }],
      },
      refusal: stateOperationSection,
      multiEnvironmentReport: multiEnvironmentReport(['verify']),
      ...teardownDefinitions(unitKinds),
    },
  );
}

// --- LogReport, ShowReport, OutputsReport (read-only inspection) -----------------------------

/** The short form of an inspection command that failed before it had a report. */
function inspectRefusal(kind: 'LogReport' | 'ShowReport' | 'OutputsReport' | 'GraphReport' | 'DoctorHostReport', operation: string): JsonSchemaObject {
  return shape<RefusalDocument & { operation: string }>({
    ...head,
    kind: req({ const: kind }),
    operation: req({ const: operation }),
    environment: req(str('The environment named by -e; empty when the command line had none.')),
    result: req({ const: 'refused' }),
    details: req({ type: 'object' }),
    ...tail,
    errors: req({ ...diagnostics(), minItems: 1 }),
  });
}

const inspectDetails = closedDetails('Where state lives.', { location: ref('location') });

const logEntry = shape<LogEntry>(
  {
    operation: req(str("The Nyl-Operation trailer; '-' for a commit Nyl did not write.", { examples: ['reconcile', 'hold', 'state-init', 'state-move'] })),
    at: req(dateTime('Commit time (UTC).')),
    headline: req(str(undefined, { examples: ['nyl: reconcile dev (db, web)'] })),
    desired: opt(ref('oid', 'The commit on the desired ref; absent when the operation changed only the observed ref.')),
    observed: opt(ref('oid', 'The commit on the observed ref; absent when the operation changed only the desired ref.')),
    by: opt(str('Nyl-Requested-By, else the commit author: "Name <email>".')),
    reason: opt(str('Nyl-Reason.')),
    run: opt(str('Nyl-Run: the run of a reconcile or teardown.')),
    source: opt(str('Nyl-Source: the source commit, with " (override)" or " (worktree)".')),
    units: req({ type: 'object', description: "Each unit the body names, with what happened to it: the body's units result (or recover's, hold's, forget's action), then each list that names it (executed, imported, recovered, removed, held, ...), comma-separated.", additionalProperties: { type: 'string' } }),
    moved: opt(shape<NonNullable<LogEntry['moved']>>({ from: opt(str('The old location.')), to: opt(str('The new location.')) }, 'A state move: from the body.')),
    body: req({ type: 'object', description: "The commit's YAML body as written (docs/design.md, Transition commits)." }),
  },
  'One operation: its transition commits on the desired and observed refs (merged by message and commit time).',
);

const logReport = shape<LogReport>({
  ...head,
  kind: req({ const: 'LogReport' }),
  operation: req({ const: 'log' }),
  environment: req(str()),
  unit: opt(str('--unit: only operations that named the unit or changed its documents.')),
  entries: req(arrayOf(ref('entry'), 'Newest first.')),
  truncated: req(bool('Older entries exist beyond the -n limit (default 20).')),
  details: req(inspectDetails),
  ...tail,
});

function logSchema(): JsonSchemaObject {
  return document(
    'log-report',
    'Nyl LogReport',
    "What `nyl log -e ENV -o json` prints: the environment's history, one entry per operation, newest first. Missing state is an error (no entries); deleted or moved state is a warning, with its history. A command refused before it can read state prints the short refusal form.",
    { oneOf: [{ $ref: '#/$defs/report' }, { $ref: '#/$defs/refusal' }] },
    { report: logReport, refusal: inspectRefusal('LogReport', 'log'), entry: logEntry },
  );
}

const shownReceipt = shape<ShownReceipt>(
  {
    run: req(str()),
    executionKey: req(ref('executionKey')),
    finishedAt: req(dateTime()),
    outputs: req({ type: 'object', description: 'The plain outputs; sensitive ones are never here.' }),
    sensitiveOutputs: opt({ type: 'object', description: 'Each sensitive output by its digest: never its value, sealed or not.', additionalProperties: shape<{ sha256: string }>({ sha256: req(str()) }) }),
    toolState: opt({ type: 'object', description: "What the unit's driver recorded of its tool's own state after the execution: for Terraform and OpenTofu the backend, workspace, lineage, serial and resources of the module's state." }),
    toolReads: opt(arrayOf(str(), 'Source directories the tool read beyond what the kind declares (a module\'s calls of local modules): part of the unit\'s next execution keys.')),
  },
  "The unit's receipt: its run, execution key, finish time and outputs.",
);

const showReport = shape<ShowReport>({
  ...head,
  kind: req({ const: 'ShowReport' }),
  operation: req({ const: 'show' }),
  environment: req(str()),
  unit: req(str()),
  desired: opt(ref('oid', "The desired ref's commit that was read.")),
  observed: opt(ref('oid', "The observed ref's commit that was read.")),
  desiredDocument: opt({ type: 'object', description: "The unit's desired document (units/NAME.yaml on the desired ref)." }),
  observedDocument: opt({ type: 'object', description: "The unit's observed document, its receipt as `receipt` shows it (no desired copy, no sealed value)." }),
  receipt: opt(ref('receipt')),
  lastRuns: req(arrayOf(ref('entry'), 'The last 5 operations that named the unit or changed its documents, newest first.')),
  details: req(inspectDetails),
  ...tail,
});

function showSchema(): JsonSchemaObject {
  return document(
    'show-report',
    'Nyl ShowReport',
    "What `nyl show -e ENV --unit U -o json` prints: one unit's documents, receipt and last runs. An unknown unit, and missing, deleted or moved state, are errors of the full form. A command refused before it can read state prints the short refusal form.",
    { oneOf: [{ $ref: '#/$defs/report' }, { $ref: '#/$defs/refusal' }] },
    { report: showReport, refusal: inspectRefusal('ShowReport', 'show'), receipt: shownReceipt, entry: logEntry },
  );
}

const outputsReport = shape<OutputsReport>({
  ...head,
  kind: req({ const: 'OutputsReport' }),
  operation: req({ const: 'outputs' }),
  environment: req(str()),
  unit: opt(str('--unit: outputs is that unit\'s {key: value}.')),
  outputs: req({ type: 'object', description: 'Without --unit: {unit: {key: value}} of every unit with a receipt; with --unit: {key: value}. Sensitive outputs are left out.' }),
  sensitive: req({
    description: 'The sensitive outputs left out of outputs: {unit: [key]}, or [key] with --unit.',
    oneOf: [strings(), { type: 'object', additionalProperties: strings() }],
  }),
  details: req(inspectDetails),
  ...tail,
});

function outputsSchema(): JsonSchemaObject {
  return document(
    'outputs-report',
    'Nyl OutputsReport',
    "What `nyl outputs -e ENV [--unit U] -o json` prints: the outputs of the units' receipts. An unknown unit, and missing, deleted or moved state, are errors of the full form. A command refused before it can read state prints the short refusal form.",
    { oneOf: [{ $ref: '#/$defs/report' }, { $ref: '#/$defs/refusal' }] },
    { report: outputsReport, refusal: inspectRefusal('OutputsReport', 'outputs') },
  );
}

// --- GraphReport ------------------------------------------------------------------------------

const graphNode = shape<GraphNode>(
  { name: req(str()), kind: req(str()), state: req(UNIT_STATES), detail: req(str()) },
  'A unit, with its kind and its state as `nyl status` resolves it.',
);

const graphEdge = shape<GraphEdge>(
  {
    from: req(str('The unit that runs first.')),
    to: req(str('The unit that waits for it.')),
    via: req({ enum: ['dependsOn', 'trigger', 'reference'] }),
    output: opt(str('For a reference: the output it reads.')),
    pointer: opt(str("For a reference: where it stands in the consumer's spec (a JSON pointer such as /env/DB_URL).")),
  },
  'Why `to` waits for `from`: one edge per reason.',
);

const graphReport = shape<GraphReport>({
  ...head,
  kind: req({ const: 'GraphReport' }),
  operation: req({ const: 'graph' }),
  environment: req(str()),
  nodes: req(arrayOf(ref('node'), 'The units in dependency order (ties by name), then units state holds that left the ownership set (without edges).')),
  edges: req(arrayOf(ref('edge'))),
  details: req({ type: 'object', description: 'What status read: where state lives.' }),
  ...tail,
});

function graphSchema(): JsonSchemaObject {
  return document(
    'graph-report',
    'Nyl GraphReport',
    "What `nyl graph -e ENV -o json` prints: the environment's units with their states, and the edges between them. Missing, deleted or moved state is an error of the full form, without nodes. A command refused before it can read state prints the short refusal form.",
    { oneOf: [{ $ref: '#/$defs/report' }, { $ref: '#/$defs/refusal' }] },
    { report: graphReport, refusal: inspectRefusal('GraphReport', 'graph'), node: graphNode, edge: graphEdge },
  );
}

// --- DoctorHostReport -------------------------------------------------------------------------

const hostPrefixCheck = shape<HostPrefixCheck>(
  {
    prefix: req(str('The coordination prefix the lease ref was under.')),
    works: req(bool('Every step passed: the host holds state with this prefix.')),
    steps: req(
      arrayOf(
        shape<HostPrefixCheck['steps'][number]>({
          step: req({ type: 'integer', minimum: 1, maximum: 5 }),
          what: req(str()),
          verdict: req({ enum: ['passed', 'failed', 'not-run'] }),
          detail: req(str('What the host did, or said when it refused.')),
        }),
      ),
    ),
  },
  'The five steps of the host check under one prefix.',
);

const doctorHostReport = shape<DoctorHostReport>({
  ...head,
  kind: req({ const: 'DoctorHostReport' }),
  operation: req({ const: 'doctor-host' }),
  environment: req(str('Always empty: the check concerns a host, not an environment.')),
  url: req(str()),
  prefixes: req(arrayOf(ref('prefixCheck'))),
  recommended: opt(str('The prefix to configure: refs/nyl/ when it works, else the first that does; absent when none does (NYL-HOST-INCOMPATIBLE).')),
  leftovers: req(strings('Refs of the scratch namespace the check could not delete; the next run deletes them.')),
  details: req({ type: 'object' }),
  ...tail,
});

function doctorHostSchema(): JsonSchemaObject {
  return document(
    'doctor-host-report',
    'Nyl DoctorHostReport',
    'What `nyl doctor host URL -o json` prints: the verdict of each step of the host check, per coordination prefix, and the prefix to configure. A command line refused before the check prints the short refusal form.',
    { oneOf: [{ $ref: '#/$defs/report' }, { $ref: '#/$defs/refusal' }] },
    { report: doctorHostReport, refusal: inspectRefusal('DoctorHostReport', 'doctor-host'), prefixCheck: hostPrefixCheck },
  );
}

// --- the document -----------------------------------------------------------------------------

/** Every `#/$defs/<name>` a schema refers to, at any depth. */
function refsOf(value: unknown, out: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) for (const v of value) refsOf(v, out);
  else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')) out.add(v.slice('#/$defs/'.length));
      else refsOf(v, out);
    }
  }
  return out;
}

/**
 * A published schema: its own definitions, then the shared ones it reaches (only those, so that
 * each file reads on its own), in the order of DEFS.
 */
function document(name: string, title: string, description: string, body: JsonSchemaObject, own: Record<string, JsonSchemaObject>): JsonSchemaObject {
  const reached = new Set<string>();
  let frontier = refsOf([body, own]);
  while (frontier.size > 0) {
    const next = new Set<string>();
    for (const def of frontier) {
      if (reached.has(def) || def in own) continue;
      reached.add(def);
      if (!(def in DEFS)) throw new Error(`schema ${name} refers to #/$defs/${def}, which is not defined`);
      refsOf(DEFS[def as DefName], next);
    }
    frontier = next;
  }
  const shared = Object.entries(DEFS).filter(([def]) => reached.has(def));
  return {
    $schema: DRAFT,
    $id: `${ID_BASE}${name}.json`,
    title,
    description: `${description} Generated from src/report/schemas.ts by \`npm run schemas\`; raise formatVersion on any incompatible change.`,
    ...body,
    $defs: { ...own, ...Object.fromEntries(shared) },
  };
}

/**
 * Every report schema, by file name (schemas/<name>.schema.json). unitKinds: the kinds of the
 * driver registry, which the unit rows name.
 */
export function reportJsonSchemas(unitKinds: readonly string[]): Record<string, JsonSchemaObject> {
  return {
    'status-report': statusSchema(unitKinds),
    'reconcile-report': reconcileSchema(unitKinds),
    'state-operation-report': stateOperationSchema(unitKinds),
    'log-report': logSchema(),
    'show-report': showSchema(),
    'outputs-report': outputsSchema(),
    'graph-report': graphSchema(),
    'doctor-host-report': doctorHostSchema(),
  };
}
