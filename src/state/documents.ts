/**
 * The documents Nyl keeps on the state refs and their YAML form.
 * YAML with sorted keys, so that `git log -p` of a state branch reads as a review. Reading goes
 * through ./parse.ts, which checks every document's shape.
 */
import type { KeyReads } from '../project/execution-key';
import { emitYaml } from './yaml-emit';

export const API_VERSION = 'nyl.io/v1';

export interface StateEvent {
  type: 'initialized' | 'fresh' | 'state-deleted' | 'moved';
  at: string;
  by: string;
  reason?: string;
  generation?: number;
  /** A `moved` event: where the state was and where it went (describeEnd of each location). */
  from?: string;
  to?: string;
}

export interface EnvironmentStateDoc {
  apiVersion: string;
  kind: 'EnvironmentState';
  environment: string;
  generation: number;
  status: 'active' | 'deleted' | 'moved';
  movedTo?: string;
  /**
   * The coordination prefix the state was moved to by `nyl state move`. Only a move records it:
   * a move that changes nothing but the prefix leaves the state where it was, so this is what
   * tells a command still configured with the old prefix that the state moved.
   */
  coordinationRefPrefix?: string;
  events: StateEvent[];
}

export type LifecycleState = 'active' | 'held' | 'deleting' | 'pending-teardown' | 'retained';

export interface HoldRecord {
  by: string;
  reason?: string;
  since: string;
  /** Source commit whose changes wait while held. */
  pending?: string;
}

export interface DesiredUnitDoc {
  uid?: string;
  kind?: string;
  /** Generation of state.yaml the incarnation belongs to; --fresh raises it. */
  generation?: number;
  source?: string;
  rendering?: Record<string, unknown>;
  /** What the unit read besides its spec when it was rendered: part of its execution key. */
  reads?: KeyReads;
  /**
   * Path -> blob id of every file under the directories `reads` names (a module, an input
   * directory), so that the next plan names a changed file, not only its directory. Not part of
   * the key (the directory's tree id is); absent in documents written before it existed.
   */
  readFiles?: Record<string, string>;
  /** The rendering is a driver's preparation (a pinned image) of the rendering with this digest. */
  preparedFrom?: string;
  dependsOn?: string[];
  lifecycle: { state: LifecycleState };
  hold?: HoldRecord;
  deletion?: DeletionRecord;
  teardownRequest?: TeardownRequest;
  /** The approval the execution this document was decided for consumed (`--approve`). */
  approvals?: ApprovalRecord[];
}

/** An approval as a transition commit and a desired document record it. */
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

/** What a unit's removal is governed by: its `deletionPolicy` (default Retain). */
export type DeletionPolicy = 'Teardown' | 'Retain' | 'Release';

/**
 * Why and under which policy a unit is being deleted: written when its teardown starts, kept while
 * it is deleting (a teardown that waits for --allow-teardown is marked pending-teardown instead).
 */
interface DeletionRecord {
  cause: 'source' | 'request' | 'kind-change';
  policy: DeletionPolicy;
  since: string;
  /** The run that recorded it. */
  run?: string;
}

/** `nyl teardown --unit U` (or `--all`): recorded on the desired file until carried out. */
export interface TeardownRequest {
  by: string;
  reason?: string;
  at: string;
  /** The teardown run that recorded it. */
  run?: string;
}

export interface ReceiptRecord {
  run: string;
  executionKey: string;
  finishedAt: string;
  outputs: Record<string, unknown>;
  /** Each sensitive output's digest, and its sealed value when its tool keeps no copy: never the value. */
  sensitiveOutputs?: Record<string, SensitiveOutputRecord>;
  /** What the driver recorded of its tool's own state after the execution (src/drivers/contract.ts ApplyOutcome). */
  toolState?: Record<string, unknown>;
  /** Source paths the tool read beyond what the kind declares (a module's local calls, from its manifest), for review. */
  toolReads?: string[];
  /**
   * The desired document the receipt was produced for. Stored as a reference to that document's
   * blob on the desired ref, or as a copy (./unit-format.ts).
   */
  desired: DesiredUnitDoc;
  /** Stored with its copy of `desired` for good (an accepted receipt): never turned into a reference. */
  keepsDesiredCopy?: true;
}

