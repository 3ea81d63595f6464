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

export function buildFastImportStream(commits: CommitSpec[]): Buffer {
  const parts: Buffer[] = [Buffer.from('feature done\n')];
  commits.forEach((c, i) => {
    parts.push(Buffer.from(`reset ${SCRATCH}\n`));
    parts.push(Buffer.from(`commit ${SCRATCH}\nmark :${i + 1}\n`));
    parts.push(Buffer.from(identityLine('author', c.author, c.timeMs)));
    parts.push(Buffer.from(identityLine('committer', c.author, c.timeMs)));
    parts.push(...dataBlock(c.message));
    if (c.parent !== undefined) {
      const from = typeof c.parent === 'string' ? c.parent : `:${c.parent.index + 1}`;
      parts.push(Buffer.from(`from ${from}\n`));
    }
    if (c.clearTree) parts.push(Buffer.from('deleteall\n'));
    const paths = [...c.changes.keys()].sort();
    for (const path of paths) {
      const content = c.changes.get(path);
      if (content === null || content === undefined) parts.push(Buffer.from(`D ${quotePath(path)}\n`, 'latin1'));
      else {
        parts.push(Buffer.from(`M 100644 inline ${quotePath(path)}\n`, 'latin1'));
        parts.push(...dataBlock(content));
      }
    }
    parts.push(Buffer.from('\n'));
  });
  commits.forEach((_, i) => parts.push(Buffer.from(`get-mark :${i + 1}\n`)));
  parts.push(Buffer.from(`reset ${SCRATCH}\nfrom ${NULL_OID}\n\ndone\n`));
  return Buffer.concat(parts);
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
