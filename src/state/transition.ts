/**
 * Transition commits: a headline `nyl: OPERATION ENV (units)`,
 * a YAML body with the operation's lists, and trailers.
 */
import { toYaml } from './documents';

export interface TransitionBody {
  operation: string;
  run?: string;
  source?: string;
  [list: string]: unknown;
}

export interface Trailers {
  requestedBy?: string;
  reason?: string;
  sourceOverride?: boolean;
  /** --worktree: the source is a working-file snapshot (`Nyl-Source: <commit> (worktree)`). */
  sourceWorktree?: boolean;
}

export function transitionMessage(env: string, body: TransitionBody, trailers: Trailers, units: string[] = []): string {
  const few = units.length > 0 && units.length <= 3 ? ` (${units.join(', ')})` : '';
  const headline = `nyl: ${body.operation} ${env}${few}`;
  const clean: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (v === undefined) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) continue;
    clean[k] = v;
  }
  const lines = [`Nyl-Operation: ${body.operation}`];
  if (body.run) lines.push(`Nyl-Run: ${body.run}`);
  const marker = trailers.sourceWorktree ? ' (worktree)' : trailers.sourceOverride ? ' (override)' : '';
  if (body.source) lines.push(`Nyl-Source: ${body.source}${marker}`);
  if (trailers.requestedBy) lines.push(`Nyl-Requested-By: ${trailers.requestedBy}`);
  if (trailers.reason) lines.push(`Nyl-Reason: ${trailers.reason.replace(/\s*\n\s*/g, ' ')}`);
  return `${headline}\n\n${toYaml(clean).trimEnd()}\n\n${lines.join('\n')}\n`;
}
