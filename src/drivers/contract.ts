/**
 * The driver contract: one implementation per unit kind, in phases.
 *
 * - `prepare` (optional): I/O the execution key depends on, before it exists, such as resolving
 *   an image tag to its digest. It returns the rendering to key, record and execute, or says that
 *   what it resolves is absent on this machine (`absent`: the planner decides what that means).
 * - `plan` (optional): what an apply would change, without changing anything: a digest that an
 *   approval can bind to, a summary, and whether there are changes at all.
 * - `apply`: the execution; given the plan when there is one, it applies exactly that plan (a
 *   plan without changes: it changes nothing and reports the outputs, so a receipt is recorded).
 * - `teardown`: removes what the unit created. A driver that cannot claim the removal (a Command
 *   without a `teardown:` action) says so (`incomplete`) instead of claiming it.
 * - `check`: observes drift without changing anything.
 * - `readOutputs` (optional): the outputs of the last apply, read back without changing anything.
 *
 * Every outcome is data: a driver never throws for a failure of its tool. (The engine still
 * contains a driver that throws: that unit alone fails, or ends uncertain once its tool started.)
 * Outputs carry a `sensitive` flag; the engine never writes a sensitive value to Git or a log.
 * Drivers never touch state; every process goes through the context's runner, which forwards
 * the run's cancellation and kills a tool that outlives its grace period.
 */
import type { ToolLine } from '../exec/lines';
import type { ProcessRunner } from '../exec/process';
import type { Clock } from '../util/clock';
import type { ObjectSchema } from '../util/schema';
import { tidyLines } from '../util/text';

/**
 * The spec fields every unit kind has that its driver reads. Typed by hand: their schema is the
 * source model's (src/project/schema.ts), a layer above the drivers.
 */
export type SharedSpec = {
  /** The deadline of one execution, a duration. */
  timeout?: string;
};

export interface DriverContext {
  environment: string;
  unit: string;
  uid: string;
  run: string;
  kind: string;
  /** The rendered spec: every reference resolved. */
  rendering: Record<string, unknown>;
  /** The project directory of the source commit, materialized for this run (shared by its units). */
  projectDir: string;
  /** A private scratch directory for this execution, created on first call. */
  scratchDir: () => string;
  /** A path where the tool may write its outputs (a JSON object); the driver reads it back. */
  outputsPath: string;
  runner: ProcessRunner;
  clock: Clock;
  /** The environment tools inherit (the invoking process's, never spliced into shell text). */
  baseEnv: NodeJS.ProcessEnv;
  /** Cancellation of the run: forwarded to running tools. */
  cancel: AbortSignal;
  /** Grace period after a forwarded signal before a tool is killed. */
  killGraceMs: number;
  /**
   * Tool output, one line at a time, as bytes and as text (LineSplitter makes both): the engine
   * prints the text prefixed and logs the bytes. A driver never passes a sensitive value here: the
   * engine cannot tell one in free text.
   */
  toolOutput: (line: ToolLine) => void;
  /**
   * The source paths the unit's execution key covers (`dir/` for a directory's tree, as the
   * desired document's `reads.sources` lists them): a driver that finds its tool reading more
   * says so, since a change there would not run the unit again.
   */
  sourceReads?: readonly string[];
  /** For a teardown: the outputs of the unit's last receipt (what it is removing), if it has one. */
  receiptOutputs?: Record<string, unknown>;
  /**
   * The unit's latest receipt in this environment, as far as a driver may use it: the tool state
   * its driver recorded with it (`toolState`), so that the driver can tell whether its tool still
   * sees what that execution left (the same Terraform state, say). `current` is false for the
   * receipt of an earlier incarnation (a kind change, `state init --fresh`): what it recorded is
   * this unit's own, but no longer what the unit must find. Absent: the unit never had a receipt.
   */
  receipt?: RecordedReceipt;
  /**
   * The current incarnation's last attempt that ended without a receipt (its condition): whether
   * it is uncertain, and the tool state it left, if its driver could read one. A state written by
   * that attempt is the unit's own, although no receipt recorded it.
   */
  attempt?: { uncertain: boolean; toolState?: Record<string, unknown> };
  /**
   * An operator's acknowledgement of the unit's last failure (`nyl recover --unit U --retry
   * --reason`), recorded for this incarnation: a driver that refused to go on without one (a lost
   * Terraform state) goes on now. The next receipt consumes it.
   */
  acknowledgement?: { by: string; reason: string; at: string };
  /**
   * Pointers inside the rendering of values that are sensitive (another unit's sensitive outputs,
   * resolved for this execution only): the driver passes them to its tool through the
   * environment, never on a command line or in a file that outlives the execution, and never
   * prints them. The engine masks them in every line the tool prints.
   */
  secretPointers?: readonly string[];
}

