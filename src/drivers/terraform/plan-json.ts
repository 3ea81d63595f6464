/**
 * What Nyl reads from the tool's JSON: the saved plan (`show -json PLANFILE`, format 1.x) and the
 * outputs (`output -json`). Both hold sensitive values in plain text, so neither is ever printed
 * or kept: the plan is reduced to its digest and a summary, the outputs to the receipt's values
 * with their `sensitive` flags (the engine keeps only digests of the sensitive ones).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../util/canonical-json';
import type { DriverPlan, Outputs } from '../contract';

interface ResourceChange {
  change?: { actions?: string[] };
}

interface PlanJson {
  format_version?: string;
  resource_changes?: ResourceChange[];
  output_changes?: Record<string, { actions?: string[] }>;
}

/** The saved plan's digest, summary and whether it changes anything; a problem as text. */
export function planOf(showJson: string, exitCode: number, planFile: string): DriverPlan | { problem: string } {
  let plan: PlanJson;
  try {
    plan = JSON.parse(showJson) as PlanJson;
  } catch {
    return { problem: 'show -json printed something that is not JSON' };
  }
  if (typeof plan.format_version !== 'string' || !plan.format_version.startsWith('1.')) {
    return { problem: `show -json printed format_version ${JSON.stringify(plan.format_version)}; this driver reads format 1.x` };
  }
  // The digest covers what would change, after_unknown included, and nothing that varies between
  // two plans of the same change (timestamps, the tool's version).
  const digest = `sha256:${createHash('sha256').update(canonicalJson({ resource_changes: plan.resource_changes ?? [], output_changes: plan.output_changes ?? {} })).digest('hex')}`;
  return { digest, summary: summaryOf(plan), changes: exitCode === 0 ? 'none' : 'some', artifact: { planFile } };
}

/** `+add ~change -destroy` over the resources, as Terraform counts them (a replacement adds and destroys). */
function summaryOf(plan: PlanJson): string {
  let add = 0;
  let change = 0;
  let destroy = 0;
  for (const rc of plan.resource_changes ?? []) {
    const actions = rc.change?.actions ?? [];
    if (actions.includes('create')) add++;
    if (actions.includes('delete')) destroy++;
    if (actions.includes('update')) change++;
  }
  const outputs = Object.values(plan.output_changes ?? {}).filter((o) => !(o.actions ?? []).every((a) => a === 'no-op')).length;
  return `+${add} ~${change} -${destroy}${outputs > 0 ? ` (${outputs} output${outputs === 1 ? '' : 's'} changed)` : ''}`;
}

/** The receipt's outputs from `output -json`; a problem as text. */
export function outputsOf(outputJson: string): Outputs | { problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(outputJson === '' ? '{}' : outputJson);
  } catch {
    return { problem: 'output -json printed something that is not JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { problem: 'output -json printed something that is not an object of outputs' };
  const outputs: Outputs = {};
  for (const [name, o] of Object.entries(parsed as Record<string, { value?: unknown; sensitive?: unknown }>)) {
    if (typeof o !== 'object' || o === null || !('value' in o)) return { problem: `output -json printed output ${name} without a value` };
    outputs[name] = { value: o.value, sensitive: o.sensitive === true };
  }
  return outputs;
}
