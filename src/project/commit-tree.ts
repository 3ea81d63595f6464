/**
 * A SourceTree over one commit of the checkout, read through the checkout's batch reader:
 * source is rendered from commits, never from the working tree.
 */
import type { BatchReader } from '../git/batch-reader';
import type { SourceObject, SourceTree } from './types';

export class CommitSourceTree implements SourceTree {
  private listing: Promise<string[]> | undefined;
  private all: Promise<Map<string, SourceObject>> | undefined;

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
    this.listing ??= this.objects().then((all) =>
      [...all.entries()]
        .filter(([, o]) => o.type === 'blob')
        .map(([p]) => p)
        .sort(),
    );
    return this.listing;
  }

  /** Every blob and tree under the project directory (its own tree as ''), with its object id. */
  objects(): Promise<Map<string, SourceObject>> {
    this.all ??= this.rootObject().then(async (root) => {
      const found = new Map<string, SourceObject>();
      if (root) {
        found.set('', root);
        await this.walk(root.oid, '', found);
      }
      return found;
    });
    return this.all;
  }

  private async rootObject(): Promise<SourceObject | undefined> {
    const obj = await this.reader.read(`${this.commit}:${this.prefix}`);
    return obj && obj.type === 'tree' ? { type: 'tree', oid: obj.oid } : undefined;
  }

  private async walk(tree: string, base: string, found: Map<string, SourceObject>): Promise<void> {
    const entries = await this.reader.readTree(tree);
    if (!entries) return;
    const subtrees: Promise<void>[] = [];
    for (const e of entries) {
      const path = base ? `${base}/${e.name}` : e.name;
      if (e.type === 'tree') {
        found.set(path, { type: 'tree', oid: e.oid });
        subtrees.push(this.walk(e.oid, path, found));
      } else if (e.type === 'blob') found.set(path, { type: 'blob', oid: e.oid });
    }
    await Promise.all(subtrees);
  }
}
