/**
 * Reading refs and moving them with compare-and-swap, locally and on remotes.
 *
 * A RefUpdate states the value a ref must have now (`expect`, null = absent) and the value it
 * gets (`to`, null = delete). Local transactions use `update-ref --stdin` (all or nothing; a
 * long-lived one per repository in ./ref-transactions.ts);
 * remote ones use `push --atomic --porcelain` with one `--force-with-lease` per ref, so one stale
 * expectation rejects the whole push.
 */
import type { Git } from './git';
import type { ProcessResult } from '../exec/process';
import { GitError } from './git';

const NULL_OID = '0'.repeat(40);

export interface RefUpdate {
  ref: string;
  /** The value the ref must have now; null = must not exist; undefined = unchecked (local only). */
  expect: string | null | undefined;
  to: string | null;
}

export type RefWriteResult =
  | { ok: true }
  | { ok: false; kind: 'rejected'; refs: { ref: string; reason: string }[]; message: string }
  | { ok: false; kind: 'unreachable'; message: string };

/** Lists refs matching any of the prefixes (`refs/nyl/dev/`) or exact names. */
export async function readRefs(git: Git, dir: string, patterns: string[]): Promise<Map<string, string>> {
  const out = await git.text(dir, ['for-each-ref', '--format=%(objectname) %(refname)', ...patterns]);
  return parseRefList(out);
}

/** The first ref matching the patterns whose history holds commit, or undefined when none does. */
export async function refContaining(git: Git, dir: string, commit: string, patterns: string[]): Promise<string | undefined> {
  const out = await git.text(dir, ['for-each-ref', '--count=1', '--format=%(refname)', `--contains=${commit}`, ...patterns]);
  return out.trim() || undefined;
}

/** Whether ancestor is descendant or in its history (`merge-base --is-ancestor`: exit 0 yes, 1 no). */
export async function isAncestor(git: Git, dir: string, ancestor: string, descendant: string): Promise<boolean> {
  const result = await git.run(dir, ['merge-base', '--is-ancestor', ancestor, descendant]);
  if (result.code === 0 || result.code === 1) return result.code === 0;
  throw new GitError(result, dir);
}

export function parseRefList(out: string): Map<string, string> {
  const refs = new Map<string, string>();
  for (const line of out.split('\n')) {
    if (!line) continue;
    const sp = line.indexOf(' ');
    const tab = line.indexOf('\t');
    const cut = tab >= 0 && (sp < 0 || tab < sp) ? tab : sp;
    refs.set(line.slice(cut + 1), line.slice(0, cut));
  }
  return refs;
}

/** The `update-ref --stdin` commands of one transaction: start, the updates, prepare, commit. */
export function transactionLines(updates: RefUpdate[]): string[] {
  const lines = ['start'];
  for (const u of updates) {
    const expect = u.expect === undefined ? '' : ` ${u.expect ?? NULL_OID}`;
    if (u.to === null) lines.push(`delete ${u.ref}${expect}`);
    else lines.push(`update ${u.ref} ${u.to}${expect}`);
  }
  lines.push('prepare', 'commit', '');
  return lines;
}

/** A local transaction that git refused because a ref was not as expected (or locked); undefined for other failures. */
export function classifyLocalFailure(stderr: string): RefWriteResult | undefined {
  const message = stderr.trim();
  if (!/cannot lock ref|reference already exists|is at .* but expected|unable to resolve reference/i.test(message)) return undefined;
  const m = /cannot lock ref '([^']+)'/.exec(message);
  return { ok: false, kind: 'rejected', refs: [{ ref: m?.[1] ?? '', reason: message }], message };
}

/** Applies updates in one local transaction; a mismatch of any expectation rejects all. */
export async function updateRefsLocally(git: Git, dir: string, updates: RefUpdate[]): Promise<RefWriteResult> {
  if (updates.length === 0) return { ok: true };
  const result = await git.run(dir, ['update-ref', '--stdin'], { input: transactionLines(updates).join('\n') });
  if (result.code === 0) return { ok: true };
  const rejected = classifyLocalFailure(result.stderr.toString());
  if (rejected) return rejected;
  throw new GitError(result, dir);
}

/** Pushes all updates atomically with a lease per ref. */
export async function pushAtomic(git: Git, dir: string, url: string, updates: RefUpdate[]): Promise<RefWriteResult> {
  if (updates.length === 0) return { ok: true };
  const args = ['push', '--atomic', '--porcelain', '--no-verify', '--quiet'];
  for (const u of updates) {
    if (u.expect === undefined) throw new Error(`a push of ${u.ref} needs the value it expects`);
    args.push(`--force-with-lease=${u.ref}:${u.expect ?? ''}`);
  }
  args.push(url);
  for (const u of updates) args.push(u.to === null ? `:${u.ref}` : `${u.to}:${u.ref}`);
  const result = await git.run(dir, args);
  if (result.code === 0) return { ok: true };
  // Ended by its timeout, the push may or may not have landed: only a read can tell (the caller's).
  if (result.timedOut) return { ok: false, kind: 'unreachable', message: git.failureOf(result) };
  return classifyPushFailure(result.stdout.toString(), result.stderr.toString());
}

/**
 * Tells a rejected push (stale lease, hook, atomic transaction failed) from an unreachable
 * remote. Porcelain output has `To <url>` and one line per ref only when the remote was reached.
 */
export function classifyPushFailure(stdout: string, stderr: string): RefWriteResult {
  const refs: { ref: string; reason: string }[] = [];
  let reached = false;
  for (const line of stdout.split('\n')) {
    if (line.startsWith('To ')) reached = true;
    const m = /^([!=+* -])\t([^\t]*)\t(.*)$/.exec(line);
    if (m) {
      reached = true;
      if (m[1] === '!') {
        const dst = m[2]!.slice(m[2]!.indexOf(':') + 1);
        refs.push({ ref: dst, reason: m[3]! });
      }
    }
  }
  const lines = (stderr.trim() || stdout.trim())
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  // The cause is in the fatal:/error: lines; hints and "make sure you have access" add nothing.
  const causes = lines.filter((l) => /^(fatal|error|remote):/.test(l) && !/failed to push some refs|remote end hung up/.test(l));
  const message = (causes.length > 0 ? causes : lines).slice(0, 3).join('; ');
  if (reached || refs.length > 0) return { ok: false, kind: 'rejected', refs, message };
  return { ok: false, kind: 'unreachable', message };
}

/**
 * Lists remote refs by prefix. `git ls-remote` patterns match ref name ends, so filter here.
 * `run` runs the command: the caller's, so that its retries of network failures apply.
 */
export async function lsRemote(
  git: Git,
  url: string,
  prefixes: string[],
  run: (args: string[]) => Promise<ProcessResult>,
): Promise<{ ok: true; refs: Map<string, string> } | { ok: false; message: string }> {
  const result = await run(['ls-remote', url]);
  if (result.code !== 0) return { ok: false, message: git.failureOf(result) };
  const all = parseRefList(result.stdout.toString());
  const refs = new Map<string, string>();
  for (const [ref, oid] of all) {
    if (prefixes.some((p) => (p.endsWith('/') ? ref.startsWith(p) : ref === p))) refs.set(ref, oid);
  }
  return { ok: true, refs };
}
