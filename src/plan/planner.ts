/**
 * The planner: project + state (+ the run so far) -> one action per unit. Pure: no I/O, no clock,
 * no randomness; the same input gives the same plan on every machine.
 *
 * It is the only place that decides what a unit does. Precedence, per unit of the ownership set,
 * in dependency order (a unit's dependencies are decided before it):
 *   damaged state documents > held (in state, or by a hold delivered to the run) > a rendering error > a condition that
 *   needs an operator (uncertain under manual recovery, a failure that needs acknowledgement, or
 *   one that happened in this very run) > waiting for dependencies (then executing for a reason
 *   of its own, or only re-evaluated) > retrying a failure or converging an uncertain unit >
 *   executing for a changed key > a current receipt that --reapply names or that drifted
 *   (executing again, or staying drifted under driftRepair: manual) > a current receipt (writing
 *   its desired document back when the branch holds another).
 * A unit whose driver prepares (I/O the key depends on, such as an image's digest) is prepared
 * first, after its waits and before retries; its prepare action says whether the preparation its
 * desired document recorded keeps it current, so that an input its driver finds absent on this
 * machine fails only a unit that must execute (./preparation.ts reads the outcome).
 * Every execution then passes the approval gate (./approvals.ts): without an approval that
 * covers it, a unit that needs one is awaiting-approval instead.
 * A condition outranks a matching receipt: what the last execution did is unknown or failed.
 * Units outside the ownership set come last, by name.
 */
import { type KindSet, versionOf } from '../drivers/kinds';
import type { Diagnostic } from '../errors/diagnostic';
import { canonicalJson, compactReads, executionKey, type KeyReads } from '../project/execution-key';
import { dependencyOrder } from '../project/graph';
import { type ProducerReceipt, type ReceiptOf, renderUnit } from '../project/render';
import { sourceReads } from '../project/source-reads';
import { sharedStates } from './shared-state';
import { triggersOf } from '../project/graph';
import { ownershipSet } from '../project/selectors';
import type { EnvironmentResource, Project, UnitResource } from '../project/types';
import type { ConditionRecord, DesiredUnitDoc, ReceiptRecord } from '../state/documents';
import { byCodeUnits } from '../util/compare';
import type { Action, ActionType, DeletionCause, ExecuteReason, Plan, UnitPlan, Wait } from './actions';
import { runStopped, willExecute } from './actions';
import { type PlanInput, type Prepared, recordedPreparation, renderingDigest } from './input';
import {
  conditionOfIncarnation,
  currentUid,
  incarnationCondition,
  incarnationReceipt,
  isHeld,
  receiptOfIncarnation,
  recoveryPolicy,
  sameRendering,
  terminalCondition,
} from './unit-view';
import { currentReceiptAction, gateExecution } from './approvals';
import { ownChanges, previewRendering, unknownOutputs } from './preview';
import { type KeyChange, keyChanges } from './key-changes';
import { moduleReads, readFiles } from '../project/read-files';

export { currentUid } from './unit-view';
import { lifecycleBase, ownedDeletionCause, planLifecycle } from './lifecycle';

export type { PlanInput, Prepared, RunContext, RunMode } from './input';

/**
 * Same decision: equal desired documents apart from the source commit they were rendered from
 * (a unit that executes again with the same rendering keeps the commit of the earlier decision).
 */
export function sameDecision(a: DesiredUnitDoc | undefined, b: DesiredUnitDoc): boolean {
  if (!a) return false;
  return canonicalJson({ ...a, source: undefined }) === canonicalJson({ ...b, source: undefined });
}

export function recoveryOf(unit: UnitResource, kinds: KindSet): 'converge' | 'manual' {
  return recoveryPolicy(unit.spec.recovery, unit.kind, kinds);
}

export function formatWait(w: Wait): string {
  return `${w.pointer} waits for ${w.unit} (${w.reason})`;
}

/** What resolving a unit reads besides the unit: its environment, the kinds, source object ids, receipts. */
interface ResolveScope {
  env: EnvironmentResource;
  kinds: KindSet;
  objects?: Project['objects'];
  dirCalls?: Project['dirCalls'];
  receiptOf: ReceiptOf;
}

