/**
 * The Terraform and OpenTofu driver: one driver, two kinds, the same commands; `spec.binary`
 * overrides the kind's default executable (`terraform`, `tofu`).
 *
 * A unit's phases in one run share one scratch copy of the module and one `init` (./session.ts).
 * Every phase reads the module's state first (a local backend's file, else `state pull`:
 * ./tool-state.ts) and refuses to work on a state that is not the one the unit's receipt recorded
 * (lost, emptied, replaced: NYL-BACKEND-STATE-LOST) or one that already holds another's resources
 * (NYL-BACKEND-SHARED), unless an operator acknowledged it. Then:
 * - plan: `plan -input=false -json -out=FILE -detailed-exitcode -lock-timeout=D [-var-file=FILE]`;
 *   whether it changes anything is read from its machine-readable summary, and `show -json FILE`
 *   runs only when the plan's digest is needed (`nyl plan`, a plan-bound approval: ./plan-json.ts);
 * - apply: `apply -input=false -json -lock-timeout=D FILE` of exactly the saved plan an approval
 *   bound to (a plan without changes runs no apply); without a reviewed plan, `apply -auto-approve
 *   ... [-var-file=FILE]`, which plans and applies in one process; the receipt's outputs and its
 *   record of the state (backend, lineage, resources) come from the state read afterwards;
 * - teardown: `destroy -auto-approve -input=false -json -lock-timeout=D [-var-file=FILE]`;
 * - check: `plan -refresh-only ... -out=FILE`: exit 0 is in sync; on exit 2, `show -json FILE`
 *   decides (Terraform exits 2 for an output that is merely computed);
 * - readOutputs: the outputs in the state, for a consumer of a sensitive output: the receipt
 *   records only digests of sensitive outputs, the backend keeps the values.
 *
 * Processes per unit: an execution runs init and apply (plus `state pull` twice for a backend
 * other than `local`), like plain Terraform; one bound to an approved plan, init, plan, show and
 * apply (no apply when the plan changes nothing).
 *
 * Variables go in a generated variables file, never on a command line; a variable that carries
 * another unit's sensitive output goes as `TF_VAR_<name>` in the tool's environment instead, so it
 * is in no file. Terraform keeps its state in the module's backend, which must outlive the scratch
 * copy (./backend.ts). Failures carry the tool's own diagnostics (./tool-errors.ts).
 */
import { rmSync } from 'node:fs';
import {
  type ApplyOutcome,
  type CheckOutcome,
  type Driver,
  type DriverContext,
  type DriverPlan,
  type Failure,
  failure,
  type KindDescriptor,
  type PlanOptions,
  type PlanOutcome,
  type ReadOutcome,
  type TeardownOutcome,
} from '../contract';
import { OPENTOFU_KIND, TERRAFORM_KIND } from '../kinds';
import { localStatePath } from './backend';
import { driftOf, planDigest, summaryOf } from './plan-json';
import { executionLimits, openSession, type Session, toolOf } from './session';
import { type Bad, isBad, type ModuleTool, type StepLimits } from './tool';
import { backendChange, parseState, readLocalState, type StateSnapshot, stateVerdict, toolStateOf } from './tool-state';
import { planChangesSomething } from './ui-json';

/** A session with the tool of the phase that uses it. */
interface Opened {
  session: Session;
  tool: ModuleTool;
}

async function open(ctx: DriverContext, defaultBinary: string, limits: StepLimits = executionLimits(ctx)): Promise<Opened | Bad> {
  const session = await openSession(ctx, defaultBinary, limits);
  return isBad(session) ? session : { session, tool: toolOf(ctx, session, limits) };
}

/** A local backend's state, read without a process; undefined when it must be pulled. */
function localState(session: Session): StateSnapshot | undefined {
  const path = localStatePath(session.backend, session.workspace);
  return path ? readLocalState(path) : undefined;
}

