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
  return teardown ? `\nteardown ${r.environment}:\n${renderReconcile(teardown)}` : '';
}
