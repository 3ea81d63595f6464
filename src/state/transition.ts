/**
 * Transition commits: a headline, a YAML body with the operation's lists, and trailers. The
 * headline is `nyl: OPERATION ENV (units)`, or for a run (reconcile, teardown) a summary of its
 * outcome, `nyl: reconcile dev: 2 executed (api, db), 1 failed (migrate)`, so that
 * `git log --oneline` of a state branch tells a failed run from a good one.
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

/** A run's outcome for its headline: each unit the commit records, mapped to its result. */
interface Outcomes {
  outcomes: Record<string, string>;
}

/** What a headline names: a few units (an operator's command), or a run's outcome. */
export type Headline = string[] | Outcomes;

/**
 * Results in the order a headline counts them: what was done, then what went wrong, then what
 * waits. A result not listed (a newer one) follows, by name. `current` is only recorded for a
 * unit whose desired document returns to its receipt's, so it reads `restored`.
 */
const RESULT_ORDER = [
  'executed',
  'removed',
  'imported',
  'current',
  'retained',
  'released',
  'held',
  'failed',
  'uncertain',
  'recovered',
  'blocked',
  'awaiting-approval',
  'drifted',
  'pending-teardown',
  'tearing-down',
];
const RESULT_LABEL: Record<string, string> = { current: 'restored' };

/** Units are named in a run's headline only while it stays this short: one line in `git log --oneline`. */
const NAMED_HEADLINE_MAX = 100;

function rank(result: string): number {
  const i = RESULT_ORDER.indexOf(result);
  return i < 0 ? RESULT_ORDER.length : i;
}

/** Units by result, in headline order (units by name within a result). */
function groupsOf(outcomes: Record<string, string>): [string, string[]][] {
  const groups = new Map<string, string[]>();
  for (const unit of Object.keys(outcomes).sort()) {
    const result = outcomes[unit]!;
    // Appended in place: a copy per unit made the headline quadratic in the run's units.
    const group = groups.get(result);
    if (group) group.push(unit);
    else groups.set(result, [unit]);
  }
  return [...groups].sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * `: 2 executed (api, db), 1 failed (migrate)`: counts by result, zero counts left out, the units
 * named when there are one to three and the headline stays short; '' when no unit is recorded.
 */
function outcomeSummary(outcomes: Record<string, string>, prefix = ''): string {
  const groups = groupsOf(outcomes);
  if (groups.length === 0) return '';
  const count = ([result, units]: [string, string[]]) => `${units.length} ${RESULT_LABEL[result] ?? result}`;
  const counts = `: ${groups.map(count).join(', ')}`;
  if (Object.keys(outcomes).length > 3) return counts;
  const named = `: ${groups.map((g) => `${count(g)} (${g[1].join(', ')})`).join(', ')}`;
  return prefix.length + named.length <= NAMED_HEADLINE_MAX ? named : counts;
}

function headlineOf(env: string, operation: string, headline: Headline): string {
  const start = `nyl: ${operation} ${env}`;
  if (!Array.isArray(headline)) return `${start}${outcomeSummary(headline.outcomes, start)}`;
  return headline.length > 0 && headline.length <= 3 ? `${start} (${headline.join(', ')})` : start;
}

export function transitionMessage(env: string, body: TransitionBody, trailers: Trailers, units: Headline = []): string {
  const headline = headlineOf(env, body.operation, units);
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
