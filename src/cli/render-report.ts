/**
 * A report as text: the renderer of its kind, and the output formats a command accepts (-o text,
 * table or json; dot and mermaid for `nyl graph` only).
 */
import { diagnostic, NylError } from '../errors/diagnostic';
import type { Report, SingleEnvironmentReport } from '../report/types';
import type { ParsedCommand } from './parse';
import { renderLog, renderOutputs, renderShow } from './render-inspect';
import { renderDoctorHost } from './render-doctor';
import { renderGraphDot, renderGraphMermaid, renderGraphText } from './render-graph';
import { renderPlan } from './render-plan';
import { renderMultiEnvironment, renderReconcile, renderStateOperation, renderStatus } from './render-text';
import { stringOpt } from './command-options';

/** -o: text (or table), json; dot and mermaid for `nyl graph` only. */
export type Output = 'text' | 'json' | 'dot' | 'mermaid';

export function outputOf(p: ParsedCommand): Output {
  const o = stringOpt(p, 'output') ?? 'text';
  const graph = p.spec.words[0] === 'graph';
  if (o === 'json') return 'json';
  if (o === 'text' || o === 'table') return 'text';
  if (graph && (o === 'dot' || o === 'mermaid')) return o;
  throw new NylError(diagnostic('NYL-USAGE', 'error', `-o ${o} is not an output format${graph ? '' : ` of nyl ${p.spec.words.join(' ')}`}`, { fix: graph ? 'pass -o text, -o dot, -o mermaid or -o json' : 'pass -o text, -o table or -o json' }));
}

export function render(report: Report, output: Output): string {
  switch (report.kind) {
    case 'DoctorHostReport':
      return renderDoctorHost(report);
    case 'GraphReport':
      return output === 'dot' ? renderGraphDot(report) : output === 'mermaid' ? renderGraphMermaid(report) : renderGraphText(report);
    case 'MultiEnvironmentReport':
      return renderMultiEnvironment(report, renderSingle);
    case 'LogReport':
      return renderLog(report);
    case 'ShowReport':
      return renderShow(report);
    case 'OutputsReport':
      return renderOutputs(report);
    default:
      return renderSingle(report);
  }
}

function renderSingle(report: SingleEnvironmentReport): string {
  switch (report.kind) {
    case 'StatusReport':
      return renderStatus(report);
    case 'ReconcileReport':
      return report.operation === 'plan' ? renderPlan(report) : renderReconcile(report);
    default:
      return renderStateOperation(report);
  }
}