/** The state the session's backend holds now: a local backend's file when Nyl can read it, else `state pull`. */
async function readState({ session, tool }: Opened): Promise<StateSnapshot | Bad> {
  const local = localState(session);
  if (local) return local;
  const pulled = await tool.step(['state', 'pull']);
  if (isBad(pulled)) return pulled;
  return (
    parseState(pulled.stdout) ?? failure(`${tool.binary} state pull printed a state this driver cannot read (it reads the JSON state format, version 4)`, true)
  );
}

/** The verdict on a state a phase is about to work on (tool-state.ts). */
function verdictOn(ctx: DriverContext, { session }: Opened, state: StateSnapshot, phase?: 'teardown') {
  const attempt = ctx.attempt ? { attempt: ctx.attempt } : {};
  return stateVerdict({
    unit: ctx.unit,
    environment: ctx.environment,
    state,
    backend: session.identity,
    workspace: session.workspace,
    receipt: ctx.receipt,
    ...attempt,
    sharedState: session.spec.sharedState === true,
    ...(phase ? { phase } : {}),
  });
}

/**
 * The state a step is about to work on, unless it is not the unit's. The refusal is retried by
 * every run (a source change that points the unit back at its state fixes it) and needs an
 * operator's reason to go on against it (`recover --retry --reason`, `--reapply --reason`).
 */
async function ownState(ctx: DriverContext, opened: Opened, phase?: 'teardown'): Promise<StateSnapshot | Bad> {
  const state = await readState(opened);
  if (isBad(state)) return state;
  const verdict = verdictOn(ctx, opened, state, phase);
  if (verdict.ok || ctx.acknowledgement) return state;
  return { ...failure(verdict.reason, true, true), code: verdict.code };
}

/** What apply needs of a plan this driver made: the session and tool it was made with, and the state it started from. */
interface PlanArtifact {
  opened: Opened;
  planFile: string;
  before: StateSnapshot;
}

/**
 * Says so when Terraform's module manifest names a local module whose directory the unit's key
 * does not cover (a source the scan of the module's files could not read): a change there would
 * not run the unit again.
 */
function warnUncoveredReads(ctx: DriverContext, session: Session): void {
  if (!ctx.sourceReads) return;
  const covered = (dir: string) => ctx.sourceReads!.some((r) => r === '.' || (r.endsWith('/') && dir.startsWith(r)));
  for (const dir of session.moduleReads.filter((d) => !covered(d))) {
    const text = `warning: module ${session.spec.module} calls the local module ${dir} (Terraform's module manifest), which the execution key of ${ctx.unit} does not cover: a change there does not run it again; add ${dir}** to its inputs`;
    ctx.toolOutput({ bytes: Buffer.from(`${text}\n`), text });
  }
}

async function planIn(ctx: DriverContext, opened: Opened, options: PlanOptions): Promise<DriverPlan | Bad> {
  const { session, tool } = opened;
  warnUncoveredReads(ctx, session);
  const before = await ownState(ctx, opened);
  if (isBad(before)) return before;
  const planFile = session.dir.planFile;
  const planned = await tool.step(['plan', '-input=false', '-json', `-out=${planFile}`, '-detailed-exitcode', ...tool.lockArgs(), ...session.varArgs], {
    json: true,
    ok: [0, 2],
  });
  if (isBad(planned)) return planned;
  const changes = planned.code === 0 || planChangesSomething(planned.ui) === false ? 'none' : 'some';
  const moved = backendChange(ctx.receipt, session.identity, session.workspace);
  const plan: DriverPlan = {
    summary: `${summaryOf(planned.ui)}${moved ? `; ${moved}` : ''}`,
    changes,
    artifact: { opened, planFile, before } satisfies PlanArtifact,
  };
  if (!options.digest) return plan;
  const shown = await tool.step(['show', '-json', planFile]);
  if (isBad(shown)) return shown;
  const digest = planDigest(shown.stdout);
  return 'problem' in digest ? failure(`${tool.binary} ${digest.problem}`, true) : { ...plan, digest: digest.digest };
}

