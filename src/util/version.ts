/**
 * Nyl's version, from package.json (read once). The code runs from dist/<folder>/<module>.js (the
 * per-module build) or from dist/nyl.cjs (the bundle bin/nyl runs): package.json is the first
 * one of Nyl's own found going up from there.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

let cached: string | undefined;

function ownPackageVersion(from: string): string | undefined {
  for (let dir = from, up = 0; up < 3; dir = dirname(dir), up++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'nyl' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // none here, or unreadable: look further up
    }
  }
  return undefined;
}

export function nylVersion(): string {
  if (cached === undefined) cached = ownPackageVersion(__dirname) ?? 'unknown';
  return cached;
}
