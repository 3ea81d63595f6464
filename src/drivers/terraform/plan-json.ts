/**
 * What Nyl reads from a saved plan's JSON (`show -json PLANFILE`, format 1.x): the digest an
 * approval binds to, and, for a refresh-only plan, whether anything drifted. The JSON holds
 * sensitive values in plain text, so it is never printed or kept: the plan is reduced to its
 * digest, the drift to the addresses and output names that changed.
 *
 * Drift is decided from what the plan says changed (`resource_drift` entries, output changes
 * whose action is not `no-op`), never from `-detailed-exitcode` alone: Terraform exits 2 with "No
 * changes" when an output is computed (hashicorp/terraform#36403).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../util/canonical-json';
import type { UiResult } from './ui-json';

interface Change {
  address?: string;
  change?: { actions?: string[] };
}

interface PlanJson {
  format_version?: string;
  resource_changes?: Change[];
  resource_drift?: Change[];
  output_changes?: Record<string, { actions?: string[] }>;
}

function parsePlan(showJson: string): PlanJson | { problem: string } {
  let plan: PlanJson;
  try {
    plan = JSON.parse(showJson) as PlanJson;
  } catch {
    return { problem: 'show -json printed something that is not JSON' };
  }
  if (typeof plan.format_version !== 'string' || !plan.format_version.startsWith('1.')) {
    return { problem: `show -json printed format_version ${JSON.stringify(plan.format_version)}; this driver reads format 1.x` };
  }
  return plan;
}

const changed = (actions: string[] | undefined) => !(actions ?? []).every((a) => a === 'no-op');

/**
 * The saved plan's digest: what would change, after_unknown included, and nothing that varies
 * between two plans of the same change (timestamps, the tool's version, and the refreshed values
 * of what stays as it is: a `no-op` entry is left out, so a volatile read-only attribute of an
 * unchanged resource does not make an approved plan's digest differ).
 */
export function planDigest(showJson: string): { digest: string } | { problem: string } {
  const plan = parsePlan(showJson);
  if ('problem' in plan) return plan;
  const resources = (plan.resource_changes ?? []).filter((r) => changed(r.change?.actions));
  const outputs = Object.fromEntries(Object.entries(plan.output_changes ?? {}).filter(([, o]) => changed(o.actions)));
  const digest = `sha256:${createHash('sha256')
    .update(canonicalJson({ resource_changes: resources, output_changes: outputs }))
    .digest('hex')}`;
  return { digest };
}

/** What a refresh-only plan found: nothing, or the resources and outputs that changed outside Terraform. */
export function driftOf(showJson: string): { drifted: boolean; detail?: string } | { problem: string } {
  const plan = parsePlan(showJson);
  if ('problem' in plan) return plan;
  const resources = (plan.resource_drift ?? []).filter((r) => changed(r.change?.actions)).map((r) => r.address ?? '?');
  const outputs = Object.entries(plan.output_changes ?? {})
    .filter(([, o]) => changed(o.actions))
    .map(([name]) => name);
  if (resources.length === 0 && outputs.length === 0) return { drifted: false };
  const parts = [
    resources.length > 0 ? `changed outside Terraform: ${resources.join(', ')}` : '',
    outputs.length > 0 ? `output${outputs.length === 1 ? '' : 's'} would change: ${outputs.join(', ')}` : '',
  ];
  return { drifted: true, detail: parts.filter(Boolean).join('; ') };
}

/** `+add ~change -destroy` as Terraform counts them (a replacement adds and destroys), and changed outputs. */
export function summaryOf(ui: UiResult): string {
  const c = ui.changes ?? { add: 0, change: 0, import: 0, remove: 0 };
  const outputs = Object.values(ui.outputActions).filter((a) => a !== 'noop').length;
  const imports = c.import > 0 ? ` (${c.import} to import)` : '';
  return `+${c.add} ~${c.change} -${c.remove}${imports}${outputs > 0 ? ` (${outputs} output${outputs === 1 ? '' : 's'} changed)` : ''}`;
}
