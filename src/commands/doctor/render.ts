/**
 * `nyl doctor host` as text: per prefix whether the host holds state with it, each step's verdict
 * and what it saw, then which prefix to configure.
 */
import type { DoctorHostReport } from '../../report/types';
import { withDiagnostics } from '../text/render';

export function renderDoctorHost(report: DoctorHostReport): string {
  const lines = [`nyl doctor host ${report.url}`];
  for (const check of report.prefixes) {
    lines.push('', `${check.prefix}: ${check.works ? 'works' : 'does not work'}`);
    for (const s of check.steps) lines.push(`  ${s.step}. ${s.what}: ${s.verdict}${s.verdict === 'not-run' ? '' : ` (${s.detail})`}`);
  }
  lines.push('');
  if (report.recommended === 'refs/nyl/') lines.push('verdict: this host can hold orchestration state with the default coordination prefix refs/nyl/');
  else if (report.recommended) lines.push(`verdict: this host can hold orchestration state with state.coordinationRefPrefix: ${report.recommended}`);
  else lines.push('verdict: this host cannot hold orchestration state');
  if (report.leftovers.length > 0) lines.push(`left behind (the next run deletes them): ${report.leftovers.join(', ')}`);
  return withDiagnostics(lines.join('\n'), [...report.errors, ...report.warnings, ...report.notes]);
}
