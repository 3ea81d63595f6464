/**
 * The driver phases `nyl plan` runs, none of them with effects: `prepare` (what an execution key
 * needs, such as an image digest) and `plan` (a module's changes), in a scratch copy of the source
 * commit that is removed afterwards. Each runs as a run's engine runs it (src/run/run-driver.ts):
 * the same context, the sensitive values the unit consumes opened for it alone and masked in what
 * its tool prints, a driver that throws contained as the unit's failure. Nothing is recorded: the
 * run id the tools see is this plan's own, named in no ref.
 */
import type { DriverContext, Failure, PlanOutcome, PrepareOutcome } from '../../drivers/contract';
import { failure } from '../../drivers/contract';
import type { UnitPlan } from '../../plan/actions';
import { maskText, openSecrets, type ReadBack, RunKeys, secretReadsOf, unitMaskTexts, withSecretsIn } from '../../run/secrets';
import { planUnit, prepareUnit } from '../../run/unit-execution';
import { inCommit, type PhaseScope, type PhaseSubject, phaseContext, readBackIn, recordsOf } from '../../run/phase-context';
import { UnitOutput } from '../../run/unit-output';
import { Workspace } from '../../run/workspace';
import type { ObservedUnitDoc } from '../../state/documents';
import { firstLine } from '../../util/text';
import type { Runtime } from '../../util/runtime';
import { uuidv7 } from '../../util/uuid';
import type { OpenedEnvironment } from '../shared/context';

/** A planned unit as its driver sees it: only a unit with a rendering runs a phase. */
function subjectOf(unit: UnitPlan): PhaseSubject | undefined {
  return unit.rendering ? { name: unit.name, kind: unit.kind, uid: unit.uid, rendering: unit.rendering } : undefined;
}

export class PlanPhases {
  /** The run id tools see (NYL_RUN): a fresh UUIDv7 that no ref ever names. */
  readonly run: string;
  private readonly scope: PhaseScope;
  private readonly output: UnitOutput;
  private readonly keys: RunKeys;
  /** A producer's outputs read back from its backend, in the commit its receipt was produced from. */
  private readonly readBack: ReadBack;

  constructor(
    rt: Runtime,
    private readonly opened: OpenedEnvironment,
    /** The observed documents: the receipts whose sensitive outputs a unit consumes. */
    private readonly observed: ReadonlyMap<string, ObservedUnitDoc>,
  ) {
    this.run = uuidv7(rt.clock.now());
    this.keys = new RunKeys(rt.env, opened.env.name);
    this.output = new UnitOutput(opened.env.name, { quiet: false, alwaysMasked: this.keys.texts() }, rt.log);
    const workspace = new Workspace(`plan-${this.run}`, (dest, commit) => opened.materialize(dest, commit));
    this.scope = { rt, environment: opened.env.name, run: this.run, workspace, output: this.output };
    this.readBack = readBackIn(this.scope, opened.drivers, (source) => this.commitKey(source));
  }

  /** The driver's prepare phase for a unit whose key needs it; its failure, never a throw. */
  prepare(unit: UnitPlan): Promise<PrepareOutcome> {
    const driver = this.opened.drivers.driver(unit.kind);
    const subject = subjectOf(unit);
    if (!driver?.prepare || !subject) return Promise.resolve(failure(`the ${unit.kind} driver cannot prepare ${unit.name}`, true));
    return this.inSource(subject, (ctx) => prepareUnit(driver, ctx));
  }

  /** The driver's plan of a unit that would execute, with the sensitive values it consumes; its failure, never a throw. */
  async plan(unit: UnitPlan): Promise<PlanOutcome> {
    const driver = this.opened.drivers.driver(unit.kind);
    const subject = subjectOf(unit);
    if (!driver?.plan || !subject) return failure(`the ${unit.kind} driver cannot plan ${unit.name}`, true);
    const reads = secretReadsOf(unit);
    const values = reads.length > 0 ? await openSecrets(reads, this.observed, this.keys, this.readBack) : new Map<string, unknown>();
    if (!(values instanceof Map)) return values;
    const texts = unitMaskTexts(unit.name, values, this.observed.get(unit.name), this.keys);
    this.output.mask(unit.name, texts);
    this.output.event(unit.name, `planning ${unit.kind} (nyl plan: nothing is applied)`);
    const outcome = await this.inSource(subject, (ctx) => planUnit(driver, withSecretsIn({ ...ctx, ...recordsOf(unit) }, reads, values)));
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
    this.scope.workspace.remove();
  }

  /** The workspace's key of a commit: undefined for the plan's own source commit, unpacked once for every unit. */
  private commitKey(commit: string | undefined): string | undefined {
    return commit === undefined || commit === this.opened.sourceCommit ? undefined : commit;
  }

  /** Runs a phase in the unpacked source commit; a source that cannot be unpacked is the phase's failure. */
  private inSource<T>(subject: PhaseSubject, phase: (ctx: DriverContext) => Promise<T>): Promise<T | Failure> {
    return inCommit(this.scope, undefined, (dir) => phase(phaseContext(this.scope, subject, dir)));
  }
}
