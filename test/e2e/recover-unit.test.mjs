// `nyl recover -e dev --unit U --retry | --accept RUN`: what it
// refuses, what it adopts, the evidence it lists, the evidence refs it deletes, and the reasoned
// acknowledgement a timed-out Command requires before a retry.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cleanupAll, git } from '../support/git-fixtures.mjs';
import {
  BUG_EVIDENCE_ACCEPTABLE_STALE,
  ENV,
  EVIDENCE,
  RUNS,
  Scenario,
  allCodes,
  assertCrashInvariants,
  commitBody,
  commitsOf,
  crashReconcile,
  describeResult,
  errorCodes,
  lostLeaseRun,
  OBSERVED,
  trailer,
} from '../support/crash-harness.mjs';

after(cleanupAll);

const recoverUnit = (unit, ...rest) => ['recover', '-e', ENV, '--unit', unit, ...rest, '-o', 'json'];
const evidenceRefsOf = (sc, unit) =>
  Object.keys(sc.refs())
    .filter((r) => r.startsWith(`${EVIDENCE}${unit}/`))
    .sort();

/** slow (manual) and its dependent after (converge). */
const PAIR = [
  { name: 'slow', dependsOn: [], wave: 1 },
  { name: 'after', recovery: 'converge', dependsOn: ['slow'], wave: 2 },
];

describe('recover --unit refusals', () => {
  test('--retry on a unit without condition: NYL-RECOVER-NOTHING; an unknown unit: NYL-UNIT-UNKNOWN; nothing written', async () => {
    const sc = new Scenario({ units: PAIR });
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      await sc.ok(['reconcile', '-e', ENV, '-o', 'json']);
      const refs = sc.refs();
      const nothing = await sc.ok(recoverUnit('slow', '--retry', '--reason', 'why not'), 1);
      assert.deepEqual(errorCodes(nothing), ['NYL-RECOVER-NOTHING']);
      const accept = await sc.ok(recoverUnit('slow', '--accept', '01a00000-0000-7000-8000-000000000000', '--reason', 'r'), 1);
      assert.deepEqual(errorCodes(accept), ['NYL-RECOVER-NOTHING'], 'both actions refuse a unit without a condition');
      const unknown = await sc.ok(recoverUnit('nosuch', '--retry'), 1);
      assert.deepEqual(errorCodes(unknown), ['NYL-UNIT-UNKNOWN']);
      assert.deepEqual(sc.refs(), refs);
    } finally {
      await sc.cleanup();
    }
  });
});

