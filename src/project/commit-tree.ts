/**
 * A SourceTree over one commit of the checkout, read through the checkout's batch reader:
 * source is rendered from commits, never from the working tree.
 */
import type { BatchReader } from '../git/batch-reader';
import type { SourceTree } from './types';

export class CommitSourceTree implements SourceTree {
  private listing: Promise<string[]> | undefined;

  constructor(
    private readonly reader: BatchReader,
    readonly commit: string,
    /** The project's directory inside the commit ('' at the root). */
    private readonly prefix: string,
  ) {}

  private full(path: string): string {
    return this.prefix ? `${this.prefix}/${path}` : path;
  }

  async read(path: string): Promise<string | undefined> {
    const obj = await this.reader.read(`${this.commit}:${this.full(path)}`);
    return obj && obj.type === 'blob' ? obj.content.toString('utf8') : undefined;
  }

  readMany(paths: string[]): Promise<(string | undefined)[]> {
    return Promise.all(paths.map((p) => this.read(p)));
  }

  list(): Promise<string[]> {
    this.listing ??= this.walk(`${this.commit}:${this.prefix}`, '');
    return this.listing;
  }

  private async walk(spec: string, base: string): Promise<string[]> {
    const entries = await this.reader.readTree(spec);
    if (!entries) return [];
    const files: string[] = [];
    const subtrees: Promise<string[]>[] = [];
    for (const e of entries) {
      const path = base ? `${base}/${e.name}` : e.name;
      if (e.type === 'tree') subtrees.push(this.walk(e.oid, path));
      else if (e.type === 'blob') files.push(path);
    }
    for (const sub of await Promise.all(subtrees)) files.push(...sub);
    return files.sort();
  }
}
