/**
 * Reads objects through one long-lived `git cat-file --batch` process: one process for all the
 * blobs, trees and commits an operation reads, instead of one process per file.
 */
import type { Git } from './git';

/** The process Git.start hands out (only src/exec names node:child_process). */
type ChildProcess = ReturnType<Git['start']>;

export interface GitObject {
  oid: string;
  type: 'blob' | 'tree' | 'commit' | 'tag';
  content: Buffer;
}

export interface TreeEntry {
  mode: string;
  name: string;
  oid: string;
  type: 'blob' | 'tree' | 'commit';
}

interface Pending {
  resolve: (value: GitObject | undefined) => void;
  reject: (error: Error) => void;
}

export class BatchReader {
  private child: ChildProcess | undefined;
  private buffer: Buffer = Buffer.alloc(0);
  private readonly queue: Pending[] = [];
  private failed: Error | undefined;

  constructor(
    private readonly git: Git,
    private readonly dir: string,
  ) {}

  private ensure(): ChildProcess {
    if (this.child) return this.child;
    const child = this.git.start(this.dir, ['cat-file', '--batch']);
    child.stdout!.on('data', (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      this.drain();
    });
    child.stdin!.on('error', () => {});
    child.on('close', () => {
      // A process closed by close() may end after a new one started: leave the new one alone.
      if (this.child !== child) return;
      this.failed = new Error(`git cat-file --batch ended in ${this.dir}`);
      for (const p of this.queue.splice(0)) p.reject(this.failed);
      this.child = undefined;
      this.buffer = Buffer.alloc(0);
    });
    this.child = child;
    return child;
  }

  private drain(): void {
    for (;;) {
      const pending = this.queue[0];
      if (!pending) return;
      const nl = this.buffer.indexOf(10);
      if (nl < 0) return;
      const header = this.buffer.subarray(0, nl).toString();
      if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
        this.buffer = this.buffer.subarray(nl + 1);
        this.queue.shift();
        pending.resolve(undefined);
        continue;
      }
      const [oid, type, sizeText] = header.split(' ');
      const size = Number(sizeText);
      if (this.buffer.length < nl + 1 + size + 1) return;
      const content = Buffer.from(this.buffer.subarray(nl + 1, nl + 1 + size));
      this.buffer = this.buffer.subarray(nl + 1 + size + 1);
      this.queue.shift();
      pending.resolve({ oid: oid!, type: type as GitObject['type'], content });
    }
  }

  /** Reads an object by id or `rev:path`; undefined when missing. */
  read(spec: string): Promise<GitObject | undefined> {
    if (this.failed && !this.child) this.failed = undefined;
    const child = this.ensure();
    return new Promise((resolve, reject) => {
      this.queue.push({ resolve, reject });
      child.stdin!.write(`${spec}\n`);
    });
  }

  async readMany(specs: string[]): Promise<(GitObject | undefined)[]> {
    return Promise.all(specs.map((s) => this.read(s)));
  }

  async readTree(spec: string): Promise<TreeEntry[] | undefined> {
    const obj = await this.read(spec);
    if (!obj) return undefined;
    if (obj.type !== 'tree') return undefined;
    return parseTree(obj.content);
  }

  close(): void {
    if (this.child) {
      this.child.stdin!.end();
      this.child = undefined;
      this.buffer = Buffer.alloc(0);
    }
  }
}

/** Parses the binary tree format: `<mode> <name>\0<20-byte oid>` repeated. */
export function parseTree(content: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let i = 0;
  while (i < content.length) {
    const space = content.indexOf(32, i);
    const nul = content.indexOf(0, space);
    const mode = content.subarray(i, space).toString();
    const name = content.subarray(space + 1, nul).toString();
    const oid = content.subarray(nul + 1, nul + 21).toString('hex');
    const type = mode === '40000' ? 'tree' : mode === '160000' ? 'commit' : 'blob';
    entries.push({ mode, name, oid, type });
    i = nul + 21;
  }
  return entries;
}