interface Resolved {
  rendering?: Record<string, unknown>;
  executionKey?: string;
  /** What the unit reads besides its spec, for its desired document (set with the key). */
  reads?: KeyReads;
  /** The files under the directories it reads, for its desired document: not part of the key. */
  readFiles?: Record<string, string>;
  /** Set when the rendering is a driver's preparation: the digest of the rendering it was made from, and that rendering. */
  preparedFrom?: string;
  unprepared?: Record<string, unknown>;
  /** Set when that preparation is the recorded one standing in for an input absent here: what is absent. */
  absent?: string;
  waits: Wait[];
  errors: Diagnostic[];
}

/** Waits for units named in dependsOn and triggers: they order the unit without a reference's pointer. */
function namedWaits(unit: UnitResource, receiptOf: ReceiptOf): Wait[] {
  const waits: Wait[] = [];
  const named = (field: string, names: string[]) =>
    names.forEach((dep, i) => {
      if (receiptOf(dep) === undefined && !waits.some((w) => w.unit === dep))
        waits.push({ pointer: `/${field}/${i}`, unit: dep, reason: 'no-current-receipt' });
    });
  named('dependsOn', unit.declaredDependsOn);
  named('triggers', triggersOf(unit));
  return waits;
}

/** Renders one unit against current receipts and computes its execution key from what it reads. */
export function resolveUnit(unit: UnitResource, uid: string | undefined, scope: ResolveScope, prepared?: Prepared): Resolved {
  const waits = namedWaits(unit, scope.receiptOf);
  const rendered = renderUnit(unit, scope.env, scope.receiptOf, scope.kinds);
  if (!rendered.ok) {
    if ('errors' in rendered) return { waits, errors: rendered.errors };
    for (const w of rendered.waits) if (!waits.some((x) => x.unit === w.unit)) waits.push(w);
    return { waits, errors: [] };
  }
  if (waits.length > 0) return { waits, errors: [] };
  const usesPrepared = prepared !== undefined && prepared.from === renderingDigest(rendered.rendering);
  const rendering = usesPrepared ? prepared.rendering : rendered.rendering;
  const out: Resolved = { rendering, waits, errors: [], ...(usesPrepared ? { preparedFrom: prepared.from, unprepared: rendered.rendering } : {}) };
  if (usesPrepared && prepared.absent !== undefined) out.absent = prepared.absent;
  if (!uid) return out;
  const triggers = Object.fromEntries(triggersOf(unit).map((name) => [name, scope.receiptOf(name)!.run]));
  const reads = compactReads({ sources: sourceReads(unit, rendering, scope.objects, scope.kinds, scope.dirCalls), triggers, secrets: rendered.secrets });
  out.executionKey = executionKey({ kind: unit.kind, rendering, uid, driverVersion: versionOf(unit.kind, scope.kinds), reads });
  if (reads) out.reads = reads;
  const files = readFiles(reads?.sources, scope.objects);
  if (files) out.readFiles = files;
  return out;
}

interface OwnedGraph {
  byName: Map<string, UnitResource>;
  order: string[];
}

/** The ownership set in dependency order; a project and its environments never change, so it is kept per pair. */
const graphs = new WeakMap<Project, WeakMap<EnvironmentResource, OwnedGraph>>();

export function ownedGraph(project: Project, env: EnvironmentResource): OwnedGraph {
  const perEnv = graphs.get(project) ?? new WeakMap<EnvironmentResource, OwnedGraph>();
  graphs.set(project, perEnv);
  let graph = perEnv.get(env);
  if (!graph) {
    const owned = ownershipSet(project, env);
    const names = new Set(owned.map((u) => u.name));
    graph = {
      byName: new Map(owned.map((u) => [u.name, u])),
      order: dependencyOrder(new Map(owned.map((u) => [u.name, { dependsOn: u.dependsOn.filter((d) => names.has(d)) }]))),
    };
    perEnv.set(env, graph);
  }
  return graph;
}

/**
 * A unit's plan from earlier in the same run that still holds: a decision no progress of the run
 * can change (current, blocked, held, failed, uncertain, not selected), unless a hold arrived for it.
 */
function carried(name: string, input: PlanInput): UnitPlan | undefined {
  const previous = input.carry?.units.get(name);
  if (!previous || input.run?.holds?.has(name)) return undefined;
  return CARRIED.has(previous.action.type) ? previous : undefined;
}

