/**
 * Writes commits (with their trees and blobs) through one `git fast-import` stream per batch,
 * instead of three plumbing processes per commit. Commits may build on each other within a
 * batch. No ref is left behind: each commit is built on a scratch branch that is reset to
 * nothing at the end, and commit ids come back through `get-mark`.
 */
import type { Git } from './git';
import { GitError } from './git';

export interface Identity {
  name: string;
  email: string;
}

export type FileContent = string | Buffer;

export interface CommitSpec {
  /** A 40-hex commit id, or the index of an earlier commit of the same batch. */
  parent?: string | { index: number };
  /** Further parents after the first (a merge): 40-hex commit ids. Needs `parent`. */
  merges?: string[];
  /** Starts from an empty tree even when a parent is given. */
  clearTree?: boolean;
  /** Path -> new content, or null to delete the path. Paths are relative to the tree root. */
  changes: Map<string, FileContent | null>;
  message: string;
  author: Identity;
  /** Milliseconds since the epoch, from the injected clock. */
  timeMs: number;
}

const SCRATCH = 'refs/nyl-scratch/write';
const NULL_OID = '0'.repeat(40);

function identityLine(role: string, who: Identity, timeMs: number): string {
  return `${role} ${who.name} <${who.email}> ${Math.floor(timeMs / 1000)} +0000\n`;
}

function dataBlock(content: FileContent): Buffer[] {
  const buf = typeof content === 'string' ? Buffer.from(content) : content;
  return [Buffer.from(`data ${buf.length}\n`), buf, Buffer.from('\n')];
}

/** fast-import's C-style path quoting: backslash escapes and octal for control bytes. */
function quotePath(path: string): string {
  if (/^[A-Za-z0-9._\-/]+$/.test(path)) return path;
  let out = '"';
  for (const byte of Buffer.from(path, 'utf8')) {
    if (byte === 0x22) out += '\\"';
    else if (byte === 0x5c) out += '\\\\';
    else if (byte === 0x0a) out += '\\n';
    else if (byte < 0x20 || byte === 0x7f) out += `\\${byte.toString(8).padStart(3, '0')}`;
    else out += String.fromCharCode(byte);
  }
  // Returned as a latin1 string of raw bytes: callers encode the line with 'latin1'.
  return `${out}"`;
}

/** The commands that create commits on the scratch branch; marks start at `firstMark`. */
function commitCommands(commits: CommitSpec[], firstMark: number): Buffer[] {
  const parts: Buffer[] = [];
  commits.forEach((c, i) => {
    parts.push(Buffer.from(`reset ${SCRATCH}\ncommit ${SCRATCH}\nmark :${firstMark + i}\n`));
    parts.push(Buffer.from(identityLine('author', c.author, c.timeMs)));
    parts.push(Buffer.from(identityLine('committer', c.author, c.timeMs)));
    parts.push(...dataBlock(c.message));
    if (c.parent !== undefined) parts.push(Buffer.from(`from ${typeof c.parent === 'string' ? c.parent : `:${firstMark + c.parent.index}`}\n`));
    for (const merge of c.parent !== undefined ? (c.merges ?? []) : []) parts.push(Buffer.from(`merge ${merge}\n`));
    if (c.clearTree) parts.push(Buffer.from('deleteall\n'));
    for (const path of [...c.changes.keys()].sort()) {
      const content = c.changes.get(path);
      if (content === null || content === undefined) parts.push(Buffer.from(`D ${quotePath(path)}\n`, 'latin1'));
      else parts.push(Buffer.from(`M 100644 inline ${quotePath(path)}\n`, 'latin1'), ...dataBlock(content));
    }
    parts.push(Buffer.from('\n'));
  });
  commits.forEach((_, i) => parts.push(Buffer.from(`get-mark :${firstMark + i}\n`)));
  // No ref is left behind: the scratch branch is deleted when fast-import next updates refs.
  parts.push(Buffer.from(`reset ${SCRATCH}\nfrom ${NULL_OID}\n\n`));
  return parts;
}

