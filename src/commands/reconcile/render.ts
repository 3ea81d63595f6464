/**
 * The text of a run's report (`nyl reconcile`, `nyl teardown`, and a state delete's teardown):
 * the table of units (the leaving section first), then the run, source and state commits, the
 * failure texts the table cut to one line, and the diagnostics.
 */
import type { ReconcileReport } from '../../report/types';
import { fields, fullTexts, renderTable, withDiagnostics } from '../text/render';

/** After the source commit: ` (override)` for --source, ` (worktree)` for a --worktree snapshot. */
export function sourceMark(r: ReconcileReport): string {
  return r.sourceWorktree ? ' (worktree)' : r.sourceOverride ? ' (override)' : '';
}

export function renderReconcile(r: ReconcileReport): string {
  const parts: string[] = [];
  if (r.unitOrder.length === 0) parts.push(`${r.environment}: no units`);
  else {
    // The leaving section first (units that leave or are torn down), then the others.
    const row = (n: string) => [n, r.units[n]!.kind, r.units[n]!.result, r.units[n]!.detail];
    const leaving = r.unitOrder.filter((n) => r.units[n]!.leaving);
    const others = r.unitOrder.filter((n) => !r.units[n]!.leaving);
    const header = ['UNIT', 'KIND', 'RESULT', 'DETAIL'];
    if (leaving.length > 0 && r.operation === 'reconcile') parts.push('leaving:');
    if (leaving.length > 0) parts.push(renderTable(header, leaving.map(row), 2));
    if (leaving.length > 0 && others.length > 0) parts.push('');
    if (others.length > 0) parts.push(renderTable(header, others.map(row), 2));
  }
  const info = fields([
    ['run', r.run],
    ['source', r.source ? `${r.source}${sourceMark(r)}` : undefined],
    ['desired', r.desired],
    ['observed', r.observed],
  ]);
  parts.push(`\n${info.join('\n')}`);
  const full = fullTexts(r.unitOrder.map((n) => [n, r.units[n]!.result, r.units[n]!.detail]));
  if (full) parts.push(full);
  return withDiagnostics(parts.join('\n'), [...r.errors, ...r.warnings, ...r.notes]);
}
