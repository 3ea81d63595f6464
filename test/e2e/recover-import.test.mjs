// `nyl recover -e dev`: when it refuses, what it imports, what
// it records, and what it leaves when it dies or fails before its commit lands.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { cleanupAll } from '../support/git-fixtures.mjs';
import { waitForFile } from '../support/cli.mjs';
import {
  DESIRED,
  ENV,
  LEASE,
  OBSERVED,
  RUNS,
  Scenario,
  allCodes,
  assertCrashInvariants,
  commitBody,
  commitsOf,
  crashReconcile,
  describeResult,
  errorCodes,
  trailer,
} from '../support/crash-harness.mjs';

after(cleanupAll);

const recoverArgs = ['recover', '-e', ENV, '-o', 'json'];

describe('recover -e without a broken lease', () => {
  test('refuses NYL-RECOVER-NOTHING, also while a dead run holds a lease nobody broke', async () => {
    const sc = new Scenario();
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const refs0 = sc.refs();
      const r = await sc.ok(recoverArgs, 1);
      assert.deepEqual(errorCodes(r), ['NYL-RECOVER-NOTHING']);
      assert.deepEqual(sc.refs(), refs0, 'nothing written');

      await crashReconcile(sc, 'lease-acquired');
      const refs1 = sc.refs();
      const again = await sc.ok(recoverArgs, 1);
      assert.deepEqual(errorCodes(again), ['NYL-RECOVER-NOTHING']);
      assert.deepEqual(sc.refs(), refs1, 'the dead run keeps its lease and run ref until someone breaks it');
    } finally {
      await sc.cleanup();
    }
  });
});