export function buildFastImportStream(commits: CommitSpec[]): Buffer {
  return Buffer.concat([Buffer.from('feature done\n'), ...commitCommands(commits, 1), Buffer.from('done\n')]);
}

/** Writes the commits into the repository at dir and returns their ids, in order. */
export async function writeCommits(git: Git, dir: string, commits: CommitSpec[]): Promise<string[]> {
  if (commits.length === 0) return [];
  const stream = buildFastImportStream(commits);
  const result = await git.run(dir, ['fast-import', '--quiet', '--done'], { input: stream });
  if (result.code !== 0) throw new GitError(result, dir);
  const ids = result.stdout
    .toString()
    .split('\n')
    .filter((l) => /^[0-9a-f]{40}$/.test(l));
  if (ids.length !== commits.length) {
    throw new Error(`git fast-import returned ${ids.length} commit ids for ${commits.length} commits`);
  }
  return ids;
}

/**
 * One long-lived `git fast-import` for every commit a command writes into one repository: a
 * batch's objects are visible to other git processes once its `checkpoint` has run, which a
 * `get-mark` after it confirms (fast-import answers in order). Batches run one at a time.
 * Saves the fast-import start per write (a run writes a commit per checkpoint push). Git still
 * unpacks a batch smaller than fastimport.unpackLimit into loose objects with a
 * `git unpack-objects` of its own, which Nyl's count of git processes does not see: loose
 * objects keep the reads of the next batch fast, where a pack per batch would pile up.
 */
export class FastImportSession {
  private child: ReturnType<Git['start']> | undefined;
  private out = '';
  private err = '';
  private waiter: { count: number; resolve: (lines: string[]) => void; reject: (e: Error) => void } | undefined;
  private nextMark = 1;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly git: Git,
    private readonly dir: string,
  ) {}

  write(commits: CommitSpec[]): Promise<string[]> {
    if (commits.length === 0) return Promise.resolve([]);
    const next = this.chain.then(() => this.writeNow(commits));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private ensure(): NonNullable<FastImportSession['child']> {
    if (this.child) return this.child;
    const child = this.git.start(this.dir, ['fast-import', '--quiet']);
    child.stdout!.on('data', (chunk: Buffer) => this.onOutput(chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (this.err += chunk.toString()));
    child.stdin!.on('error', () => {});
    child.on('close', (code) => {
      if (this.child !== child) return;
      this.child = undefined;
      this.out = '';
      this.waiter?.reject(new Error(`git fast-import ended (exit ${String(code)}) in ${this.dir}: ${this.err.trim()}`));
      this.waiter = undefined;
    });
    this.child = child;
    this.nextMark = 1;
    return child;
  }

  private onOutput(text: string): void {
    this.out += text;
    const w = this.waiter;
    if (!w) return;
    const lines = this.out.split('\n');
    if (lines.length - 1 < w.count) return;
    this.out = lines.slice(w.count).join('\n');
    this.waiter = undefined;
    w.resolve(lines.slice(0, w.count));
  }

  private async writeNow(commits: CommitSpec[]): Promise<string[]> {
    const child = this.ensure();
    const first = this.nextMark;
    this.nextMark += commits.length;
    const answered = new Promise<string[]>((resolve, reject) => (this.waiter = { count: commits.length + 1, resolve, reject }));
    child.stdin!.write(Buffer.concat([...commitCommands(commits, first), Buffer.from(`checkpoint\nget-mark :${first}\n`)]));
    const lines = await answered;
    const ids = lines.slice(0, commits.length);
    if (!ids.every((l) => /^[0-9a-f]{40}$/.test(l))) throw new Error(`git fast-import answered ${JSON.stringify(lines)} in ${this.dir}`);
    return ids;
  }

  close(): void {
    this.child?.stdin!.end();
    this.child = undefined;
  }
}
