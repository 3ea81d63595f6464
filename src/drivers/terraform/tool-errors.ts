/**
 * What Terraform and OpenTofu said, turned into a failure reason: each error diagnostic with its
 * summary, the file and line it points at, and its detail, instead of only "exited with code 1".
 *
 * Diagnostics come from the machine-readable UI of the steps that have one (./ui-json.ts), or
 * from the text `init` prints (`-no-color`; a coloured box `╷ │ ╵` is stripped the same way): a
 * diagnostic there reads `Error: SUMMARY` (a long summary wraps onto the next lines), a blank
 * line, the source context (`  on main.tf line 3:` and indented source lines), and the detail
 * paragraphs at column 0.
 *
 * A state lock held by another process gets a reason of its own: who holds it, its ID, since
 * when, and how long Nyl waited.
 */
import type { UiDiagnostic } from './ui-json';

/** How many diagnostics a reason keeps, and how many lines of detail each: a reason is not a log. */
const MAX_ERRORS = 5;
const MAX_DETAIL_LINES = 12;
const MAX_LINE_CHARS = 400;

/** A line without the box Terraform draws around a diagnostic. */
function unframed(line: string): string {
  return line.replace(/^[\u2577\u2575]\s*$/, '').replace(/^\u2502 ?/, '');
}

function shortened(text: string): string {
  return text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS - 3)}...` : text;
}

/** Reads the error diagnostics of a step's text output (init). */
export function textDiagnostics(lines: readonly string[]): UiDiagnostic[] {
  const found: UiDiagnostic[] = [];
  let current: { summary: string[]; detail: string[]; file?: string; line?: number; inSummary: boolean } | undefined;
  const close = () => {
    if (current)
      found.push({
        severity: 'error',
        summary: current.summary.join(' '),
        detail: current.detail.join('\n').trim(),
        ...(current.file ? { file: current.file, line: current.line! } : {}),
      });
    current = undefined;
  };
  for (const raw of lines) {
    const line = unframed(raw).trimEnd();
    if (/^(Error|Warning): /.test(line)) {
      close();
      if (line.startsWith('Error: ')) current = { summary: [line.slice('Error: '.length)], detail: [], inSummary: true };
      continue;
    }
    if (!current) continue;
    if (current.inSummary && line !== '') {
      current.summary.push(line.trim());
      continue;
    }
    current.inSummary = false;
    const at = /^\s+on (.+?) line (\d+)/.exec(line);
    if (at && current.file === undefined) [current.file, current.line] = [at[1]!, Number(at[2])];
    // Detail text starts at column 0; source context is indented.
    else if (line === '' ? current.detail.length > 0 : !/^\s/.test(line)) current.detail.push(line);
  }
  close();
  return found;
}

/** One diagnostic as lines of a reason: `summary (file line N)` and its detail, indented. */
function reasonLines(d: UiDiagnostic): string[] {
  const where = d.file ? ` (${d.file}${d.line !== undefined ? ` line ${d.line}` : ''})` : '';
  const detail = d.detail
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l, i, all) => l !== '' || (i > 0 && all[i - 1] !== ''))
    .slice(0, MAX_DETAIL_LINES)
    .map((l) => (l === '' ? '' : `  ${shortened(l)}`));
  return [shortened(`${d.summary}${where}`), ...detail];
}

/** The lock a diagnostic says another process holds, if it is one. */
function lockHolder(d: UiDiagnostic): Record<string, string> | undefined {
  if (!/acquiring the state lock/i.test(d.summary)) return undefined;
  const info: Record<string, string> = {};
  for (const m of d.detail.matchAll(/^\s*(ID|Path|Operation|Who|Version|Created):\s*(.*)$/gm)) info[m[1]!] = m[2]!.trim();
  return info;
}

function lockReason(what: string, info: Record<string, string>, waited: string, binary: string): string {
  const who = info.Who ? `by ${info.Who}` : 'by another process';
  const since = [info.Operation, info.Created ? `since ${info.Created}` : ''].filter(Boolean).join(', ');
  const lines = [`${what}: the state is locked ${who} (lock ID ${info.ID ?? 'unknown'}${since ? `, ${since}` : ''}); waited ${waited} (lockTimeout)`];
  if (info.Path) lines.push(`  lock on ${info.Path}`);
  if (info.ID)
    lines.push(`  if that process is gone, release the lock with \`${binary} force-unlock ${info.ID}\` in an initialized copy of the module, then run again`);
  return lines.join('\n');
}

/**
 * The reason of a step that failed: `what` (`terraform plan exited with code 1`), then each
 * error diagnostic; a held lock says who holds it. `lockTimeout` is the wait that step had.
 */
export function failureReason(what: string, diagnostics: readonly UiDiagnostic[], lockTimeout: string, binary = 'terraform'): string {
  const errors = diagnostics.filter((d) => d.severity === 'error');
  const lock = errors.map(lockHolder).find((l) => l !== undefined);
  if (lock) return lockReason(what, lock, lockTimeout, binary.split('/').pop()!);
  if (errors.length === 0) return what;
  const lines = errors.slice(0, MAX_ERRORS).flatMap(reasonLines);
  lines[0] = `${what}: ${lines[0]}`;
  if (errors.length > MAX_ERRORS) lines.push(`(and ${errors.length - MAX_ERRORS} more errors)`);
  return lines.join('\n');
}
