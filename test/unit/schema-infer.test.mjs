// Infer<typeof schema> (src/util/schema.ts) gives each shape's TypeScript type from its one
// declaration: the fixture's correct values compile and each @ts-expect-error line is an error
// (tsc reports an unused @ts-expect-error as an error of its own, so a type too loose fails too).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Compiles a type-level fixture strictly; its @ts-expect-error lines must each be an error. */
function assertCompiles(fixtureName) {
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  const fixture = path.join(root, 'test/fixtures/types', fixtureName);
  const args = [tsc, '--noEmit', '--strict', '--target', 'ES2022', '--module', 'commonjs', '--types', 'node', '--skipLibCheck', fixture];
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
}

test('Infer types required, optional, const, enum, list, nested and json fields', () => {
  assertCompiles('schema-infer.ts');
});

test('Infer types the kinds the reports need: numeric const, reference, union, map, details and a declared type', () => {
  assertCompiles('schema-infer-reports.ts');
});
