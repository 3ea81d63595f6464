/**
 * The text of `nyl state delete`: a state operation's report, with the report of its teardown
 * (--teardown) below its own: the teardown's table and diagnostics.
 */
import type { ReconcileReport, StateOperationReport } from '../../report/types';
import { renderReconcile } from '../reconcile/render';
import { renderStateOperation } from '../text/render';

export function renderStateDelete(r: StateOperationReport): string {
  return renderStateOperation(r, { hidden: ['teardown'], below: teardownSection(r) });
}

function teardownSection(r: StateOperationReport): string {
  const teardown = r.details.teardown as ReconcileReport | undefined;
  if (!teardown) return '';
  // The report sums the teardown's NYL-TEARDOWN-INCOMPLETE warnings up in one (its own, in
  // details.teardown, stays as the teardown wrote it): the text says it once.
  const summed = r.warnings.some((w) => w.code === 'NYL-TEARDOWN-INCOMPLETE');
  const shown = summed ? { ...teardown, warnings: teardown.warnings.filter((w) => w.code !== 'NYL-TEARDOWN-INCOMPLETE') } : teardown;
  return `\nteardown ${r.environment}:\n${renderReconcile(shown)}`;
}
