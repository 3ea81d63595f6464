/**
 * The rows of `nyl plan`: per unit, what the next reconcile would do and why. The table itself and
 * its warnings are a quiet reconcile's (quietReport: the leaving section first, then plan order);
 * this module adds to each row the planner's action and reason code, the result in the words of a
 * reconcile's table (execute, wait, teardown, retain and release where a run would act), the
 * detail rendered from the reason, the digest an approval names, and the diff of a rendering that
 * changed. Pure: the driver plans are made elsewhere (./plan-drivers.ts) and handed in.
 */
import type { DriverPlan } from '../../drivers/contract';
import type { Plan, UnitPlan } from '../../plan/actions';
import { approvalDigest } from '../../plan/digest';
import { receiptOfIncarnation } from '../../plan/unit-view';
import { runDetail, statusDetail } from '../../plan/reasons';
import { unifiedDiff } from './text-diff';
import type { ReconcileReport, ReconcileUnitReport } from '../../report/types';
import { emitYaml } from '../../state/yaml-emit';
import { canonicalJson } from '../../util/canonical-json';

/** Lines of context around each change of a rendering's diff. */
const DIFF_CONTEXT = 3;

/**
 * The result of a row whose unit a run would act on, where a quiet reconcile has no word for it
 * (it never acts). `prepare`: the driver resolves its key first, then the unit executes.
 */
const ACTING: Readonly<Record<string, string>> = {
  execute: 'execute',
  prepare: 'execute',
  wait: 'wait',
  teardown: 'teardown',
  retain: 'retain',
  release: 'release',
  // Reconcile's own words; named here too, so that they never read as `blocked`.
  'awaiting-approval': 'awaiting-approval',
  drifted: 'drifted',
};

/** Would the next reconcile execute the unit: now, or once an approval names it? */
export function wouldExecute(unit: UnitPlan): boolean {
  const type: string = unit.action.type;
  return type === 'execute' || type === 'awaiting-approval';
}

/** The row's result: the acting word, else what a quiet reconcile's table says (current, blocked, held, ...). */
function planResult(unit: UnitPlan, quietResult: string): string {
  return ACTING[unit.action.type] ?? quietResult;
}

/**
 * What the next reconcile does, rendered from the reason as `nyl status` says it; a failure that
 * needs an operator names the command, as a run's table does.
 */
function planDetail(unit: UnitPlan): string {
  if (unit.action.type === 'failed') return runDetail(unit, '');
  const detail = statusDetail(unit);
  // upstream-pending says already that it is decided again after its dependencies run.
  if (unit.action.type === 'wait' && unit.action.reason === 'dependency-pending') return joined(detail, 'its digest is decided after its dependencies run');
  // A new unit has no digest (its key includes the uid the run mints), and needs none: it needs no approval.
  if (unit.action.type === 'execute' && unit.action.reason === 'no-incarnation') return `${unit.desired?.uid ? 'new incarnation' : 'new unit'}: will execute`;
  return detail;
}

export function joined(detail: string, more: string): string {
  return detail ? `${detail}; ${more}` : more;
}

/** The machine code of the action's reason: every action has one. */
function reasonOf(unit: UnitPlan): string {
  return (unit.action as { reason: string }).reason;
}

/** The rendering as a reviewer reads it, and as state stores it: YAML with sorted keys, multi-line strings as blocks. */
function yamlLines(rendering: Record<string, unknown>): string[] {
  return emitYaml(rendering).replace(/\n$/, '').split('\n');
}

/**
 * The recorded rendering against the new one, when the unit has both and they differ. A waiting
 * unit's new one is its preview: outputs of units that execute first read `(known after apply)`.
 */
function renderingDiff(unit: UnitPlan): string[] | undefined {
  const before = unit.desired?.rendering;
  const after = unit.rendering ?? unit.preview;
  if (!before || !after || canonicalJson(before) === canonicalJson(after)) return undefined;
  return unifiedDiff(yamlLines(before), yamlLines(after), DIFF_CONTEXT);
}

/** A row of the quiet table as the plan says it: action, reason, result, detail (with what changed among the reads of a changed key), diff. */
function describeRow(row: ReconcileUnitReport, unit: UnitPlan): void {
  row.action = unit.action.type;
  row.reason = reasonOf(unit);
  row.result = planResult(unit, row.result);
  row.detail = planDetail(unit);
  if (unit.keyChanges && unit.keyChanges.length > 0) row.keyChanges = unit.keyChanges;
  const diff = renderingDiff(unit);
  if (diff) row.diff = diff;
}

/** Says, for every row of the quiet table, what the plan says of its unit. */
export function describeRows(report: ReconcileReport, plan: Plan): void {
  for (const name of report.unitOrder) {
    const unit = plan.units.get(name);
    if (unit) describeRow(report.units[name]!, unit);
  }
}

/**
 * The digest a plan-bound approval names, as the run that applies it computes it: for a kind
 * whose driver plans, bound to the key, the plan's changes and the receipt it starts from; for any
 * other kind that key. The key is the one an approval binds to (the planner's approvalKey: for a
 * new incarnation, computed with a placeholder uid). None for a new unit that needs no approval.
 */
export function digestOf(unit: UnitPlan, driverPlan: DriverPlan | undefined): string | undefined {
  const executionKey = unit.approvalKey ?? unit.executionKey;
  if (!executionKey) return undefined;
  const prior = receiptOfIncarnation(unit);
  return approvalDigest({ executionKey, ...(driverPlan ? { changes: driverPlan.digest ?? 'sha256:unknown' } : {}), ...(prior ? { prior } : {}) });
}
