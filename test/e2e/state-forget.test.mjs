// End-to-end: `nyl state forget` drops a retained tombstone, a pending-teardown unit and a released
// record from state: one commit per state ref it changes, the unit's evidence refs deleted, no
// resource touched; a unit that returns to source starts a new incarnation. It refuses a unit
// that still has an incarnation (NYL-FORGET-REFUSED, naming teardown, or resume for a held one),
// an unknown unit and a missing --reason, before the lease; withLease's refusals apply after.
// `nyl hold` of a tombstone refuses with a fix that names both ways forward, as printed.
//
// Nothing in Nyl makes tombstones or released records yet, so the tests write them by hand on
// the state refs (test/support/state-edit.mjs), the way a run with deletion policies leaves them.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cleanupAll, git } from '../support/git-fixtures.mjs';
import { nyl, nylAsync } from '../support/cli.mjs';
import { argvOf, nylCommands } from '../support/fix-texts.mjs';
import { changeUnits, logLines, reconcile, setup } from '../support/reconcile-helpers.mjs';
import { DESIRED, LEASE, OBSERVED, commitAt, describe as show, desiredDoc, observedDoc, pauseAt, refsUnder, tip, waitUntil } from '../support/hold-helpers.mjs';
import { releaseUnit, setLifecycle } from '../support/state-edit.mjs';
import { sharedFixture } from '../support/shared-fixture.mjs';

after(cleanupAll);

const IDENTITY = 'Test User <test@example.com>';
const EVIDENCE = 'refs/nyl/dev/evidence/';
const RUN = '01900000-0000-7000-8000-00000000000a';

const both = (log) => ({ a: `script: 'echo a >> ${log}'`, b: `script: 'echo b >> ${log}'` });
const onlyA = (log) => ({ a: `script: 'echo a >> ${log}'` });

/**
 * a and b reconciled, then b removed from source: the way a unit becomes a tombstone. Built once
 * (state init, reconcile) and put back for every test (test/support/shared-fixture.mjs).
 */
const leftSource = sharedFixture(() => {
  const ctx = setup(both);
  const r = reconcile(ctx.project);
  assert.equal(r.code, 0, show(r));
  changeUnits(ctx, onlyA);
  return ctx;
});

/** `nyl state forget -e dev --unit U --reason R ...args`; reason null leaves --reason out. */
function forget(ctx, unit, { reason = 'removed by hand', args = [], env = {} } = {}) {
  return nyl(ctx.project, ['state', 'forget', '-e', 'dev', '--unit', unit, ...(reason === null ? [] : ['--reason', reason]), ...args], { env });
}

/** Evidence refs of b (a run's record and a late checkpoint) and one of a, pointing at any commit. */
function addEvidence(bare) {
  const commit = tip(bare, OBSERVED);
  for (const ref of [`${EVIDENCE}b/${RUN}`, `${EVIDENCE}b/late/${RUN}`, `${EVIDENCE}a/${RUN}`]) git(bare, 'update-ref', ref, commit);
}

/** The state refs and every coordination ref: what a refusal must leave as it was. */
function snapshot(bare) {
  return { desired: tip(bare, DESIRED), observed: tip(bare, OBSERVED), coordination: refsUnder(bare, 'refs/nyl/dev/') };
}

const errorCodes = (r) => (r.json?.errors ?? []).map((e) => e.code);

/** The commit forget wrote on ref: one, on top of `before`, with the headline, body and trailers. */
function assertForgetCommit(bare, ref, before, unit, was, identity = IDENTITY, reason = 'removed by hand') {
  const c = commitAt(bare, ref);
  assert.equal(git(bare, 'rev-parse', `${c.oid}^`), before, `exactly one commit on ${ref}`);
  assert.equal(c.headline, `nyl: forget dev (${unit})`);
  assert.deepEqual(c.body, { operation: 'forget', units: { [unit]: { action: 'forget', was } } });
  assert.deepEqual(c.trailers['Nyl-Operation'], ['forget']);
  assert.deepEqual(c.trailers['Nyl-Requested-By'], [identity]);
  assert.deepEqual(c.trailers['Nyl-Reason'], [reason]);
}

