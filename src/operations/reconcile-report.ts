/**
 * The ReconcileReport of a run: one row per unit with its result, in this order (dispatched
 * units first, in dispatch order, then the rest in dependency order), and the warnings the
 * results raise. A dispatched unit's result is what its driver did; every other unit's result
 * and detail are rendered from the planner's final action.
 */
import { diagnostic, type Diagnostic } from '../errors/diagnostic';
import type { Plan, UnitPlan } from '../plan/actions';
import { runDetail } from '../plan/reasons';
import { emptyDiagnostics, FORMAT_VERSION, type ReconcileReport, type ReconcileUnitReport, REPORT_API_VERSION } from '../report/types';
import type { EngineResult } from '../run/engine';
import type { UnitOutcome } from '../run/run-state';
import type { Takeover } from '../run/takeover';
import type { EnvironmentStateView } from '../state/read';
import type { OpenedEnvironment } from './context';

function baseReport(opened: OpenedEnvironment, only: ReadonlySet<string> | undefined): ReconcileReport {
  const report: ReconcileReport = {
    apiVersion: REPORT_API_VERSION,
    formatVersion: FORMAT_VERSION,
    kind: 'ReconcileReport',
    operation: 'reconcile',
    environment: opened.env.name,
    source: opened.sourceCommit,
    sourceOverride: opened.sourceOverride,
    committed: false,
    units: {},
    unitOrder: [],
    details: {},
    ...emptyDiagnostics(),
  };
  if (only) report.selected = [...only];
  return report;
}

/** Which import a row's unit came from: its receipt imported, or left uncertain by a dead run. */
interface Imports {
  imported: ReadonlySet<string>;
  recovered: ReadonlySet<string>;
}

/** The result a unit the run did not dispatch has, by its final action. */
function resultOfAction(plan: UnitPlan, imports: Imports): string {
  const a = plan.action;
  switch (a.type) {
    case 'current':
      return imports.imported.has(plan.name) ? 'imported' : 'current';
    case 'uncertain':
      return imports.recovered.has(plan.name) ? 'recovered' : 'uncertain';
    case 'failed':
    case 'held':
      return a.type;
    default:
      return 'blocked';
  }
}

function plannedRow(plan: UnitPlan, sourceCommit: string, imports: Imports): ReconcileUnitReport {
  const row: ReconcileUnitReport = { kind: plan.kind, result: resultOfAction(plan, imports), detail: runDetail(plan, sourceCommit), dispatched: false };
  if (plan.uid) row.uid = plan.uid;
  if (plan.executionKey) row.executionKey = plan.executionKey;
  if (plan.action.type === 'held' && plan.action.reason === 'held-uncertain') row.uncertain = true;
  const waits = plan.action.type === 'wait' || (plan.action.type === 'blocked' && plan.action.reason === 'dependency-blocked') ? plan.action.waits : [];
  if (waits.length > 0) row.waits = waits;
  return row;
}

function dispatchedRow(o: UnitOutcome): ReconcileUnitReport {
  const row: ReconcileUnitReport = { kind: o.kind, result: o.result, detail: o.detail, dispatched: true, uid: o.uid, durationMs: o.durationMs };
  if (o.executionKey) row.executionKey = o.executionKey;
  if (o.receipt) row.outputs = Object.keys(o.receipt.outputs).sort();
  return row;
}

/** Units a run's table lists: selected ones, neither excluded by --unit nor merely leaving. */
function listed(plan: UnitPlan, only: ReadonlySet<string> | undefined): boolean {
  if (only && !only.has(plan.name)) return false;
  return plan.action.type !== 'skip' && plan.action.type !== 'leave' && plan.action.type !== 'drop';
}

