// Infer<typeof schema> (src/util/schema.ts) gives each shape's TypeScript type from its one
// declaration: the fixture's correct values compile and each @ts-expect-error line is an error
// (tsc reports an unused @ts-expect-error as an error of its own, so a type too loose fails too).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('Infer types required, optional, const, enum, list, nested and json fields', () => {
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  const fixture = path.join(root, 'test/fixtures/types/schema-infer.ts');
  const r = spawnSync(
    process.execPath,
    [tsc, '--noEmit', '--strict', '--target', 'ES2022', '--module', 'commonjs', '--types', 'node', '--skipLibCheck', fixture],
    {
      cwd: root,
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
});

test('Infer types the kinds the reports need: numeric const, reference, union, map, details and a declared type', () => {
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  const fixture = path.join(root, 'test/fixtures/types/schema-infer-reports.ts');
  const r = spawnSync(
    process.execPath,
    [tsc, '--noEmit', '--strict', '--target', 'ES2022', '--module', 'commonjs', '--types', 'node', '--skipLibCheck', fixture],
    {
      cwd: root,
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
});
