/**
 * Settles a finished run into its transition: the desired documents it decided, the holds
 * delivered to it (a unit it did not start is held as it was, one it ran as it ran), held markers
 * to drop, and one transition commit per state ref whose documents changed. The report lists
 * every unit those commits change before their message is written from its rows.
 */
import type { RefTransition } from '../../lease/publish';
import { type Plan, restoresDesired, writesDesiredOnly } from '../../plan/actions';
import { isHeld } from '../../plan/unit-view';
import type { ReconcileReport } from '../../report/types';
import { type AppliedHolds, applyHolds } from '../../run/apply-holds';
import type { EngineResult } from '../../run/engine';
import type { HoldSignal } from '../../run/signals';
import type { Takeover } from '../../run/takeover';
import { changedUnits, type DocumentChanges, documentChanges, transitionsOf } from '../../run/transition-plan';
import type { DesiredUnitDoc } from '../../state/documents';
import type { EnvironmentStateView } from '../../state/read';
import type { RefSnapshot } from '../../state/store';
import { type OpenedEnvironment, trailersOf } from '../shared/context';
import { leavingWarnings } from './lifecycle-report';
import { importsOf, listChanged, ownedNames, unitWarnings } from './reconcile-report';

export interface SettledRun {
  desired: Map<string, DesiredUnitDoc>;
  transitions: RefTransition[];
  /** The files the transitions write (rememberWritten once they landed). */
  changes: DocumentChanges;
}

interface Start {
  refs: RefSnapshot;
  view: EnvironmentStateView;
  generation: number;
}

/** The first hold delivered per unit, in the order the run read them. */
function deliveredHolds(signals: HoldSignal[]): HoldSignal[] {
  const seen = new Set<string>();
  return signals.filter((s) => !seen.has(s.unit) && seen.add(s.unit));
}

/** Applies delivered holds to the decided documents. */
function settleHolds(
  opened: OpenedEnvironment,
  start: Start,
  desired: Map<string, DesiredUnitDoc>,
  engine: EngineResult,
  report: ReconcileReport,
): AppliedHolds {
  const holds = applyHolds(opened.env.name, desired, engine.observed, deliveredHolds(engine.signals), start.generation);
  report.warnings.push(...holds.diagnostics.map((d) => ({ ...d, severity: 'warning' as const })));
  report.details.held = holds.held;
  return holds;
}

/** Shows delivered holds in the report's rows: a unit not started is held as it was, one that ran as it ran. */
function markHeld(report: ReconcileReport, holds: AppliedHolds): void {
  for (const name of [...holds.held, ...holds.alreadyHeld]) {
    const row = report.units[name];
    if (!row || row.result === 'held') continue;
    row.detail = row.dispatched ? `held as it ran (${row.result})` : 'held by a hold delivered to this run';
    row.result = 'held';
  }
}

/** Current units whose receipt's desired document the run writes again (the planner's `desired-restored`). */
function restoredDesired(plan: Plan): string[] {
  return plan.order.filter((n) => restoresDesired(plan.units.get(n)!));
}

/** Units the run removed, tombstoned, released, removed without a claim, or tore down past tombstones. */
function lifecycleLists(engine: EngineResult, takeover: Takeover, dropped: string[]) {
  const teardowns = [...engine.teardownOutcomes.values()];
  const done = [...engine.lifecycleDone.values()];
  return {
    removed: [...takeover.imported.removed, ...teardowns.filter((o) => o.result === 'removed').map((o) => o.name), ...dropped],
    retained: done.filter((d) => d.result === 'retained').map((d) => d.name),
    released: done.filter((d) => d.result === 'released').map((d) => d.name),
    incomplete: teardowns.filter((o) => o.incomplete).map((o) => o.name),
    allowDependents: teardowns.filter((o) => o.allowedDependents && o.result === 'removed').map((o) => o.name),
  };
}

type Lists = ReturnType<typeof lifecycleLists>;