/** Fills the table: dispatched units first in dispatch order, then the rest in plan order. */
function fillUnits(report: ReconcileReport, plan: Plan, outcomes: ReadonlyMap<string, UnitOutcome>, dispatchOrder: string[], imports: Imports, only: ReadonlySet<string> | undefined): void {
  const rows = new Map<string, ReconcileUnitReport>();
  for (const name of plan.order) {
    const unit = plan.units.get(name)!;
    const outcome = outcomes.get(name);
    if (outcome) rows.set(name, dispatchedRow(outcome));
    else if (listed(unit, only)) rows.set(name, plannedRow(unit, report.source, imports));
  }
  const first = new Set(dispatchOrder.filter((n) => rows.has(n)));
  report.unitOrder = [...first, ...[...rows.keys()].filter((n) => !first.has(n))];
  for (const name of report.unitOrder) report.units[name] = rows.get(name)!;
  for (const name of report.unitOrder) report.errors.push(...renderErrors(plan.units.get(name)!));
}

function renderErrors(plan: UnitPlan): Diagnostic[] {
  return plan.action.type === 'blocked' && plan.action.reason === 'render-error' ? plan.action.errors : [];
}

/**
 * NYL-UNIT-HELD and NYL-UNIT-UNCERTAIN for the rows that need attention. `unimported`: the run
 * ends without its transition commit (cancelled, state out of reach), so what it found waits in
 * its run ref for the next reconcile's import, and the fixes name that reconcile first.
 */
export function unitWarnings(report: ReconcileReport, { unimported = false } = {}): Diagnostic[] {
  const env = report.environment;
  const pending = unimported ? { unimported } : {};
  const out: Diagnostic[] = [];
  for (const name of report.unitOrder) {
    const u = report.units[name]!;
    if (u.result === 'held') out.push(diagnostic('NYL-UNIT-HELD', 'warning', `${name} is held: ${u.detail}`, { env, unit: name, units: [name] }));
    if (u.result === 'uncertain' || u.result === 'recovered') out.push(diagnostic('NYL-UNIT-UNCERTAIN', 'warning', `${name} may have had effects without a recorded result: ${u.detail}`, { env, unit: name, units: [name], ...pending }));
  }
  return out;
}

/** The report of a reconcile with nothing to do: from the plan, without a lease or a run. */
export function quietReport(opened: OpenedEnvironment, plan: Plan, view: EnvironmentStateView, only: ReadonlySet<string> | undefined): ReconcileReport {
  const report = baseReport(opened, only);
  if (view.desiredOid) report.desired = view.desiredOid;
  if (view.observedOid) report.observed = view.observedOid;
  fillUnits(report, plan, new Map(), [], { imported: new Set(), recovered: new Set() }, only);
  report.warnings.push(...unitWarnings(report));
  return report;
}

/** The report of a run, before its transition: rows, imports, the fail-fast stop. */
export function runReport(opened: OpenedEnvironment, run: string, takeover: Takeover, engine: EngineResult, only: ReadonlySet<string> | undefined): ReconcileReport {
  const report = baseReport(opened, only);
  report.run = run;
  const imp = takeover.imported;
  report.warnings.push(...imp.diagnostics);
  if (takeover.leaseBroken) report.details.leaseBroken = takeover.leaseBroken;
  if (takeover.leaseBrokenEarlier) report.details.leaseBrokenEarlier = takeover.leaseBrokenEarlier;
  if (imp.imported.length > 0) report.details.imported = imp.imported;
  if (imp.recovered.length > 0) report.details.recovered = imp.recovered;
  fillUnits(report, engine.plan, engine.outcomes, engine.dispatchOrder, { imported: new Set(imp.imported), recovered: new Set(imp.recovered) }, only);
  if (engine.stoppedAfter) {
    const env = opened.env.name;
    report.warnings.push(diagnostic('NYL-RUN-STOPPED', 'warning', `--fail-fast stopped the run of ${env} after unit ${engine.stoppedAfter}: it started no further unit`, { env, unit: engine.stoppedAfter }));
  }
  return report;
}