describe('nyl state forget drops what nothing reconciles', () => {
  test('a retained tombstone: both files gone in one commit per ref, its evidence refs deleted, JSON report; when it returns, a new incarnation', () => {
    const ctx = leftSource();
    const oldUid = desiredDoc(ctx.bare, 'b').uid;
    setLifecycle(ctx.bare, 'b', 'retained');
    addEvidence(ctx.bare);
    const before = snapshot(ctx.bare);

    const r = forget(ctx, 'b', { args: ['-o', 'json'] });
    assert.equal(r.code, 0, show(r));
    assert.equal(r.json.kind, 'StateOperationReport');
    assert.equal(r.json.operation, 'forget');
    assert.equal(r.json.result, 'done');
    assert.deepEqual(r.json.details, { unit: 'b', was: 'retained' });
    assert.deepEqual(r.json.errors, []);
    assert.equal(r.json.desired, tip(ctx.bare, DESIRED));
    assert.equal(r.json.observed, tip(ctx.bare, OBSERVED));

    assertForgetCommit(ctx.bare, DESIRED, before.desired, 'b', 'retained');
    assertForgetCommit(ctx.bare, OBSERVED, before.observed, 'b', 'retained');
    assert.equal(desiredDoc(ctx.bare, 'b'), undefined);
    assert.equal(observedDoc(ctx.bare, 'b'), undefined);
    assert.equal(desiredDoc(ctx.bare, 'a').lifecycle.state, 'active', 'a is untouched');
    assert.ok(observedDoc(ctx.bare, 'a').receipt);
    assert.deepEqual(Object.keys(refsUnder(ctx.bare, 'refs/nyl/dev/')), [`${EVIDENCE}a/${RUN}`], "b's evidence is gone, a's stays, the lease is released");
    assert.deepEqual(logLines(ctx.log).sort(), ['a', 'b'], 'nothing ran');

    // Nothing of b is left in state: the planner mints a new uid, and b executes.
    changeUnits(ctx, both, 'b returns');
    const back = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(back.code, 0, show(back));
    assert.equal(back.json.units.b.result, 'executed', show(back));
    assert.notEqual(back.json.units.b.uid, oldUid, 'a new incarnation');
    assert.equal(desiredDoc(ctx.bare, 'b').uid, back.json.units.b.uid);
    assert.equal(observedDoc(ctx.bare, 'b').uid, back.json.units.b.uid);
    assert.deepEqual(logLines(ctx.log).slice(2), ['b'], 'b ran again, a did not');
  });

  test('a pending teardown, with --author: text report; the commits name the author', () => {
    const ctx = leftSource();
    setLifecycle(ctx.bare, 'b', 'pending-teardown');
    const before = snapshot(ctx.bare);
    const jane = 'Jane Doe <jane@example.com>';

    const r = forget(ctx, 'b', { reason: 'torn down by hand', args: ['--author', jane] });
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, /^forget dev: done$/m);
    assert.match(r.stdout, /^ {2}was: pending-teardown$/m);
    assertForgetCommit(ctx.bare, DESIRED, before.desired, 'b', 'pending-teardown', jane, 'torn down by hand');
    assertForgetCommit(ctx.bare, OBSERVED, before.observed, 'b', 'pending-teardown', jane, 'torn down by hand');
    assert.equal(git(ctx.bare, 'log', '-1', '--format=%an <%ae>|%cn <%ce>', DESIRED), `${jane}|${jane}`);
    assert.equal(desiredDoc(ctx.bare, 'b'), undefined);
    assert.equal(observedDoc(ctx.bare, 'b'), undefined);
  });

  test('a released record: only an observed commit', () => {
    const ctx = leftSource();
    releaseUnit(ctx.bare, 'b');
    addEvidence(ctx.bare);
    const before = snapshot(ctx.bare);

    const r = forget(ctx, 'b', { args: ['-o', 'json'] });
    assert.equal(r.code, 0, show(r));
    assert.deepEqual(r.json.details, { unit: 'b', was: 'released' });
    assert.equal(tip(ctx.bare, DESIRED), before.desired, 'the desired ref had no file of b: no commit');
    assertForgetCommit(ctx.bare, OBSERVED, before.observed, 'b', 'released');
    assert.equal(observedDoc(ctx.bare, 'b'), undefined);
    assert.deepEqual(Object.keys(refsUnder(ctx.bare, EVIDENCE)), [`${EVIDENCE}a/${RUN}`]);
  });
});

