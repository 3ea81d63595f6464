/**
 * What every caller of a driver phase shares, in a run's wave and outside one (`nyl plan`'s
 * prepare and plan, `nyl verify`'s checks): the driver context of a unit, the grace its tools get
 * between SIGTERM and SIGKILL, and a producer's outputs read back from its tool in the commit and
 * rendering of its receipt. One place, so that every phase sees the context an execution sees.
 */
import { withoutKeyVariables } from '../util/sealed';
import { type DriverContext, type Failure, failure, type RecordedReceipt } from '../drivers/contract';
import type { DriverSet } from '../drivers/registry';
import type { UnitPlan } from '../plan/actions';
import { observesIncarnation } from '../plan/unit-view';
import type { DesiredUnitDoc, ReceiptRecord } from '../state/documents';
import { parseDuration } from '../util/duration';
import type { Runtime } from '../util/runtime';
import type { ReadBack } from './secrets';
import { readOutputsOf } from './unit-execution';
import type { UnitOutput } from './unit-output';
import type { Workspace } from './workspace';

/**
 * How long a tool may take to stop, after the SIGTERM of a cancellation, a timeout or Nyl's death,
 * before it is killed, when its unit sets no `terminationGracePeriod`.
 */
const KILL_GRACE_MS = 30_000;

/**
 * The grace of a unit's tools: its `terminationGracePeriod`, else 30 s. Tests may shorten it
 * (NYL_TEST_KILL_GRACE_MS, 1 to 30000 ms), never lengthen it.
 */
export function killGraceMs(env: NodeJS.ProcessEnv, rendering?: Record<string, unknown>): number {
  const own = rendering?.terminationGracePeriod;
  const grace = (typeof own === 'string' ? parseDuration(own) : undefined) ?? KILL_GRACE_MS;
  const cap = Number(env.NYL_TEST_KILL_GRACE_MS);
  return Number.isInteger(cap) && cap > 0 && cap <= KILL_GRACE_MS ? Math.min(cap, grace) : grace;
}

/** What the phases of one command share: its runtime, run id (NYL_RUN), scratch space and output. */
export interface PhaseScope {
  rt: Pick<Runtime, 'runner' | 'clock' | 'env' | 'cancel'>;
  environment: string;
  run: string;
  workspace: Workspace;
  output: UnitOutput;
}

/** The unit a phase runs for: as planned, or as a receipt's desired document recorded it. */
export interface PhaseSubject {
  name: string;
  kind: string;
  uid?: string | undefined;
  rendering: Record<string, unknown>;
}

/** What a driver may read of a receipt: its run and its tool state (DriverContext.receipt). */
export function recordedReceipt(receipt: ReceiptRecord | undefined, current: boolean): RecordedReceipt | undefined {
  if (!receipt) return undefined;
  return { run: receipt.run, current, ...(receipt.toolState ? { toolState: receipt.toolState } : {}) };
}

/**
 * The records of a planned unit a driver checks against: its latest receipt (of its current
 * incarnation, else of an earlier one), the acknowledgement and the last attempt without a receipt
 * of its current incarnation, and the source paths its execution key covers.
 */
export function recordsOf(plan: UnitPlan): Pick<DriverContext, 'receipt' | 'acknowledgement' | 'sourceReads' | 'attempt'> {
  const observed = plan.observed;
  const current = observesIncarnation(observed, plan.uid);
  const receipt = recordedReceipt(observed?.receipt, current);
  const acknowledgement = current ? observed?.acknowledgement : undefined;
  const reads = plan.reads?.sources ? { sourceReads: Object.keys(plan.reads.sources) } : {};
  const condition = current ? observed?.condition : undefined;
  const attempt = condition
    ? { attempt: { uncertain: condition.type === 'uncertain', ...(condition.toolState ? { toolState: condition.toolState } : {}) } }
    : {};
  return { ...(receipt ? { receipt } : {}), ...(acknowledgement ? { acknowledgement } : {}), ...reads, ...attempt };
}

/** The subject a receipt's desired document describes: what a check or a read-back runs against. */
export function subjectOfDesired(name: string, desired: DesiredUnitDoc): PhaseSubject {
  return { name, kind: desired.kind ?? '', uid: desired.uid, rendering: desired.rendering ?? {} };
}

/**
 * The driver context of a subject in a project directory. `slot` names its scratch files (the
 * unit's name by default): a producer read back while its own phase runs needs files of its own.
 */
export function phaseContext(scope: PhaseScope, subject: PhaseSubject, projectDir: string, slot = subject.name): DriverContext {
  const { rt, workspace, output } = scope;
  return {
    environment: scope.environment,
    unit: subject.name,
    uid: subject.uid ?? '',
    run: scope.run,
    kind: subject.kind,
    rendering: subject.rendering,
    projectDir,
    scratchDir: () => workspace.scratchDir(slot),
    outputsPath: workspace.outputsPath(slot),
    runner: rt.runner,
    clock: rt.clock,
    // No tool ever gets the key ring's variables: a tool that prints its environment would put the key next to the seals it opens.
    baseEnv: withoutKeyVariables(rt.env),
    cancel: rt.cancel,
    killGraceMs: killGraceMs(rt.env, subject.rendering),
    toolOutput: (line) => output.tool(subject.name, line),
  };
}

/** Runs a phase in the project directory of a commit, unpacked once per scope; one that cannot be unpacked fails the phase. */
export async function inCommit<T>(
  scope: PhaseScope,
  commit: string | undefined,
  phase: (projectDir: string) => Promise<T | Failure>,
  why = 'the source commit',
): Promise<T | Failure> {
  let dir: string;
  try {
    dir = await scope.workspace.projectDir(commit);
  } catch (error) {
    return failure(`cannot unpack ${why}: ${(error as Error).message}`, true);
  }
  return phase(dir);
}

/**
 * A producer's outputs read back from its tool (a module's backend), in the commit its receipt
 * was produced from (`commitOf` maps it to the workspace's key: undefined for the scope's own
 * source), as its receipt's desired document renders it.
 */
export function readBackIn(
  scope: PhaseScope,
  drivers: DriverSet,
  commitOf: (source: string | undefined) => string | undefined,
  slot = (name: string) => name,
): ReadBack {
  return async (producer, receipt) => {
    const subject = subjectOfDesired(producer, receipt.desired);
    const recorded = recordedReceipt(receipt, true);
    const read = await inCommit(scope, commitOf(receipt.desired.source), (dir) =>
      readOutputsOf(drivers.driver(subject.kind), { ...phaseContext(scope, subject, dir, slot(producer)), ...(recorded ? { receipt: recorded } : {}) }),
    );
    return read.result === 'read' ? read.outputs : read;
  };
}