/** Decisions no progress of a run changes (lifecycle work does: a teardown ends, a kind change starts anew). */
const CARRIED = new Set<ActionType>(['current', 'blocked', 'held', 'failed', 'uncertain', 'skip']);

/** Plans every unit of the environment: the ownership set in dependency order, then lifecycle work consumers first. */
export function planEnvironment(input: PlanInput): Plan {
  const { byName, order } = ownedGraph(input.project, input.env);
  const causes = lifecycleCauses(input, byName);
  // An owned unit with lifecycle work lends consumers a receipt that a teardown may take away in
  // this run: their decisions cannot be carried. Leaving units lend nothing to owned ones.
  const carry = [...causes.values()].some((c) => c !== 'leaving') ? undefined : input.carry;
  const units = new Map<string, UnitPlan>();
  const scope = scopeOf(input, (name) => producerReceipt(units.get(name)));
  for (const name of order) units.set(name, planOwned(byName.get(name)!, { ...input, carry }, causes, units, scope));
  planLifecycle(input, units, causes);
  const leaving = [...input.desired.keys()].filter((n) => !byName.has(n)).sort(byCodeUnits);
  return { order: [...order, ...leaving], units };
}

/**
 * Units with lifecycle work, with why: owned ones whose deletion started, was requested or whose
 * kind changed; and every unit state holds that the ownership set does not ('leaving').
 */
function lifecycleCauses(input: PlanInput, byName: ReadonlyMap<string, UnitResource>): Map<string, DeletionCause | 'leaving'> {
  const causes = new Map<string, DeletionCause | 'leaving'>();
  for (const [name, desired] of input.desired) {
    const unit = byName.get(name);
    if (!unit) causes.set(name, 'leaving');
    else if (!input.run?.removed?.has(name)) {
      const cause = ownedDeletionCause(desired, unit.kind, input.generation);
      if (cause) causes.set(name, cause);
    }
  }
  return causes;
}

/**
 * An owned unit: torn down by this run already, lifecycle work (a placeholder that lends consumers
 * its receipt until the lifecycle pass decides it), or the decision of an execution.
 */
function planOwned(unit: UnitResource, input: PlanInput, causes: ReadonlyMap<string, unknown>, units: Map<string, UnitPlan>, scope: ResolveScope): UnitPlan {
  if (input.run?.removed?.has(unit.name)) return { ...base(unit, input), action: { type: 'removed', reason: 'torn-down-in-run' } };
  if (causes.has(unit.name)) return { ...lifecycleBase(unit.name, input.desired.get(unit.name)!, input), unit };
  return carried(unit.name, input) ?? planOwnedUnit(unit, input, units, scope);
}

/** Actions of a unit whose receipt still stands for what runs: consumers resolve from it. */
const KEEPS_RECEIPT = new Set(['held', 'teardown', 'pending-teardown', 'retain', 'retained', 'drifted']);

/** A unit awaiting approval to run again while its receipt is current (a repair, a reapply) still lends it. */
function lendsCurrentReceipt(plan: UnitPlan): boolean {
  const a = plan.action;
  return a.type === 'awaiting-approval' && (a.executes === 'drift-repair' || a.executes === 'reapply');
}

/**
 * Outputs consumers resolve from: a current receipt, or the receipt a held unit, a tombstone or a
 * unit not torn down yet keeps (its resources still exist).
 */
function producerReceipt(plan: UnitPlan | undefined): ProducerReceipt | undefined {
  if (!plan) return undefined;
  const receipt = plan.observed?.receipt;
  if (plan.action.type === 'current') return receipt ? asProducer(receipt) : { outputs: {}, run: '' };
  if (KEEPS_RECEIPT.has(plan.action.type) || lendsCurrentReceipt(plan)) return asProducer(incarnationReceipt(plan.observed, plan.desired?.uid));
  return undefined;
}

/** What a consumer's rendering reads of a receipt. */
export function asProducer(receipt: ReceiptRecord | undefined): ProducerReceipt | undefined {
  if (!receipt) return undefined;
  const out: ProducerReceipt = { outputs: receipt.outputs ?? {}, run: receipt.run };
  if (receipt.sensitiveOutputs) out.sensitive = receipt.sensitiveOutputs;
  return out;
}