describe('nyl state forget refuses, changing nothing', () => {
  test('a unit with an incarnation names teardown (active, deleting), a held one resume first; unknown unit; no --reason; no --unit', () => {
    const ctx = leftSource();
    setLifecycle(ctx.bare, 'b', 'retained');
    assert.equal(nyl(ctx.project, ['hold', '-e', 'dev', '--unit', 'a', '--reason', 'incident']).code, 0);
    const before = snapshot(ctx.bare);

    const held = forget(ctx, 'a', { args: ['-o', 'json'] });
    assert.equal(held.code, 1, show(held));
    assert.equal(held.json.operation, 'forget');
    assert.deepEqual(errorCodes(held), ['NYL-FORGET-REFUSED']);
    assert.match(held.json.errors[0].message, /^a is held/);
    assert.deepEqual(nylCommands(held.json.errors[0].fix), ['nyl resume -e dev --unit a', 'nyl teardown -e dev --unit a']);

    assert.equal(nyl(ctx.project, ['resume', '-e', 'dev', '--unit', 'a']).code, 0);
    const resumed = snapshot(ctx.bare);
    const active = forget(ctx, 'a');
    assert.equal(active.code, 1, show(active));
    assert.match(active.stderr, /^error NYL-FORGET-REFUSED$/m);
    assert.match(active.stderr, /a still has an incarnation \(uid /);
    assert.match(active.stderr, /^ {2}fix: tear it down with `nyl teardown -e dev --unit a`$/m);

    const unknown = forget(ctx, 'nope', { args: ['-o', 'json'] });
    assert.equal(unknown.code, 1, show(unknown));
    assert.deepEqual(errorCodes(unknown), ['NYL-UNIT-UNKNOWN']);
    for (const reason of [null, '', '  ']) {
      const r = forget(ctx, 'b', { reason, args: ['-o', 'json'] });
      assert.equal(r.code, 1, show(r));
      assert.deepEqual(errorCodes(r), ['NYL-REASON-REQUIRED']);
      assert.match(r.json.errors[0].fix, /--reason/);
    }
    const noUnit = nyl(ctx.project, ['state', 'forget', '-e', 'dev', '--reason', 'r', '-o', 'json']);
    assert.equal(noUnit.code, 1, show(noUnit));
    assert.deepEqual(errorCodes(noUnit), ['NYL-USAGE']);

    assert.deepEqual(snapshot(ctx.bare), resumed, 'nothing written by the refusals');
    assert.notDeepEqual(resumed, before, 'only the resume wrote');
    assert.equal(desiredDoc(ctx.bare, 'b').lifecycle.state, 'retained');

    // A deleting unit's teardown has started: refused like an active one.
    setLifecycle(ctx.bare, 'b', 'deleting');
    const deleting = snapshot(ctx.bare);
    const r = forget(ctx, 'b', { args: ['-o', 'json'] });
    assert.equal(r.code, 1, show(r));
    assert.deepEqual(errorCodes(r), ['NYL-FORGET-REFUSED']);
    assert.match(r.json.errors[0].message, /^b is being deleted/);
    assert.deepEqual(nylCommands(r.json.errors[0].fix), ['nyl teardown -e dev --unit b']);
    assert.deepEqual(snapshot(ctx.bare), deleting);
  });

  test('refusals the state shows come before the lease; a held lease is NYL-LEASE-HELD, a broken one NYL-LEASE-BROKEN', async () => {
    const ctx = leftSource();
    setLifecycle(ctx.bare, 'b', 'retained');
    const marker = path.join(ctx.dir, 'paused');
    const other = nylAsync(ctx.project, ['state', 'init', '-e', 'dev', '--fresh', '--reason', 'start over'], { env: pauseAt('lease-acquired', marker) });
    try {
      await waitUntil(() => fs.existsSync(marker), 15000, 'the other operation holding the lease');
      const before = snapshot(ctx.bare);
      const active = forget(ctx, 'a', { args: ['-o', 'json'] });
      assert.deepEqual(errorCodes(active), ['NYL-FORGET-REFUSED'], 'decided before the lease');
      const held = forget(ctx, 'b', { args: ['-o', 'json'] });
      assert.equal(held.code, 2, show(held));
      assert.deepEqual(errorCodes(held), ['NYL-LEASE-HELD']);
      assert.deepEqual(snapshot(ctx.bare), before);

      assert.equal(nyl(ctx.project, ['lease', 'break', '-e', 'dev', '--reason', 'looked dead']).code, 0);
      const broken = forget(ctx, 'b', { args: ['-o', 'json'] });
      assert.equal(broken.code, 2, show(broken));
      assert.deepEqual(errorCodes(broken), ['NYL-LEASE-BROKEN']);
      assert.equal(desiredDoc(ctx.bare, 'b').lifecycle.state, 'retained');
      assert.ok(tip(ctx.bare, LEASE), 'the broken lease waits for its import');
    } finally {
      fs.rmSync(marker, { force: true });
      await other.done;
    }
  });
});

describe('nyl hold of a retained tombstone', () => {
  test('refuses with NYL-HOLD-REFUSED naming teardown and forget with the real names; the forget runs as printed', () => {
    const ctx = leftSource();
    setLifecycle(ctx.bare, 'b', 'retained');
    const before = snapshot(ctx.bare);

    const r = nyl(ctx.project, ['hold', '-e', 'dev', '--unit', 'b', '--reason', 'incident', '-o', 'json']);
    assert.equal(r.code, 1, show(r));
    assert.deepEqual(errorCodes(r), ['NYL-HOLD-REFUSED']);
    const [teardown, forgetIt] = nylCommands(r.json.errors[0].fix);
    assert.equal(teardown, 'nyl teardown -e dev --unit b');
    assert.equal(forgetIt, 'nyl state forget -e dev --unit b --reason "<why>"');
    assert.deepEqual(snapshot(ctx.bare), before, 'nothing written');

    const done = nyl(ctx.project, argvOf(forgetIt, { '<why>': 'the tombstone is not needed' }), {});
    assert.equal(done.code, 0, show(done));
    assert.equal(desiredDoc(ctx.bare, 'b'), undefined);
    assert.deepEqual(commitAt(ctx.bare, DESIRED).trailers['Nyl-Reason'], ['the tombstone is not needed']);
  });
});
