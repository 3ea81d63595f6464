// `nyl verify` end to end: the real CLI, real git, a Command unit whose `check:` tests a marker
// file its apply made. In sync is exit 0; once the marker is removed by hand verify exits 2,
// reports the unit drifted and records the observation (with the earlier one kept) in one
// observed commit, operation verify, while the desired branch stays as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { nyl } from '../support/cli.mjs';
import { commitAt, coordinationRefs, observedDoc, tip } from '../support/hold-helpers.mjs';
import { reconcile, setup } from '../support/reconcile-helpers.mjs';

const DESIRED = 'refs/heads/nyl/dev/desired';
const OBSERVED = 'refs/heads/nyl/dev/observed';
const show = (r) => `exit ${r.code}\n${r.stdout}\n${r.stderr}`;
const verify = (project, args = []) => nyl(project, ['verify', '-e', 'dev', ...args]);
const drifts = (report) => Object.fromEntries(Object.entries(report.details.units).map(([n, u]) => [n, u.drift]));

test('a Command check: in sync is exit 0; a marker removed by hand is drifted (exit 2), recorded in one observed commit', () => {
  let marker;
  const ctx = setup((log) => {
    marker = path.join(path.dirname(log), 'marker');
    return {
      site: `script: 'touch ${marker}'\ncheck: {run: [test, -f, "${marker}"]}\nrecovery: converge`,
      plain: `script: 'echo plain >> ${log}'`,
    };
  });
  assert.equal(reconcile(ctx.project).code, 0);
  assert.ok(fs.existsSync(marker));

  const inSync = verify(ctx.project, ['-o', 'json']);
  assert.equal(inSync.code, 0, show(inSync));
  assert.equal(inSync.json.operation, 'verify');
  assert.equal(inSync.json.result, 'done');
  assert.deepEqual(drifts(inSync.json), { plain: 'unknown', site: 'in-sync' });
  assert.match(inSync.json.details.units.plain.detail, /declares no check/);

  fs.rmSync(marker);
  const desired = tip(ctx.bare, DESIRED);
  const drifted = verify(ctx.project, ['-o', 'json']);
  assert.equal(drifted.code, 2, show(drifted));
  assert.deepEqual(drifts(drifted.json), { plain: 'unknown', site: 'drifted' });
  assert.deepEqual(
    drifted.json.warnings.map((w) => w.code),
    ['NYL-UNIT-DRIFTED'],
  );
  assert.match(drifted.json.warnings[0].fix, /nyl reconcile -e dev/);
  assert.match(drifted.stderr, /\[dev\/site\] drifted in/);
  assert.equal(tip(ctx.bare, DESIRED), desired, 'the desired branch is as it was');
  assert.equal(tip(ctx.bare, OBSERVED), drifted.json.observed);
  assert.deepEqual(coordinationRefs(ctx.bare), [], 'the lease is released');

  const c = commitAt(ctx.bare, OBSERVED);
  assert.equal(c.headline, 'nyl: verify dev (plain, site)');
  assert.equal(c.body.operation, 'verify');
  assert.deepEqual(c.body.units, { plain: 'unknown', site: 'drifted' });
  assert.deepEqual(c.trailers['Nyl-Operation'], ['verify']);
  const doc = observedDoc(ctx.bare, 'site');
  assert.equal(doc.drift.status, 'drifted');
  assert.equal(doc.drift.run, drifted.json.details.run);
  assert.equal(doc.drift.receipt, doc.receipt.run);
  assert.deepEqual(
    doc.driftHistory.map((d) => d.status),
    ['in-sync'],
    'the earlier observation is kept',
  );

  // The text form exits the same way.
  const text = verify(ctx.project);
  assert.equal(text.code, 2, show(text));
  assert.match(text.stdout, /^verify dev: done/);
  assert.match(text.stdout, /NYL-UNIT-DRIFTED/);
});