async function plan(ctx: DriverContext, defaultBinary: string, options: PlanOptions = { digest: true }): Promise<PlanOutcome> {
  const opened = await open(ctx, defaultBinary);
  if (isBad(opened)) return asFailure(opened);
  const planned = await planIn(ctx, opened, options);
  return isBad(planned) ? asFailure(planned) : { result: 'planned', plan: planned };
}

/**
 * Applies the saved plan given (one this driver made in this process: the plan an approval bound
 * to), or, without one, plans and applies in one `apply -auto-approve`: nothing reviewed binds the
 * apply then, and a separate plan would only cost another Terraform start.
 */
async function apply(ctx: DriverContext, defaultBinary: string, given?: DriverPlan): Promise<ApplyOutcome> {
  const artifact = given?.artifact as PlanArtifact | undefined;
  if (!artifact?.opened) return applyUnreviewed(ctx, defaultBinary);
  const { opened, planFile, before } = artifact;
  try {
    return given!.changes === 'none' ? receiptOf(opened, before) : await applyStep(opened, before, [planFile]);
  } finally {
    // A saved plan holds the values of sensitive variables in plain text: gone once it was used.
    rmSync(planFile, { force: true });
  }
}

async function applyUnreviewed(ctx: DriverContext, defaultBinary: string): Promise<ApplyOutcome> {
  const opened = await open(ctx, defaultBinary);
  if (isBad(opened)) return opened;
  warnUncoveredReads(ctx, opened.session);
  const before = await ownState(ctx, opened);
  if (isBad(before)) return before;
  return applyStep(opened, before, ['-auto-approve', ...opened.session.varArgs]);
}

/** One `apply -json` (of a saved plan, or planning itself), then the state it left read back. */
async function applyStep(opened: Opened, before: StateSnapshot, args: string[]): Promise<ApplyOutcome> {
  const { tool } = opened;
  let changing = false;
  const applied = await tool.step(['apply', '-input=false', '-json', ...tool.lockArgs(), ...args], {
    json: true,
    effects: true,
    seen: (ui) => (changing = ui.changing === true),
  });
  if (isBad(applied)) return changing ? withStateLeft(opened, applied, before) : applied;
  const after = await readState(opened);
  if (isBad(after)) return { result: 'uncertain', reason: `applied, but the state could not be read back: ${after.reason}` };
  return receiptOf(opened, after);
}

function receiptOf({ session }: Opened, state: StateSnapshot): ApplyOutcome {
  const toolState = toolStateOf(state, session.identity, session.workspace);
  return { result: 'receipt', outputs: state.outputs, toolState, ...(session.moduleReads.length > 0 ? { toolReads: session.moduleReads } : {}) };
}

/**
 * A failed or interrupted apply that began changing resources, with the state it left when that
 * can still be read: the unit's next attempt then knows that state as its own (a first apply that
 * failed half-way). Only a state this apply wrote counts: the one it started from, or a new one
 * where it started from none; an apply that failed before it changed anything (a stale plan, a
 * lock) wrote nothing, and whatever the backend holds then is not the unit's.
 */
async function withStateLeft(opened: Opened, bad: Bad, before: StateSnapshot): Promise<Bad> {
  const { session } = opened;
  // After a cancellation no process may start: a local state file is read, another backend's is not.
  const left = bad.result === 'failed' ? await readState(opened) : localState(session);
  if (!left || isBad(left) || !left.exists) return bad;
  if (before.exists && left.lineage !== before.lineage) return bad;
  return { ...bad, toolState: toolStateOf(left, session.identity, session.workspace) };
}

