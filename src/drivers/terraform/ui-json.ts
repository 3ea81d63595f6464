/**
 * Terraform's machine-readable UI (`plan -json`, `apply -json`, `destroy -json`): one JSON message
 * per line on stdout. Nyl prints each message's own human text (`@message`: "terraform_data.d:
 * Creating...", "Plan: 1 to add, 0 to change, 0 to destroy.") as the unit's tool output, and
 * keeps what it decides on:
 * - diagnostics whole: severity, summary, detail and the file and line they point at, so that a
 *   failure says what Terraform said (the text form wraps summaries and mixes in source snippets);
 * - the change summary and each output's planned action: whether a plan changes anything at all,
 *   decided from what it would do rather than from `-detailed-exitcode`, which says "changes" for
 *   an output that is merely computed (hashicorp/terraform#36403);
 * - the resources a refresh found changed outside Terraform (`resource_drift`).
 * A line that is not JSON (a crash's stack trace) is printed as it is. Messages of an unknown
 * type are printed and otherwise ignored, as the format's compatibility promise asks.
 */

export interface UiDiagnostic {
  severity: 'error' | 'warning';
  summary: string;
  detail: string;
  file?: string;
  line?: number;
}

interface ChangeSummary {
  add: number;
  change: number;
  import: number;
  remove: number;
}

export interface UiResult {
  diagnostics: UiDiagnostic[];
  /** The plan's (or apply's) change summary, if it printed one. */
  changes?: ChangeSummary;
  /** Output name -> its planned action (noop, create, update, delete), when the plan printed them. */
  outputActions: Record<string, string>;
  /** Addresses of resources the refresh found changed outside Terraform. */
  drifted: string[];
  /** An apply began changing a resource (`apply_start`): from then on the state may hold what it did. */
  changing?: boolean;
}

interface Message {
  '@message'?: unknown;
  type?: unknown;
  diagnostic?: { severity?: unknown; summary?: unknown; detail?: unknown; range?: { filename?: unknown; start?: { line?: unknown } } };
  changes?: Partial<ChangeSummary>;
  outputs?: Record<string, { action?: unknown }>;
  change?: { resource?: { addr?: unknown } };
}

/** A diagnostic's lines as a person reads them: `Error: summary`, where it points, its detail indented. */
function diagnosticLines(d: UiDiagnostic): string[] {
  const head = `${d.severity === 'error' ? 'Error' : 'Warning'}: ${d.summary}`;
  const where = d.file ? [`  on ${d.file}${d.line !== undefined ? ` line ${d.line}` : ''}`] : [];
  const detail = d.detail.split('\n').map((l) => (l.trim() === '' ? '' : `  ${l}`));
  return [head, ...where, ...detail].filter((l, i, all) => l !== '' || (i > 0 && all[i - 1] !== ''));
}

function diagnosticOf(m: Message): UiDiagnostic | undefined {
  const d = m.diagnostic;
  if (!d || typeof d.summary !== 'string') return undefined;
  const out: UiDiagnostic = {
    severity: d.severity === 'error' ? 'error' : 'warning',
    summary: d.summary,
    detail: typeof d.detail === 'string' ? d.detail : '',
  };
  if (typeof d.range?.filename === 'string') out.file = d.range.filename;
  if (typeof d.range?.start?.line === 'number') out.line = d.range.start.line;
  return out;
}

/** Reads a step's stdout line by line; `print` gets the human text of each message. */
export class UiReader {
  private readonly result: UiResult = { diagnostics: [], outputActions: {}, drifted: [] };

  constructor(private readonly print: (text: string) => void) {}

  line(text: string): void {
    let m: Message;
    try {
      m = JSON.parse(text) as Message;
    } catch {
      if (text.trim() !== '') this.print(text);
      return;
    }
    if (typeof m !== 'object' || m === null) return this.print(text);
    this.take(m);
  }

  private take(m: Message): void {
    if (m.type === 'version') return;
    const d = diagnosticOf(m);
    if (d) {
      this.result.diagnostics.push(d);
      for (const l of diagnosticLines(d)) this.print(l);
      return;
    }
    if (m.type === 'change_summary' && m.changes)
      this.result.changes = { add: m.changes.add ?? 0, change: m.changes.change ?? 0, import: m.changes.import ?? 0, remove: m.changes.remove ?? 0 };
    if (m.type === 'outputs' && m.outputs)
      for (const [name, o] of Object.entries(m.outputs)) if (typeof o?.action === 'string') this.result.outputActions[name] = o.action;
    if (m.type === 'resource_drift' && typeof m.change?.resource?.addr === 'string') this.result.drifted.push(m.change.resource.addr);
    if (m.type === 'apply_start') this.result.changing = true;
    if (typeof m['@message'] === 'string') this.print(m['@message']);
  }

  done(): UiResult {
    return this.result;
  }
}

/** Does a plan change anything: resources, imports, or an output's value (an action other than noop)? */
export function planChangesSomething(ui: UiResult): boolean | undefined {
  if (!ui.changes) return undefined;
  const { add, change, import: imported, remove } = ui.changes;
  return add + change + imported + remove > 0 || Object.values(ui.outputActions).some((a) => a !== 'noop');
}
