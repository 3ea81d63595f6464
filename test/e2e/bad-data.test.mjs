// Bad data fails one unit, not the run (issue 9, items 5 and 8), with the built CLI and real
// processes: a script over 128 KiB (spawn E2BIG), outputs nested 4,000 levels deep and 2 MiB of
// outputs each used to end the run with NYL-INTERNAL (or, for the size, were committed). Now each
// fails its own unit with a reason that names the cause, and a sibling of the same wave executes
// and keeps its receipt. (The cases in process, and the NUL byte cases: test/protocol/bad-data.)
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cleanupAll, git } from '../support/git-fixtures.mjs';
import { reconcile, setup } from '../support/reconcile-helpers.mjs';
import { describeResult } from '../support/crash-harness.mjs';

after(cleanupAll);

/** A `run:` line: node writes the JSON text that `expression` evaluates to to NYL_OUTPUTS. */
const writes = (expression) =>
  `run: [${JSON.stringify(process.execPath)}, "-e", ${JSON.stringify(`require("fs").writeFileSync(process.env.NYL_OUTPUTS, ${expression})`)}]`;

test('E2BIG, deep outputs and 2 MiB of outputs fail their own units with clear reasons; the sibling executes; nothing of the outputs is committed', () => {
  const ctx = setup({
    e2big: `script: "true # ${'x'.repeat(140 * 1024)}"`,
    deep: writes(`'{"a":' + '['.repeat(4000) + ']'.repeat(4000) + '}'`),
    huge: writes(`JSON.stringify({ a: 'x'.repeat(2 * 1024 * 1024) })`),
    ok: writes(`'{"v":1}'`),
  });
  const r = reconcile(ctx.project, ['-o', 'json']);
  assert.ok(r.json, describeResult(r));
  assert.deepEqual(
    r.json.errors.map((e) => e.code).filter((c) => c === 'NYL-INTERNAL'),
    [],
    describeResult(r),
  );
  assert.equal(r.code, 3, describeResult(r));
  const units = r.json.units;
  assert.equal(units.e2big.result, 'failed');
  assert.match(units.e2big.detail, /E2BIG.*too large/);
  assert.equal(units.deep.result, 'failed');
  assert.match(units.deep.detail, /deeper than 100 levels/);
  assert.equal(units.huge.result, 'failed');
  assert.match(units.huge.detail, /more than the 1 MiB/);
  assert.equal(units.ok.result, 'executed');
  const observed = git(ctx.bare, 'show', 'nyl/dev/observed:units/ok.yaml');
  assert.match(observed, /v: 1/);
  for (const name of ['deep', 'huge']) {
    const doc = git(ctx.bare, 'show', `nyl/dev/observed:units/${name}.yaml`);
    assert.doesNotMatch(doc, /receipt:/, `${name} has no receipt`);
  }
  const sizes = git(ctx.bare, 'cat-file', '--batch-all-objects', '--batch-check=%(objectsize)').split('\n').filter(Boolean).map(Number);
  assert.ok(Math.max(...sizes) < 200 * 1024, `no object of the state repository holds the outputs (largest ${Math.max(...sizes)} bytes)`);
});