/**
 * A sensitive output as state records it: the sha256 of its canonical JSON, and, unless the
 * producer's tool keeps the value (a module's backend), the value sealed with AES-256-GCM.
 */
export interface SensitiveOutputRecord {
  sha256: string;
  sealed?: string;
}

export interface ConditionRecord {
  type: 'uncertain' | 'failed';
  retryable: boolean;
  reason: string;
  run: string;
  since: string;
  evidence?: string[];
  code?: string;
  /** The driver demands a reasoned acknowledgement (`recover --retry --reason`) before a retry. */
  acknowledgementRequired?: boolean;
  /** The last lines of the tool's output, masked and cut (src/run/unit-output.ts). */
  output?: string[];
  /** What the driver read of its tool's own state after the attempt (Failure.toolState). */
  toolState?: Record<string, unknown>;
}

/**
 * One drift observation (`nyl verify`): in-sync, drifted, or unknown (a kind without a check, or a
 * check that failed: `detail` says which). `receipt` is the run of the receipt it observed: an
 * observation speaks only of that receipt.
 */
export interface DriftRecord {
  status: 'in-sync' | 'drifted' | 'unknown';
  observedAt: string;
  /** The operation that observed it (verify has no run: its lease's run id). */
  run: string;
  receipt?: string;
  detail?: string;
  /** A finding worse than drift, by its catalog code: the unit's tool state is gone (NYL-BACKEND-STATE-LOST). */
  code?: string;
}

/** How many drift observations a unit keeps: the latest and the ones before it. */
const DRIFT_HISTORY_LIMIT = 10;

/** The observed document with a new latest drift observation; the one it replaces joins the history. */
export function withDriftObservation(doc: ObservedUnitDoc, observation: DriftRecord): ObservedUnitDoc {
  const history = doc.drift ? [doc.drift, ...(doc.driftHistory ?? [])].slice(0, DRIFT_HISTORY_LIMIT - 1) : doc.driftHistory;
  return { ...doc, drift: observation, ...(history && history.length > 0 ? { driftHistory: history } : {}) };
}

/** The observed document once its unit executed again: the last observation joins the history. */
export function withoutDrift(doc: ObservedUnitDoc): ObservedUnitDoc {
  if (!doc.drift) return doc;
  const { drift, ...rest } = doc;
  return { ...rest, driftHistory: [drift, ...(doc.driftHistory ?? [])].slice(0, DRIFT_HISTORY_LIMIT - 1) };
}

export interface ObservedUnitDoc {
  uid?: string;
  receipt?: ReceiptRecord;
  condition?: ConditionRecord;
  /** The latest drift observation of the unit's receipt (`nyl verify`); cleared when it executes again. */
  drift?: DriftRecord;
  /** The observations before the latest, newest first (at most DRIFT_HISTORY_LIMIT - 1). */
  driftHistory?: DriftRecord[];
  acknowledgement?: { by: string; reason: string; at: string };
  /** The last run that executed or failed the unit, for status. */
  lastRun?: { run: string; result: string; at: string };
  /**
   * deletionPolicy Release: the unit left, its resources were left in place; the record stays
   * (until `nyl state forget` or `nyl state delete`) so that what was released can be found.
   */
  released?: { at: string; run: string; by: string };
}

export function toYaml(value: unknown): string {
  return emitYaml(value);
}

export function newStateDoc(environment: string, event: StateEvent): EnvironmentStateDoc {
  return {
    apiVersion: API_VERSION,
    kind: 'EnvironmentState',
    environment,
    generation: 1,
    status: 'active',
    events: [event],
  };
}