describe('recover --unit --accept', () => {
  /**
   * Two runs of slow (converge) that never checkpointed in time: K killed while slow ran; L took
   * K over, ran slow again and lost its lease to `recover -e` before it checkpointed a receipt
   * late. Leaves slow uncertain (run L) with evidence of K and L, and L's late run ref.
   */
  async function twoRuns() {
    const units = [{ ...PAIR[0], recovery: 'converge' }, PAIR[1]];
    const sc = new Scenario({ units });
    await sc.ok(['state', 'init', '-e', ENV]);
    const {
      deadRuns: [k],
    } = await crashReconcile(sc, 'while-unit-runs', { slowUnit: 'slow' });
    await sc.leaseBreak();
    const { run: l, lost } = await lostLeaseRun(sc, 'slow');
    assert.equal(lost.code, 4, describeResult(lost));
    assert.ok(l > k, 'run ids grow with time');
    return { sc, k, l };
  }

  test('the evidence listing: every checkpoint in run and evidence refs, newest run first, with result, key and acceptable', async () => {
    const { sc, k, l } = await twoRuns();
    try {
      assert.deepEqual(evidenceRefsOf(sc, 'slow'), [`${EVIDENCE}slow/${k}`, `${EVIDENCE}slow/${l}`]);
      assert.ok(sc.refs()[`${RUNS}${l}`], 'the late checkpoint of L waits in its run ref');
      const missing = await sc.ok(recoverUnit('slow', '--accept', k, '--reason', 'r'), 1);
      assert.deepEqual(errorCodes(missing), ['NYL-RECOVER-CHECKPOINT-MISSING'], 'K has no checkpoint of slow');
      // A refusal reports the listing under details.evidence, as the report would.
      const evidence = missing.json.details?.evidence;
      assert.ok(Array.isArray(evidence), describeResult(missing));
      const runs = evidence.map((e) => e.run);
      assert.deepEqual([...runs].sort().reverse(), runs, `newest run first: ${JSON.stringify(evidence)}`);
      assert.deepEqual([...new Set(runs)], [l, k]);
      const key = sc.readRunCommit(sc.refs()[`${RUNS}${l}`]).units.get('slow').executionKey;
      const lReceipt = evidence.find((e) => e.run === l && e.result === 'receipt');
      assert.ok(lReceipt, `L's late receipt is listed: ${JSON.stringify(evidence)}`);
      assert.equal(lReceipt.executionKey, key);
      assert.equal(lReceipt.acceptable, true);
      for (const e of evidence.filter((x) => x !== lReceipt)) {
        assert.equal(e.result, 'started', JSON.stringify(e));
        assert.equal(e.acceptable, false, JSON.stringify(e));
        assert.match(e.executionKey, /^sha256:/);
      }

      // --retry lists the same evidence in its report and deletes the evidence refs with the condition.
      const retry = await sc.ok(recoverUnit('slow', '--retry', '--reason', 'checked'));
      assert.deepEqual(retry.json.details.evidence, evidence);
      assert.equal(retry.json.details.condition?.run, l);
      assert.deepEqual(evidenceRefsOf(sc, 'slow'), [], 'no uncertain unit needs the evidence any more');
      assert.ok(sc.refs()[`${RUNS}${l}`], 'recover --unit deletes no run ref');
    } finally {
      await sc.cleanup();
    }
  });

  // '--accept of a run whose late receipt waits in its run ref adopts it': in process in
  // test/protocol/crash-points.test.mjs (the test of that title, after the same two runs K and L).

  test('--accept of a matching receipt adopts it: receipt.run is that run, the commit records the action', async () => {
    const sc = new Scenario({ units: PAIR });
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const { run } = await lostLeaseRun(sc, 'slow');
      const next = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], [2, 4]);
      assert.ok(allCodes(next).includes('NYL-RUN-LATE-CHECKPOINT'), describeResult(next));
      const noReason = await sc.ok(recoverUnit('slow', '--accept', run), 1);
      assert.deepEqual(errorCodes(noReason), ['NYL-USAGE'], '--accept needs --reason');

      const r = await sc.ok(recoverUnit('slow', '--accept', run, '--reason', 'the late runner applied it'));
      assert.equal(r.json.result, 'done');
      const entry = r.json.details.evidence.find((e) => e.run === run);
      assert.equal(entry?.result, 'receipt');
      assert.equal(entry?.acceptable, true);
      const doc = sc.observedDoc('slow');
      assert.equal(doc.receipt.run, run);
      assert.equal(doc.condition, undefined);
      assert.ok(doc.receipt.desired, 'the accepted receipt keeps a copy of its desired document');
      const [commit] = commitsOf(sc.bare, OBSERVED);
      assert.match(commit.subject, /^nyl: recover dev \(slow\)/);
      assert.deepEqual(commitBody(commit.message).units, { slow: { action: 'accept', run } });
      assert.deepEqual(commitBody(commit.message).recovered, ['slow']);
      assert.equal(trailer(commit.message, 'Nyl-Reason'), 'the late runner applied it');
      assert.ok(trailer(commit.message, 'Nyl-Requested-By'));
      assert.deepEqual(evidenceRefsOf(sc, 'slow'), [], 'evidence refs deleted');

      await sc.ok(['reconcile', '-e', ENV, '-o', 'json']);
      const summary = await assertCrashInvariants(sc, { allCurrent: true });
      assert.deepEqual(summary.counts, { slow: 1, after: 1 });
    } finally {
      await sc.cleanup();
    }
  });

  // '--accept of a run without a checkpoint of the unit: NYL-RECOVER-CHECKPOINT-MISSING' (and
  // --retry clearing it with its evidence refs): in process in test/protocol/crash-points.test.mjs;
  // the CLI's NYL-RECOVER-CHECKPOINT-MISSING (exit 1, the evidence listing) is checked above.

  test('--accept after a source change of the unit (another execution key): NYL-RECOVER-KEY-MISMATCH', async (t) => {
    const sc = new Scenario({ units: PAIR });
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const { run } = await lostLeaseRun(sc, 'slow');
      await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], [2, 4]);
      // Change what slow runs, commit, and let a reconcile resolve the new source.
      const file = path.join(sc.project, 'nyl.yaml');
      fs.writeFileSync(
        file,
        fs.readFileSync(file, 'utf8').replace('metadata: {name: slow}\nspec:\n', 'metadata: {name: slow}\nspec:\n  env: {VERSION: "2"}\n'),
      );
      git(sc.project, 'commit', '-qam', 'slow: version 2');
      await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], [2, 4]);
      const status = await sc.nyl(['status', '-e', ENV, '-o', 'json']);
      const nowKey = status.json.units.slow.executionKey;
      const lateKey = sc.readRunCommit(sc.refs()[`${EVIDENCE}slow/${run}`]).units.get('slow').executionKey;
      assert.notEqual(nowKey, lateKey, 'the source change gives slow another execution key');

      // Refused: the checkpoint is not for what slow runs now.
      const refs = sc.refs();
      const r = await sc.ok(recoverUnit('slow', '--accept', run, '--reason', 'r'), 1);
      assert.deepEqual(errorCodes(r), ['NYL-RECOVER-KEY-MISMATCH'], describeResult(r));
      assert.deepEqual(sc.refs(), refs, 'nothing written');
      await t.test('the evidence listing does not call that checkpoint acceptable', () => {
        const entry = (r.json.details?.evidence ?? []).find((e) => e.run === run && e.result === 'receipt');
        assert.ok(entry, JSON.stringify(r.json.details));
        assert.equal(entry.acceptable, false, `--accept refuses it: ${JSON.stringify(entry)}`);
      });
      // --retry runs slow again for the new source.
      await sc.ok(recoverUnit('slow', '--retry', '--reason', 'run version 2'));
      await sc.ok(['reconcile', '-e', ENV, '-o', 'json']);
      const summary = await assertCrashInvariants(sc, { allCurrent: true });
      assert.deepEqual(summary.counts, { slow: 2, after: 1 });
    } finally {
      await sc.cleanup();
    }
  });
});

