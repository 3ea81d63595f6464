/** Nyl's version, from package.json (read once; the compiled code sits in dist/<folder>/). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

let cached: string | undefined;

export function nylVersion(): string {
  if (cached === undefined) {
    try {
      cached = (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      cached = 'unknown';
    }
  }
  return cached;
}
