/**
 * The planner's lifecycle pass: what happens to a unit that left the ownership set, whose teardown
 * an operator requested (`nyl teardown`), whose deletion already started, or whose kind changed.
 * Pure, like the rest of the planner; ./planner.ts calls it after it planned the ownership set.
 *
 * The recorded `deletionPolicy` (the one of the unit's last desired document) decides:
 * - Retain (the default): the desired file becomes a tombstone that keeps its receipt;
 * - Release: resources stay, the desired file goes and the observed file keeps a `released` record;
 * - Teardown: the driver tears the unit down. A teardown caused by source (or a kind change)
 *   starts only with --allow-teardown; one that started, or that an operator requested, goes on
 *   without it.
 * A kind change deletes the old incarnation under its old policy first; it cannot keep a tombstone
 * under a name the new kind takes, so Retain releases it.
 *
 * Consumers first: units are decided consumers before their dependencies, and a teardown waits
 * while a unit with an incarnation depends on it: one torn down in this run goes first
 * (`consumers-first`), a retained tombstone that cites it blocks it unless --allow-dependents
 * (`cited-by-tombstones`), anything else keeps it (`dependents-remain`). A kind change is exempt:
 * its consumers stay and resolve from the new incarnation once it ran.
 *
 * Precedence per unit: damaged documents > held > a marker without incarnation > a tombstone >
 * retain or release > a teardown's condition that needs an operator > --allow-teardown >
 * dependents > the teardown; then the run's filters (--unit does no lifecycle work, `nyl
 * teardown` only the requested units, --leaving only units outside the ownership set, a stopped
 * run starts nothing).
 */
import { consumersFirstOrder } from '../project/graph';
import type { DeletionPolicy, DesiredUnitDoc } from '../state/documents';
import { type Action, type DeletionCause, runStopped, type TeardownWait, type UnitPlan } from './actions';
import {
  conditionOfIncarnation,
  currentUid,
  isDeleting,
  isHeld,
  isRetained,
  lifecycleState,
  receiptOfIncarnation,
  recoveryPolicy,
  terminalCondition,
} from './unit-view';
import type { PlanInput } from './input';
import { sharedTeardown } from './shared-state';

export type { LifecycleOptions } from './input';

/** The unit's recorded deletion policy: its last desired document's, Retain when it names none. */
export function policyOf(desired: DesiredUnitDoc): DeletionPolicy {
  const policy = desired.rendering?.deletionPolicy;
  return policy === 'Teardown' || policy === 'Release' ? policy : 'Retain';
}

/** Is this desired document an incarnation of the current generation (not a marker, not ended by --fresh)? */
export function hasIncarnation(desired: DesiredUnitDoc | undefined, generation: number): boolean {
  return currentUid(desired, generation) !== undefined;
}

/**
 * Why an owned unit (one source still declares) has lifecycle work instead of an execution: its
 * deletion started, an operator requested its teardown, or its kind changed. A held unit has none:
 * a hold freezes it, deletion included.
 */
export function ownedDeletionCause(desired: DesiredUnitDoc | undefined, kind: string, generation: number): DeletionCause | undefined {
  if (!desired || !hasIncarnation(desired, generation) || isHeld(desired)) return undefined;
  if (desired.deletion) return desired.deletion.cause;
  if (desired.teardownRequest) return 'request';
  return desired.kind !== undefined && desired.kind !== kind ? 'kind-change' : undefined;
}

/** Why a unit that source no longer owns is deleted: the cause it recorded, a request, or source. */
function leavingCause(desired: DesiredUnitDoc): DeletionCause {
  return desired.deletion?.cause ?? (desired.teardownRequest ? 'request' : 'source');
}

/** The plan of a unit with lifecycle work, before its action is decided: what it was. */
export function lifecycleBase(name: string, desired: DesiredUnitDoc, input: PlanInput): UnitPlan {
  const observed = input.observed.get(name);
  const plan: UnitPlan = { name, kind: desired.kind ?? '-', desired, action: { type: 'retained', reason: 'tombstone' } };
  if (observed) plan.observed = observed;
  if (desired.uid) plan.uid = desired.uid;
  if (desired.rendering) plan.rendering = desired.rendering;
  const receipt = receiptOfIncarnation(plan);
  if (receipt) plan.executionKey = receipt.executionKey;
  return plan;
}

/**
 * Decides every unit with lifecycle work, consumers first (by the dependencies their desired
 * documents recorded), into `units`: `causes` names them with why they are deleted.
 */