/** The scope a plan resolves its units in. */
export function scopeOf(input: { env: EnvironmentResource; drivers: KindSet; project: Project }, receiptOf: ReceiptOf): ResolveScope {
  const scope: ResolveScope = { env: input.env, kinds: input.drivers, receiptOf };
  if (input.project.objects) scope.objects = input.project.objects;
  if (input.project.dirCalls) scope.dirCalls = input.project.dirCalls;
  return scope;
}

function base(unit: UnitResource, input: PlanInput): UnitPlan {
  const desired = input.desired.get(unit.name);
  const observed = input.observed.get(unit.name);
  const plan: UnitPlan = { name: unit.name, kind: unit.kind, unit, action: { type: 'current', reason: 'receipt-current' } };
  if (desired) plan.desired = desired;
  if (observed) plan.observed = observed;
  const uid = currentUid(desired, input.generation) ?? input.newUids?.get(unit.name);
  if (uid) plan.uid = uid;
  if (uid && !currentUid(desired, input.generation)) plan.newIncarnation = true;
  return plan;
}

/**
 * The preparation to resolve a unit with: this run's, else the one its desired document recorded
 * (valid while source renders the same). A run still prepares the unit again before it decides:
 * a tag may point elsewhere now.
 */
function preparationOf(plan: UnitPlan, input: PlanInput): Prepared | undefined {
  return input.prepared?.get(plan.name) ?? recordedPreparation(plan.desired);
}

function planOwnedUnit(unit: UnitResource, input: PlanInput, planned: ReadonlyMap<string, UnitPlan>, scope: ResolveScope): UnitPlan {
  const plan = base(unit, input);
  const damaged = input.damaged?.get(unit.name);
  if (damaged !== undefined) return { ...plan, action: { type: 'blocked', reason: 'state-damaged', problem: damaged } };
  const held = heldAction(plan, input, scope);
  if (held) return recordPending({ ...plan, action: held }, input);
  // A state another environment or unit would share is refused before anything renders or runs.
  const shared = sharedStates(input.project, input.env, input.drivers).get(unit.name);
  if (shared) return finish({ ...plan, action: { type: 'blocked', reason: 'render-error', errors: [shared] } }, input);
  const resolved = resolveUnit(unit, plan.uid, scope, preparationOf(plan, input));
  if (resolved.rendering) plan.rendering = resolved.rendering;
  if (resolved.preparedFrom) plan.preparedFrom = resolved.preparedFrom;
  if (resolved.executionKey) plan.executionKey = resolved.executionKey;
  if (resolved.reads) plan.reads = resolved.reads;
  if (resolved.readFiles) plan.readFiles = resolved.readFiles;
  const action = decide(plan, unit, input, resolved, planned, () => (plan.approvalKey ??= approvalKeyOf(plan, unit, scope, input)));
  // A unit to prepare is prepared from its rendering as source has it, not a recorded preparation.
  if (action.type === 'prepare' && resolved.unprepared) {
    plan.rendering = resolved.unprepared;
    delete plan.preparedFrom;
  }
  return finish({ ...plan, action }, input);
}

/**
 * The key an approval binds to: the execution key, except that a unit without an incarnation yet
 * is keyed with a placeholder uid. Its real uid is minted by the run that executes it, so a key
 * with it could never be reviewed ahead (`nyl plan`) and then approved.
 */
function approvalKeyOf(plan: UnitPlan, unit: UnitResource, scope: ResolveScope, input: PlanInput): string | undefined {
  if (plan.uid && !plan.newIncarnation) return plan.executionKey;
  return resolveUnit(unit, NEW_INCARNATION_UID, scope, preparationOf(plan, input)).executionKey;
}

/** The uid an approval key of a unit without an incarnation is computed with. */
const NEW_INCARNATION_UID = 'new-incarnation';