/** What a receipt recorded that its driver may read back (see DriverContext.receipt). */
export interface RecordedReceipt {
  run: string;
  current: boolean;
  toolState?: Record<string, unknown>;
}

export interface UnitOutput {
  value: unknown;
  sensitive: boolean;
}

export type Outputs = Record<string, UnitOutput>;

/**
 * What one unit may record as outputs, whatever its driver: at most `bytes` as JSON (the object
 * of every output's value, sensitive ones included, in UTF-8), and no value nested deeper than
 * `depth` levels of objects and arrays. The engine fails a unit whose outputs exceed either
 * (retryable, like an invalid outputs file), and records none of them: state documents stay small
 * enough to read on every run, and shallow enough for every writer and reader of them.
 */
export const OUTPUT_LIMITS = { bytes: 1024 * 1024, depth: 100 } as const;

/** A size for a reason: exact bytes below 10 MiB (a limit of 1 MiB is passed by one byte too), MiB above. */
export function describeSize(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  if (Number.isInteger(mib)) return `${mib} MiB`;
  return mib < 10 ? `${bytes} bytes` : `${mib.toFixed(1)} MiB`;
}

/** code: a catalog code when the failure has one (a missing key for sensitive outputs, say). */
/**
 * toolState (on a failed or uncertain execution): what the driver could still read of its tool's
 * own state afterwards, so that the unit's next attempt recognizes a state its own attempt wrote.
 */
/**
 * `unrecorded`: outputs the tool wrote before it failed or was stopped (a Command's outputs file).
 * They are never recorded; the engine masks the sensitive ones in the lines it keeps, which may
 * hold a new value it has no seal of yet.
 */
export type Failure = {
  result: 'failed';
  reason: string;
  retryable: boolean;
  acknowledgementRequired?: boolean;
  code?: string;
  toolState?: Record<string, unknown>;
  unrecorded?: Outputs;
};
export type Uncertain = { result: 'uncertain'; reason: string; toolState?: Record<string, unknown>; unrecorded?: Outputs };

/**
 * What the key depends on is not on this machine (an image not present locally): not a failure by
 * itself. The planner decides: a unit that its recorded preparation keeps current stays so; one
 * that must execute fails with `failure`, which says how to make the input present.
 */
export type Absent = { result: 'absent'; failure: Failure };

export type PrepareOutcome = { result: 'prepared'; rendering: Record<string, unknown> } | Absent | Failure;

export interface DriverPlan {
  /** `sha256:...` of what would change: an approval binds to it. Computed when asked for (PlanOptions.digest). */
  digest?: string;
  /** One line for humans, such as `+1 ~0 -0`. */
  summary: string;
  /** none: nothing to change; `apply` given this plan reads the outputs and changes nothing. */
  changes: 'none' | 'some' | 'unknown';
  /** Driver-private data apply needs to apply exactly this plan (a saved plan file). */
  artifact?: unknown;
}

export type PlanOutcome = { result: 'planned'; plan: DriverPlan } | Failure;

/** What a caller of `plan` needs besides the changes: the digest (a review, an approval) costs a tool call. */
export interface PlanOptions {
  digest: boolean;
}

/**
 * A receipt: the outputs, and what the driver records beside them for its own later checks.
 * `toolState`: what the tool's own state looked like after the execution (Terraform: the
 * backend, the state's lineage and resources), handed back as DriverContext.receipt. `toolReads`:
 * source paths (directories with a trailing `/`, relative to the project) the tool read beyond
 * what the kind declares (a Terraform module's calls of local modules, from its own manifest),
 * recorded for review (`nyl show`); the execution key covers what the source model finds itself
 * (KindDescriptor.sourceDirCalls), and the driver names a read the key misses.
 */
export type ApplyOutcome = { result: 'receipt'; outputs: Outputs; toolState?: Record<string, unknown>; toolReads?: string[] } | Failure | Uncertain;

/** removed: the driver claims the removal; incomplete: it cannot (nothing it ran says the resources are gone). */
export type TeardownOutcome = { result: 'removed' } | { result: 'incomplete'; reason: string } | Failure | Uncertain;

/** The outputs of the unit's last apply, read back from where its tool keeps them. */
export type ReadOutcome = { result: 'read'; outputs: Outputs } | Failure;

/** code: a catalog code for a finding worse than drift (the unit's tool state is gone: NYL-BACKEND-STATE-LOST). */
export type CheckOutcome = { result: 'checked'; drift: 'in-sync' | 'drifted' | 'unknown'; detail?: string; code?: string } | Failure;

