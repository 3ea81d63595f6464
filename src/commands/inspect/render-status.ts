/**
 * The text of `nyl status`: one row per unit (kind, state, receipt, last run, detail), the state
 * location, source and lease, the details the table cut to one line, then the diagnostics.
 */
import type { StatusReport } from '../../report/types';
import { fields, fullTexts, renderTable, withDiagnostics } from '../text/render';

export function renderStatus(r: StatusReport): string {
  const parts: string[] = [];
  if (r.unitOrder.length === 0) parts.push(`${r.environment}: no units`);
  else {
    const rows = r.unitOrder.map((n) => {
      const u = r.units[n]!;
      const state = u.state === 'held' && u.condition?.type === 'uncertain' ? 'held (uncertain)' : u.state;
      return [u.name, u.kind, state, u.receipt, u.lastRun ? `${u.lastRun.at} ${u.lastRun.result}` : '-', u.detail];
    });
    parts.push(renderTable(['UNIT', 'KIND', 'STATE', 'RECEIPT', 'LAST RUN', 'DETAIL'], rows, 2));
    const loc = r.details.location as Record<string, string> | undefined;
    const info = fields([
      ['state', loc ? `${loc.repository} (${loc.desiredRef}, ${loc.observedRef}${loc.path ? `, path ${loc.path}` : ''})` : undefined],
      ['local', loc && loc.localPath !== loc.repository ? loc.localPath : undefined],
      ['source', r.source],
      ['desired', r.desired],
      ['observed', r.observed],
      [
        'lease',
        r.lease
          ? `${r.lease.status}: ${r.lease.operation} run ${r.lease.run} of ${r.lease.holder.name} on ${r.lease.holder.host}, deadline ${r.lease.deadline}`
          : undefined,
      ],
    ]);
    parts.push(`\n${info.join('\n')}`);
    const full = fullTexts(r.unitOrder.map((n) => [n, r.units[n]!.state, r.units[n]!.detail]));
    if (full) parts.push(full);
  }
  return withDiagnostics(parts.join('\n'), [...r.errors, ...r.warnings, ...r.notes]);
}
