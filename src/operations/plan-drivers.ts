/**
 * The driver phases `nyl plan` runs, none of them with effects: `prepare` (what an execution key
 * needs, such as an image digest) and `plan` (a module's changes), in a scratch copy of the source
 * commit that is removed afterwards. Each runs as a run's engine runs it (src/run/run-driver.ts):
 * the same context, the sensitive values the unit consumes opened for it alone and masked in what
 * its tool prints, a driver that throws contained as the unit's failure. Nothing is recorded: the
 * run id the tools see is this plan's own, named in no ref.
 */
import type { DriverContext, Failure, PlanOutcome, PrepareOutcome } from '../drivers/contract';
import { failure } from '../drivers/contract';
import type { UnitPlan } from '../plan/actions';
import { maskText, maskTexts, openSecrets, type ReadBack, RunKeys, secretReadsOf, withSecretsIn } from '../run/secrets';
import { planUnit, prepareUnit, readOutputsOf } from '../run/unit-execution';
import { UnitOutput } from '../run/unit-output';
import { Workspace } from '../run/workspace';
import type { ObservedUnitDoc } from '../state/documents';
import { firstLine } from '../util/text';
import type { Runtime } from '../util/runtime';
import { uuidv7 } from '../util/uuid';
import type { OpenedEnvironment } from './context';

/** How long a tool may run after a forwarded cancellation signal before it is killed, as in a run. */
const KILL_GRACE_MS = 30_000;

/** The grace after a forwarded signal: 30 s; tests may shorten it (NYL_TEST_KILL_GRACE_MS), never lengthen it. */
function killGraceMs(env: NodeJS.ProcessEnv): number {
  const override = Number(env.NYL_TEST_KILL_GRACE_MS);
  return Number.isInteger(override) && override > 0 && override <= KILL_GRACE_MS ? override : KILL_GRACE_MS;
}

/** What a driver phase is run for: a unit as planned, or a producer as its receipt recorded it. */
interface Subject {
  name: string;
  kind: string;
  uid?: string | undefined;
  rendering: Record<string, unknown>;
}

/** A planned unit as its driver sees it: only a unit with a rendering runs a phase. */
function subjectOf(unit: UnitPlan): Subject | undefined {
  return unit.rendering ? { name: unit.name, kind: unit.kind, uid: unit.uid, rendering: unit.rendering } : undefined;
}

export class PlanPhases {
  /** The run id tools see (NYL_RUN): a fresh UUIDv7 that no ref ever names. */
  readonly run: string;
  private readonly workspace: Workspace;
  private readonly output: UnitOutput;
  private readonly keys: RunKeys;

  constructor(
    private readonly rt: Runtime,
    private readonly opened: OpenedEnvironment,
    /** The observed documents: the receipts whose sensitive outputs a unit consumes. */
    private readonly observed: ReadonlyMap<string, ObservedUnitDoc>,
  ) {
    this.run = uuidv7(rt.clock.now());
    this.workspace = new Workspace(`plan-${this.run}`, (dest, commit) => opened.materialize(dest, commit));
    this.output = new UnitOutput(opened.env.name, { quiet: false }, rt.log);
    this.keys = new RunKeys(rt.env);
  }

  /** The driver's prepare phase for a unit whose key needs it; its failure, never a throw. */
  prepare(unit: UnitPlan): Promise<PrepareOutcome> {
    const driver = this.opened.drivers.driver(unit.kind);
    const subject = subjectOf(unit);
    if (!driver?.prepare || !subject) return Promise.resolve(failure(`the ${unit.kind} driver cannot prepare ${unit.name}`, true));
    return this.inSource(subject, undefined, (ctx) => prepareUnit(driver, ctx));
  }

  /** The driver's plan of a unit that would execute, with the sensitive values it consumes; its failure, never a throw. */
  async plan(unit: UnitPlan): Promise<PlanOutcome> {
    const driver = this.opened.drivers.driver(unit.kind);
    const subject = subjectOf(unit);
    if (!driver?.plan || !subject) return failure(`the ${unit.kind} driver cannot plan ${unit.name}`, true);
    const reads = secretReadsOf(unit);
    const values = reads.length > 0 ? await openSecrets(reads, this.observed, this.keys, this.readBack) : new Map<string, unknown>();
    if (!(values instanceof Map)) return values;
    const texts = maskTexts(values);
    this.output.mask(unit.name, texts);
    this.output.event(unit.name, `planning ${unit.kind} (nyl plan: nothing is applied)`);
    const outcome = await this.inSource(subject, undefined, (ctx) => planUnit(driver, withSecretsIn(ctx, reads, values)));
    if (outcome.result === 'planned') {
      this.output.event(unit.name, `planned: ${outcome.plan.summary}`);
      return outcome;
    }
    const masked = { ...outcome, reason: maskText(outcome.reason, texts) };
    this.output.event(unit.name, `plan failed: ${firstLine(masked.reason)}`);
    return masked;
  }

  /** Removes the scratch copy and everything the tools wrote there. */
  close(): void {
    this.workspace.remove();
  }

  /** A producer's outputs read back from its tool (its backend), in the commit its receipt was produced from. */
  private readonly readBack: ReadBack = async (producer, receipt) => {
    const desired = receipt.desired;
    const subject: Subject = { name: producer, kind: desired.kind ?? '', uid: desired.uid, rendering: desired.rendering ?? {} };
    const read = await this.inSource(subject, desired.source, (ctx) => readOutputsOf(this.opened.drivers.driver(subject.kind), ctx));
    return read.result === 'read' ? read.outputs : read;
  };

  /** Runs a phase in the unpacked source commit (or another commit); a source that cannot be unpacked is the phase's failure. */
  private async inSource<T>(subject: Subject, commit: string | undefined, phase: (ctx: DriverContext) => Promise<T>): Promise<T | Failure> {
    let projectDir: string;
    try {
      projectDir = await this.workspace.projectDir(commit === undefined || commit === this.opened.sourceCommit ? undefined : commit);
    } catch (error) {
      return failure(`cannot unpack the source commit: ${(error as Error).message}`, true);
    }
    return phase(this.context(subject, projectDir));
  }

  /** What a driver gets, as a run's driverContext builds it. */
  private context(subject: Subject, projectDir: string): DriverContext {
    const { rt } = this;
    return {
      environment: this.opened.env.name,
      unit: subject.name,
      uid: subject.uid ?? '',
      run: this.run,
      kind: subject.kind,
      rendering: subject.rendering,
      projectDir,
      scratchDir: () => this.workspace.scratchDir(subject.name),
      outputsPath: this.workspace.outputsPath(subject.name),
      runner: rt.runner,
      clock: rt.clock,
      baseEnv: rt.env,
      cancel: rt.cancel,
      killGraceMs: killGraceMs(rt.env),
      toolOutput: (line) => this.output.tool(subject.name, line),
    };
  }
}
