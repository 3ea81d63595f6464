// The CLI bundle (dist/nyl.cjs, scripts/bundle.mjs) as the process holds it. V8 keeps a script's
// source text in the heap for as long as the process runs (lazy functions are compiled from it),
// and one character beyond ASCII makes the whole text a two-byte string: 2.7 MB of heap instead of
// 1.35 MB, which the heap's growth before its first full collection multiplies (peak memory at
// 5,000 units, docs/architecture.md). Non-ASCII characters belong in \u escapes in src/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BUNDLE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'nyl.cjs');

test('the bundle is ASCII, so V8 keeps its source as a one-byte string', () => {
  const text = fs.readFileSync(BUNDLE, 'utf8');
  const lines = text.split('\n');
  const offending = lines.flatMap((line, i) => (/[^\x00-\x7f]/.test(line) ? [`${i + 1}: ${line.trim().slice(0, 120)}`] : []));
  assert.deepEqual(offending, [], 'write these characters as \\u escapes in src/ (esbuild keeps them in template literals and regular expressions)');
});
