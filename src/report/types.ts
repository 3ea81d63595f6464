/**
 * Versioned report shapes. Operations return them; the CLI renders them as
 * text or as exactly one JSON document and derives the exit code. Bump FORMAT_VERSION on any
 * incompatible change; schemas/ publishes a JSON Schema per kind.
 */
import type { Diagnostic } from '../errors/diagnostic';

export const REPORT_API_VERSION = 'nyl.io/v1';
export const FORMAT_VERSION = 1;

interface ReportBase {
  apiVersion: typeof REPORT_API_VERSION;
  formatVersion: typeof FORMAT_VERSION;
  environment: string;
  errors: Diagnostic[];
  warnings: Diagnostic[];
  notes: Diagnostic[];
}

export interface StateOperationReport extends ReportBase {
  kind: 'StateOperationReport';
  operation: string;
  /** done: a commit landed; unchanged: nothing needed to change; delivered: a signal was sent; refused. */
  result: 'done' | 'unchanged' | 'delivered' | 'refused';
  desired?: string;
  observed?: string;
  details: Record<string, unknown>;
}

/**
 * A unit's state in `nyl status`. pending, outdated, failed and uncertain units execute in the next
 * reconcile (after their dependencies, if they wait); an awaiting-dependencies unit is only
 * re-evaluated after its dependencies ran, and may stay current.
 */
export type UnitStatusState =
  | 'current'
  | 'pending'
  | 'outdated'
  | 'awaiting-dependencies'
  | 'blocked'
  | 'failed'
  | 'uncertain'
  | 'held'
  | 'leaving'
  | 'pending-teardown'
  | 'tearing-down'
  | 'retained'
  | 'released'
  | 'running'
  | 'awaiting-approval'
  | 'drifted';

export interface UnitStatus {
  name: string;
  kind: string;
  state: UnitStatusState;
  /**
   * current or outdated against the key the unit resolves to; unresolved while its key waits for
   * its dependencies' new outputs (awaiting-dependencies); none.
   */
  receipt: 'current' | 'outdated' | 'unresolved' | 'none';
  uid?: string;
  executionKey?: string;
  receiptKey?: string;
  lastRun?: { run: string; result: string; at: string };
  /** running: the live run that started it, and when (from the run's record). */
  running?: { run: string; startedAt: string };
  detail: string;
  /** The planner's action for the unit (execute, wait, blocked, held, awaiting-approval, teardown, ...); absent for a released record. */
  action?: string;
  /** The machine code of the action's reason (no-receipt, key-changed, dependency-pending, upstream-pending, held, ...): what `detail` is rendered from. */
  reason?: string;
  condition?: { type: string; retryable: boolean; reason: string; run: string; since: string; code?: string };
  hold?: { by: string; reason?: string; since: string; pending?: string };
  waits?: { pointer: string; unit: string; reason: string }[];
  /** The latest drift observation of its receipt (`nyl verify`), and the ones before it, newest first. */
  drift?: { status: string; observedAt: string; run: string; receipt?: string; detail?: string; code?: string };
  driftHistory?: { status: string; observedAt: string; run: string; receipt?: string; detail?: string; code?: string }[];
  /** Why it awaits an approval (the planner's reason), for awaiting-approval. */
  approval?: { reason: string; requireDigest: boolean; digest?: string };
}

export interface LeaseSummary {
  status: 'live' | 'expired' | 'broken';
  run: string;
  operation: string;
  holder: { name: string; host: string; pid: number; boot?: string; started?: string };
  acquiredAt: string;
  deadline: string;
  broken?: { by: string; reason: string; at: string };
}

export interface StatusReport extends ReportBase {
  kind: 'StatusReport';
  source?: string;
  desired?: string;
  observed?: string;
  lease?: LeaseSummary;
  units: Record<string, UnitStatus>;
  unitOrder: string[];
  details: Record<string, unknown>;
}

