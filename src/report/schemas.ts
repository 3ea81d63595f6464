/**
 * The report shapes, each declared once: the documents `-o json` prints (StatusReport,
 * ReconcileReport, StateOperationReport, the inspection reports, ...), with the short refusal form
 * a command prints when it fails before it has a report. Each shape is a schema of the one schema
 * DSL (src/util/schema.ts): report/types.ts names their TypeScript types (`Infer`), and
 * reportJsonSchemas() publishes them as JSON Schemas (draft 2020-12), which
 * scripts/gen-schemas.mjs writes to schemas/ and the end-to-end tests validate every `-o json`
 * document against. One DSL rather than a builder of report/'s own: the source format and the
 * reports then publish alike, and a node kind added for one serves the other.
 *
 * What `details` holds comes from layers this one cannot import: those objects are published field
 * by field, and typed as plain records. The unit kinds arrive as a parameter for the same reason
 * (the driver registry owns them); they only describe the `kind` field.
 */
import type { Diagnostic } from '../errors/diagnostic';
import {
  type Field,
  type JsonSchemaObject,
  type Schema,
  type StringSchema,
  boolean,
  constant,
  details,
  integer,
  json,
  list,
  map,
  object,
  oneOf,
  ref,
  required,
  string,
  toJsonSchema,
  typed,
  union,
} from '../util/schema';

export const REPORT_API_VERSION = 'nyl.io/v1';
export const FORMAT_VERSION = 1;

const DRAFT = 'https://json-schema.org/draft/2020-12/schema';
const ID_BASE = 'https://nyl.io/schemas/v1/';

// --- shorthands -------------------------------------------------------------------------------

const req = required;
type StringOptions = Pick<StringSchema, 'pattern' | 'examples' | 'format'>;
const str = (description?: string, extra: StringOptions = {}): StringSchema => string({ ...extra, ...(description ? { description } : {}) });
const strings = (description?: string) => list(string(), description ? { description } : {});
const dateTime = (description?: string): StringSchema => str(description, { format: 'date-time' });

/** A list of names as prose: "a, b or c". */
function orList(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}

// --- shared definitions ----------------------------------------------------------------------

const sourceLocation = object(
  {
    file: req(str('Path relative to the project root.')),
    line: integer({ minimum: 1 }),
    column: integer({ minimum: 1 }),
    pointer: str('JSON pointer inside the resource document.'),
  },
  { description: 'Where in source, for NYL-SOURCE-INVALID.' },
);

/** A diagnostic keeps the type the errors layer declares (its code is one of the catalog's). */
const diagnostic = typed(
  object(
    {
      code: req(str(undefined, { pattern: '^NYL-[A-Z0-9]+(-[A-Z0-9]+)*$' })),
      severity: req(oneOf(['error', 'warning', 'note'])),
      message: req(str()),
      fix: req(str()),
      units: list(string(), { minItems: 1 }),
      location: sourceLocation,
      data: json(
        'object',
        'Structured data for machines, such as the lease holder of NYL-LEASE-HELD, the evidence listing of a recover --unit refusal or the run and result of NYL-RUN-LATE-CHECKPOINT.',
      ),
    },
    { description: 'An error, warning or note: a stable code from the catalog (docs/error-codes.md), a message and its fix.' },
  ),
).as<Diagnostic>();

const holder = object({
  name: req(str('"Name <email>" of the holder.')),
  host: req(str()),
  pid: req(integer()),
  boot: str("The boot id of the holder's machine (Linux): with started, what proves a holder on the same machine gone."),
  started: str("When the holder's process started, in clock ticks since that boot (Linux)."),
});

const leaseBreakShort = object({
  by: req(str('"Name <email>" of whoever broke the lease.')),
  reason: req(str()),
  at: req(dateTime()),
});

/** A lease break as a transition commit records it (src/run/takeover.ts, not importable here). */
const leaseBreak = object(
  {
    by: req(str('"Name <email>" of whoever broke the lease.')),
    reason: req(str()),
    at: req(dateTime()),
    run: req(str('The run whose lease was broken.')),
    operation: req(str(undefined, { examples: ['reconcile'] })),
    holder: req(str('"Name <email>" of the holder whose lease was broken.')),
  },
  { description: 'A lease break as a transition commit records it.' },
);

const wait = object(
  {
    pointer: req(str()),
    unit: req(str()),
    reason: req(str(undefined, { examples: ['no-current-receipt'] })),
  },
  { description: 'What a unit waits for: the JSON pointer of the dependency inside its spec, such as /dependsOn/0 or /env/DB_URL.' },
);

/** Where state lives, as src/state/location.ts describes it (describeLocation). */
const location = object(
  {
    repository: req(str("The state repository's URL; for state kept in the clone itself, the clone's path.")),
    publishURL: str('Where pushes go, when it differs from repository.'),
    localPath: req(str('The local repository Nyl reads and writes objects in: the state repository itself, the checkout, or a bare cache repository.')),
    desiredRef: req(str(undefined, { pattern: '^refs/', examples: ['refs/heads/nyl/dev/desired'] })),
    observedRef: req(str(undefined, { pattern: '^refs/', examples: ['refs/heads/nyl/dev/observed'] })),
    path: str("The environment's directory on shared state refs (state.path)."),
    coordinationRefPrefix: req(str(undefined, { pattern: '^refs/.*/$', examples: ['refs/nyl/'] })),
    chosenBy: req(
      str('Which rule of the resolution order chose the repository.', {
        examples: ['Environment dev', "the checkout's origin", 'the clone itself (no remote)'],
      }),
    ),
    created: constant('true', 'Present when state init created the local bare repository.'),
  },
  { description: "Where the environment's state lives, as resolved by the spec's order." },
);

const oid = str('A Git object id.', { pattern: '^([0-9a-f]{40}|[0-9a-f]{64})$' });
const executionKey = str(undefined, { pattern: '^sha256:[0-9a-f]{64}$' });

/** One checkpoint in the evidence listing of recover --unit (src/commands/recover/recover-unit.ts). */
const evidence = object({
  run: req(str()),
  source: req(oneOf(['run', 'evidence'], 'A run ref, or an evidence ref a takeover kept.')),
  result: req(oneOf(['receipt', 'failed', 'uncertain', 'not-started', 'started'], "The checkpoint's result; started: the unit started without a checkpoint.")),
  executionKey: req(ref('executionKey', executionKey)),
  uid: req(str()),
  acceptable: req(
    boolean(
      "Would --accept adopt this checkpoint: a receipt for the unit's desired uid and execution key, which the source still resolves to, of a unit that is not held.",
    ),
  ),
});

