/**
 * Text rendering of the read-only inspection reports: `nyl log`, `nyl show` and `nyl outputs`.
 *
 * log reads like `git log`: a line per operation (time, operation, who), then its reason, run,
 * source, commits and unit results indented below. show prints the unit's documents as block
 * YAML, as the state files hold them. outputs prints one `KEY=VALUE` line per output for scripts (docs/operations.md,
 * "Reading history and outputs"): a string as it is, anything else (and a string of several
 * lines) as JSON, so that each output is one line; a sensitive output as `KEY=(sensitive)`.
 */
import type { LogEntry, LogReport, OutputsReport, ShowReport } from '../../report/types';
import { emitYaml } from '../../state/yaml-emit';
import { withDiagnostics } from '../text/render';

const short = (oid: string | undefined) => oid?.slice(0, 12);

/** One entry: a headline line, then what the operation recorded, indented. */
function renderLogEntry(e: LogEntry): string[] {
  const out = [`${e.at}  ${e.operation}${e.by ? `  ${e.by}` : ''}`];
  if (e.reason) out.push(`  reason: ${e.reason}`);
  if (e.run) out.push(`  run: ${e.run}`);
  if (e.source) out.push(`  source: ${e.source}`);
  // The old location's move commit names where the state went; the new location's, where it came from.
  if (e.moved) out.push(`  moved:${e.moved.from ? ` from ${e.moved.from}` : ''}${e.moved.to ? ` to ${e.moved.to}` : ''}`);
  const commits = [e.desired ? `desired ${short(e.desired)}` : '', e.observed ? `observed ${short(e.observed)}` : ''].filter(Boolean);
  out.push(`  commits: ${commits.join(', ')}`);
  for (const [unit, result] of Object.entries(e.units)) out.push(`  ${unit}: ${result}`);
  return out;
}

export function renderLog(r: LogReport): string {
  const blocks = r.entries.map((e) => renderLogEntry(e).join('\n'));
  if (r.entries.length === 0 && r.errors.length === 0) blocks.push(`${r.environment}: no history${r.unit !== undefined ? ` for unit ${r.unit}` : ''}`);
  if (r.truncated) blocks.push(`(older entries left out: -n 0 shows all)`);
  return withDiagnostics(blocks.join('\n\n'), [...r.errors, ...r.warnings, ...r.notes]);
}

/**
 * A document as block YAML, indented: written by the emitter of the state files and of `nyl
 * plan`'s diffs (emitYaml), so that a multi-line script reads as a literal block, as it does there.
 */
export function yamlLines(value: unknown, indent: string): string[] {
  return emitYaml(value)
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => (line === '' ? line : `${indent}${line}`));
}

/** The receipt and its outputs, sensitive ones by digest only. */
function receiptLines(r: ShowReport): string[] {
  const rc = r.receipt;
  if (!rc) return ['receipt: none'];
  const out = [`receipt: run ${rc.run}, finished ${rc.finishedAt}`, `  executionKey: ${rc.executionKey}`, 'outputs:'];
  const sensitive = Object.entries(rc.sensitiveOutputs ?? {});
  if (Object.keys(rc.outputs).length === 0 && sensitive.length === 0) out[2] = 'outputs: none';
  if (Object.keys(rc.outputs).length > 0) out.push(...yamlLines(rc.outputs, '  '));
  for (const [k, v] of sensitive) out.push(`  ${k}: (sensitive, ${v.sha256})`);
  if (rc.toolState) out.push('tool state:', ...yamlLines(rc.toolState, '  '));
  if (rc.toolReads) out.push(`tool reads: ${rc.toolReads.join(', ')}`);
  return out;
}

/** Condition, hold and drift: what needs attention, one line each. */
function attentionLines(r: ShowReport): string[] {
  const out: string[] = [];
  const obs = r.observedDocument as
    | { condition?: { type: string; run: string; since: string; reason: string }; drift?: { status: string; observedAt: string; detail?: string } }
    | undefined;
  const hold = (r.desiredDocument as { hold?: { by: string; since: string; reason?: string } } | undefined)?.hold;
  if (obs?.condition) out.push(`condition: ${obs.condition.type} in run ${obs.condition.run} since ${obs.condition.since}: ${obs.condition.reason}`);
  if (hold) out.push(`hold: by ${hold.by} since ${hold.since}${hold.reason ? ` (${hold.reason})` : ''}`);
  if (obs?.drift) out.push(`drift: ${obs.drift.status}, observed ${obs.drift.observedAt}${obs.drift.detail ? `: ${obs.drift.detail}` : ''}`);
  return out;
}

export function renderShow(r: ShowReport): string {
  if (!r.desiredDocument && !r.observedDocument) return withDiagnostics('', [...r.errors, ...r.warnings, ...r.notes]);
  const out = [`unit ${r.unit} of ${r.environment}`, ...receiptLines(r), ...attentionLines(r)];
  const { receipt: _receipt, ...observed } = r.observedDocument ?? {};
  out.push(`desired document (${short(r.desired) ?? '-'}):`, ...(r.desiredDocument ? yamlLines(r.desiredDocument, '  ') : ['  none']));
  out.push(`observed document (${short(r.observed) ?? '-'}), receipt as above:`, ...(r.observedDocument ? yamlLines(observed, '  ') : ['  none']));
  out.push(
    'last runs:',
    ...(r.lastRuns.length > 0
      ? r.lastRuns.map((e) => `  ${e.at}  ${e.operation}  ${e.units[r.unit] ?? 'changed'}${e.run ? `  run ${e.run}` : ''}${e.by ? `  ${e.by}` : ''}`)
      : ['  none']),
  );
  return withDiagnostics(out.join('\n'), [...r.errors, ...r.warnings, ...r.notes]);
}

/** One output as a line's value: a one-line string as it is, anything else as JSON. */
export function outputValue(v: unknown): string {
  return typeof v === 'string' && !/[\n\r]/.test(v) ? v : JSON.stringify(v);
}

/** `KEY=VALUE` lines (`UNIT.KEY=VALUE` without --unit); diagnostics follow on their own. */
export function renderOutputs(r: OutputsReport): string {
  const lines: string[] = [];
  const add = (prefix: string, outputs: Record<string, unknown>, sensitive: string[]) => {
    for (const [k, v] of Object.entries(outputs)) lines.push(`${prefix}${k}=${outputValue(v)}`);
    for (const k of sensitive) lines.push(`${prefix}${k}=(sensitive)`);
  };
  if (r.unit !== undefined) add('', r.outputs, Array.isArray(r.sensitive) ? r.sensitive : []);
  else {
    const sensitive = Array.isArray(r.sensitive) ? {} : r.sensitive;
    for (const [unit, outputs] of Object.entries(r.outputs)) add(`${unit}.`, outputs as Record<string, unknown>, sensitive[unit] ?? []);
  }
  return withDiagnostics(lines.join('\n'), [...r.errors, ...r.warnings, ...r.notes]);
}