export interface ReconcileUnitReport {
  kind: string;
  result: string;
  detail: string;
  uid?: string;
  executionKey?: string;
  durationMs?: number;
  dispatched: boolean;
  /** A held unit whose condition is uncertain (exit 4, as in status). */
  uncertain?: boolean;
  waits?: { pointer: string; unit: string; reason: string }[];
  outputs?: string[];
  /** In the leaving section (printed first): the unit left the ownership set or is torn down. */
  leaving?: boolean;
  /** Removed under --allow-incomplete: nothing claimed the removal. */
  incomplete?: boolean;
  /** The stable code of a failure that has one (NYL-SECRETS-KEY-MISSING...); its fix is a warning. */
  code?: string;
  /** `nyl plan`: the planner's action for the unit (execute, current, wait, blocked, held, teardown, ...). */
  action?: string;
  /** `nyl plan`: the machine code of the action's reason (no-receipt, key-changed, dependency-pending, ...). */
  reason?: string;
  /** `nyl plan`: what a plan-bound approval names (`--approve U=DIGEST`), for a unit that would execute. */
  digest?: string;
  /** `nyl plan`: the summary of the driver's plan, such as `+1 ~0 -0`. */
  changes?: string;
  /** `nyl plan`: the recorded rendering against the new one, as YAML lines of a unified diff. */
  diff?: string[];
  /** awaiting-approval: why, whether only a reviewed digest will do, and the digest to approve when known. */
  approval?: { reason: string; requireDigest: boolean; digest?: string };
  /** The approval an execution consumed (recorded in the transition commit too). */
  approvedBy?: ApprovalRecord;
}

export interface ReconcileReport extends ReportBase {
  kind: 'ReconcileReport';
  operation: 'reconcile' | 'teardown' | 'plan';
  /** Absent when the run found nothing to do and took no lease. */
  run?: string;
  source: string;
  sourceOverride: boolean;
  /** --worktree: the source commit is a snapshot of the working files. */
  sourceWorktree?: boolean;
  desired?: string;
  observed?: string;
  /** Did the run write a transition commit? */
  committed: boolean;
  units: Record<string, ReconcileUnitReport>;
  /** Table order: dispatched units in dispatch order, then the rest in dependency order. */
  unitOrder: string[];
  /** Units named by --unit/--units; only these count for the exit code. */
  selected?: string[];
  details: Record<string, unknown>;
}

/**
 * An approval as a transition commit and a desired document record it: the shape of the state
 * documents' ApprovalRecord (src/state/documents.ts), declared again because reports depend on
 * nothing but errors.
 */
export interface ApprovalRecord {
  by: string[];
  source: string;
  /** The approvers came from --approved-by/--approval-source: asserted by whoever ran Nyl. */
  asserted?: boolean;
  at: string;
  /** Plan-bound: the reviewed digest. Desired-bound: the execution key it covered. */
  digest?: string;
  executionKey?: string;
}

/**
 * One operation of an environment's history (`nyl log`): its transition commits on the desired
 * and observed refs (one or both), who asked, why, and what it did to each unit.
 */
export interface LogEntry {
  /** The Nyl-Operation trailer (reconcile, teardown, hold, state-init, ...); '-' for a commit Nyl did not write. */
  operation: string;
  /** Commit time, ISO 8601 UTC. */
  at: string;
  headline: string;
  desired?: string;
  observed?: string;
  /** Nyl-Requested-By, else the commit's author. */
  by?: string;
  reason?: string;
  run?: string;
  /** Nyl-Source as written, with ` (override)` or ` (worktree)`. */
  source?: string;
  /** Each unit the body names, with what happened to it (the `units` map's result, then the lists that name it). */
  units: Record<string, string>;
  /** A state move: where the state was and where it went. */
  moved?: { from?: string; to?: string };
  /** The commit's YAML body as written. */
  body: Record<string, unknown>;
}

/** `nyl log`: the environment's history, newest first. */
export interface LogReport extends ReportBase {
  kind: 'LogReport';
  operation: 'log';
  /** --unit: only operations that changed or named this unit. */
  unit?: string;
  entries: LogEntry[];
  /** Older entries exist beyond the -n limit. */
  truncated: boolean;
  details: Record<string, unknown>;
}

/** A receipt as `nyl show` prints it: never the sealed value of a sensitive output. */
export interface ShownReceipt {
  run: string;
  executionKey: string;
  finishedAt: string;
  outputs: Record<string, unknown>;
  /** Each sensitive output's digest; its value is never shown. */
  sensitiveOutputs?: Record<string, { sha256: string }>;
  /** What the driver recorded of its tool's own state (ReceiptRecord.toolState). */
  toolState?: Record<string, unknown>;
  toolReads?: string[];
}

/** `nyl show --unit U`: one unit's documents and its last runs. */
export interface ShowReport extends ReportBase {
  kind: 'ShowReport';
  operation: 'show';
  unit: string;
  desired?: string;
  observed?: string;
  /** The unit's desired document on the desired ref (absent for a released unit). */
  desiredDocument?: Record<string, unknown>;
  /** The unit's observed document, its receipt as `receipt` shows it. */
  observedDocument?: Record<string, unknown>;
  receipt?: ShownReceipt;
  /** The most recent operations that changed or named the unit, newest first. */
  lastRuns: LogEntry[];
  details: Record<string, unknown>;
}

