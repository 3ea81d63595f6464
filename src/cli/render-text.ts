/**
 * Text rendering of reports and diagnostics.
 *
 * A table cell holds one line: a DETAIL of several lines (a failure reason as a tool wrote it)
 * shows its first line in the table and follows in full below it, as Terraform prints a
 * diagnostic's detail below its summary. The JSON report carries every line.
 */
import type { Diagnostic } from '../errors/diagnostic';
import type { MultiEnvironmentReport, ReconcileReport, RefusalDocument, SingleEnvironmentReport, StateOperationReport, StatusReport } from '../report/types';
import { firstLine, isMultiline } from '../util/text';
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
function fullTexts(entries: [name: string, result: string, text: string][]): string | undefined {
  const blocks = entries.filter(([, , text]) => isMultiline(text)).map(([name, result, text]) => [`${name} ${result}:`, ...text.split('\n').map((l) => `  ${l}`)].join('\n'));
  return blocks.length > 0 ? `\n${blocks.join('\n\n')}` : undefined;
}

function fields(pairs: [string, string | undefined][]): string[] {
  const present = pairs.filter((p): p is [string, string] => p[1] !== undefined);
  const width = Math.max(0, ...present.map(([k]) => k.length + 1));
  return present.map(([k, v]) => `  ${`${k}:`.padEnd(width)} ${v}`);
}

export function renderStateOperation(r: StateOperationReport): string {
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
  out.push(...fields([['desired', r.desired], ['observed', r.observed]]));
  const tabled = r.operation === 'verify' ? VERIFY_TABLE : [];
  for (const [k, v] of Object.entries(r.details)) {
    if (k === 'location' || k === 'teardown' || tabled.includes(k) || v === undefined) continue;
    out.push(...valueLines(k, v, 1));
  }
  if (r.operation === 'verify') out.splice(1, 0, ...verifyTable(r));
  return `${withDiagnostics(out.join('\n'), [...r.errors, ...r.warnings, ...r.notes])}${teardownSection(r)}`;
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

/** The details `nyl verify` shows as its table rather than as fields. */
const VERIFY_TABLE = ['units', 'skipped'];

/** `nyl verify`: one row per unit, its drift or why it was skipped, between the headline and the fields. */
function verifyTable(r: StateOperationReport): string[] {
  const units = (r.details.units ?? {}) as Record<string, { drift: string; kind: string; detail?: string }>;
  const skipped = (r.details.skipped ?? {}) as Record<string, string>;
  const rows = [...Object.entries(units).map(([n, u]) => [n, u.kind, u.drift, u.detail ?? '']), ...Object.entries(skipped).map(([n, why]) => [n, '-', 'skipped', why])];
  return rows.length > 0 ? ['', ...renderTable(['UNIT', 'KIND', 'DRIFT', 'DETAIL'], rows, 2).split('\n'), ''] : [];
}

/** state delete --teardown: the teardown's own table and diagnostics, below the operation's. */
function teardownSection(r: StateOperationReport): string {
  const teardown = r.details.teardown as ReconcileReport | undefined;
  return teardown ? `\nteardown ${r.environment}:\n${renderReconcile(teardown)}` : '';
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
      ['lease', r.lease ? `${r.lease.status}: ${r.lease.operation} run ${r.lease.run} of ${r.lease.holder.name} on ${r.lease.holder.host}, deadline ${r.lease.deadline}` : undefined],
    ]);
    parts.push(`\n${info.join('\n')}`);
    const full = fullTexts(r.unitOrder.map((n) => [n, r.units[n]!.state, r.units[n]!.detail]));
    if (full) parts.push(full);
  }
  return withDiagnostics(parts.join('\n'), [...r.errors, ...r.warnings, ...r.notes]);
}

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

/**
 * A command over several environments: one section per environment in the order they ran,
 * headed by its name and exit code, then what the single-environment command prints
 * (`renderOne`: its table, run/source/desired/observed lines, diagnostics), or for one not run why
 * (blocked, refused, not started).
 */
export function renderMultiEnvironment(r: MultiEnvironmentReport, renderOne: (doc: SingleEnvironmentReport) => string): string {
  const sections = r.environmentOrder.map((env) => {
    const doc = r.environments[env]!;
    const body = isUnrun(doc) ? renderUnrun(env, doc) : renderOne(doc);
    return `== environment ${env} (exit ${r.exitCodes[env]}) ==\n${body.replace(/\n+$/, '')}\n`;
  });
  return withDiagnostics(sections.join('\n'), [...r.errors, ...r.warnings, ...r.notes]).replace(/\n+$/, '\n');
}

/** A section without a report of its own: blocked, not started, or a refusal's short form (a state operation's refusal is its report). */
function isUnrun(doc: SingleEnvironmentReport | RefusalDocument): doc is RefusalDocument {
  if ('result' in doc && doc.result === 'refused' && ('blockedBy' in doc.details || 'notStarted' in doc.details)) return true;
  return doc.kind !== 'StateOperationReport' && !('unitOrder' in doc);
}

function renderUnrun(env: string, doc: RefusalDocument): string {
  const blockedBy = doc.details.blockedBy as string[] | undefined;
  const what = blockedBy ? `blocked by ${blockedBy.join(', ')}` : doc.details.notStarted ? 'not started (cancelled)' : 'refused';
  return withDiagnostics(`${env}: ${what}`, [...doc.errors, ...doc.warnings, ...doc.notes]);
}