/** Actions in precedence order after holds: see the module header. */
function decide(
  plan: UnitPlan,
  unit: UnitResource,
  input: PlanInput,
  resolved: Resolved,
  planned: ReadonlyMap<string, UnitPlan>,
  approvalKey: () => string | undefined,
): Action {
  if (resolved.errors.length > 0) return { type: 'blocked', reason: 'render-error', errors: resolved.errors };
  const condition = conditionOfIncarnation(plan);
  const terminal = condition ? terminalCondition(condition, recoveryOf(unit, input.drivers), input.run?.runId) : undefined;
  if (terminal) return terminal;
  if (resolved.waits.length > 0) {
    const preview = previewOf(unit, input, planned);
    if (preview) plan.preview = preview;
    return waitAction(resolved.waits, planned, afterWait(plan, unit, input, planned, condition), condition);
  }
  const receipt = receiptOfIncarnation(plan);
  const reason = executeReason(plan, condition, resolved.executionKey) ?? currentReceiptAction(unit.name, plan.observed, receipt!, input);
  if (reason === 'key-changed' && resolved.rendering) plan.keyChanges = changesOf(receipt!, unit, resolved, input);
  if (input.drivers.driver(unit.kind)?.prepare && !input.prepared?.has(unit.name))
    return prepareAction(reason === undefined && resolved.preparedFrom !== undefined);
  if (reason === undefined) return currentAction(plan.desired, receipt!, resolved.absent);
  if (typeof reason !== 'string') return reason;
  const planning = input.drivers.driver(unit.kind)?.plan !== undefined;
  return gateExecution(unit, reason, approvalKey, planning, condition, input);
}

/** Why the unit executes by its own state, or undefined when its receipt is for `key`. */
function executeReason(plan: UnitPlan, condition: ConditionRecord | undefined, key: string | undefined): ExecuteReason | undefined {
  if (condition?.type === 'uncertain') return 'converge-uncertain';
  if (condition?.type === 'failed') return 'retry-failure';
  const receipt = receiptOfIncarnation(plan);
  if (receipt && receipt.executionKey === key) return undefined;
  if (receipt) return 'key-changed';
  return plan.newIncarnation || !plan.uid ? 'no-incarnation' : 'no-receipt';
}

/**
 * What a waiting unit does once its dependencies ran: execute for a reason of its own (a condition,
 * no receipt, a change of its own), or nothing decided yet (undefined): it is re-evaluated then,
 * and may stay current. Only a receipt without a condition needs the provisional key.
 */
function afterWait(
  plan: UnitPlan,
  unit: UnitResource,
  input: PlanInput,
  planned: ReadonlyMap<string, UnitPlan>,
  condition: ConditionRecord | undefined,
): ExecuteReason | undefined {
  const receipt = receiptOfIncarnation(plan);
  if (condition || !receipt) return executeReason(plan, condition, undefined);
  const provisional = provisionalKey(plan, unit, input, planned);
  if (provisional?.executionKey !== undefined) {
    const reason = executeReason(plan, undefined, provisional.executionKey);
    if (reason === 'key-changed' && provisional.rendering) plan.keyChanges = changesOf(receipt, unit, provisional, input);
    return reason;
  }
  // No key to compare yet: a change of its own in the preview runs it all the same.
  const recorded = receipt.desired.rendering;
  const fields = plan.preview && recorded ? ownChanges(plan.preview, recorded) : [];
  if (fields.length === 0) return undefined;
  plan.keyChanges = [{ read: 'spec', fields }];
  return 'key-changed';
}

/** Why the key changed since the receipt, read by read (./key-changes.ts). */
function changesOf(receipt: ReceiptRecord, unit: UnitResource, resolved: Resolved, input: PlanInput): KeyChange[] {
  const rendering = resolved.rendering!;
  const now = { rendering, ...(resolved.reads ? { reads: resolved.reads } : {}), ...(resolved.readFiles ? { readFiles: resolved.readFiles } : {}) };
  return keyChanges(receipt.desired, now, moduleReads(unit, rendering, input.drivers, input.project.dirCalls));
}

/**
 * The preview of a waiting unit (./preview.ts): producers that execute first lend unknown outputs.
 * None for a kind that prepares: its recorded rendering is a preparation the preview is not.
 */
function previewOf(unit: UnitResource, input: PlanInput, planned: ReadonlyMap<string, UnitPlan>): Record<string, unknown> | undefined {
  if (input.drivers.driver(unit.kind)?.prepare) return undefined;
  const receiptOf = (name: string) => {
    const producer = planned.get(name);
    return producerReceipt(producer) ?? (willExecute(producer) ? unknownOutputs(receiptOfIncarnation(producer)) : undefined);
  };
  return previewRendering(unit, input.env, receiptOf, input.drivers);
}

