/**
 * The text of `nyl plan` (a ReconcileReport with operation plan): the table of what the next
 * reconcile would do (the leaving section first, as a run's table), then, per unit that would
 * execute or whose rendering changed, its digest, its driver plan's change summary and the diff of
 * its rendering, so that a reviewer sees what changed and which digest to approve.
 */
import type { ReconcileReport, ReconcileUnitReport } from '../../report/types';
import { isMultiline } from '../../util/text';
import { sourceMark } from '../reconcile/render';
import { renderDiagnostics, renderTable } from '../text/render';

const HEADER = ['UNIT', 'KIND', 'ACTION', 'DETAIL'];

function tables(r: ReconcileReport): string[] {
  if (r.unitOrder.length === 0) return [`${r.environment}: no units`];
  const row = (n: string) => [n, r.units[n]!.kind, r.units[n]!.result, r.units[n]!.detail];
  const leaving = r.unitOrder.filter((n) => r.units[n]!.leaving);
  const others = r.unitOrder.filter((n) => !r.units[n]!.leaving);
  const parts: string[] = [];
  if (leaving.length > 0) parts.push('leaving:', renderTable(HEADER, leaving.map(row), 2));
  if (leaving.length > 0 && others.length > 0) parts.push('');
  if (others.length > 0) parts.push(renderTable(HEADER, others.map(row), 2));
  return parts;
}

/** One unit's review: digest, change summary, the command that approves it when it waits for one, the diff. */
function unitSection(r: ReconcileReport, name: string, u: ReconcileUnitReport): string | undefined {
  if (!u.digest && !u.changes && !u.diff) return undefined;
  const lines = [`${name} (${u.result}):`];
  if (u.digest) lines.push(`  digest:  ${u.digest}`);
  if (u.changes) lines.push(`  changes: ${u.changes}`);
  if (u.digest && u.result === 'awaiting-approval') lines.push(`  approve: nyl reconcile -e ${r.environment} --approve ${name}=${u.digest}`);
  if (u.diff) lines.push('  rendering (recorded -> new):', ...u.diff.map((l) => `    ${l}`));
  return lines.join('\n');
}

function fields(r: ReconcileReport): string {
  const pairs: [string, string | undefined][] = [
    ['source', `${r.source}${sourceMark(r)}`],
    ['desired', r.desired],
    ['observed', r.observed],
  ];
  return pairs
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `  ${`${k}:`.padEnd(9)} ${v}`)
    .join('\n');
}

/** Details of several lines (a tool's failure) that the table cut to their first line, in full. */
function fullTexts(r: ReconcileReport): string[] {
  return r.unitOrder
    .filter((n) => isMultiline(r.units[n]!.detail))
    .map((n) => [`${n} ${r.units[n]!.result}:`, ...r.units[n]!.detail.split('\n').map((l) => `  ${l}`)].join('\n'));
}

export function renderPlan(r: ReconcileReport): string {
  const parts = tables(r);
  const sections = r.unitOrder.map((n) => unitSection(r, n, r.units[n]!)).filter((s): s is string => s !== undefined);
  if (sections.length > 0) parts.push('', sections.join('\n\n'));
  parts.push('', fields(r));
  const full = fullTexts(r);
  if (full.length > 0) parts.push('', full.join('\n\n'));
  const diags = [...r.errors, ...r.warnings, ...r.notes];
  const body = parts.join('\n');
  return diags.length > 0 ? `${body}\n\n${renderDiagnostics(diags)}\n` : `${body}\n`;
}