/** `nyl outputs`: receipts' outputs for scripts; sensitive ones are listed, never shown. */
export interface OutputsReport extends ReportBase {
  kind: 'OutputsReport';
  operation: 'outputs';
  /** --unit: that unit's outputs as {key: value}; without: {unit: {key: value}} of every unit with a receipt. */
  unit?: string;
  outputs: Record<string, unknown>;
  /** The sensitive outputs left out of `outputs`: [key] with --unit, else {unit: [key]}. */
  sensitive: Record<string, string[]> | string[];
  details: Record<string, unknown>;
}

/** What the read-only inspection commands (log, show, outputs) report. */
export type InspectReport = LogReport | ShowReport | OutputsReport;

/**
 * A reconcile over several environments (repeated -e, -l, -g): each environment ran as its own
 * single-environment reconcile (its own lease, run and commits), in `spec.dependsOn` order. Each
 * entry of environments is that environment's own document: its ReconcileReport, or the short
 * refusal form when it was refused, blocked by a dependency environment that did not end 0
 * (NYL-ENVIRONMENT-BLOCKED) or not started after a signal (NYL-RUN-CANCELLED).
 */
export interface MultiEnvironmentReport {
  apiVersion: typeof REPORT_API_VERSION;
  formatVersion: typeof FORMAT_VERSION;
  kind: 'MultiEnvironmentReport';
  /** The command that ran over the environments. */
  operation: 'reconcile' | 'teardown' | 'plan' | 'status' | 'verify';
  /** The order the environments ran in (the order of the text sections): dependencies first, ties by name; for teardown consumers first. */
  environmentOrder: string[];
  /** Each environment's own report (ReconcileReport, StatusReport, StateOperationReport), or its refusal. */
  environments: Record<string, SingleEnvironmentReport | RefusalDocument>;
  /** Each environment's exit code, as its own single-environment run would exit. */
  exitCodes: Record<string, number>;
  /** What concerns the run as a whole (none today; per-environment diagnostics stay in their sections). */
  errors: Diagnostic[];
  warnings: Diagnostic[];
  notes: Diagnostic[];
}

/** A unit of `nyl graph`: its kind and state as `nyl status` resolves them. */
export interface GraphNode {
  name: string;
  kind: string;
  state: UnitStatusState;
  detail: string;
}

/** An edge of `nyl graph`: `from` runs first; why (dependsOn, trigger, or a reference to an output at a pointer of `to`'s spec). */
export interface GraphEdge {
  from: string;
  to: string;
  via: 'dependsOn' | 'trigger' | 'reference';
  output?: string;
  pointer?: string;
}

/** `nyl graph`: the dependency graph of an environment's units, each with its state. */
export interface GraphReport extends ReportBase {
  kind: 'GraphReport';
  operation: 'graph';
  /** The units in dependency order (ties by name), then units state holds that left the ownership set. */
  nodes: GraphNode[];
  edges: GraphEdge[];
  details: Record<string, unknown>;
}

/** One prefix checked by `nyl doctor host`: whether the host holds state with it, and each step's verdict. */
export interface HostPrefixCheck {
  prefix: string;
  works: boolean;
  steps: { step: number; what: string; verdict: 'passed' | 'failed' | 'not-run'; detail: string }[];
}

/** `nyl doctor host URL`: the five pushes of the host check, per coordination prefix. */
export interface DoctorHostReport extends ReportBase {
  kind: 'DoctorHostReport';
  operation: 'doctor-host';
  url: string;
  prefixes: HostPrefixCheck[];
  /** The prefix to configure: refs/nyl/ (the default) when it works, else the first that works; none when none does. */
  recommended?: string;
  /** Refs of the scratch namespace the check could not delete (it says so; the next run deletes them). */
  leftovers: string[];
  details: Record<string, unknown>;
}

/** What a command about one environment reports. */
export type SingleEnvironmentReport = StateOperationReport | StatusReport | ReconcileReport;

export type Report = SingleEnvironmentReport | MultiEnvironmentReport | InspectReport | GraphReport | DoctorHostReport;

/**
 * The short form a command prints with -o json when it fails before it has a report: the kind of
 * its command's family, result refused and the reasons under errors. status has no operation.
 */
export interface RefusalDocument extends ReportBase {
  kind: Report['kind'];
  operation?: string;
  result: 'refused';
  details: Record<string, unknown>;
}

export function emptyDiagnostics(): Pick<ReportBase, 'errors' | 'warnings' | 'notes'> {
  return { errors: [], warnings: [], notes: [] };
}