/** A unit's condition as observed state records it (src/state/shapes.ts). */
const condition = object({
  type: req(oneOf(['failed', 'uncertain'])),
  retryable: req(boolean()),
  reason: req(str()),
  run: req(str()),
  since: req(dateTime()),
  code: str('The code that caused it, such as NYL-RUN-SUPERSEDED.'),
  evidence: strings(),
  acknowledgementRequired: boolean('A retry needs recover --retry --reason (a Command timeout).'),
  output: strings('The last lines the tool printed in the execution that failed, masked.'),
  toolState: json(
    'object',
    "What the driver recorded of its tool's own state after the attempt that failed: a Terraform module's state, which the unit's next attempt recognizes as its own.",
  ),
});

/** The definitions documents share, in the order they publish them. */
const DEFS: Record<string, Schema> = {
  oid,
  executionKey,
  holder,
  break: leaseBreakShort,
  leaseBreak,
  wait,
  location,
  evidence,
  condition,
  diagnostic,
};

const oidRef = (description?: string) => ref('oid', oid, description);
const executionKeyRef = (description?: string) => ref('executionKey', executionKey, description);
const leaseBreakRef = (description?: string) => ref('leaseBreak', leaseBreak, description);

// --- the common fields of every document ------------------------------------------------------

/** The fields every document starts with (the published order of the fields is the schema's). */
const head = {
  apiVersion: req(constant(REPORT_API_VERSION)),
  formatVersion: req(constant(FORMAT_VERSION)),
};
const diagnostics = () => list(ref('diagnostic', diagnostic));
/** ... and ends with. */
const tail = {
  errors: req(diagnostics()),
  warnings: req(diagnostics()),
  notes: req(diagnostics()),
};

/**
 * The short form of a command that failed before it had a report: its kind, its `operation`
 * field (none for status) and the reasons under errors.
 */
export function refusalShape<K extends string, O extends Record<string, Field>>(
  kind: K,
  operation: O,
  environment = str('The environment named by -e; empty when the command line had none.'),
) {
  return object({
    ...head,
    kind: req(constant(kind)),
    ...operation,
    environment: req(environment),
    result: req(constant('refused')),
    details: req(json('object')),
    ...tail,
    errors: req(list(ref('diagnostic', diagnostic), { minItems: 1 })),
  });
}

// --- StatusReport ----------------------------------------------------------------------------

/**
 * A unit's state in `nyl status`. pending, outdated, failed and uncertain units execute in the next
 * reconcile (after their dependencies, if they wait); an awaiting-dependencies unit is only
 * re-evaluated after its dependencies ran, and may stay current.
 */
const unitStatusState = oneOf(
  [
    'current',
    'pending',
    'outdated',
    'awaiting-dependencies',
    'blocked',
    'failed',
    'uncertain',
    'held',
    'leaving',
    'pending-teardown',
    'tearing-down',
    'retained',
    'released',
    'running',
    'awaiting-approval',
    'drifted',
  ],
  "current: the receipt's execution key equals the resolved one; pending: no receipt yet, the next reconcile executes it (after its dependencies, if it waits for them); outdated: a receipt for another execution key, the next reconcile executes it again; awaiting-dependencies: waits for dependencies the next reconcile executes first, and is re-evaluated after them: nothing of its own changed, so it may stay current without executing; blocked: waits for something that will not get a current receipt by itself, or cannot be rendered; failed; uncertain; held; leaving: no longer in the ownership set, and the next reconcile keeps a tombstone or releases it (deletionPolicy Retain or Release); pending-teardown: its teardown waits (for --allow-teardown, its dependents, or retained tombstones that cite it); tearing-down: the next reconcile or teardown tears it down, or its teardown started and goes on; retained: a tombstone that keeps its receipt; released: its resources were left in place, and state keeps a record; running: a live run started it and has not recorded its result yet; awaiting-approval: the next reconcile executes it only with an approval (--approve), and its dependents wait; drifted: nyl verify observed that its resources no longer match its receipt (the next reconcile repairs it under driftRepair converge; under manual it stays drifted until --reapply).",
);

const driftObservation = object(
  {
    status: req(oneOf(['in-sync', 'drifted', 'unknown'])),
    observedAt: req(dateTime()),
    run: req(str('The nyl verify that observed it (its lease run id).')),
    receipt: str('The run of the receipt it observed.'),
    detail: str(),
    code: str('A finding worse than drift, by its code: NYL-BACKEND-STATE-LOST (the Terraform state its receipt recorded is gone, emptied or replaced).'),
  },
  { description: 'One drift observation by nyl verify.' },
);

const APPROVAL_REASONS = ['approval-required', 'manual-drift-repair', 'manual-reapply', 'manual-local', 'digest-mismatch'] as const;
const requireDigest = () => req(boolean('Only a plan-bound approval (--approve <unit>=<digest>) lets it run.'));

/** The rows of `nyl status`, by unit. */
export function statusUnit(unitKinds: readonly string[]) {
  return object({
    name: req(str()),
    kind: req(str(`${orList(unitKinds)}; '-' for a held marker without a kind.`, { examples: unitKinds.slice(0, 1) })),
    state: req(unitStatusState),
    receipt: req(
      oneOf(
        ['current', 'outdated', 'unresolved', 'none'],
        'current or outdated: the receipt against the execution key the unit resolves to; unresolved: the unit awaits its dependencies, so its key is not known yet; none: no receipt.',
      ),
    ),
    uid: str('The incarnation (a UUIDv7).'),
    executionKey: executionKeyRef('The execution key the unit resolves to now.'),
    receiptKey: executionKeyRef("The execution key of the unit's receipt."),
    lastRun: object({ run: req(str()), result: req(str(undefined, { examples: ['executed', 'failed', 'uncertain'] })), at: req(dateTime()) }),
    running: object({ run: req(str('The live run that started the unit (its lease run id).')), startedAt: req(dateTime()) }),
    detail: req(str('What the planner decided and why, in words (rendered from reason).')),
    action: str("The planner's action for the unit; absent for a released record.", {
      examples: ['execute', 'current', 'wait', 'blocked', 'held', 'awaiting-approval', 'failed', 'uncertain', 'teardown', 'pending-teardown'],
    }),
    reason: str("The machine code of the action's reason: what detail is rendered from.", {
      examples: [
        'receipt-current',
        'no-receipt',
        'key-changed',
        'dependency-pending',
        'upstream-pending',
        'dependency-blocked',
        'held',
        'needs-recovery',
        'approval-required',
        'consumers-first',
      ],
    }),
    condition: object({
      type: req(oneOf(['failed', 'uncertain'])),
      retryable: req(boolean('A retryable failure runs again at the next reconcile.')),
      reason: req(str()),
      run: req(str()),
      since: req(dateTime()),
      code: str("The failure's own code, when it has one (NYL-BACKEND-STATE-LOST, NYL-SECRET-UNAVAILABLE, ...): status reports it with that code's fix."),
    }),
    hold: object({ by: req(str()), reason: str(), since: req(dateTime()), pending: str('The source commit whose changes wait while held.') }),
    waits: list(ref('wait', wait)),
    drift: driftObservation,
    driftHistory: list(driftObservation),
    approval: object({
      reason: req(oneOf(APPROVAL_REASONS)),
      requireDigest: requireDigest(),
      digest: str('The digest the last run planned, when an approval named another.'),
    }),
  });
}

