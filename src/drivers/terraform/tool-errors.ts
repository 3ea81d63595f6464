/**
 * The diagnostics Terraform and OpenTofu print, turned into a failure reason: each `Error:`
 * summary with its detail text, in the order printed, instead of only "exited with code 1".
 *
 * With `-no-color` a diagnostic reads `Error: SUMMARY`, then a blank line, the source context
 * (`  on main.tf line 3:` and indented source lines), and the detail paragraph(s) at column 0. The
 * colored form draws a box (`╷ │ ╵`) around the same lines; its frame is stripped, so either form
 * reads the same.
 */

/** How many diagnostics a reason keeps, and how long each may be: a reason is not a log. */
const MAX_ERRORS = 5;
const MAX_ERROR_CHARS = 400;

/** A line without the box Terraform draws around a diagnostic. */
function unframed(line: string): string {
  return line.replace(/^[╷╵]\s*$/, '').replace(/^│ ?/, '');
}

function shortened(text: string): string {
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS - 3)}...` : text;
}

/** Each `Error:` diagnostic as one line: its summary, then its detail text (context lines left out). */
export function errorDiagnostics(lines: readonly string[]): string[] {
  const found: string[] = [];
  let current: string[] | undefined;
  const close = () => {
    if (current) found.push(shortened(current.length > 1 ? `${current[0]}: ${current.slice(1).join(' ')}` : current[0]!));
    current = undefined;
  };
  for (const raw of lines) {
    const line = unframed(raw).trimEnd();
    if (/^(Error|Warning): /.test(line)) {
      close();
      if (line.startsWith('Error: ')) current = [line];
      continue;
    }
    // Detail text starts at column 0; source context is indented.
    if (current && line !== '' && !/^\s/.test(line)) current.push(line);
  }
  close();
  return found.slice(0, MAX_ERRORS).concat(found.length > MAX_ERRORS ? [`(and ${found.length - MAX_ERRORS} more errors)`] : []);
}