export function planLifecycle(input: PlanInput, units: Map<string, UnitPlan>, causes: ReadonlyMap<string, DeletionCause | 'leaving'>): void {
  const graph = new Map([...causes.keys()].map((n) => [n, { dependsOn: input.desired.get(n)?.dependsOn ?? [] }]));
  const pass: Pass = { input, units, consumers: consumersOf(input, causes) };
  for (const name of consumersFirstOrder(graph)) {
    const desired = input.desired.get(name)!;
    // An owned unit's placeholder from the planner's first pass is its lifecycleBase with its source unit.
    const base = units.get(name) ?? lifecycleBase(name, desired, input);
    const cause = causes.get(name)!;
    units.set(name, decideLifecycle(base, cause === 'leaving' ? leavingCause(desired) : cause, cause !== 'leaving', pass));
  }
}

/** One lifecycle pass: its input, the decisions so far (consumers are decided first), and who consumes what. */
interface Pass {
  input: PlanInput;
  units: ReadonlyMap<string, UnitPlan>;
  /** For each unit with lifecycle work, the units with an incarnation whose recorded dependsOn names it. */
  consumers: ReadonlyMap<string, string[]>;
}

/** Consumers of the units with lifecycle work, read once per plan: every teardown asks who still depends on it. */
function consumersOf(input: PlanInput, causes: ReadonlyMap<string, unknown>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [name, doc] of input.desired) {
    if (!hasIncarnation(doc, input.generation)) continue;
    for (const dep of new Set(doc.dependsOn ?? [])) if (dep !== name && causes.has(dep)) out.set(dep, [...(out.get(dep) ?? []), name]);
  }
  return out;
}

/** One unit's lifecycle decision, with the run's filters applied and the document a run writes. */
function decideLifecycle(plan: UnitPlan, cause: DeletionCause, owned: boolean, pass: Pass): UnitPlan {
  const { input } = pass;
  const damaged = input.damaged?.get(plan.name);
  if (damaged !== undefined) return { ...plan, action: { type: 'blocked', reason: 'state-damaged', problem: damaged } };
  const desired = plan.desired!;
  if (isHeld(desired)) return { ...plan, action: { type: 'held', reason: 'held-leaving', ...(desired.hold ? { hold: desired.hold } : {}) } };
  const delivered = input.run?.holds?.get(plan.name);
  if (delivered) return { ...plan, action: { type: 'held', reason: 'hold-delivered', delivered } };
  if (!hasIncarnation(desired, input.generation)) return { ...plan, action: markerAction(input) };
  const action = baseAction(plan, cause, pass);
  return withNext(filtered({ ...plan, action }, cause, owned, input), cause, input);
}

/** A held marker resumed after its unit left: its file goes (a run under --unit leaves it). */
function markerAction(input: PlanInput): Action {
  return input.run?.only || input.run?.mode === 'teardown' ? { type: 'skip', reason: 'not-selected' } : { type: 'drop', reason: 'marker-left' };
}

/** What the policy (or a request, or a started deletion) makes of the unit, before the run's filters. */
function baseAction(plan: UnitPlan, cause: DeletionCause, pass: Pass): Action {
  const desired = plan.desired!;
  const policy = policyOf(desired);
  const tearsDown = isDeleting(desired) || cause === 'request' || policy === 'Teardown';
  if (!tearsDown) {
    if (isRetained(desired)) return { type: 'retained', reason: 'tombstone' };
    if (policy === 'Release' || cause === 'kind-change') return { type: 'release', reason: cause === 'kind-change' ? 'kind-change' : 'left-ownership-set' };
    return { type: 'retain', reason: 'left-ownership-set' };
  }
  return teardownAction(plan, cause, pass);
}

function teardownAction(plan: UnitPlan, cause: DeletionCause, pass: Pass): Action {
  const { input } = pass;
  const started = isDeleting(plan.desired);
  const condition = started ? conditionOfIncarnation(plan) : undefined;
  const terminal = condition ? terminalCondition(condition, recoveryOfRendering(plan, input), input.run?.runId) : undefined;
  if (terminal) return terminal;
  if (!started && cause !== 'request' && !input.lifecycle?.allowTeardown) return { type: 'pending-teardown', reason: 'needs-allow-teardown', cause };
  const dependents = cause === 'kind-change' ? undefined : dependentsOf(plan.name, pass);
  if (dependents && 'reason' in dependents) return { type: 'pending-teardown', cause, ...dependents };
  // A state another environment or unit shares is theirs too: destroying it is refused.
  const shared = sharedTeardown(input.project, input.env, plan.name, plan.desired!, input.drivers);
  if (shared) return { type: 'blocked', reason: 'render-error', errors: [shared] };
  return { type: 'teardown', reason: cause, ...(condition ? { condition } : {}), ...(dependents?.allowed ? { allowedDependents: dependents.allowed } : {}) };
}

/** The recovery policy of the unit as its desired document recorded it. */
function recoveryOfRendering(plan: UnitPlan, input: PlanInput): 'converge' | 'manual' {
  return recoveryPolicy(plan.rendering?.recovery, plan.kind, input.drivers);
}