export const lease = object(
  {
    status: req(oneOf(['live', 'expired', 'broken'])),
    run: req(str()),
    operation: req(str(undefined, { examples: ['reconcile', 'state-init'] })),
    holder: req(ref('holder', holder)),
    acquiredAt: req(dateTime()),
    deadline: req(dateTime()),
    broken: ref('break', leaseBreakShort, "Its break, when status is broken. A live recover's lease carries the break it imports and shows none."),
  },
  { description: "The environment's lease, when a ref holds one." },
);

export function statusReport(unit: ReturnType<typeof statusUnit>) {
  return object({
    ...head,
    kind: req(constant('StatusReport')),
    environment: req(str()),
    source: oidRef('The source commit units were rendered at.'),
    desired: oidRef("The desired ref's commit that was read."),
    observed: oidRef("The observed ref's commit that was read."),
    lease: ref('lease', lease),
    units: req(map(ref('unit', unit), 'Every unit of the ownership set, and every unit state still holds that left it, keyed by name.')),
    unitOrder: req(
      strings(
        'Table order: the ownership set in dependency order (ties by name), then units that left it and that state still holds, by name (code-unit order).',
      ),
    ),
    details: req(details('What status read: where state lives.', { location: ref('location', location) })),
    ...tail,
  });
}

// --- ReconcileReport -------------------------------------------------------------------------

const RECONCILE_RESULTS = [
  'executed',
  'current',
  'imported',
  'recovered',
  'removed',
  'retained',
  'released',
  'failed',
  'uncertain',
  'held',
  'drifted',
  'pending-teardown',
  'tearing-down',
  'blocked',
  'awaiting-approval',
  // `nyl plan`: what the next reconcile would do.
  'execute',
  'wait',
  'teardown',
  'retain',
  'release',
];

/**
 * An approval as a transition commit and a desired document record it: the shape of the state
 * documents' ApprovalRecord (src/state/documents.ts), declared again because reports do not
 * depend on state.
 */
const approvalRecord = object({
  by: req(strings('The approvers.')),
  source: req(str(undefined, { examples: ['github', 'gitlab', 'azure', 'git', 'asserted'] })),
  asserted: boolean('The approvers came from --approved-by/--approval-source.'),
  at: req(dateTime()),
  digest: str('Plan-bound: the reviewed digest.'),
  executionKey: executionKeyRef('Desired-bound: the execution key the approval covered.'),
});

/** The rows of `nyl reconcile`, `nyl teardown` and `nyl plan`, by unit. */
export function reconcileUnit(unitKinds: readonly string[]) {
  return object({
    kind: req(str("The unit's kind; '-' for a held marker without a kind.", { examples: [...unitKinds] })),
    result: req(
      oneOf(
        RECONCILE_RESULTS,
        "What the run did with the unit, as the specification's Runs page defines the results. This version produces executed, current, imported, recovered (a dead run left it uncertain and this run did not execute it: exit 4), removed (torn down, or a resumed held marker whose unit left the ownership set), retained (a tombstone kept), released (resources left in place), pending-teardown and tearing-down (a teardown that waits, or that started and did not end: exit 2), failed, uncertain, held, blocked, awaiting-approval (the unit executes only with an approval: exit 2, its dependents are blocked) and drifted (nyl verify observed drift and driftRepair is manual: exit 2). Under --unit the table also lists every other unit the transition commit changes (imported, recovered, held); only the units named in selected count for the exit code.",
      ),
    ),
    detail: req(
      str(
        "The reason, such as the failure or the wait: '/dependsOn/0 waits for broken (no-current-receipt)'. A failure reason keeps every line its driver gave; the text table shows the first.",
      ),
    ),
    uid: str('The incarnation (a UUIDv7).'),
    executionKey: executionKeyRef(),
    durationMs: integer({ minimum: 0, description: 'How long the driver ran.' }),
    dispatched: req(boolean("Whether the unit's driver started in this run.")),
    uncertain: boolean('A held unit whose condition is uncertain (exit 4, as in status).'),
    waits: list(ref('wait', wait)),
    outputs: strings('Names of the outputs of the receipt the run produced (values are in the observed state, not in the report).'),
    leaving: boolean('In the leaving section, printed first: the unit left the ownership set, or is torn down (a request, a kind change).'),
    incomplete: boolean('Removed under --allow-incomplete: its driver could not claim the removal.'),
    code: str('The stable code of a failure that has one, such as NYL-SECRETS-KEY-MISSING; a warning with that code carries its fix.', {
      pattern: '^NYL-[A-Z0-9-]+$',
    }),
    action: str("`nyl plan`: the planner's action for the unit.", {
      examples: ['execute', 'current', 'wait', 'blocked', 'held', 'awaiting-approval', 'drifted', 'teardown', 'retain', 'release', 'pending-teardown'],
    }),
    reason: str("`nyl plan`: the machine code of the action's reason.", {
      examples: ['no-receipt', 'key-changed', 'receipt-current', 'dependency-pending', 'needs-allow-teardown'],
    }),
    digest: str(
      "`nyl plan`: what a plan-bound approval names (--approve <unit>=<digest>), for a unit that would execute: for a kind whose driver plans, sha256 of the execution key, the driver plan's digest and the receipt it starts from; for other kinds the execution key. Absent while the key is not decided (a new incarnation, a unit that waits for its dependencies) or when the driver could not plan.",
      { pattern: '^sha256:[0-9a-f]{64}$' },
    ),
    changes: str("`nyl plan`: the summary of the driver's plan, for a kind whose driver plans.", { examples: ['+1 ~0 -0'] }),
    keyChanges: list(
      object({
        read: req(oneOf(['spec', 'input', 'module-file', 'module', 'trigger', 'secret'])),
        fields: strings('spec: the top-level fields of its rendering that differ.'),
        path: str('input, module-file, module: the source path; a directory (its files were not recorded) ends in /.'),
        how: oneOf(['added', 'changed', 'removed']),
        unit: str('trigger: the unit named in triggers; secret: the producer.'),
        output: str('secret: the sensitive output whose value changed.'),
      }),
      {
        description:
          "`nyl plan`: why the unit's execution key changed since its receipt, read by read (what its detail names: 'input migrations/003.sql added'). Absent when nothing recorded tells (state written before its reads were recorded): the detail then says 'execution key changed'.",
      },
    ),
    diff: strings(
      "`nyl plan`: the unit's recorded rendering against the new one, as YAML (keys sorted) in unified-diff lines: '@@ -a,b +c,d @@' hunk heads, then lines starting with ' ', '-' or '+'. For a unit that waits for its dependencies, the new one is its preview: each output of a unit that executes first reads '(known after apply)'.",
    ),
    approval: object({
      reason: req(oneOf(APPROVAL_REASONS)),
      requireDigest: requireDigest(),
      digest: str('The digest to approve, when the run knows it (the execution key of a kind that does not plan; the plan a run made).'),
    }),
    approvedBy: approvalRecord,
  });
}