describe('recover --unit --retry of a failure that needs an acknowledgement', () => {
  test('a timed-out Command fails non-retryably; --retry needs --reason (NYL-RECOVER-REASON-REQUIRED); then it runs again', async () => {
    const units = [
      {
        name: 'job',
        dependsOn: [],
        wave: 1,
        timeout: '1s',
        script: (logDir) =>
          [`echo "$NYL_RUN" >> "${logDir}/$NYL_UNIT.log"`, `if [ ! -e "${logDir}/job.slept" ]; then touch "${logDir}/job.slept"; sleep 5; fi`].join('\n'),
      },
    ];
    const sc = new Scenario({ units });
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const began = Date.now();
      const first = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], 3);
      assert.ok(Date.now() - began < 4500, 'killed at its timeout, not after 5 s');
      assert.equal(first.json.units.job.result, 'failed');
      const cond = sc.observedDoc('job').condition;
      assert.equal(cond.type, 'failed');
      assert.equal(cond.retryable, false);

      const again = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], 3);
      assert.equal(again.json.units.job.dispatched, false, 'a non-retryable failure is not retried by reconcile');

      const refs = sc.refs();
      const noReason = await sc.ok(recoverUnit('job', '--retry'), 1);
      assert.deepEqual(errorCodes(noReason), ['NYL-RECOVER-REASON-REQUIRED']);
      const blank = await sc.ok(recoverUnit('job', '--retry', '--reason', '  '), 1);
      assert.deepEqual(errorCodes(blank), ['NYL-RECOVER-REASON-REQUIRED']);
      assert.deepEqual(sc.refs(), refs, 'nothing written');

      const retry = await sc.ok(recoverUnit('job', '--retry', '--reason', 'checked the half-applied job'));
      assert.equal(retry.json.details.condition?.type, 'failed');
      const acked = sc.observedDoc('job');
      assert.equal(acked.condition, undefined);
      assert.equal(acked.acknowledgement?.reason, 'checked the half-applied job');
      const [commit] = commitsOf(sc.bare, OBSERVED);
      assert.deepEqual(commitBody(commit.message).units, { job: { action: 'retry' } });

      const run = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], 0);
      assert.equal(run.json.units.job.result, 'executed');
      assert.equal(sc.observedDoc('job').acknowledgement, undefined, 'a successful execution consumes the acknowledgement');
      assert.deepEqual(sc.executionCounts(), { job: 2 });
    } finally {
      await sc.cleanup();
    }
  });
});