describe('recover -e imports a broken run', () => {
  test('after a broken `nyl state init`: takes the lease over and releases it, warning NYL-STATE-MISSING', async () => {
    const sc = new Scenario();
    try {
      const marker = path.join(sc.dir, 'pause');
      const init = sc.start(['state', 'init', '-e', ENV], { env: { NYL_FAULT_AT: 'lease-acquired', NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: marker } });
      await waitForFile(marker);
      await init.crash();
      sc.record('state init killed');
      assert.ok(sc.refs()[LEASE], 'the dead init holds the lease');
      assert.equal(sc.refs()[DESIRED], undefined, 'no state yet');
      const broke = await sc.leaseBreak();
      assert.equal(broke.json.details.operation, 'state-init');

      const r = await sc.ok(recoverArgs, 0);
      assert.equal(r.json.result, 'done', describeResult(r));
      assert.ok(allCodes(r).includes('NYL-STATE-MISSING'), describeResult(r));
      assert.equal(r.json.details.leaseBroken?.operation, 'state-init');
      assert.equal(sc.refs()[LEASE], undefined, 'the lease is released');
      assert.equal(sc.refs()[DESIRED], undefined, 'recover creates no state');

      const init2 = await sc.ok(['state', 'init', '-e', ENV, '-o', 'json']);
      assert.equal(init2.json.result, 'done');
    } finally {
      await sc.cleanup();
    }
  });

  test('a run that left nothing (killed at lease-acquired): still one commit recording leaseBroken', async () => {
    const sc = new Scenario();
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const before = sc.stateRefs();
      const { deadRuns } = await crashReconcile(sc, 'lease-acquired');
      await sc.leaseBreak('runner lost');
      const r = await sc.ok([...recoverArgs, '--reason', 'import after runner loss']);
      assert.equal(r.json.result, 'done');
      assert.equal(r.json.details.leaseBroken.run, deadRuns[0]);
      assert.equal(r.json.details.leaseBroken.reason, 'runner lost');
      assert.deepEqual(r.json.details.runs, deadRuns, 'the dead run is consumed');
      const refs = sc.refs();
      assert.equal(refs[LEASE], undefined);
      assert.equal(refs[`${RUNS}${deadRuns[0]}`], undefined);
      assert.equal(refs[OBSERVED], before.observed, 'nothing observed changed');
      const [commit] = commitsOf(sc.bare, DESIRED);
      assert.notEqual(commit.oid, before.desired, 'a desired commit records the break');
      assert.match(commit.subject, /^nyl: recover dev/);
      assert.equal(trailer(commit.message, 'Nyl-Operation'), 'recover');
      assert.equal(trailer(commit.message, 'Nyl-Reason'), 'import after runner loss');
      assert.equal(commitBody(commit.message).leaseBroken.run, deadRuns[0]);
      await sc.ok(['reconcile', '-e', ENV, '-o', 'json']);
      const summary = await assertCrashInvariants(sc, { allCurrent: true });
      assert.deepEqual(
        Object.values(summary.counts),
        sc.unitNames.map(() => 1),
      );
    } finally {
      await sc.cleanup();
    }
  });

  test('units the run left without checkpoint become uncertain: exit 0, NYL-UNIT-UNCERTAIN, status exits 4', async () => {
    const sc = new Scenario();
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const { deadRuns } = await crashReconcile(sc, 'after-started-push');
      await sc.leaseBreak();
      const r = await sc.ok(recoverArgs, 0);
      assert.deepEqual([...r.json.details.recovered].sort(), ['base', 'config']);
      assert.ok(allCodes(r).includes('NYL-UNIT-UNCERTAIN'), describeResult(r));
      for (const u of ['base', 'config']) {
        const doc = sc.observedDoc(u);
        assert.equal(doc.condition?.type, 'uncertain');
        assert.equal(doc.condition?.run, deadRuns[0]);
      }
      assert.ok(sc.refs()[`refs/nyl/dev/evidence/base/${deadRuns[0]}`], 'evidence kept for an uncertain unit');
      const status = await sc.nyl(['status', '-e', ENV, '-o', 'json']);
      assert.equal(status.code, 4, describeResult(status));
      assert.equal(sc.executionCounts().base, 0, 'recover executes nothing');
    } finally {
      await sc.cleanup();
    }
  });

  test('with --unit U --retry, the retry applies after the import, in the same commit', async () => {
    const sc = new Scenario();
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      // db ended without its checkpoint pushed while migrate still ran: both uncertain.
      const {
        deadRuns: [dead],
      } = await crashReconcile(sc, 'before-checkpoint-push', { wave: 2 });
      await sc.leaseBreak();
      const before = sc.stateRefs();
      const r = await sc.ok([...recoverArgs, '--unit', 'migrate', '--retry', '--reason', 'verified nothing was applied']);
      assert.equal(r.json.details.leaseBroken.run, dead);
      assert.deepEqual([...r.json.details.recovered].sort(), ['db', 'migrate']);
      assert.deepEqual([...r.json.details.imported].sort(), ['base', 'config']);
      for (const [key, ref] of [
        ['desired', DESIRED],
        ['observed', OBSERVED],
      ]) {
        const commits = commitsOf(sc.bare, ref);
        assert.equal(commits[1].oid, before[key], `one commit on ${ref}`);
        const body = commitBody(commits[0].message);
        assert.equal(body.operation, 'recover');
        assert.equal(body.leaseBroken.run, dead);
        assert.deepEqual(body.units, { migrate: { action: 'retry' } });
      }
      assert.equal(sc.observedDoc('migrate').condition, undefined, 'migrate is retried');
      assert.equal(sc.observedDoc('db').condition?.run, dead, 'db stays uncertain');
      const evidence = Object.keys(sc.refs()).filter((ref) => ref.startsWith('refs/nyl/dev/evidence/'));
      assert.deepEqual(evidence, [`refs/nyl/dev/evidence/db/${dead}`], 'evidence only for the unit still uncertain');
      await sc.ok(['reconcile', '-e', ENV, '-o', 'json']);
      const summary = await assertCrashInvariants(sc, { allCurrent: true });
      assert.equal(summary.counts.migrate, 2);
    } finally {
      await sc.cleanup();
    }
  });

  test('while a broken lease waits for its import, `nyl state init --fresh` refuses NYL-LEASE-BROKEN naming `nyl recover -e dev`', async () => {
    const sc = new Scenario();
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      await crashReconcile(sc, 'lease-acquired');
      await sc.leaseBreak();
      const refs = sc.refs();
      const r = await sc.ok(['state', 'init', '-e', ENV, '--fresh', '--reason', 'x', '-o', 'json'], 2);
      assert.deepEqual(errorCodes(r), ['NYL-LEASE-BROKEN']);
      assert.match(r.json.errors[0].fix, /nyl recover -e dev/);
      const text = await sc.ok(['state', 'init', '-e', ENV, '--fresh', '--reason', 'x'], 2);
      assert.match(text.stderr, /nyl recover -e dev/);
      assert.deepEqual(sc.refs(), refs, 'nothing written');
    } finally {
      await sc.cleanup();
    }
  });

  // In process (test/protocol/crash-points.test.mjs, 'crashes of the operations that recover'):
  // 'recover killed before its push: state unchanged; its lease is held until it expires, then
  // the recover that takes it over records the break' (and the reconcile that does), 'a live
  // recover holds its lease like any holder: ...', 'lease break of a live recover breaks it: ...',
  // 'a recover that fails before its commit (unknown unit) puts
  // the broken lease back' (the CLI's exit 1 NYL-UNIT-UNKNOWN of `recover --unit`: in
  // test/e2e/recover-unit.test.mjs) and 'a recover that finds the break already imported when it
  // takes the lease imports nothing and says so'.
});