const reconcileDetails = details(
  'Operation-specific data. imported, recovered, leaseBroken and leaseBrokenEarlier are present only when the run has something to record; held is present after every run that published its transition.',
  {
    imported: strings("Units whose receipt or failure was imported from a dead run's checkpoints."),
    recovered: strings('Units a dead run left without a result: uncertain after the import.'),
    held: strings('Units held by holds delivered to this run, as written in its transition commit (possibly empty).'),
    heldAfterRun: strings('Units held by holds that reached the run after its last check, applied in a hold commit after the run released its lease.'),
    leaseBroken: leaseBreakRef('The break of the broken lease this run took over.'),
    leaseBrokenEarlier: list(leaseBreakRef(), { description: 'Earlier breaks that an importer which died did not record, oldest first.' }),
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

export function reconcileReport(unit: ReturnType<typeof reconcileUnit>) {
  return object({
    ...head,
    kind: req(constant('ReconcileReport')),
    operation: req(
      oneOf(
        ['reconcile', 'teardown', 'plan'],
        'reconcile, teardown for `nyl teardown`, or plan for `nyl plan` (what the next reconcile would do: nothing was run or written, and the rows carry action, reason, digest, changes and diff).',
      ),
    ),
    environment: req(str()),
    run: str('The run id (a UUIDv7). Absent when the run found nothing to do and took no lease.'),
    source: req(oidRef('The source commit units were rendered at.')),
    sourceOverride: req(boolean('True when --source chose the source commit.')),
    sourceWorktree: boolean('True when --worktree made the source commit a snapshot of the working files (warning NYL-SOURCE-WORKTREE).'),
    desired: oidRef("The desired ref's commit after the run."),
    observed: oidRef("The observed ref's commit after the run."),
    committed: req(boolean('Whether the run wrote a transition commit.')),
    units: req(
      map(
        ref('unit', unit),
        'The units of the run keyed by name; with --unit/--units only the named units (and every other unit the transition commit changes). Units leaving the ownership set are listed with leaving: true; a retained tombstone nothing changes is left out.',
      ),
    ),
    unitOrder: req(
      strings(
        'Table order: the leaving section first (teardowns in dispatch order, consumers first; then tombstones and releases; then what waits), then dispatched units in dispatch order, then the rest in dependency order (ties by name, in code-unit order).',
      ),
    ),
    selected: strings('The units named by --unit/--units; only these count for the exit code.'),
    details: req(reconcileDetails),
    ...tail,
  });
}

/**
 * A command over several environments (repeated -e, -l, -g), in the schema of its command's
 * family: `operations` are the commands of that family, and each section is a `report` or a
 * `refusal` of that schema.
 */
export function multiEnvironmentReport<O extends string, R extends Schema, F extends Schema>(operations: readonly O[], report: R, refusal: F) {
  return object(
    {
      ...head,
      kind: req(constant('MultiEnvironmentReport')),
      operation: req(oneOf(operations)),
      environmentOrder: req(
        strings(
          'The environments in the order they ran (spec.dependsOn: dependencies first, for teardown consumers first; ties by name): the order of the text sections. With --unit, an environment that no unit option names is left out.',
        ),
      ),
      environments: req(
        map(
          union([ref('report', report), ref('refusal', refusal)]),
          "Each environment's own document, keyed by name: the report its single-environment command prints, or the short refusal form when it was refused, blocked (reconcile: by a dependency environment, teardown: by a dependent one, that did not end 0; NYL-ENVIRONMENT-BLOCKED, details.blockedBy), or not started after a signal (NYL-RUN-CANCELLED, details.notStarted).",
        ),
      ),
      exitCodes: req(
        map(
          integer({ minimum: 0, maximum: 4 }),
          "Each environment's exit code, as its own single-environment command would exit; the command exits with the most severe (4 > 3 > 1 > 2 > 0).",
        ),
      ),
      ...tail,
    },
    {
      description:
        'A command over several environments (repeated -e, -l, -g): each environment ran as its own command (for writers its own lease, run and commits).',
    },
  );
}

// --- StateOperationReport ----------------------------------------------------------------------

/** One damaged state document recover repaired (src/commands/recover/recover-damage.ts, RepairRecord). */
const repair = object({
  ref: req(str('The ref that held it.', { examples: ['refs/heads/nyl/dev/desired'] })),
  path: str("The file of the ref's commit, relative to the environment's directory; absent when the ref is not a commit.", { examples: ['units/web.yaml'] }),
  object: req(str('The damaged object.')),
  problem: req(str('What is wrong with it.')),
  action: req(str('What recover did about it.')),
});

const leaseDamage = object(
  {
    object: req(str('The damaged object the lease ref pointed at.')),
    problem: req(str()),
    keptAt: req(str('The ref that keeps the damaged object.', { pattern: '^refs/' })),
  },
  { description: 'lease break of a damaged lease ref: what the ref pointed at, and the ref that keeps it.' },
);

const stateInitState = object(
  {
    generation: req(integer({ minimum: 1, description: 'Raised by state init --fresh.' })),
    status: req(oneOf(['active', 'deleted', 'moved'])),
    fresh: boolean('Whether this init started every unit over; absent when nothing changed.'),
  },
  { description: 'state init: state.yaml as the operation left it.' },
);

const deliveredTo = object(
  {
    run: req(str()),
    runner: req(ref('holder', holder)),
    operation: req(str(undefined, { examples: ['reconcile'] })),
  },
  { description: 'hold: the running run the hold was delivered to.' },
);

/** One unit nyl verify checked (src/commands/verify/verify.ts). */
const verifiedUnit = object({
  drift: req(
    oneOf(
      ['in-sync', 'drifted', 'unknown'],
      'What the check observed. drifted: exit 2, with the warning NYL-UNIT-DRIFTED; unknown: the kind has no check, or the check failed (then also the error NYL-DRIFT-CHECK-FAILED, exit 1).',
    ),
  ),
  kind: req(str("The kind of the unit's receipt, whose driver checked it.")),
  detail: str('What the driver said, or why the check failed.'),
  code: str('A finding worse than drift (drift is then drifted): NYL-BACKEND-STATE-LOST, with its warning instead of NYL-UNIT-DRIFTED.'),
});

const movedBranch = object({
  repository: req(str('The local repository of the branch: the checkout, or a cache repository.')),
  ref: req(str('The branch.')),
  from: req(oidRef('Its tip before the reset.')),
  to: req(oidRef("The state repository's tip it was moved to.")),
  fastForward: boolean('The old tip was in the history of the new one: nothing was lost.'),
  keptAs: str('Where the old tip was kept (a branch that held local work), in the same repository.'),
});

const keptDigest = object({
  unit: req(str('The unit whose receipt records the digest.')),
  output: req(str('The sensitive output.')),
  keyId: str(
    'The key the digest was made with, which consumers need to check it until the unit executes again; absent for an unkeyed digest (sha256 of the first format, or the execution that produced the value).',
  ),
});

const restoredFrom = object(
  { commit: req(oidRef()), desired: oidRef(), observed: oidRef() },
  {
    description:
      'state restore: the commit --to named (full id), and the commits the desired and observed unit documents were taken from (absent: that ref had no commit then).',
  },
);

/** The details of recover, lease break, hold, resume and forget. */
const recoveryDetails = {
  unit: str('recover --unit, hold, resume, state forget: the unit.'),
  evidence: list(ref('evidence', evidence), {
    description: 'recover --unit: every checkpoint of the unit that a run ref or evidence ref holds, newest run first.',
  }),
  condition: ref('condition', condition, "recover --unit: the unit's condition before the command."),
  runs: strings('recover: the run refs it imported and consumed.'),
  imported: strings('recover: units whose receipt or failure was imported from a dead run.'),
  recovered: strings('recover: units left uncertain by the import, and the unit named by --unit.'),
  held: strings('recover: units held by hold signals left for dead runs.'),
  repaired: list(repair, { description: 'recover: the damaged state documents it replaced or set aside.' }),
  leaseBroken: leaseBreakRef('recover: the break it recorded.'),
  leaseBrokenEarlier: list(leaseBreakRef(), { description: 'recover: earlier breaks an importer that died did not record, oldest first.' }),
  holder: ref('holder', holder, 'lease break: the holder of the lease.'),
  run: str('lease break: the run of the lease. verify: the run id of its lease, which its drift observations record as their run.'),
  operation: str('lease break: the operation of the lease.', { examples: ['reconcile'] }),
  broken: ref('break', leaseBreakShort, 'lease break: the break, new or found.'),
  lease: oidRef('lease break: the lease commit that records the break.'),
  damaged: leaseDamage,
  marker: boolean('hold: whether the unit got a held marker (it never ran), rather than being held at its latest receipt.'),
  deliveredTo,
  was: oneOf(
    ['retained', 'pending-teardown', 'released'],
    'state forget: what the unit was in state before it was dropped: a retained tombstone, a unit whose teardown waited, or a released record.',
  ),
  superseded: strings(
    'resume: the runs whose hold signal for the unit it took back (a hold delivered to a run and not applied yet), so that the hold never takes effect.',
  ),
};

/** The details of state delete, restore, verify, reset, move and reseal. */
const stateDetails = {
  removed: strings(
    'state delete: the units it removed from the state refs (desired and observed documents, held markers, released records), those its teardown removed (--teardown) included, sorted.',
  ),
  teardown: ref(
    'teardownReport',
    undefined,
    'state delete --teardown: the report of the teardown it ran first (nyl teardown --all), also when it stopped there.',
  ),
  restoredFrom,
  restored: map(
    oneOf(['restored', 'removed']),
    'state restore: each unit whose documents the restore changes (or would change), by unit: restored (a document remains) or removed.',
  ),
  resurrected: map(str(), 'state restore: unit -> the uid the restore brings back, an incarnation the state no longer had (warning NYL-RESTORE-INCARNATIONS).'),
  dropped: map(
    str(),
    'state restore: unit -> the uid the restore takes away, an incarnation the restored commit does not have (warning NYL-RESTORE-INCARNATIONS).',
  ),
  holdsKept: strings('state restore: units held now, which stay held with their current hold.'),
  withdrawn: strings('teardown --cancel: the units whose teardown request it withdrew (or, unchanged, none), sorted.'),
  started: strings(
    'teardown --cancel --all: the units with a request whose teardown started (deleting, uncertain, or started by a run not imported yet): left as they are, each with the warning NYL-TEARDOWN-STARTED.',
  ),
  units: map(verifiedUnit, 'verify: what the drift check of each checked unit observed, by unit.'),
  discarded: strings('state reset: the units whose local receipts the state repository lacked and the reset discarded, sorted.'),
  branches: list(movedBranch, { description: 'state reset: each local branch it moved.' }),
  reason: str('state reset: the --reason given.'),
  skipped: map(str(), 'verify: the units it did not check, each with why (no receipt yet, held, a tombstone, left the ownership set).'),
  from: str(
    "state move: the old location: its repository (local for the clone's own branches), refs, path and coordination prefix, as its state.yaml names them.",
  ),
  to: str("state move: the new location, in the same form; the old state.yaml's movedTo."),
  carried: strings(
    "state move: the old location's run and evidence refs it copied to the new location (under the new coordination prefix), for the next importer there.",
  ),
  sealingKey: str(
    "state reseal: the id of the first key of the ring, which sealed and digested what it resealed (the first 16 hex digits of the key's sha256); absent when no usable key is configured.",
  ),
  resealed: strings(
    'state reseal: each sensitive output (unit.output) whose record it changed: sealed again with the first key in the current form, or digested again with it, or both; sorted.',
  ),
  kept: list(keptDigest, {
    description:
      'state reseal: digests of values a Terraform or OpenTofu backend keeps, not made by the first key: left as they are (warning NYL-RESEAL-KEPT), since only an execution of the unit digests them again.',
  }),
  unchanged: integer({ minimum: 0, description: 'state reseal: how many sensitive output records were already sealed and digested by the first key.' }),
  consumersToRun: strings(
    'state reseal: the units whose desired documents read an output whose digest changed: their execution keys cover it, so each executes once on the next reconcile (note NYL-RESEAL-CONSUMERS); sorted.',
  ),
};

const stateOperationDetails = details(
  'Operation-specific data. state init: location, state. state reset: discarded, branches, reason. state delete: removed, teardown (with --teardown). recover: unit, evidence, condition (with --unit), runs, imported (when it imported a broken run), recovered, held, repaired, leaseBroken, leaseBrokenEarlier. lease break: holder, run, operation, broken, lease, damaged. hold: unit, marker, deliveredTo. resume: unit, superseded. state forget: unit, was. state restore: restoredFrom, restored, resurrected, dropped, holdsKept. teardown --cancel: withdrawn, started. verify: run, units, skipped. state move: from, to, carried. state reseal: sealingKey, resealed, kept, unchanged, consumersToRun. The refusals of recover --unit keep unit, evidence and condition.',
  { location: ref('location', location), state: stateInitState, ...recoveryDetails, ...stateDetails },
);

export const stateOperationReport = object({
  ...head,
  kind: req(constant('StateOperationReport')),
  operation: req(
    str(
      "The operation, with the command's words joined by '-' (`nyl state forget`: forget, as its commits name it); for an unknown command, the word typed as the command (empty when the command line starts with an option).",
      {
        examples: [
          'state-init',
          'state-move',
          'state-restore',
          'state-reseal',
          'recover',
          'lease-break',
          'hold',
          'resume',
          'forget',
          'verify',
          'teardown-cancel',
        ],
      },
    ),
  ),
  environment: req(str('The environment named by -e; empty when the command line had none.')),
  result: req(
    oneOf(
      ['done', 'unchanged', 'delivered', 'refused'],
      'done: a commit landed (for lease break: the lease was broken); unchanged: nothing needed to change (exit 0, with the note NYL-UNCHANGED); delivered: nyl hold delivered the hold to a running run (exit 0, with the note NYL-HOLD-DELIVERED); refused: see errors (state delete --teardown that stopped after its teardown keeps the teardown report under details.teardown).',
    ),
  ),
  desired: oidRef("The desired ref's commit after the operation."),
  observed: oidRef("The observed ref's commit after the operation."),
  details: req(stateOperationDetails),
  ...tail,
});

/** The short form of a section of `nyl verify` over several environments that did not run (blocked, not started). */
const stateOperationSection = refusalShape(
  'StateOperationReport',
  { operation: req(str('The command of the multi-environment run.')) },
  str('The environment of the section.'),
);

// --- LogReport, ShowReport, OutputsReport (read-only inspection) -----------------------------

/** The short form of an inspection command that failed before it had a report. */
const inspectRefusal = <K extends string, O extends string>(kind: K, operation: O) => refusalShape(kind, { operation: req(constant(operation)) });

const inspectDetails = details('Where state lives.', { location: ref('location', location) });

export const logEntry = object(
  {
    operation: req(str("The Nyl-Operation trailer; '-' for a commit Nyl did not write.", { examples: ['reconcile', 'hold', 'state-init', 'state-move'] })),
    at: req(dateTime('Commit time (UTC).')),
    headline: req(str(undefined, { examples: ['nyl: reconcile dev (db, web)'] })),
    desired: oidRef('The commit on the desired ref; absent when the operation changed only the observed ref.'),
    observed: oidRef('The commit on the observed ref; absent when the operation changed only the desired ref.'),
    by: str('Nyl-Requested-By, else the commit author: "Name <email>".'),
    reason: str('Nyl-Reason.'),
    run: str('Nyl-Run: the run of a reconcile or teardown.'),
    source: str('Nyl-Source: the source commit, with " (override)" or " (worktree)".'),
    units: req(
      map(
        string(),
        "Each unit the body names, with what happened to it: the body's units result (or recover's, hold's, forget's action), then each list that names it (executed, imported, recovered, removed, held, ...), comma-separated.",
      ),
    ),
    moved: object({ from: str('The old location.'), to: str('The new location.') }, { description: 'A state move: from the body.' }),
    body: req(json('object', "The commit's YAML body as written (docs/design.md, Transition commits).")),
  },
  { description: 'One operation: its transition commits on the desired and observed refs (merged by message and commit time).' },
);

export const logReport = object({
  ...head,
  kind: req(constant('LogReport')),
  operation: req(constant('log')),
  environment: req(str()),
  unit: str('--unit: only operations that named the unit or changed its documents.'),
  entries: req(list(ref('entry', logEntry), { description: 'Newest first.' })),
  truncated: req(boolean('Older entries exist beyond the -n limit (default 20).')),
  details: req(inspectDetails),
  ...tail,
});

export const shownReceipt = object(
  {
    run: req(str()),
    executionKey: req(executionKeyRef()),
    finishedAt: req(dateTime()),
    outputs: req(json('object', 'The plain outputs; sensitive ones are never here.')),
    sensitiveOutputs: map(object({ sha256: req(str()) }), 'Each sensitive output by its digest: never its value, sealed or not.'),
    toolState: json(
      'object',
      "What the unit's driver recorded of its tool's own state after the execution: for Terraform and OpenTofu the backend, workspace, lineage, serial and resources of the module's state.",
    ),
    toolReads: list(str(), {
      description:
        "Source directories the tool read beyond what the kind declares (a module's calls of local modules): part of the unit's next execution keys.",
    }),
  },
  { description: "The unit's receipt: its run, execution key, finish time and outputs." },
);

export const showReport = object({
  ...head,
  kind: req(constant('ShowReport')),
  operation: req(constant('show')),
  environment: req(str()),
  unit: req(str()),
  desired: oidRef("The desired ref's commit that was read."),
  observed: oidRef("The observed ref's commit that was read."),
  desiredDocument: json('object', "The unit's desired document (units/NAME.yaml on the desired ref)."),
  observedDocument: json('object', "The unit's observed document, its receipt as `receipt` shows it (no desired copy, no sealed value)."),
  receipt: ref('receipt', shownReceipt),
  lastRuns: req(list(ref('entry', logEntry), { description: 'The last 5 operations that named the unit or changed its documents, newest first.' })),
  details: req(inspectDetails),
  ...tail,
});

export const outputsReport = object({
  ...head,
  kind: req(constant('OutputsReport')),
  operation: req(constant('outputs')),
  environment: req(str()),
  unit: str("--unit: outputs is that unit's {key: value}."),
  outputs: req(json('object', 'Without --unit: {unit: {key: value}} of every unit with a receipt; with --unit: {key: value}. Sensitive outputs are left out.')),
  sensitive: req(
    union([strings(), map(strings())], {
      exclusive: true,
      description: 'The sensitive outputs left out of outputs: {unit: [key]}, or [key] with --unit.',
    }),
  ),
  details: req(inspectDetails),
  ...tail,
});

// --- GraphReport ------------------------------------------------------------------------------

export const graphNode = object(
  { name: req(str()), kind: req(str()), state: req(unitStatusState), detail: req(str()) },
  { description: 'A unit, with its kind and its state as `nyl status` resolves it.' },
);

export const graphEdge = object(
  {
    from: req(str('The unit that runs first.')),
    to: req(str('The unit that waits for it.')),
    via: req(oneOf(['dependsOn', 'trigger', 'reference'])),
    output: str('For a reference: the output it reads.'),
    pointer: str("For a reference: where it stands in the consumer's spec (a JSON pointer such as /env/DB_URL)."),
  },
  { description: 'Why `to` waits for `from`: one edge per reason.' },
);

export const graphReport = object({
  ...head,
  kind: req(constant('GraphReport')),
  operation: req(constant('graph')),
  environment: req(str()),
  nodes: req(
    list(ref('node', graphNode), {
      description: 'The units in dependency order (ties by name), then units state holds that left the ownership set (without edges).',
    }),
  ),
  edges: req(list(ref('edge', graphEdge))),
  details: req(json('object', 'What status read: where state lives.')),
  ...tail,
});

// --- DoctorHostReport -------------------------------------------------------------------------

export const hostPrefixCheck = object(
  {
    prefix: req(str('The coordination prefix the lease ref was under.')),
    works: req(boolean('Every step passed: the host holds state with this prefix.')),
    steps: req(
      list(
        object({
          step: req(integer({ minimum: 1, maximum: 5 })),
          what: req(str()),
          verdict: req(oneOf(['passed', 'failed', 'not-run'])),
          detail: req(str('What the host did, or said when it refused.')),
        }),
      ),
    ),
  },
  { description: 'The five steps of the host check under one prefix.' },
);

export const doctorHostReport = object({
  ...head,
  kind: req(constant('DoctorHostReport')),
  operation: req(constant('doctor-host')),
  environment: req(str('Always empty: the check concerns a host, not an environment.')),
  url: req(str()),
  prefixes: req(list(ref('prefixCheck', hostPrefixCheck))),
  recommended: str('The prefix to configure: refs/nyl/ when it works, else the first that does; absent when none does (NYL-HOST-INCOMPATIBLE).'),
  leftovers: req(strings('Refs of the scratch namespace the check could not delete; the next run deletes them.')),
  details: req(json('object')),
  ...tail,
});

// --- the published documents -------------------------------------------------------------------

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

/** The shared definitions a document reaches from its body and its own definitions. */
function sharedDefs(name: string, reachable: unknown, own: Record<string, JsonSchemaObject>): Record<string, JsonSchemaObject> {
  const shared: Record<string, JsonSchemaObject> = Object.fromEntries(Object.entries(DEFS).map(([def, schema]) => [def, toJsonSchema(schema)]));
  const reached = new Set<string>();
  let frontier = refsOf(reachable);
  while (frontier.size > 0) {
    const next = new Set<string>();
    for (const def of frontier) {
      if (reached.has(def) || def in own) continue;
      reached.add(def);
      if (!(def in shared)) throw new Error(`schema ${name} refers to #/$defs/${def}, which is not defined`);
      refsOf(shared[def], next);
    }
    frontier = next;
  }
  return Object.fromEntries(Object.entries(shared).filter(([def]) => reached.has(def)));
}

/**
 * A published schema: its own definitions, then the shared ones it reaches (only those, so that
 * each file reads on its own), in the order of DEFS.
 */
function document(name: string, title: string, description: string, body: JsonSchemaObject, own: Record<string, JsonSchemaObject>): JsonSchemaObject {
  return {
    $schema: DRAFT,
    $id: `${ID_BASE}${name}.json`,
    title,
    description: `${description} Generated from src/report/schemas.ts by \`npm run schemas\`; raise formatVersion on any incompatible change.`,
    ...body,
    $defs: { ...own, ...sharedDefs(name, [body, own], own) },
  };
}

/** A document's own definitions, published. */
const published = (defs: Record<string, Schema>): Record<string, JsonSchemaObject> =>
  Object.fromEntries(Object.entries(defs).map(([def, schema]) => [def, toJsonSchema(schema)]));

const oneOfDefs = (...names: string[]): JsonSchemaObject => ({ oneOf: names.map((n) => ({ $ref: `#/$defs/${n}` })) });

/** `nyl status` without -e, -l or -g: the environments there are to name (src/commands/inspect/environment-list.ts). */
export const environmentListReport = object(
  {
    ...head,
    kind: req(constant('EnvironmentListReport')),
    environments: req(
      list(
        object({
          name: req(str('The name -e takes.')),
          template: str("An instance's EnvironmentTemplate; absent for a declared Environment."),
          labels: req(map(string(), 'Its metadata labels (none for an instance).')),
          dependsOn: req(strings('The environments it depends on (none for an instance).')),
        }),
        {
          description:
            "The Environments the project declares at HEAD, by name; then the EnvironmentTemplate instances the templates' state locations hold refs of, by name (the web view's list: a closed preview whose state was deleted is listed until its refs are removed).",
        },
      ),
    ),
    ...tail,
  },
  {
    description:
      'What `nyl status` prints when no environment is selected: the environments to pick from. Warnings: templates whose instances could not be listed (their state was unreachable).',
  },
);

function statusSchema(unitKinds: readonly string[]): JsonSchemaObject {
  const unit = statusUnit(unitKinds);
  const [report, refusal] = [statusReport(unit), refusalShape('StatusReport', {})];
  return document(
    'status-report',
    'Nyl StatusReport',
    'What `nyl status -e ENV -o json` prints on stdout: exactly one document (a MultiEnvironmentReport when it selects several environments: repeated -e, -l, -g; an EnvironmentListReport when it selects none). Units are resolved as the import of runs that wait for it (NYL-RUN-UNIMPORTED) will find them. A command that is refused before it can read state (an unknown environment, invalid source, a usage error) prints the short refusal form instead, with result: refused and the reasons under errors. State that is missing, deleted or moved is reported in the full form, with the code under errors and no units.',
    oneOfDefs('report', 'refusal', 'multiEnvironmentReport', 'environmentList'),
    published({
      report,
      refusal,
      multiEnvironmentReport: multiEnvironmentReport(['status'], report, refusal),
      environmentList: environmentListReport,
      unit,
      lease,
    }),
  );
}

function reconcileSchema(unitKinds: readonly string[]): JsonSchemaObject {
  const unit = reconcileUnit(unitKinds);
  const [report, refusal] = [reconcileReport(unit), refusalShape('ReconcileReport', { operation: req(oneOf(['reconcile', 'teardown', 'plan'])) })];
  return document(
    'reconcile-report',
    'Nyl ReconcileReport',
    'What `nyl reconcile -e ENV -o json` prints on stdout: exactly one document (a MultiEnvironmentReport when it selects several environments: repeated -e, -l, -g), while unit start and end lines and tool output go to stderr. A cancelled run prints the full report with NYL-RUN-CANCELLED under errors. A run that is refused, or fails before it has a report (an invalid source, NYL-STATE-MISSING, NYL-STATE-DIVERGED, NYL-LEASE-HELD, NYL-LEASE-LOST), prints the short refusal form instead, with result: refused and the reasons under errors. `nyl teardown` and `nyl plan` print the same document (operation teardown, plan); a plan takes no lease, runs no unit and writes nothing, and its driver plans print their tool output on stderr.',
    oneOfDefs('report', 'refusal', 'multiEnvironmentReport'),
    published({ report, refusal, multiEnvironmentReport: multiEnvironmentReport(['reconcile', 'teardown', 'plan'], report, refusal), unit }),
  );
}

/**
 * The teardown a `state delete --teardown` ran: a ReconcileReport of operation teardown, with the
 * unit rows of a reconcile (own definitions of the state operation's schema, so that the file
 * reads on its own).
 */
function teardownDefinitions(unitKinds: readonly string[]): Record<string, JsonSchemaObject> {
  const unit = reconcileUnit(unitKinds);
  const report = toJsonSchema(reconcileReport(unit));
  const properties = { ...(report.properties as Record<string, JsonSchemaObject>), operation: { const: 'teardown' } };
  const teardownReport = { ...report, description: 'The ReconcileReport of `nyl teardown --all`, as `nyl teardown -o json` prints it.', properties };
  return { teardownReport, unit: toJsonSchema(unit) };
}

function stateOperationSchema(unitKinds: readonly string[]): JsonSchemaObject {
  return document(
    'state-operation-report',
    'Nyl StateOperationReport',
    'What `nyl state init`, `nyl state delete`, `nyl state forget`, `nyl state restore`, `nyl state reseal`, `nyl recover`, `nyl lease break`, `nyl hold`, `nyl resume` and `nyl verify` print on stdout with -o json: exactly one document, also when the command refuses (result: refused, the reasons under errors); `nyl verify` and `nyl state init` over several environments (repeated -e, -l, -g) print a MultiEnvironmentReport.',
    oneOfDefs('report', 'multiEnvironmentReport'),
    {
      report: {
        ...toJsonSchema(stateOperationReport),
        // A refusal names its reasons. (minItems needs its type beside it: strict validators refuse a
        // keyword whose type they cannot see.)
        allOf: [{ if: { properties: { result: { const: 'refused' } } }, then: { properties: { errors: { type: 'array', minItems: 1 } } } }],
      },
      ...published({
        refusal: stateOperationSection,
        multiEnvironmentReport: multiEnvironmentReport(['verify', 'state-init'], stateOperationReport, stateOperationSection),
      }),
      ...teardownDefinitions(unitKinds),
    },
  );
}

/** A read-only command's document: its report, or the short refusal form; with the definitions its report refers to. */
function inspectSchema(name: string, kind: string, what: string, report: Schema, operation: string, defs: Record<string, Schema>): JsonSchemaObject {
  return document(name, `Nyl ${kind}`, what, oneOfDefs('report', 'refusal'), published({ report, refusal: inspectRefusal(kind, operation), ...defs }));
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
    'log-report': inspectSchema(
      'log-report',
      'LogReport',
      "What `nyl log -e ENV -o json` prints: the environment's history, one entry per operation, newest first. Missing state is an error (no entries); deleted or moved state is a warning, with its history. A command refused before it can read state prints the short refusal form.",
      logReport,
      'log',
      { entry: logEntry },
    ),
    'show-report': inspectSchema(
      'show-report',
      'ShowReport',
      "What `nyl show -e ENV --unit U -o json` prints: one unit's documents, receipt and last runs. An unknown unit, and missing, deleted or moved state, are errors of the full form. A command refused before it can read state prints the short refusal form.",
      showReport,
      'show',
      { receipt: shownReceipt, entry: logEntry },
    ),
    'outputs-report': inspectSchema(
      'outputs-report',
      'OutputsReport',
      "What `nyl outputs -e ENV [--unit U] -o json` prints: the outputs of the units' receipts. An unknown unit, and missing, deleted or moved state, are errors of the full form. A command refused before it can read state prints the short refusal form.",
      outputsReport,
      'outputs',
      {},
    ),
    'graph-report': inspectSchema(
      'graph-report',
      'GraphReport',
      "What `nyl graph -e ENV -o json` prints: the environment's units with their states, and the edges between them. Missing, deleted or moved state is an error of the full form, without nodes. A command refused before it can read state prints the short refusal form.",
      graphReport,
      'graph',
      { node: graphNode, edge: graphEdge },
    ),
    'doctor-host-report': inspectSchema(
      'doctor-host-report',
      'DoctorHostReport',
      'What `nyl doctor host URL -o json` prints: the verdict of each step of the host check, per coordination prefix, and the prefix to configure. A command line refused before the check prints the short refusal form.',
      doctorHostReport,
      'doctor-host',
      { prefixCheck: hostPrefixCheck },
    ),
  };
}
