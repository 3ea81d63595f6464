/**
 * The text every command's rendering shares: diagnostics, tables, field lists, details as text
 * lines, and a state operation's report (the form most commands print).
 *
 * A table cell holds one line: a DETAIL of several lines (a failure reason as a tool wrote it)
 * shows its first line in the table and follows in full below it, as Terraform prints a
 * diagnostic's detail below its summary. The JSON report carries every line.
 */
import type { Diagnostic } from '../../errors/diagnostic';
import type { StateOperationReport } from '../../report/types';
import { firstLine, isMultiline } from '../../util/text';
import { heading, stateWord } from './style';

export function renderDiagnostic(d: Diagnostic): string {
  const units = d.units && d.units.length > 0 ? ` (${d.units.join(', ')})` : '';
  const lines = [heading(d.severity, `${d.severity} ${d.code}${units}`)];
  for (const l of d.message.split('\n')) lines.push(`  ${l}`);
  if (d.location) {
    const where = [d.location.file, d.location.line, d.location.column].filter((x) => x !== undefined).join(':');
    lines.push(`  at: ${where}${d.location.pointer !== undefined ? ` ${d.location.pointer || '/'}` : ''}`);
  }
  lines.push(`  fix: ${d.fix}`);
  return lines.join('\n');
}

export function renderDiagnostics(list: Diagnostic[]): string {
  return list.map(renderDiagnostic).join('\n\n');
}

/**
 * Columns padded to their widest cell; `toned` is the column of state words (STATE, RESULT,
 * ACTION, DRIFT), coloured by style.ts after padding, so escape codes never count as width.
 */
export function renderTable(header: string[], table: string[][], toned?: number): string {
  const rows = table.map((r) => r.map(firstLine));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[], tone: (c: string, i: number) => string) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? tone(c, i) : `${tone(c, i)}${' '.repeat(widths[i]! - c.length)}`))
      .join('  ')
      .trimEnd();
  const toneCell = (c: string, i: number) => (i === toned ? stateWord(c) : c);
  return [line(header, (c) => c), ...rows.map((r) => line(r, toneCell))].join('\n');
}

/** The texts of several lines a table cut short, in full: `NAME RESULT:` and the text indented. */
export function fullTexts(entries: [name: string, result: string, text: string][]): string | undefined {
  const blocks = entries
    .filter(([, , text]) => isMultiline(text))
    .map(([name, result, text]) => [`${name} ${result}:`, ...text.split('\n').map((l) => `  ${l}`)].join('\n'));
  return blocks.length > 0 ? `\n${blocks.join('\n\n')}` : undefined;
}

export function fields(pairs: [string, string | undefined][]): string[] {
  const present = pairs.filter((p): p is [string, string] => p[1] !== undefined);
  const width = Math.max(0, ...present.map(([k]) => k.length + 1));
  return present.map(([k, v]) => `  ${`${k}:`.padEnd(width)} ${v}`);
}

/**
 * How one command shows some of its details apart from the field list: `hidden` keys are left out
 * of it, `above` lines go between the headline and the fields (verify's table), `below` after the
 * diagnostics (state delete's teardown).
 */
export interface StateOperationLayout {
  hidden?: string[];
  above?: string[];
  below?: string;
}

export function renderStateOperation(r: StateOperationReport, layout: StateOperationLayout = {}): string {
  const out = [`${r.operation} ${r.environment}: ${r.result}`];
  const loc = r.details.location as Record<string, string> | undefined;
  if (loc) {
    out.push(
      ...fields([
        ['repository', loc.repository],
        ['publish', loc.publishURL],
        ['local', loc.localPath !== loc.repository ? loc.localPath : undefined],
        ['desired ref', loc.desiredRef],
        ['observed ref', loc.observedRef],
        ['state path', loc.path],
        ['coordination prefix', loc.coordinationRefPrefix],
      ]),
    );
  }
  out.push(
    ...fields([
      ['desired', r.desired],
      ['observed', r.observed],
    ]),
  );
  const hidden = layout.hidden ?? [];
  for (const [k, v] of Object.entries(r.details)) {
    if (k === 'location' || hidden.includes(k) || v === undefined) continue;
    out.push(...valueLines(k, v, 1));
  }
  out.splice(1, 0, ...(layout.above ?? []));
  return `${withDiagnostics(out.join('\n'), [...r.errors, ...r.warnings, ...r.notes])}${layout.below ?? ''}`;
}

/**
 * A detail as text lines, never JSON: a scalar on its key's line, an object as its keys indented
 * below, a list one item per line (`- item`; an object item's first key on the dash's line), an
 * empty list or object as `(none)`. Strings print as they are, as they always did.
 */
export function valueLines(key: string, value: unknown, depth: number): string[] {
  const indent = '  '.repeat(depth);
  if (value === null || typeof value !== 'object') return [`${indent}${key}: ${typeof value === 'string' ? value : String(value)}`];
  const entries = Array.isArray(value) ? value : Object.entries(value);
  if (entries.length === 0) return [`${indent}${key}: (none)`];
  if (!Array.isArray(value)) return [`${indent}${key}:`, ...Object.entries(value).flatMap(([k, v]) => valueLines(k, v, depth + 1))];
  return [`${indent}${key}:`, ...value.flatMap((item) => listItem(item, depth + 1))];
}

/** One item of a list: `- value`, or an object's key lines with the first behind the dash. */
function listItem(item: unknown, depth: number): string[] {
  const indent = '  '.repeat(depth);
  if (item === null || typeof item !== 'object') return [`${indent}- ${typeof item === 'string' ? item : String(item)}`];
  if (Array.isArray(item)) return item.length === 0 ? [`${indent}- (none)`] : [`${indent}-`, ...item.flatMap((i) => listItem(i, depth + 1))];
  const lines = Object.entries(item).flatMap(([k, v]) => valueLines(k, v, depth + 1));
  if (lines.length === 0) return [`${indent}- (none)`];
  return [`${indent}- ${lines[0]!.trimStart()}`, ...lines.slice(1)];
}

/**
 * A report's text: its body, then its diagnostics after a blank line. An empty body prints
 * nothing of its own (`nyl outputs` of a unit without outputs, `nyl show` of a unit with no
 * documents): the diagnostics alone, or nothing at all.
 */
export function withDiagnostics(body: string, diags: Diagnostic[]): string {
  const text = body ? `${body}\n` : '';
  return diags.length > 0 ? `${text}${text ? '\n' : ''}${renderDiagnostics(diags)}\n` : text;
}