/**
 * The key a waiting unit resolves to from the outputs its dependencies' latest receipts hold: what
 * it consumed when it last ran, unless they ran without it since. A key other than its receipt's
 * is a change of its own, whatever its dependencies output next. Undefined when that cannot be
 * told: a dependency without any receipt, or a driver that resolves the key in a prepare phase.
 */
function provisionalKey(plan: UnitPlan, unit: UnitResource, input: PlanInput, planned: ReadonlyMap<string, UnitPlan>): Resolved | undefined {
  if (!plan.uid || input.drivers.driver(unit.kind)?.prepare) return undefined;
  const latest = scopeOf(input, (name) => asProducer(receiptOfIncarnation(planned.get(name))));
  return resolveUnit(unit, plan.uid, latest);
}

/**
 * The driver's prepare phase first. `recordedStands`: resolved with the preparation its desired
 * document recorded (source renders what it was prepared from), the unit is current, so an input
 * the driver finds absent on this machine does not fail it: what a unit runs matters only when it
 * executes, and a tag that moved is still found whenever the image is here.
 */
function prepareAction(recordedStands: boolean): Action {
  return { type: 'prepare', reason: 'driver-input', ...(recordedStands ? { recordedStands: true as const } : {}) };
}

/**
 * A current receipt. The desired branch must say what Nyl decided: when it holds another decision
 * than the one the receipt was produced for (a failed change that source reverted), a run writes
 * the receipt's document again. `absent`: current on its recorded preparation, because its
 * driver's input is absent on this machine.
 */
function currentAction(desired: DesiredUnitDoc | undefined, receipt: ReceiptRecord, absent: string | undefined): Action {
  if (!sameDecision(desired, receipt.desired)) return { type: 'current', reason: 'desired-restored' };
  return absent === undefined ? { type: 'current', reason: 'receipt-current' } : { type: 'current', reason: 'input-absent', absent };
}

/**
 * Waiting for dependencies that will execute first, or blocked by one that will not. A waiting unit
 * executes afterwards for `executes`, or without one is re-evaluated (`upstream-pending`).
 */
function waitAction(
  waits: Wait[],
  planned: ReadonlyMap<string, UnitPlan>,
  executes: ExecuteReason | undefined,
  condition: ConditionRecord | undefined,
): Action {
  const stuck = waits.filter((w) => !willExecute(planned.get(w.unit)));
  if (stuck.length > 0) return { type: 'blocked', reason: 'dependency-blocked', waits: [...stuck, ...waits.filter((w) => !stuck.includes(w))] };
  if (!executes) return { type: 'wait', reason: 'upstream-pending', waits };
  return { type: 'wait', reason: 'dependency-pending', waits, executes, ...(condition ? { condition } : {}) };
}

/** A held unit changes in no way: held in state, or by a hold delivered to this run before it ran. */
function heldAction(plan: UnitPlan, input: PlanInput, scope: ResolveScope): Action | undefined {
  const desired = plan.desired;
  if (isHeld(desired)) {
    const compared = heldSourceComparison(plan, input, scope);
    const sourceChanged = compared === 'changed';
    const pending = pendingSource(compared, desired.hold?.pending, input.sourceCommit);
    const condition = incarnationCondition(plan.observed, desired.uid);
    const extra = { sourceChanged, ...(desired.hold ? { hold: desired.hold } : {}), ...(pending ? { pending } : {}) };
    return condition?.type === 'uncertain' ? { type: 'held', reason: 'held-uncertain', condition, ...extra } : { type: 'held', reason: 'held', ...extra };
  }
  const delivered = input.run?.holds?.get(plan.name);
  const ranInThisRun = input.run !== undefined && plan.observed?.lastRun?.run === input.run.runId;
  return delivered && !ranInThisRun ? { type: 'held', reason: 'hold-delivered', delivered } : undefined;
}

/**
 * The source since which changes wait behind the hold: the first that rendered the unit
 * differently (kept while later ones still do, so a held unit costs no commit per source commit),
 * none once source renders what it is held at again, and unchanged when that cannot be told.
 */