/** The transition body's lists, from the settled rows: `units` names every unit the commit changes or that did not end current. */
function bodyOf(
  opened: OpenedEnvironment,
  operation: string,
  engine: EngineResult,
  takeover: Takeover,
  report: ReconcileReport,
  held: string[],
  lists: Lists,
  restored: string[],
) {
  // A unit's entry is its result, or {result, approval} when an approval allowed its execution.
  const units: Record<string, string | { result: string; approval: unknown }> = {};
  for (const name of report.unitOrder) {
    const row = report.units[name]!;
    const approval = engine.outcomes.get(name)?.approval;
    if (approval) units[name] = { result: row.result, approval };
    else if (row.result !== 'current' || restored.includes(name)) units[name] = row.result;
  }
  const executedFor = (reason: string) => engine.plan.order.filter((n) => engine.outcomes.get(n)?.executedFor === reason);
  return {
    operation,
    run: report.run,
    source: opened.sourceCommit,
    ...(opened.sourceOverride ? { sourceOverride: true } : {}),
    ...(opened.worktree ? { sourceWorktree: true } : {}),
    units,
    executed: engine.plan.order.filter((n) => engine.outcomes.get(n)?.result === 'executed'),
    driftRepaired: executedFor('drift-repair'),
    reapplied: executedFor('reapply'),
    imported: takeover.imported.imported,
    recovered: takeover.imported.recovered,
    held,
    ...lists,
    ...(report.details.requested ? { requested: report.details.requested } : {}),
    desiredRestored: restored,
    ...(takeover.leaseBroken ? { leaseBroken: takeover.leaseBroken } : {}),
    ...(takeover.leaseBrokenEarlier ? { leaseBrokenEarlier: takeover.leaseBrokenEarlier } : {}),
  };
}

/** Each unit the body records, with its result: what the headline counts. */
function outcomesOf(units: Record<string, string | { result: string }>): Record<string, string> {
  return Object.fromEntries(Object.entries(units).map(([name, u]) => [name, typeof u === 'string' ? u : u.result]));
}

/** The lifecycle lists in the report's details, where they have members. */
function detailLists(report: ReconcileReport, lists: Record<string, string[]>): void {
  for (const [name, list] of Object.entries(lists)) if (list.length > 0) report.details[name] = list;
}

export function settleRun(
  opened: OpenedEnvironment,
  start: Start,
  takeover: Takeover,
  engine: EngineResult,
  report: ReconcileReport,
  reason: string | undefined,
  operation = 'reconcile',
): SettledRun {
  // What the run decided, removals included; then documents the planner decided without an
  // execution: a receipt's document again, a hold.pending, a unit marked pending-teardown.
  const decided = new Map(engine.desired);
  for (const [name, plan] of engine.plan.units) if (writesDesiredOnly(plan)) decided.set(name, plan.next!);
  const restored = restoredDesired(engine.plan);
  const holds = settleHolds(opened, start, decided, engine, report);
  const desired = holds.desired;
  // A resumed held marker whose unit left the ownership set has no incarnation: its file goes.
  // Under --unit the planner skips it instead of dropping it, so the file stays.
  const dropped = engine.plan.order.filter((n) => engine.plan.units.get(n)!.action.type === 'drop' && !isHeld(desired.get(n)));
  for (const name of dropped) desired.delete(name);
  const changes = documentChanges({ desired: start.view.desiredUnits, observed: start.view.observedUnits }, { desired, observed: engine.observed });
  listChanged(report, engine.plan, changedUnits(changes), importsOf(takeover));
  markHeld(report, holds);
  report.warnings.push(...unitWarnings(report, { plan: engine.plan }), ...leavingWarnings(report, engine.plan, engine, ownedNames(opened), operation));
  const lists = lifecycleLists(engine, takeover, dropped);
  detailLists(report, lists);
  const trailers = { ...trailersOf(opened, reason), sourceOverride: opened.sourceOverride, ...(opened.worktree ? { sourceWorktree: true } : {}) };
  const body = bodyOf(opened, operation, engine, takeover, report, holds.held, lists, restored);
  detailLists(report, { driftRepaired: body.driftRepaired, reapplied: body.reapplied });
  const transitions = transitionsOf(
    opened.loc,
    start.refs,
    opened.env.name,
    changes,
    body,
    trailers,
    { outcomes: outcomesOf(body.units) },
    takeover.leaseBroken !== undefined,
  );
  return { desired, transitions: retainingSnapshot(opened, transitions), changes };
}

/**
 * A --worktree run's snapshot becomes the second parent of its desired transition (of its observed
 * one when the run changes no desired document), so that state history keeps the files the run
 * rendered from, and pushing the transition pushes them. First-parent history stays the state's.
 */
function retainingSnapshot(opened: OpenedEnvironment, transitions: RefTransition[]): RefTransition[] {
  const snapshot = opened.worktree?.snapshot;
  if (!snapshot || transitions.length === 0) return transitions;
  const at = Math.max(
    0,
    transitions.findIndex((t) => t.ref === opened.loc.desiredRef),
  );
  return transitions.map((t, i) => (i === at && t.base !== undefined ? { ...t, merges: [...(t.merges ?? []), snapshot] } : t));
}
