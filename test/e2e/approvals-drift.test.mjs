// Approvals end to end, with real processes and a real state repository: what only the CLI shows
// (the printed --approve, and the CI user from the process environment who approves, recorded in
// the commit). The decisions themselves, and drift repair under every combination of recovery and
// driftRepair, are tested in process (test/protocol/approvals.test.mjs); drift made by hand, found
// by `nyl verify` and repaired by the printed reconcile runs in test/e2e/fix-texts.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { commitAt } from '../support/hold-helpers.mjs';
import { reconcile, setup } from '../support/reconcile-helpers.mjs';

const OBSERVED = 'refs/heads/nyl/dev/observed';
const show = (r) => `exit ${r.code}\n${r.stdout}\n${r.stderr}`;
const warning = (r, code) => r.json.warnings.find((w) => w.code === code);

test('a unit that requires approval waits, prints the --approve to pass, and runs with it; the CI user is the approver on record', () => {
  const ctx = setup((log) => ({ migrate: `script: 'echo migrate >> ${log}'\napproval: {required: true}` }));
  const waiting = reconcile(ctx.project, ['-o', 'json']);
  assert.equal(waiting.code, 2, show(waiting));
  assert.equal(waiting.json.units.migrate.result, 'awaiting-approval');
  assert.match(warning(waiting, 'NYL-UNIT-AWAITING-APPROVAL').fix, /`nyl reconcile -e dev --approve migrate`/);
  assert.equal(fs.existsSync(ctx.log), false, 'nothing ran');

  const approved = reconcile(ctx.project, ['--approve', 'migrate', '-o', 'json'], { env: { GITHUB_ACTOR: 'octocat' } });
  assert.equal(approved.code, 0, show(approved));
  assert.match(approved.stderr, /\[dev\/migrate\] starting Command \(reconcile\): no receipt; approved/);
  const c = commitAt(ctx.bare, OBSERVED);
  assert.deepEqual(c.body.units.migrate.approval.by, ['octocat']);
  assert.equal(c.body.units.migrate.approval.source, 'github');
  assert.equal(c.body.units.migrate.approval.executionKey, approved.json.units.migrate.executionKey);
  assert.equal(reconcile(ctx.project).code, 0, 'current: the approval was consumed by its execution, and nothing needs another');
});
