/**
 * A cache of values derived from immutable Git objects, keyed by object id, stored as JSON files
 * under the cache directory. Git objects never change, so an entry never goes stale; the format
 * tag in the key covers changes of Nyl's own structures. Writes are atomic (write then rename)
 * and failures to read or write are ignored: the cache only ever saves work.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export class JsonCache {
  constructor(
    private readonly dir: string,
    private readonly format: string,
  ) {}

  private file(kind: string, oid: string): string {
    return join(this.dir, `${kind}-${this.format}`, oid.slice(0, 2), `${oid.slice(2)}.json`);
  }

  get<T>(kind: string, oid: string): T | undefined {
    try {
      return JSON.parse(readFileSync(this.file(kind, oid), 'utf8')) as T;
    } catch {
      return undefined;
    }
  }

  set(kind: string, oid: string, value: unknown): void {
    const file = this.file(kind, oid);
    try {
      mkdirSync(join(file, '..'), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(value));
      renameSync(tmp, file);
    } catch {
      /* a cache that cannot be written costs time, never correctness */
    }
  }
}