async function teardown(ctx: DriverContext, defaultBinary: string): Promise<TeardownOutcome> {
  const opened = await open(ctx, defaultBinary);
  if (isBad(opened)) return opened;
  const { session, tool } = opened;
  const state = await ownState(ctx, opened, 'teardown');
  if (isBad(state)) return state;
  const destroyed = await tool.step(['destroy', '-auto-approve', '-input=false', '-json', ...tool.lockArgs(), ...session.varArgs], {
    json: true,
    effects: true,
  });
  return isBad(destroyed) ? destroyed : { result: 'removed' };
}

/**
 * A lost or replaced state, as a check reports it: drifted, with the code that says it is worse
 * than drift. Only a current receipt says what the state must be: a check or a read of another
 * unit's outputs judges nothing else.
 */
function stateFinding(
  ctx: DriverContext,
  opened: Opened,
  state: StateSnapshot,
): { result: 'checked'; drift: 'drifted'; code: string; detail: string } | undefined {
  if (!ctx.receipt?.current) return undefined;
  const verdict = verdictOn(ctx, opened, state);
  return verdict.ok ? undefined : { result: 'checked', drift: 'drifted', code: verdict.code, detail: verdict.reason };
}

async function check(ctx: DriverContext, defaultBinary: string): Promise<CheckOutcome> {
  const opened = await open(ctx, defaultBinary);
  if (isBad(opened)) return asFailure(opened);
  const state = await readState(opened);
  if (isBad(state)) return asFailure(state);
  const lost = stateFinding(ctx, opened, state);
  if (lost) return lost;
  const planFile = opened.session.dir.refreshPlanFile;
  try {
    return await refreshCheck(opened, planFile);
  } finally {
    // A saved plan holds the values of sensitive variables in plain text: gone once read.
    rmSync(planFile, { force: true });
  }
}

/** `plan -refresh-only` into a saved plan; on exit 2, its `show -json` decides. */
async function refreshCheck({ session, tool }: Opened, planFile: string): Promise<CheckOutcome> {
  const checked = await tool.step(
    ['plan', '-refresh-only', '-input=false', '-json', `-out=${planFile}`, '-detailed-exitcode', ...tool.lockArgs(), ...session.varArgs],
    { json: true, ok: [0, 2] },
  );
  if (isBad(checked)) return asFailure(checked);
  if (checked.code === 0) return { result: 'checked', drift: 'in-sync' };
  const shown = await tool.step(['show', '-json', planFile]);
  if (isBad(shown)) return asFailure(shown);
  const drift = driftOf(shown.stdout);
  if ('problem' in drift) return failure(`${tool.binary} ${drift.problem}`, true);
  return drift.drifted ? { result: 'checked', drift: 'drifted', detail: drift.detail! } : { result: 'checked', drift: 'in-sync' };
}

async function readOutputs(ctx: DriverContext, defaultBinary: string): Promise<ReadOutcome> {
  const opened = await open(ctx, defaultBinary);
  if (isBad(opened)) return asFailure(opened);
  const state = await readState(opened);
  if (isBad(state)) return asFailure(state);
  const lost = stateFinding(ctx, opened, state);
  return lost ? { ...failure(lost.detail, true), code: lost.code } : { result: 'read', outputs: state.outputs };
}

/** The phases of a module driver whose executable defaults to `defaultBinary`. */
function moduleDriver(kind: KindDescriptor, defaultBinary: string): Driver {
  return {
    ...kind,
    plan: (ctx, options) => plan(ctx, defaultBinary, options),
    apply: (ctx, given) => apply(ctx, defaultBinary, given),
    teardown: (ctx) => teardown(ctx, defaultBinary),
    check: (ctx) => check(ctx, defaultBinary),
    readOutputs: (ctx) => readOutputs(ctx, defaultBinary),
  };
}

/** A phase without effects that was cancelled failed; it is not uncertain. */
function asFailure(bad: Bad): Failure {
  return bad.result === 'failed' ? bad : failure(bad.reason, true);
}

export const terraformDriver: Driver = moduleDriver(TERRAFORM_KIND, 'terraform');
export const openTofuDriver: Driver = moduleDriver(OPENTOFU_KIND, 'tofu');
