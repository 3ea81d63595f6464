/**
 * The leaving section of a run's report (printed first): units that left the ownership set or are
 * torn down, with what the run did to them, and the warnings their deletion raises. Rows of work
 * the run did come from what it recorded (teardowns, tombstones, releases); rows of work that
 * waits come from the planner's final action.
 */
import { diagnostic, type Diagnostic } from '../../errors/diagnostic';
import { type DeletionCause, inLeavingSection, type Plan, type UnitPlan } from '../../plan/actions';
import { doneDetail } from '../../plan/reasons';
import { isRetained } from '../../plan/unit-view';
import type { ReconcileReport, ReconcileUnitReport } from '../../report/types';
import type { LifecycleDone, UnitOutcome } from '../../run/run-state';

/** What a run did to units it deleted (empty for a report without a run). */
export interface LifecycleResults {
  teardownOutcomes: ReadonlyMap<string, UnitOutcome>;
  lifecycleDone: ReadonlyMap<string, LifecycleDone>;
  /** Dispatch order of the run: teardowns keep it in the table. */
  dispatchOrder: readonly string[];
}

export const NO_LIFECYCLE: LifecycleResults = { teardownOutcomes: new Map(), lifecycleDone: new Map(), dispatchOrder: [] };

function teardownRow(o: UnitOutcome): ReconcileUnitReport {
  const row: ReconcileUnitReport = { kind: o.kind, result: o.result, detail: o.detail, dispatched: true, uid: o.uid, durationMs: o.durationMs, leaving: true };
  if (o.incomplete) row.incomplete = true;
  if (o.condition?.code) row.code = o.condition.code;
  return row;
}

function doneRow(done: LifecycleDone): ReconcileUnitReport {
  return {
    kind: done.kind,
    result: done.result,
    detail: doneDetail(done.result, done.kindChange === true),
    dispatched: false,
    ...(done.uid ? { uid: done.uid } : {}),
    leaving: true,
  };
}

/**
 * Adds the rows of the leaving section, in the order the table prints them: teardowns in dispatch
 * order, then tombstones and releases, then what waits in plan order (consumers first). A unit
 * whose new kind executed after its old incarnation went keeps its execution row instead. Returns
 * their names.
 */
export function addLeavingRows(
  report: ReconcileReport,
  plan: Plan,
  results: LifecycleResults,
  plannedRow: (unit: UnitPlan) => ReconcileUnitReport,
  listed: (unit: UnitPlan) => boolean,
): string[] {
  const names: string[] = [];
  const add = (name: string, row: ReconcileUnitReport) => {
    if (report.units[name]) return;
    report.units[name] = row;
    names.push(name);
  };
  for (const name of new Set(results.dispatchOrder)) {
    const o = results.teardownOutcomes.get(name);
    if (o) add(name, teardownRow(o));
  }
  for (const done of results.lifecycleDone.values()) add(done.name, doneRow(done));
  for (const name of plan.order) {
    const unit = plan.units.get(name)!;
    if (inLeavingSection(unit) && listed(unit)) add(name, { ...plannedRow(unit), leaving: true });
  }
  return names;
}

/** Does this waiting teardown need --allow-teardown to start (the planner says so)? */
function waitsForAllowTeardown(a: Extract<UnitPlan['action'], { type: 'pending-teardown' }>): boolean {
  return a.reason === 'needs-allow-teardown' || (a.reason === 'lifecycle-excluded' && a.allowTeardown);
}

/** The cause of a unit's deletion, when its action says it. */
function causeOf(unit: UnitPlan): DeletionCause | undefined {
  const a = unit.action;
  if (a.type === 'teardown') return a.reason;
  if (a.type === 'release' && a.reason === 'kind-change') return 'kind-change';
  if (a.type === 'pending-teardown') return a.cause;
  return unit.desired?.deletion?.cause;
}

/**
 * Warnings of the leaving section: NYL-PLAN-UNITS-LEAVING once for the units that left the
 * ownership set, and per unit NYL-TEARDOWN-PENDING, NYL-TEARDOWN-HAS-DEPENDENTS,
 * NYL-UNIT-RELEASED, NYL-UNIT-KIND-CHANGE and NYL-TEARDOWN-INCOMPLETE.
 */
export function leavingWarnings(report: ReconcileReport, plan: Plan, results: LifecycleResults, owned: ReadonlySet<string>, command: string): Diagnostic[] {
  const env = report.environment;
  const out: Diagnostic[] = [];
  const rows = report.unitOrder.filter((n) => report.units[n]!.leaving);
  out.push(...leavingDiagnostic(env, unitsLeaving(plan, results, owned)));
  for (const name of rows) out.push(...unitLeavingWarnings(name, report.units[name]!, plan.units.get(name), results, env, command));
  out.push(...replacedKinds(report, results));
  return out;
}