function pendingSource(compared: 'changed' | 'same' | 'unknown', recorded: string | undefined, sourceCommit: string | undefined): string | undefined {
  if (compared === 'same') return undefined;
  if (compared === 'unknown') return recorded;
  return recorded ?? sourceCommit;
}

/**
 * The held document with a new hold.pending (or none), when it differs from the recorded one, for
 * a unit the run may change (under --unit, only named ones): the run records it.
 */
function recordPending(plan: UnitPlan, input: PlanInput): UnitPlan {
  const a = plan.action;
  const desired = plan.desired;
  if (a.type !== 'held' || !('sourceChanged' in a) || !desired?.hold || a.pending === desired.hold.pending) return plan;
  if (leftOut(plan.name, input)) return plan;
  const { pending: _recorded, ...hold } = desired.hold;
  return { ...plan, next: { ...desired, hold: a.pending ? { ...hold, pending: a.pending } : hold } };
}

/**
 * Does this source render the held unit differently from what it is held at? A marker always;
 * `unknown` when the unit cannot be rendered now (an output it reads is missing, say).
 */
function heldSourceComparison(plan: UnitPlan, input: PlanInput, scope: ResolveScope): 'changed' | 'same' | 'unknown' {
  const desired = plan.desired!;
  if (!desired.uid) return 'changed';
  const now = resolveUnit(plan.unit!, desired.uid, scope, preparationOf(plan, input));
  if (now.rendering === undefined || desired.rendering === undefined) return 'unknown';
  return sameRendering(now.rendering, desired.rendering) ? 'same' : 'changed';
}

/**
 * A unit this run leaves alone apart from lifecycle work: one --unit does not name, and every unit
 * of a run that does only lifecycle work (--leaving, `nyl teardown`). It executes nothing, and the
 * run writes nothing for it.
 */
function leftOut(name: string, input: PlanInput): boolean {
  const run = input.run;
  if (!run) return false;
  return (run.only !== undefined && !run.only.has(name)) || run.mode === 'leaving' || run.mode === 'teardown';
}

/** Why a run leaves the unit out (see leftOut). */
function skipReason(input: PlanInput): 'not-selected' | 'leaving-only' | 'teardown-only' {
  const mode = input.run?.mode;
  return mode === 'leaving' ? 'leaving-only' : mode === 'teardown' ? 'teardown-only' : 'not-selected';
}

/** Run-level filters over a decided action: --unit, and a run that starts nothing more. */
function finish(plan: UnitPlan, input: PlanInput): UnitPlan {
  const type = plan.action.type;
  if (plan.action.type === 'current' && plan.action.reason === 'desired-restored') return restoreDesired(plan, input);
  if (type !== 'execute' && type !== 'wait' && type !== 'prepare' && type !== 'awaiting-approval') return plan;
  const run = input.run;
  if (leftOut(plan.name, input)) return { ...plan, action: { type: 'skip', reason: skipReason(input) } };
  if (type === 'awaiting-approval') return plan;
  if (type !== 'wait' && run?.stopped) return { ...plan, action: runStopped(run.stopped) };
  if (type === 'execute') return { ...plan, next: nextDesired(plan, input) };
  return plan;
}

/**
 * The receipt's document to write again. Not for units --unit leaves out: a run changes nothing
 * about those, so the next run without --unit writes it.
 */
function restoreDesired(plan: UnitPlan, input: PlanInput): UnitPlan {
  if (leftOut(plan.name, input)) return { ...plan, action: { type: 'current', reason: 'receipt-current' } };
  return { ...plan, next: plan.observed!.receipt!.desired };
}

/** The desired document an execution is for. */
function nextDesired(plan: UnitPlan, input: PlanInput): DesiredUnitDoc | undefined {
  if (!plan.uid || !plan.rendering) return undefined;
  return {
    uid: plan.uid,
    kind: plan.kind,
    generation: input.generation,
    source: input.sourceCommit,
    rendering: plan.rendering,
    ...(plan.reads ? { reads: plan.reads } : {}),
    ...(plan.readFiles ? { readFiles: plan.readFiles } : {}),
    ...(plan.preparedFrom ? { preparedFrom: plan.preparedFrom } : {}),
    dependsOn: plan.unit!.dependsOn,
    lifecycle: { state: 'active' },
  };
}
