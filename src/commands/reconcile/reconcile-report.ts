/**
 * The ReconcileReport of a run: one row per unit with its result, in this order (dispatched
 * units first, in dispatch order, then the rest in dependency order), and the warnings the
 * results raise. A dispatched unit's result is what its driver did; every other unit's result
 * and detail are rendered from the planner's final action.
 *
 * Under --unit the table lists the named units, and also every other unit whose documents the
 * transition commit changes (what a takeover imported, a hold delivered to the run): the report
 * shows what the commit shows. Only the named units count for the exit code, so a resolution
 * error of any other unit is a warning, not an error.
 */
import { sealingKeyIds } from '../../run/secrets';
import { diagnostic, type Diagnostic } from '../../errors/diagnostic';
import type { Plan, UnitPlan } from '../../plan/actions';
import { ownedGraph } from '../../plan/planner';
import { runDetail } from '../../plan/reasons';
import { isDeleting } from '../../plan/unit-view';
import { emptyDiagnostics, FORMAT_VERSION, type ReconcileReport, type ReconcileUnitReport, REPORT_API_VERSION } from '../../report/types';
import type { EngineResult } from '../../run/engine';
import type { UnitOutcome } from '../../run/run-state';
import type { Takeover } from '../../run/takeover';
import type { EnvironmentStateView } from '../../state/read';
import type { OpenedEnvironment } from '../shared/context';
import { addLeavingRows, type LifecycleResults, leavingWarnings, NO_LIFECYCLE } from './lifecycle-report';
import { stateLostObserved } from '../shared/report-base';

