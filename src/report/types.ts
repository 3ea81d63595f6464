/**
 * Versioned report shapes. Operations return them; the CLI renders them as text or as exactly one
 * JSON document and derives the exit code. Each type is inferred from its one declaration, the
 * schema of src/report/schemas.ts that schemas/ publishes, so the two cannot drift apart. Bump
 * FORMAT_VERSION on any incompatible change.
 */
import type { Diagnostic } from '../errors/diagnostic';
import type { Field, Infer, StringSchema } from '../util/schema';
import type {
  doctorHostReport,
  graphEdge,
  graphNode,
  graphReport,
  environmentListReport,
  hostPrefixCheck,
  lease,
  logEntry,
  logReport,
  multiEnvironmentReport,
  outputsReport,
  reconcileReport,
  reconcileUnit,
  refusalShape,
  shownReceipt,
  showReport,
  stateOperationReport,
  statusReport,
  statusUnit,
} from './schemas';

export { FORMAT_VERSION, REPORT_API_VERSION } from './schemas';

export type StateOperationReport = Infer<typeof stateOperationReport>;

export type UnitStatus = Infer<ReturnType<typeof statusUnit>>;
export type LeaseSummary = Infer<typeof lease>;
export type StatusReport = Infer<ReturnType<typeof statusReport>>;

/** A row of `nyl reconcile`, `nyl teardown` and `nyl plan`. */
export type ReconcileUnitReport = Infer<ReturnType<typeof reconcileUnit>>;
export type ReconcileReport = Infer<ReturnType<typeof reconcileReport>>;

/** One operation of an environment's history (`nyl log`). */
export type LogEntry = Infer<typeof logEntry>;
/** `nyl log`: the environment's history, newest first. */
export type LogReport = Infer<typeof logReport>;
/** A receipt as `nyl show` prints it: never the sealed value of a sensitive output. */
export type ShownReceipt = Infer<typeof shownReceipt>;
/** `nyl show --unit U`: one unit's documents and its last runs. */
export type ShowReport = Infer<typeof showReport>;
/** `nyl outputs`: receipts' outputs for scripts; sensitive ones are listed, never shown. */
export type OutputsReport = Infer<typeof outputsReport>;
/** What the read-only inspection commands (log, show, outputs) report. */
type InspectReport = LogReport | ShowReport | OutputsReport;

export type GraphNode = Infer<typeof graphNode>;
export type GraphEdge = Infer<typeof graphEdge>;
/** `nyl graph`: the dependency graph of an environment's units, each with its state. */
export type GraphReport = Infer<typeof graphReport>;

export type HostPrefixCheck = Infer<typeof hostPrefixCheck>;
/** `nyl doctor host URL`: the five pushes of the host check, per coordination prefix. */
export type DoctorHostReport = Infer<typeof doctorHostReport>;

/** `nyl status` without a selection: the environments to name. */
export type EnvironmentListReport = Infer<typeof environmentListReport>;

/** What a command about one environment reports. */
export type SingleEnvironmentReport = StateOperationReport | StatusReport | ReconcileReport;

/** The kind of every report; a refusal takes the kind of its command's family. */
type ReportKind = (SingleEnvironmentReport | InspectReport | GraphReport | DoctorHostReport | EnvironmentListReport)['kind'] | 'MultiEnvironmentReport';

/**
 * The short form a command prints with -o json when it fails before it has a report: the kind of
 * its command's family, result refused and the reasons under errors. status has no operation.
 */
export type RefusalDocument = Infer<ReturnType<typeof refusalShape<ReportKind, { operation: Field<StringSchema, false> }>>>;

/**
 * A reconcile, teardown, plan, status, verify or state init over several environments (repeated -e, -l, -g):
 * each environment's own document (its report, or the short refusal form) and exit code.
 */
export type MultiEnvironmentReport = Infer<
  ReturnType<
    typeof multiEnvironmentReport<
      'reconcile' | 'teardown' | 'plan' | 'status' | 'verify' | 'state-init',
      typeof stateOperationReport | ReturnType<typeof statusReport> | ReturnType<typeof reconcileReport>,
      ReturnType<typeof refusalShape<ReportKind, { operation: Field<StringSchema, false> }>>
    >
  >
>;

export type Report = SingleEnvironmentReport | MultiEnvironmentReport | InspectReport | GraphReport | DoctorHostReport | EnvironmentListReport;

export function emptyDiagnostics(): { errors: Diagnostic[]; warnings: Diagnostic[]; notes: Diagnostic[] } {
  return { errors: [], warnings: [], notes: [] };
}
