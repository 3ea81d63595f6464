/**
 * Reading a parsed command line's options into the values requests carry: strings, lists,
 * counts, durations, the one environment and unit a command names, and what every environment
 * command's request holds (path, environment, --author, --reason, --local), and --worktree.
 */
import { diagnostic, NylError } from '../errors/diagnostic';
import { parseDuration } from '../util/duration';
import type { ParsedCommand } from './command';
import { selectsEnvironments, singleEnvironmentOf } from './selection';

export function stringOpt(p: ParsedCommand, name: string): string | undefined {
  const v = p.values[name];
  return typeof v === 'string' ? v : undefined;
}

export function requireEnvironment(p: ParsedCommand): string {
  if (selectsEnvironments(p)) return singleEnvironmentOf(p);
  const e = stringOpt(p, 'environment');
  if (!e) throw new NylError(diagnostic('NYL-USAGE', 'error', `nyl ${p.spec.words.join(' ')} needs -e <environment>`, { fix: 'pass -e <environment>' }));
  return e;
}

export function requireUnit(p: ParsedCommand): string {
  const unit = stringOpt(p, 'unit');
  if (!unit) throw new NylError(diagnostic('NYL-USAGE', 'error', `nyl ${p.spec.words.join(' ')} needs --unit <name>`, { fix: 'pass --unit <name>' }));
  return unit;
}

/** --wait-lease in milliseconds; parseCommand checked it is a duration within its bounds. */
function waitMs(p: ParsedCommand): number | undefined {
  const text = stringOpt(p, 'wait-lease');
  return text === undefined ? undefined : parseDuration(text);
}

/** What every environment command's request carries; `environment` given for a run over several. */
export function common(p: ParsedCommand, environment?: string) {
  const req: { path: string; environment: string; author?: string; reason?: string; local?: boolean } = {
    path: p.path,
    environment: environment ?? requireEnvironment(p),
  };
  const author = stringOpt(p, 'author');
  if (author !== undefined) req.author = author;
  const reason = stringOpt(p, 'reason');
  if (reason !== undefined) req.reason = reason;
  if (p.values.local === true) req.local = true;
  return req;
}

/** -n: a count of entries, 0 for all. */
export function countOf(text: string): number {
  if (!/^\d+$/.test(text))
    throw new NylError(diagnostic('NYL-USAGE', 'error', `-n ${text} is not a count`, { fix: 'pass -n <count> with a whole number, or -n 0 for every entry' }));
  return Number(text);
}

export function listOpt(p: ParsedCommand, ...names: string[]): string[] {
  const out: string[] = [];
  for (const n of names) {
    const v = p.values[n];
    const items = Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
    // parseCommand refused empty names, so every item is one.
    for (const item of items) out.push(...item.split(',').map((s) => s.trim()));
  }
  return out;
}

export function positiveInt(p: ParsedCommand, name: string, fallback: number): number {
  const text = stringOpt(p, name);
  if (text === undefined) return fallback;
  if (!/^[1-9]\d*$/.test(text))
    throw new NylError(diagnostic('NYL-USAGE', 'error', `--${name} ${text} is not a positive integer`, { fix: `pass --${name} <n> with n >= 1` }));
  return Number(text);
}

/** --wait-lease as a request field: `{ waitMs }` when given, else nothing. */
export function waitOf(p: ParsedCommand): { waitMs?: number } {
  const w = waitMs(p);
  return w !== undefined ? { waitMs: w } : {};
}

/** The options --worktree conflicts with, by their value names (a repeated -e is checked apart). */
const WORKTREE_CONFLICTS: [string, string][] = [
  ['source', '--source'],
  ['labels', '-l'],
  ['group', '-g'],
];

/** --worktree: one named environment, from the working files (exit 1 NYL-USAGE on a conflict). */
export async function worktreeOf(p: ParsedCommand): Promise<boolean> {
  if (p.values.worktree !== true) return false;
  // Loaded with the operation anyway: every --worktree command opens its environment there.
  const { worktreeConflict } = await import('./shared/context');
  for (const [name, flag] of WORKTREE_CONFLICTS) if (p.values[name] !== undefined) worktreeConflict(flag);
  const envs = p.values.environment;
  if (Array.isArray(envs) && envs.length > 1) worktreeConflict('more than one -e');
  return true;
}

/** What the read-only commands (log, show, outputs, graph) open: the project, one environment, --local. */
export function readRequestOf(p: ParsedCommand) {
  return { path: p.path, environment: requireEnvironment(p), ...(p.values.local === true ? { local: true } : {}) };
}