function baseReport(opened: OpenedEnvironment, only: ReadonlySet<string> | undefined, operation: ReconcileReport['operation'] = 'reconcile'): ReconcileReport {
  const report: ReconcileReport = {
    apiVersion: REPORT_API_VERSION,
    formatVersion: FORMAT_VERSION,
    kind: 'ReconcileReport',
    operation,
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

export function importsOf(takeover: Takeover): Imports {
  return { imported: new Set(takeover.imported.imported), recovered: new Set(takeover.imported.recovered) };
}

/**
 * The result of a unit the run did not dispatch, by its final action. One the takeover left
 * uncertain is recovered whatever else keeps it from running again here (not named by --unit, a
 * dependency, a rendering error), unless it is held: its state is uncertain, as the commit says.
 */
function resultOfAction(plan: UnitPlan, imports: Imports): string {
  const a = plan.action;
  if (imports.recovered.has(plan.name) && a.type !== 'held') return 'recovered';
  switch (a.type) {
    case 'current':
    case 'skip':
      // skip: not named by --unit, listed because the commit changes it (an import).
      return imports.imported.has(plan.name) ? 'imported' : a.type === 'current' ? 'current' : 'blocked';
    case 'drop':
    case 'removed':
      return 'removed';
    case 'uncertain':
    case 'failed':
    case 'held':
    case 'awaiting-approval':
    case 'drifted':
      return a.type;
    case 'pending-teardown':
      return deleting(plan) ? 'tearing-down' : 'pending-teardown';
    case 'teardown':
      return 'tearing-down';
    case 'retain':
    case 'retained':
      return 'retained';
    case 'release':
      return 'released';
    default:
      return deleting(plan) ? 'tearing-down' : 'blocked';
  }
}

/** A unit whose teardown started: one that waits or was stopped is still tearing down. */
function deleting(plan: UnitPlan): boolean {
  return isDeleting(plan.desired);
}

/** A recovered unit's detail starts with why it is uncertain, then what else holds it back. */
function detailOf(plan: UnitPlan, result: string, sourceCommit: string): string {
  const detail = runDetail(plan, sourceCommit);
  const condition = plan.observed?.condition;
  if (result !== 'recovered' || plan.action.type === 'uncertain' || !condition) return detail;
  return detail ? `${condition.reason}; ${detail}` : condition.reason;
}

function plannedRow(plan: UnitPlan, sourceCommit: string, imports: Imports): ReconcileUnitReport {
  const result = resultOfAction(plan, imports);
  const row: ReconcileUnitReport = { kind: plan.kind, result, detail: detailOf(plan, result, sourceCommit), dispatched: false };
  if (plan.uid) row.uid = plan.uid;
  if (plan.executionKey) row.executionKey = plan.executionKey;
  if (plan.action.type === 'held' && plan.action.reason === 'held-uncertain') row.uncertain = true;
  const waits = plan.action.type === 'wait' || (plan.action.type === 'blocked' && plan.action.reason === 'dependency-blocked') ? plan.action.waits : [];
  if (waits.length > 0) row.waits = waits;
  if (plan.action.type === 'awaiting-approval') row.approval = approvalWait(plan);
  if (plan.action.type === 'drifted' && plan.action.reason === 'state-lost') row.code = 'NYL-BACKEND-STATE-LOST';
  return row;
}

/** Why a row awaits approval, and the digest to approve when the run knows it. */
function approvalWait(plan: UnitPlan): NonNullable<ReconcileUnitReport['approval']> {
  const a = plan.action as Extract<UnitPlan['action'], { type: 'awaiting-approval' }>;
  return { reason: a.reason, requireDigest: a.requireDigest, ...(a.digest ? { digest: a.digest } : {}) };
}

function dispatchedRow(o: UnitOutcome): ReconcileUnitReport {
  const row: ReconcileUnitReport = { kind: o.kind, result: o.result, detail: o.detail, dispatched: true, uid: o.uid, durationMs: o.durationMs };
  if (o.executionKey) row.executionKey = o.executionKey;
  if (o.receipt) row.outputs = Object.keys(o.receipt.outputs).sort();
  if (o.condition?.code) row.code = o.condition.code;
  if (o.approval) row.approvedBy = o.approval;
  return row;
}

/**
 * Units a run's table lists: selected ones, not excluded by --unit, `nyl teardown` or --leaving,
 * and not a tombstone that nothing changes. A dropped marker is listed only when its file goes.
 */
function listed(plan: UnitPlan, only: ReadonlySet<string> | undefined): boolean {
  if (only && !only.has(plan.name)) return false;
  return plan.action.type !== 'skip' && plan.action.type !== 'drop' && plan.action.type !== 'retained';
}

/**
 * `nyl teardown` lists its leaving section and the units with a request it did not carry out (a
 * held one), besides what its commit changes (listChanged); reconcile lists every unit.
 */
function inTeardownReport(report: ReconcileReport, unit: UnitPlan): boolean {
  return report.operation !== 'teardown' || unit.desired?.teardownRequest !== undefined;
}

/**
 * Fills the table: the leaving section first (what the run deleted, then what waits), then the
 * dispatched executions in dispatch order, then the rest in plan order.
 */
function fillUnits(
  report: ReconcileReport,
  plan: Plan,
  outcomes: ReadonlyMap<string, UnitOutcome>,
  lifecycle: LifecycleResults,
  imports: Imports,
  only: ReadonlySet<string> | undefined,
): void {
  const imported = Object.keys(report.units).filter((n) => report.units[n]!.leaving);
  for (const [name, outcome] of outcomes) report.units[name] = dispatchedRow(outcome);
  const leaving = [
    ...imported,
    ...addLeavingRows(
      report,
      plan,
      lifecycle,
      (u) => plannedRow(u, report.source, imports),
      (u) => listed(u, only),
    ),
  ];
  for (const name of plan.order) {
    const unit = plan.units.get(name)!;
    if (!report.units[name] && listed(unit, only) && inTeardownReport(report, unit)) report.units[name] = plannedRow(unit, report.source, imports);
  }
  orderRows(report, plan, lifecycle.dispatchOrder, leaving);
  resolutionDiagnostics(report, plan, only);
}

/** unitOrder of the rows: the leaving section, then dispatched units in dispatch order, then the rest in plan order. */
function orderRows(
  report: ReconcileReport,
  plan: Plan,
  dispatchOrder: readonly string[],
  leaving: string[] = report.unitOrder.filter((n) => report.units[n]?.leaving),
): void {
  const first = new Set([...leaving, ...dispatchOrder.filter((n) => report.units[n])]);
  report.unitOrder = [...first, ...plan.order.filter((n) => report.units[n] && !first.has(n))];
  // The map's keys in table order too, for whoever reads the JSON in order.
  report.units = Object.fromEntries(report.unitOrder.map((n) => [n, report.units[n]!]));
}

/**
 * Resolution covers the whole environment, so every rendering error is reported: an error of a
 * unit that counts (every unit, or one named by --unit), a warning of any other, which this run
 * does not execute and whose state it does not judge.
 */
function resolutionDiagnostics(report: ReconcileReport, plan: Plan, only: ReadonlySet<string> | undefined): void {
  for (const name of plan.order) {
    const a = plan.units.get(name)!.action;
    if (a.type !== 'blocked' || a.reason !== 'render-error') continue;
    if (!only || only.has(name)) report.errors.push(...a.errors);
    else report.warnings.push(...a.errors.map((d): Diagnostic => ({ ...d, severity: 'warning' })));
  }
}

/**
 * Lists the units the transition commit changes that the table does not list yet (under --unit:
 * what the takeover imported or recovered, a unit a delivered hold held), so that the report
 * shows every unit the commit does.
 */
export function listChanged(report: ReconcileReport, plan: Plan, changed: Iterable<string>, imports: Imports): void {
  let added = false;
  for (const name of changed) {
    const unit = plan.units.get(name);
    if (report.units[name] || !unit) continue;
    report.units[name] = plannedRow(unit, report.source, imports);
    added = true;
  }
  if (added)
    orderRows(
      report,
      plan,
      report.unitOrder.filter((n) => report.units[n]!.dispatched && !report.units[n]!.leaving),
    );
}

/**
 * NYL-UNIT-HELD and NYL-UNIT-UNCERTAIN for the rows that need attention. `unimported`: the run
 * ends without its transition commit (cancelled, state out of reach), so what it found waits in
 * its run ref for the next reconcile's import, and the fixes name that reconcile first.
 */
/** Failure codes whose fix a failed unit's row brings along as a warning (the teardown's own is a lifecycle warning). */
const UNIT_FAILURE_CODES = {
  'NYL-SECRETS-KEY-MISSING': true,
  'NYL-SECRET-UNAVAILABLE': true,
  'NYL-IMAGE-UNRESOLVED': true,
  'NYL-BACKEND-STATE-LOST': true,
  'NYL-BACKEND-SHARED': true,
} as const;
type UnitFailureCode = keyof typeof UNIT_FAILURE_CODES;

/**
 * The fix parameters of NYL-SECRET-UNAVAILABLE for a unit: the producer of the first sensitive
 * value it consumes, and whether that producer keeps it in its backend (a Terraform module: the
 * backend was lost or moved) rather than sealed in its receipt (a key is missing).
 */
function secretFixParams(plan: Plan | undefined, name: string): Record<string, unknown> {
  const read = plan?.units.get(name)?.reads?.secrets?.[0];
  if (!read) return {};
  const entry = plan?.units.get(read.unit)?.observed?.receipt?.sensitiveOutputs?.[read.output];
  return { producer: read.unit, ...(entry && entry.sealed === undefined ? { backend: true } : {}) };
}

/**
 * The fix parameters of NYL-SECRETS-KEY-MISSING: the keys that sealed what the environment's
 * receipts hold, when any did. A new key would not open them: the fix names the one to configure.
 */
function keyFixParams(plan: Plan | undefined): Record<string, unknown> {
  const ids = plan ? sealingKeyIds([...plan.units.values()].map((u) => u.observed)) : [];
  return ids.length > 0 ? { sealedBy: ids } : {};
}

export function unitWarnings(report: ReconcileReport, { unimported = false, plan }: { unimported?: boolean; plan?: Plan } = {}): Diagnostic[] {
  const env = report.environment;
  const pending = unimported ? { unimported } : {};
  const out: Diagnostic[] = [];
  for (const name of report.unitOrder) {
    const u = report.units[name]!;
    if (u.result === 'held') out.push(diagnostic('NYL-UNIT-HELD', 'warning', `${name} is held: ${u.detail}`, { env, unit: name, units: [name] }));
    if (u.result === 'uncertain' || u.result === 'recovered')
      out.push(
        diagnostic('NYL-UNIT-UNCERTAIN', 'warning', `${name} may have had effects without a recorded result: ${u.detail}`, {
          env,
          unit: name,
          units: [name],
          ...pending,
        }),
      );
    if (u.result === 'failed' && u.code && u.code in UNIT_FAILURE_CODES) {
      const codeParams = u.code === 'NYL-SECRET-UNAVAILABLE' ? secretFixParams(plan, name) : u.code === 'NYL-SECRETS-KEY-MISSING' ? keyFixParams(plan) : {};
      const params = { ...codeParams, ...(u.leaving ? { teardown: true } : {}) };
      out.push(diagnostic(u.code as UnitFailureCode, 'warning', `${name} failed: ${u.detail}`, { env, unit: name, units: [name], ...params }));
    }
    if (u.result === 'awaiting-approval' && u.approval) out.push(approvalWarning(env, name, u.detail, u.approval));
    if (u.result === 'drifted' && u.code === 'NYL-BACKEND-STATE-LOST') out.push(stateLostObserved(env, name, u.detail));
    else if (u.result === 'drifted') out.push(diagnostic('NYL-UNIT-DRIFTED', 'warning', `${name} ${u.detail}`, { env, unit: name, units: [name] }));
  }
  return out;
}

/**
 * The fix parameters of NYL-UNIT-AWAITING-APPROVAL for a wait: the exact --approve (with the
 * digest when only a reviewed one will do and it is known), and the options of the run it needs.
 */
function approvalFixParams(unit: string, approval: NonNullable<ReconcileUnitReport['approval']>): Record<string, unknown> {
  const bound = approval.requireDigest;
  if (bound && !approval.digest) return { digestUnknown: true };
  const scope = approval.reason === 'manual-reapply' ? { scope: 'reapply' } : approval.reason === 'manual-local' ? { scope: 'local' } : {};
  return { ...scope, ...(bound ? { approve: `${unit}=${approval.digest}` } : {}) };
}

/** NYL-UNIT-AWAITING-APPROVAL (or NYL-APPROVAL-DIGEST-MISMATCH) with the --approve that lets it run. */
export function approvalWarning(env: string, name: string, detail: string, approval: NonNullable<ReconcileUnitReport['approval']>): Diagnostic {
  if (approval.reason === 'digest-mismatch') {
    return diagnostic('NYL-APPROVAL-DIGEST-MISMATCH', 'warning', `${name}: ${detail}`, { env, unit: name, units: [name], digest: approval.digest });
  }
  return diagnostic('NYL-UNIT-AWAITING-APPROVAL', 'warning', `${name} awaits an approval: ${detail}`, {
    env,
    unit: name,
    units: [name],
    ...approvalFixParams(name, approval),
  });
}

/** The report of a reconcile with nothing to do: from the plan, without a lease or a run. */
export function quietReport(
  opened: OpenedEnvironment,
  plan: Plan,
  view: EnvironmentStateView,
  only: ReadonlySet<string> | undefined,
  operation: ReconcileReport['operation'] = 'reconcile',
): ReconcileReport {
  const report = baseReport(opened, only, operation);
  if (view.desiredOid) report.desired = view.desiredOid;
  if (view.observedOid) report.observed = view.observedOid;
  fillUnits(report, plan, new Map(), NO_LIFECYCLE, { imported: new Set(), recovered: new Set() }, only);
  report.warnings.push(...unitWarnings(report, { plan }), ...leavingWarnings(report, plan, NO_LIFECYCLE, ownedNames(opened), operation));
  return report;
}

/** The names of the ownership set: a leaving row of any other unit left it. */
export function ownedNames(opened: OpenedEnvironment): Set<string> {
  return new Set(ownedGraph(opened.project, opened.env).order);
}

/** The report of a run, before its transition: rows, imports, the fail-fast stop. */
export function runReport(
  opened: OpenedEnvironment,
  run: string,
  takeover: Takeover,
  engine: EngineResult,
  only: ReadonlySet<string> | undefined,
  operation: ReconcileReport['operation'] = 'reconcile',
): ReconcileReport {
  const report = baseReport(opened, only, operation);
  report.run = run;
  const imp = takeover.imported;
  report.warnings.push(...imp.diagnostics);
  if (takeover.leaseBroken) report.details.leaseBroken = takeover.leaseBroken;
  if (takeover.leaseBrokenEarlier) report.details.leaseBrokenEarlier = takeover.leaseBrokenEarlier;
  if (imp.imported.length > 0) report.details.imported = imp.imported;
  if (imp.recovered.length > 0) report.details.recovered = imp.recovered;
  for (const name of imp.removed) {
    const kind = takeover.imported.consumed.flatMap((r) => [r.units.get(name)?.kind ?? []]).flat()[0] ?? '-';
    report.units[name] = { kind, result: 'removed', detail: 'a dead run tore it down; imported', dispatched: false, leaving: true };
  }
  fillUnits(report, engine.plan, engine.outcomes, engine, importsOf(takeover), only);
  if (engine.stoppedAfter) {
    const env = opened.env.name;
    report.warnings.push(
      diagnostic('NYL-RUN-STOPPED', 'warning', `--fail-fast stopped the run of ${env} after unit ${engine.stoppedAfter}: it started no further unit`, {
        env,
        unit: engine.stoppedAfter,
      }),
    );
  }
  return report;
}