/**
 * Units with an incarnation that depend on this one, by what they are doing (consumers are decided
 * first): a wait, or the tombstones --allow-dependents lets the teardown pass.
 */
type DependentsWait = Extract<TeardownWait, { dependents: string[] }>;

function dependentsOf(name: string, { input, units, consumers }: Pass): Omit<DependentsWait, 'cause'> | { allowed?: string[] } | undefined {
  const remain: string[] = [];
  const tombstones: string[] = [];
  const torn: string[] = [];
  for (const other of consumers.get(name) ?? []) {
    const action = units.get(other)?.action;
    const type = action?.type;
    if (type === 'release' || type === 'removed' || type === 'drop') continue;
    // Torn down in this run: now, or after its own consumers (a diamond waits level by level).
    if (type === 'teardown' || (action?.type === 'pending-teardown' && action.reason === 'consumers-first')) torn.push(other);
    else if (type === 'retain' || type === 'retained') tombstones.push(other);
    else remain.push(other);
  }
  if (remain.length > 0) return { reason: 'dependents-remain', dependents: remain.sort() };
  if (tombstones.length > 0 && !input.lifecycle?.allowDependents) return { reason: 'cited-by-tombstones', dependents: tombstones.sort() };
  if (torn.length > 0) return { reason: 'consumers-first', dependents: torn.sort() };
  return tombstones.length > 0 ? { allowed: tombstones.sort() } : undefined;
}

/**
 * The run's filters over a lifecycle decision: --unit does no lifecycle work (a named unit says
 * why it waits), `nyl teardown` only that of units with a request, --leaving only that of units
 * outside the ownership set, and a stopped run starts no teardown.
 */
function filtered(plan: UnitPlan, cause: DeletionCause, owned: boolean, input: PlanInput): UnitPlan {
  const run = input.run;
  if (!run) return plan;
  const work = plan.action.type === 'teardown' || plan.action.type === 'retain' || plan.action.type === 'release' || plan.action.type === 'pending-teardown';
  if (!work) return plan;
  if (run.only)
    return run.only.has(plan.name) && owned ? { ...plan, action: excluded(plan, cause, input) } : { ...plan, action: { type: 'skip', reason: 'not-selected' } };
  // A teardown run carries out requests, whatever started the unit's deletion first.
  if (run.mode === 'teardown' && !plan.desired?.teardownRequest) return { ...plan, action: { type: 'skip', reason: 'teardown-only' } };
  if (run.mode === 'leaving' && owned) return { ...plan, action: { type: 'skip', reason: 'leaving-only' } };
  if (plan.action.type === 'teardown' && run.stopped) return { ...plan, action: runStopped(run.stopped) };
  return plan;
}

/** Lifecycle work --unit leaves for a run without it; `allowTeardown`: that run needs --allow-teardown too. */
function excluded(plan: UnitPlan, cause: DeletionCause, input: PlanInput): Action {
  const desired = plan.desired!;
  const allowTeardown = cause !== 'request' && !isDeleting(desired) && policyOf(desired) === 'Teardown' && !input.lifecycle?.allowTeardown;
  return { type: 'pending-teardown', reason: 'lifecycle-excluded', cause, allowTeardown };
}

/**
 * The desired document the decision writes: a teardown's deleting document (its started marker
 * carries it), a tombstone, or a unit waiting for --allow-teardown marked pending-teardown. A run
 * that does no lifecycle work writes none, and status writes nothing anyway.
 */
function withNext(plan: UnitPlan, cause: DeletionCause, input: PlanInput): UnitPlan {
  const desired = plan.desired!;
  const a = plan.action;
  if (a.type === 'teardown') return { ...plan, next: deletingDocument(desired, cause, input) };
  if (a.type === 'retain') {
    const { deletion: _d, teardownRequest: _r, ...rest } = desired;
    return { ...plan, next: { ...rest, lifecycle: { state: 'retained' } } };
  }
  const waitsToStart = a.type === 'pending-teardown' && a.reason !== 'lifecycle-excluded' && cause !== 'request' && lifecycleState(desired) === 'active';
  return waitsToStart ? { ...plan, next: { ...desired, lifecycle: { state: 'pending-teardown' } } } : plan;
}

/** The document of a teardown: deleting, with its deletion record once it starts (kept while it lasts). */
function deletingDocument(desired: DesiredUnitDoc, cause: DeletionCause, input: PlanInput): DesiredUnitDoc {
  if (isDeleting(desired) && desired.deletion) return desired;
  const run = input.run;
  const deletion = { cause, policy: policyOf(desired), since: run?.at ?? '', ...(run?.runId ? { run: run.runId } : {}) };
  return { ...desired, lifecycle: { state: 'deleting' }, deletion };
}
