/**
 * The drift checks of `nyl verify` (./verify.ts): each unit's driver `check` phase, run against
 * what its receipt was produced for, never against today's source: the rendering of the receipt's
 * desired document, in the project directory of the commit that document was rendered from (a
 * check of today's rendering would report a pending change as drift).
 *
 * Sensitive values the rendering references are resolved as a run resolves them for an execution
 * (../run/secrets.ts: opened from the producer's sealed receipt or read back from its backend,
 * checked against the digest the receipt was made with) and masked in every printed line and in
 * the recorded detail. A value that cannot be had fails the check.
 *
 * At most CHECK_CONCURRENCY checks run at once. A check has no effects, so a cancellation only
 * stops starting checks: those not started have no finding, and the caller writes nothing.
 */
import { type CheckOutcome, type DriverContext, type Failure, failure } from '../../drivers/contract';
import type { ObservedUnitDoc, ReceiptRecord } from '../../state/documents';
import type { Runtime } from '../../util/runtime';
import { runPool } from '../../run/pool';
import { maskText, openSecrets, type ReadBack, RunKeys, unitMaskTexts, withSecretsIn } from '../../run/secrets';
import { checkUnit } from '../../run/unit-execution';
import { inCommit, type PhaseScope, phaseContext, readBackIn, recordedReceipt, subjectOfDesired } from '../../run/phase-context';
import { UnitOutput } from '../../run/unit-output';
import { Workspace } from '../../run/workspace';
import type { OpenedEnvironment } from '../shared/context';

/** How many checks run at once: checks only read, but each may be a whole refresh of a module. */
const CHECK_CONCURRENCY = 4;

/** A unit to check: its name, the kind of its receipt, and the receipt. */
export interface CheckTarget {
  unit: string;
  kind: string;
  receipt: ReceiptRecord;
}

/** What a check found; `failed` when the check itself failed (its drift is then unknown, `detail` says why). */
export interface DriftFinding {
  status: 'in-sync' | 'drifted' | 'unknown';
  detail?: string;
  failed?: boolean;
  /** A finding worse than drift, by its code (NYL-BACKEND-STATE-LOST). */
  code?: string;
}

/** What every check of one verify shares: the phases' scope (the lease's run id is NYL_RUN), and more. */
interface CheckScope extends PhaseScope {
  opened: OpenedEnvironment;
  observed: ReadonlyMap<string, ObservedUnitDoc>;
  keys: RunKeys;
}

/** Runs the checks of the targets; a unit has no finding when a cancellation came before its check started. */
export async function runChecks(
  rt: Runtime,
  opened: OpenedEnvironment,
  observed: ReadonlyMap<string, ObservedUnitDoc>,
  targets: readonly CheckTarget[],
  run: string,
): Promise<Map<string, DriftFinding>> {
  const keys = new RunKeys(rt.env, opened.env.name);
  const scope: CheckScope = {
    rt,
    environment: opened.env.name,
    opened,
    observed,
    run,
    workspace: new Workspace(`verify-${run}`, opened.materialize),
    output: new UnitOutput(opened.env.name, { quiet: false, alwaysMasked: keys.texts() }, rt.log),
    keys,
  };
  const findings = new Map<string, DriftFinding>();
  try {
    await runPool([...targets], CHECK_CONCURRENCY, async (target) => {
      if (rt.cancel.aborted) return;
      findings.set(target.unit, await checkOne(scope, target));
    });
  } finally {
    scope.workspace.remove();
  }
  return findings;
}

/** One check, between its start and end lines. */
async function checkOne(scope: CheckScope, target: CheckTarget): Promise<DriftFinding> {
  const started = scope.rt.clock.now();
  scope.output.event(target.unit, `checking ${target.kind} (verify): the receipt of run ${target.receipt.run}`);
  const finding = await findingOf(scope, target);
  const took = `${((scope.rt.clock.now() - started) / 1000).toFixed(1)}s`;
  const ending = finding.failed ? `check failed in ${took}: ${finding.detail}` : `${finding.status} in ${took}${finding.detail ? `: ${finding.detail}` : ''}`;
  scope.output.event(target.unit, ending);
  return finding;
}

/** The driver's check with the unit's sensitive values in place; every reason and detail masked. */
async function findingOf(scope: CheckScope, target: CheckTarget): Promise<DriftFinding> {
  const desired = target.receipt.desired;
  const driver = scope.opened.drivers.driver(target.kind);
  // Nothing to unpack or open for a kind that cannot check: checkUnit says unknown at once.
  if (!driver?.check) return findingOfOutcome(await checkUnit(driver, contextOf(scope, target, '')), []);
  const reads = desired.reads?.secrets ?? [];
  const values = reads.length > 0 ? await openSecrets(reads, scope.observed, scope.keys, readBack(scope)) : new Map<string, unknown>();
  if (!(values instanceof Map)) return findingOfOutcome(values, []);
  const texts = unitMaskTexts(target.unit, values, scope.observed.get(target.unit), scope.keys);
  scope.output.mask(target.unit, texts);
  const outcome = await inSource(scope, desired.source, (dir) => checkUnit(driver, withSecretsIn(contextOf(scope, target, dir), reads, values)));
  return findingOfOutcome(outcome, texts);
}

function findingOfOutcome(outcome: CheckOutcome, masked: readonly string[]): DriftFinding {
  if (outcome.result !== 'checked') return { status: 'unknown', detail: maskText(outcome.reason, masked), failed: true };
  return { status: outcome.drift, ...(outcome.detail ? { detail: maskText(outcome.detail, masked) } : {}), ...(outcome.code ? { code: outcome.code } : {}) };
}

/**
 * Runs a phase in the project directory of a commit, unpacked once per verify; a receipt without
 * a source commit, or a commit that cannot be unpacked, fails the phase.
 */
function inSource<T>(scope: CheckScope, commit: string | undefined, phase: (projectDir: string) => Promise<T | Failure>): Promise<T | Failure> {
  if (!commit) return Promise.resolve(failure('its receipt records no source commit to check it in', true));
  return inCommit(scope, commit, phase, `the source commit ${commit} its receipt was produced from`);
}

/** What a driver gets for a unit's check: the receipt's rendering, the lease's run id, scratch files of its own. */
function contextOf(scope: CheckScope, target: CheckTarget, projectDir: string): DriverContext {
  const ctx = phaseContext(scope, { ...subjectOfDesired(target.unit, target.receipt.desired), kind: target.kind }, projectDir, `${target.unit}.check`);
  return { ...ctx, receipt: recordedReceipt(target.receipt, true)! };
}

/** A producer's outputs read back from its tool, in the commit of its receipt: files of its own, as it may be checked meanwhile. */
function readBack(scope: CheckScope): ReadBack {
  const viaSource = readBackIn(
    scope,
    scope.opened.drivers,
    (source) => source,
    (name) => `${name}.read`,
  );
  return (producer, receipt) =>
    receipt.desired.source ? viaSource(producer, receipt) : Promise.resolve(failure('its receipt records no source commit to check it in', true));
}