/** Kind changes this run completed: the old incarnation went and the new kind's row is an execution. */
function replacedKinds(report: ReconcileReport, results: LifecycleResults): Diagnostic[] {
  const env = report.environment;
  const gone = [
    ...[...results.teardownOutcomes.values()]
      .filter((o) => o.cause === 'kind-change' && o.result === 'removed')
      .map((o) => ({ name: o.name, kind: o.kind, how: 'torn down' })),
    ...[...results.lifecycleDone.values()].filter((d) => d.kindChange).map((d) => ({ name: d.name, kind: d.kind, how: 'released' })),
  ];
  return gone
    .filter((g) => report.units[g.name] && !report.units[g.name]!.leaving)
    .flatMap((g) => {
      const at = { env, unit: g.name, units: [g.name] };
      const changed = diagnostic(
        'NYL-UNIT-KIND-CHANGE',
        'warning',
        `${g.name} changed its kind: its old ${g.kind} incarnation was ${g.how} first, then the new kind started a new one`,
        at,
      );
      // The new incarnation takes the unit's files: the transition commit's released list is the record.
      if (g.how !== 'released') return [changed];
      return [
        changed,
        diagnostic(
          'NYL-UNIT-RELEASED',
          'warning',
          `the resources of ${g.name}'s old ${g.kind} incarnation stay in place, and Nyl no longer manages them (the transition commit lists it under released)`,
          { ...at, kindChange: true },
        ),
      ];
    });
}

/**
 * Units that leave the ownership set: what state holds beyond it (a tombstone left earlier, a
 * marker without incarnation aside), whatever the run does with them (also under --unit, which
 * does nothing), and what the run removed or released because it left.
 */
function unitsLeaving(plan: Plan, results: LifecycleResults, owned: ReadonlySet<string>): string[] {
  const left = new Set<string>();
  for (const name of plan.order) {
    const unit = plan.units.get(name)!;
    const settled = unit.action.type === 'retained' || unit.action.type === 'drop' || isRetained(unit.desired);
    if (!owned.has(name) && !settled) left.add(name);
  }
  for (const done of results.lifecycleDone.values()) if (!owned.has(done.name)) left.add(done.name);
  for (const o of results.teardownOutcomes.values()) if (!owned.has(o.name) && o.cause !== 'request') left.add(o.name);
  return [...left].sort();
}

/** NYL-PLAN-UNITS-LEAVING, once, naming them. */
function leavingDiagnostic(env: string, left: string[]): Diagnostic[] {
  if (left.length === 0) return [];
  return [
    diagnostic(
      'NYL-PLAN-UNITS-LEAVING',
      'warning',
      `${left.length === 1 ? 'a unit leaves' : `${left.length} units leave`} the ownership set of ${env}: ${left.join(', ')}`,
      { env, units: left },
    ),
  ];
}

/**
 * The same warnings for `nyl status`, from the plan alone: units that left the ownership set and
 * the lifecycle work that waits (rows give each unit's state and detail).
 */
export function statusLeavingWarnings(
  env: string,
  plan: Plan,
  rows: ReadonlyMap<string, { state: string; detail: string }>,
  owned: ReadonlySet<string>,
): Diagnostic[] {
  const leaving = plan.order.filter((n) => inLeavingSection(plan.units.get(n)!));
  const out = leavingDiagnostic(env, unitsLeaving(plan, NO_LIFECYCLE, owned));
  for (const name of leaving) {
    const row = rows.get(name)!;
    out.push(
      ...unitLeavingWarnings(
        name,
        { kind: '', result: row.state, detail: row.detail, dispatched: false },
        plan.units.get(name),
        NO_LIFECYCLE,
        env,
        'reconcile',
      ),
    );
  }
  return out;
}

function unitLeavingWarnings(
  name: string,
  row: ReconcileUnitReport,
  unit: UnitPlan | undefined,
  results: LifecycleResults,
  env: string,
  command: string,
): Diagnostic[] {
  const out: Diagnostic[] = [];
  const at = { env, unit: name, units: [name] };
  const a = unit?.action;
  if (a?.type === 'pending-teardown') {
    const dependents = 'dependents' in a ? a.dependents : undefined;
    if (a.reason === 'cited-by-tombstones')
      out.push(diagnostic('NYL-TEARDOWN-HAS-DEPENDENTS', 'warning', `${name} is not torn down: ${row.detail}`, { ...at, dependents: dependents ?? [] }));
    else
      out.push(
        diagnostic('NYL-TEARDOWN-PENDING', 'warning', `the teardown of ${name} waits: ${row.detail}`, {
          ...at,
          wait: a.reason,
          ...(dependents ? { dependents } : {}),
        }),
      );
  }
  if (row.result === 'released')
    out.push(diagnostic('NYL-UNIT-RELEASED', 'warning', `${name} was released: its resources stay in place, and Nyl no longer manages them`, at));
  const cause = (unit ? causeOf(unit) : undefined) ?? (results.lifecycleDone.get(name)?.kindChange ? 'kind-change' : undefined);
  if (cause === 'kind-change') {
    const waits = a?.type === 'pending-teardown' && waitsForAllowTeardown(a);
    out.push(
      diagnostic('NYL-UNIT-KIND-CHANGE', 'warning', `${name} changed its kind: its old incarnation is deleted first (${row.result})`, {
        ...at,
        waitsForTeardown: waits,
      }),
    );
  }
  const teardown = results.teardownOutcomes.get(name);
  if (teardown?.incomplete)
    out.push(
      diagnostic('NYL-TEARDOWN-INCOMPLETE', 'warning', `${name} was removed from state without a claim of removal (--allow-incomplete): ${teardown.detail}`, {
        ...at,
        removed: true,
      }),
    );
  else if (row.result === 'failed' && unit?.observed?.condition?.code === 'NYL-TEARDOWN-INCOMPLETE') {
    out.push(diagnostic('NYL-TEARDOWN-INCOMPLETE', 'warning', `the teardown of ${name} cannot claim its removal: ${row.detail}`, { ...at, command }));
  }
  return out;
}
