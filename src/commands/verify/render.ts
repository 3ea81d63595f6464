/**
 * The text of `nyl verify`: a state operation's report whose units and skipped units show as one
 * table (unit, kind, drift, detail) between the headline and the fields.
 */
import type { StateOperationReport } from '../../report/types';
import { renderStateOperation, renderTable } from '../text/render';

/** The details shown as the table rather than as fields. */
const TABLED = ['units', 'skipped'];

export function renderVerify(r: StateOperationReport): string {
  return renderStateOperation(r, { hidden: TABLED, above: verifyTable(r) });
}

/** One row per unit, its drift or why it was skipped. */
function verifyTable(r: StateOperationReport): string[] {
  const units = (r.details.units ?? {}) as Record<string, { drift: string; kind: string; detail?: string }>;
  const skipped = (r.details.skipped ?? {}) as Record<string, string>;
  const rows = [
    ...Object.entries(units).map(([n, u]) => [n, u.kind, u.drift, u.detail ?? '']),
    ...Object.entries(skipped).map(([n, why]) => [n, '-', 'skipped', why]),
  ];
  return rows.length > 0 ? ['', ...renderTable(['UNIT', 'KIND', 'DRIFT', 'DETAIL'], rows, 2).split('\n'), ''] : [];
}