/** What the source model and the planner need to know of a kind, driver or not. */
export interface KindDescriptor {
  kind: string;
  /** Part of every execution key: raising it re-executes every unit of the kind once. */
  version: string;
  defaultRecovery: 'converge' | 'manual';
  /** JSON pointers inside spec of fields holding shell text: references are refused there. */
  shellTextFields: readonly string[];
  /**
   * JSON pointers inside spec of argv lists run without a shell. A reference there is one
   * argument, unless the argv hands it to a shell as its text (`sh -c TEXT`): then the source
   * model warns (src/project/shell-argv.ts).
   */
  argvFields?: readonly string[];
  /**
   * For a kind that runs a program of the source: the top-level spec fields of the unit's own
   * action (an argv, a shell text, the working directory both resolve against). The program file
   * an action names (`./bin/deploy.sh`, `bash deploy.sh`) enters the execution key as a declared
   * input does (src/project/script-paths.ts); other paths it names are what `plan` checks
   * `inputs` cover.
   */
  actionFields?: { argv: string; shellText: string; workingDir: string };
  /**
   * Top-level spec fields naming a directory of source the unit runs (a root module): its Git
   * tree id enters the execution key, so a changed file there executes the unit again.
   */
  sourceDirFields?: readonly string[];
  /**
   * For a kind with sourceDirFields: which files of such a directory name further source it reads
   * (a Terraform module's calls of local modules), and the relative paths they name. The source
   * model follows them, and their trees enter the execution key too. Pure: text in, paths out.
   */
  sourceDirCalls?: { reads(fileName: string): boolean; calls(files: readonly { name: string; text: string }[]): string[] };
  /**
   * Top-level spec fields whose rendering locates the state the unit's tool keeps outside Nyl, in
   * this order: the directory the tool runs (its own configuration may name the location), the
   * configuration passed to it (which, when not empty, names the location whatever the directory),
   * then qualifiers (a module's `module`, `backendConfig` and `workspace`). Two environments, or
   * two units, that render them alike would share that state, which the planner refuses unless the
   * unit says `sharedState: true`.
   */
  stateLocationFields?: readonly string[];
  /**
   * JSON pointers inside spec below which a reference to a sensitive output may stand: values
   * that reach the tool through its environment, never its command line. The desired document
   * keeps the reference; the value is resolved only for the execution.
   */
  secretFields?: readonly string[];
  /**
   * Why a teardown of a unit with this rendering (its spec) cannot claim the removal, if it cannot
   * (a Command without `teardown:`), as words that follow the unit's name. The one rule: the
   * driver's teardown answers `incomplete` with it, and `nyl state delete --teardown` refuses up
   * front with it what would fail without --allow-incomplete. Absent: it can.
   */
  removalUnclaimed?(rendering: Readonly<Record<string, unknown>>): string | undefined;
  /**
   * The kind's own fields of spec (src/drivers/<kind>/spec.ts); the source model adds the fields
   * every unit shares. Set by the registry for the built-in kinds; a fake driver needs none.
   */
  spec?: ObjectSchema;
}

export interface Driver extends KindDescriptor {
  prepare?(ctx: DriverContext): Promise<PrepareOutcome>;
  plan?(ctx: DriverContext, options?: PlanOptions): Promise<PlanOutcome>;
  apply(ctx: DriverContext, plan?: DriverPlan): Promise<ApplyOutcome>;
  teardown?(ctx: DriverContext): Promise<TeardownOutcome>;
  check?(ctx: DriverContext): Promise<CheckOutcome>;
  /**
   * Reads the outputs of the last apply back from where the tool keeps them (a module's backend),
   * changing nothing. A driver with this phase gets its sensitive outputs recorded as digests
   * only: a consumer's run reads the value here. Without it, the engine seals them for Git.
   */
  readOutputs?(ctx: DriverContext): Promise<ReadOutcome>;
  /**
   * Ends what dead runs of the environment left running on this machine because it outlives Nyl
   * (an OciImage's container: the runtime watches it, not Nyl's watchdog). The importer of those
   * runs calls it before any unit starts, so that a unit run again never overlaps the execution
   * of a run that died. Never throws, and changes nothing but those leftovers.
   */
  reap?(ctx: ReapContext): Promise<ReapOutcome>;
}

/** What the importer hands a driver's reap phase. */
export interface ReapContext {
  environment: string;
  /** The dead runs that started units of the driver's kind and never recorded how they ended. */
  runs: readonly string[];
  runner: ProcessRunner;
  baseEnv: NodeJS.ProcessEnv;
}

/** What reap ended, one entry per thing (`what` names it for a progress line), and why it could not look, if it could not. */
export interface ReapOutcome {
  ended: { unit: string; run: string; what: string }[];
  problem?: string;
}

/**
 * A failure as data. Its reason keeps every line (reports and state record it whole); only
 * where one line fits, a table cell or a progress line, is it cut to its first. A driver never
 * puts a sensitive value in a reason: the engine cannot tell one in free text.
 */
export function failure(reason: string, retryable: boolean, acknowledgementRequired = false): Failure {
  const out: Failure = { result: 'failed', reason: tidyLines(reason), retryable };
  if (acknowledgementRequired) out.acknowledgementRequired = true;
  return out;
}
