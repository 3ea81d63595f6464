// Races around a broken lease: a holder that is still alive when its lease is broken, two
// importers of one broken run at once, and a run that loses its lease while a unit runs and
// checkpoints late. In every case exactly one writer changes state, and nothing is lost.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanupAll, git, tempDir } from '../support/git-fixtures.mjs';
import { startGitDaemon } from '../support/git-daemon.mjs';
import { waitForFile } from '../support/cli.mjs';
import { FULL_CAMPAIGNS, campaignSize } from '../support/campaign.mjs';
import {
  BUG_START_AFTER_DEADLINE,
  DESIRED,
  ENV,
  EVIDENCE,
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
} from '../support/crash-harness.mjs';

after(cleanupAll);

/** Releases a paused process at every pause until it exits. */
async function releaseUntilExit(h, marker) {
  while (!h.exited) {
    if (fs.existsSync(marker)) fs.rmSync(marker, { force: true });
    await sleep(20);
  }
  return h.done;
}

/** The operations (commit messages) that recorded a lease break on the state branches. */
function breakRecords(sc) {
  const found = new Map();
  for (const ref of [DESIRED, OBSERVED]) {
    for (const c of commitsOf(sc.bare, ref)) {
      const body = commitBody(c.message);
      if (body.leaseBroken) found.set(c.message, body);
    }
  }
  return [...found.values()];
}

/** State commits written since `before` (desired and observed), as messages. */
function commitsSince(sc, before) {
  const out = [];
  for (const [key, ref] of [
    ['desired', DESIRED],
    ['observed', OBSERVED],
  ]) {
    for (const c of commitsOf(sc.bare, ref)) {
      if (c.oid === before[key]) break;
      out.push(c);
    }
  }
  return out;
}

describe('holder and breaker', () => {
  test('a holder whose lease was broken while it ran pushes nothing to state: exit 4 NYL-LEASE-LOST', async () => {
    const sc = new Scenario();
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const marker = path.join(sc.dir, 'pause');
      const holder = sc.start(['reconcile', '-e', ENV, '-o', 'json'], {
        env: { NYL_FAULT_AT: 'after-started-push', NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: marker },
      });
      await waitForFile(marker);
      const [run] = sc.runRefs();
      assert.ok(run, 'the holder has a run ref');
      const broke = await sc.leaseBreak('presumed dead');
      assert.equal(broke.json.result, 'done');
      assert.equal(broke.json.details.run, run);
      assert.ok(sc.leaseDoc().broken, 'lease.yaml records the break');
      const before = sc.stateRefs();

      const r = await releaseUntilExit(holder, marker);
      sc.record('holder ended');
      assert.equal(r.code, 4, describeResult(r));
      assert.deepEqual(errorCodes(r), ['NYL-LEASE-LOST']);
      assert.deepEqual(sc.stateRefs(), before, 'the holder changed no state ref');
      assert.ok(sc.leaseDoc()?.broken, 'the broken lease is left for an importer');
      const runRef = sc.refs()[`${RUNS}${run}`];
      assert.ok(runRef, 'its run ref stays for the next import');
      const rec = sc.readRunCommit(runRef);
      assert.equal(rec.run.ended?.reason, 'lease-lost', `run.yaml: ${JSON.stringify(rec.run)}`);
      sc.deadRuns.set(run, rec);

      // The next reconcile imports what the holder checkpointed; nothing runs twice.
      const take = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], [0, 2, 4]);
      assert.equal(take.json.details.leaseBroken?.run, run, describeResult(take));
      const summary = await assertCrashInvariants(sc);
      for (const n of sc.unitNames) assert.ok(summary.counts[n] <= 1, `${n} ran at most once: ${JSON.stringify(summary.counts)}`);
    } finally {
      await sc.cleanup();
    }
  });
});

// Each test has its own repositories: two at a time.
describe('a live run whose lease ref is gone', () => {
  test('still holds the environment (NYL-LEASE-HELD); `nyl lease break` breaks it; it then writes no state', async () => {
    const sc = new Scenario();
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const marker = path.join(sc.dir, 'pause');
      const holder = sc.start(['reconcile', '-e', ENV, '-o', 'json'], {
        env: { NYL_FAULT_AT: 'after-checkpoint-push', NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: marker },
      });
      await waitForFile(marker);
      const [run] = sc.noteDeadRuns();
      git(sc.bare, 'update-ref', '-d', LEASE);
      sc.record('lease ref deleted by hand');
      const other = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], 2);
      assert.deepEqual(errorCodes(other), ['NYL-LEASE-HELD']);
      assert.equal(other.json.errors[0].data?.run, run, 'the live run is named as holder');
      const broke = await sc.leaseBreak('holder looked dead');
      assert.equal(broke.json.result, 'done', describeResult(broke));
      assert.equal(broke.json.details.run, run);
      assert.equal(sc.leaseDoc().run, run);
      assert.ok(sc.leaseDoc().broken);
      const before = sc.stateRefs();
      const r = await releaseUntilExit(holder, marker);
      sc.record('holder ended');
      assert.equal(r.code, 4, describeResult(r));
      assert.deepEqual(errorCodes(r), ['NYL-LEASE-LOST']);
      assert.deepEqual(sc.stateRefs(), before);
      sc.deadRuns.set(run, sc.readRunCommit(sc.refs()[`${RUNS}${run}`]));
      const take = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], 0);
      assert.equal(take.json.details.leaseBroken?.run, run);
      const summary = await assertCrashInvariants(sc, { allCurrent: true });
      assert.deepEqual(
        Object.values(summary.counts),
        sc.unitNames.map(() => 1),
        'the holder ran everything once; the takeover imported it',
      );
    } finally {
      await sc.cleanup();
    }
  });
});

/** Rounds of each pair of importers started together (the overlap for sure is a test of its own). */
const IMPORT_RACE_ROUNDS = campaignSize('NYL_IMPORT_RACE_ROUNDS', { quick: 1, full: 3 });

describe('two importers at once', { concurrency: 2 }, () => {
  const pairs = [
    ['recover', 'reconcile'],
    ['recover', 'recover'],
    ['reconcile', 'reconcile'],
  ];
  // `npm test` runs the pairs that the in-process test (test/protocol/crash-points.test.mjs, 'two
  // importers race for the lease of a broken run': recover and reconcile, overlapping for sure)
  // does not, overlapping for sure. The full campaign (or NYL_IMPORT_RACE_ROUNDS set) runs every pair
  // both ways.
  const startedTogether = () => FULL_CAMPAIGNS || Boolean(process.env.NYL_IMPORT_RACE_ROUNDS);
  const overlapping = ([a, b]) => FULL_CAMPAIGNS || a === b;
  const argsOf = (op) => (op === 'recover' ? ['recover', '-e', ENV, '-o', 'json'] : ['reconcile', '-e', ENV, '-o', 'json']);

  /** Crash (every checkpoint pushed, no transition), break the lease: one import is due. */
  async function brokenRun() {
    const sc = new Scenario();
    await sc.ok(['state', 'init', '-e', ENV]);
    const { deadRuns } = await crashReconcile(sc, 'before-transition-push');
    await sc.leaseBreak();
    return { sc, dead: deadRuns[0], before: sc.stateRefs() };
  }

  /** Exactly one import landed; the other importer wrote nothing. */
  function assertOneImport(sc, dead, before, results, opNames, { strict }) {
    const landed = results.filter((r) => r.code === 0 && r.json?.details?.leaseBroken);
    assert.equal(landed.length, 1, `exactly one import lands: ${results.map(describeResult).join('\n----\n')}`);
    const [winner] = landed;
    const loser = results.find((r) => r !== winner);
    const loserOp = opNames[results.indexOf(loser)];
    // Exit 0 only for a reconcile that started after the import landed and found nothing to do; a
    // recover that imported nothing refuses NYL-RECOVER-NOTHING.
    const allowed = strict || loserOp === 'recover' ? [1, 2, 4] : [0, 1, 2, 4];
    assert.ok(allowed.includes(loser.code), `the other (${loserOp}) exits ${allowed.join('|')}: ${describeResult(loser)}`);
    if (loser.code === 1) assert.deepEqual(errorCodes(loser), ['NYL-RECOVER-NOTHING'], describeResult(loser));
    if (loser.code === 2) assert.deepEqual(errorCodes(loser), ['NYL-LEASE-HELD'], describeResult(loser));
    if (loser.code === 4) assert.deepEqual(errorCodes(loser), ['NYL-LEASE-LOST'], describeResult(loser));
    if (loser.code === 0)
      assert.ok(!loser.json?.details?.leaseBroken && !loser.json?.committed, `a late importer found nothing to write: ${describeResult(loser)}`);

    const refs = sc.refs();
    assert.equal(refs[`${RUNS}${dead}`], undefined, 'the dead run ref is consumed');
    assert.equal(refs[LEASE], undefined, 'no lease is left');
    const breaks = breakRecords(sc);
    assert.equal(breaks.length, 1, `leaseBroken is recorded by exactly one operation: ${JSON.stringify(breaks)}`);
    assert.equal(breaks[0].leaseBroken.run, dead);
    const written = commitsSince(sc, before);
    const ops = new Set(written.map((c) => c.message));
    assert.equal(ops.size, 1, `only the winner wrote: ${written.map((c) => c.subject).join(', ')}`);
    return { winner, loser, loserOp };
  }

  for (const [a, b] of pairs) {
    if (startedTogether([a, b]))
      test(`${a} and ${b} started together: exactly one import lands (${IMPORT_RACE_ROUNDS} rounds)`, async (t) => {
        for (let round = 0; round < IMPORT_RACE_ROUNDS; round++) {
          const { sc, dead, before } = await brokenRun();
          try {
            const ha = sc.start(argsOf(a));
            const hb = sc.start(argsOf(b));
            const results = await Promise.all([ha.done, hb.done]);
            sc.record('race');
            const { loser, loserOp } = assertOneImport(sc, dead, before, results, [a, b], { strict: false });
            t.diagnostic(`round ${round}: ${loserOp} lost, exit ${loser.code} ${allCodes(loser).join(',')}`);
            const summary = await assertCrashInvariants(sc, { allCurrent: true });
            assert.deepEqual(
              Object.values(summary.counts),
              sc.unitNames.map(() => 1),
              'each unit ran once',
            );
          } finally {
            await sc.cleanup();
          }
        }
      });

    if (overlapping([a, b]))
      test(`${a} and ${b} overlap for sure (both pause once they hold the lease): one lands, the other writes nothing`, async (t) => {
        const { sc, dead, before } = await brokenRun();
        try {
          const ma = path.join(sc.dir, 'pause-a');
          const mb = path.join(sc.dir, 'pause-b');
          const pause = (m) => ({ NYL_FAULT_AT: 'lease-acquired', NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: m });
          const ha = sc.start(argsOf(a), { env: pause(ma) });
          const hb = sc.start(argsOf(b), { env: pause(mb) });
          // One of them holds the lease and waits; let the other decide (refuse, or take it over).
          const until = Date.now() + 20000;
          while (!fs.existsSync(ma) && !fs.existsSync(mb) && Date.now() < until) await sleep(20);
          while (!(fs.existsSync(ma) && fs.existsSync(mb)) && !ha.exited && !hb.exited && Date.now() < until) await sleep(20);
          const both = fs.existsSync(ma) && fs.existsSync(mb);
          const results = await Promise.all([releaseUntilExit(ha, ma), releaseUntilExit(hb, mb)]);
          sc.record('race');
          const { loser, loserOp } = assertOneImport(sc, dead, before, results, [a, b], { strict: true });
          t.diagnostic(`both paused holding a lease: ${both}; ${loserOp} lost, exit ${loser.code} ${allCodes(loser).join(',')}`);
        } finally {
          await sc.cleanup();
        }
      });
  }
});

// A run that loses its lease while a unit runs (exit 4 NYL-LEASE-LOST, no state written, its late
// checkpoint in its run ref, then evidence of an uncertain unit): in process in
// test/protocol/run-protocol.test.mjs ('a run that lost its lease mid-unit records its late
// checkpoint as evidence; the importer keeps the unit uncertain'); through the CLI, with
// `recover --unit --accept` adopting the late receipt, in test/e2e/recover-unit.test.mjs ('--accept
// of a matching receipt adopts it').

describe('a holder that cannot renew', () => {
  test('with a 2s lease, a broken holder notices at its next renewal and starts no further unit', async () => {
    const sc = new Scenario({ lease: '2s' });
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const marker = path.join(sc.dir, 'pause');
      const holder = sc.start(['reconcile', '-e', ENV, '-o', 'json'], {
        env: { NYL_FAULT_AT: 'after-started-push', NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: marker },
      });
      await waitForFile(marker);
      const [run] = sc.noteDeadRuns();
      await sc.leaseBreak();
      const again = await sc.ok(['lease', 'break', '-e', ENV, '--reason', 'twice', '-o', 'json']);
      assert.equal(again.json.result, 'unchanged', 'an already broken lease is reported as such');
      assert.ok(allCodes(again).includes('NYL-UNCHANGED'));
      await sleep(2500); // renewals every 666 ms: the next one finds the lease moved
      const r = await releaseUntilExit(holder, marker);
      sc.record('holder ended');
      assert.equal(r.code, 4, describeResult(r));
      assert.deepEqual(errorCodes(r), ['NYL-LEASE-LOST']);
      assert.deepEqual(sc.executionCounts(), Object.fromEntries(sc.unitNames.map((n) => [n, 0])), 'no unit started after the lease was lost');
      const rec = sc.readRunCommit(sc.refs()[`${RUNS}${run}`]);
      for (const name of ['base', 'config'])
        assert.equal(rec.units.get(name).checkpoint?.result, 'not-started', `${name}: ${JSON.stringify(rec.units.get(name))}`);

      const take = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], 0);
      assert.deepEqual(take.json.details.recovered ?? [], [], 'not-started units are not uncertain');
      const summary = await assertCrashInvariants(sc, { allCurrent: true });
      assert.deepEqual(
        Object.values(summary.counts),
        sc.unitNames.map(() => 1),
      );
    } finally {
      await sc.cleanup();
    }
  });

  test('a holder that can read state but no longer push (cannot renew) starts no unit after its lease deadline', async (t) => {
    // Reads go to one git daemon, pushes (publishURL) to another serving the same repositories;
    // stopping the second cuts the holder off from renewing while it still reads hold signals.
    const base = tempDir('nyl-partition-');
    const d = await startGitDaemon(base);
    const p = await startGitDaemon(base);
    const units = ['a', 'b', 'c', 'd'].map((name) => ({
      name,
      dependsOn: [],
      wave: 1,
      script: (logDir) => [`echo "$NYL_UNIT $(date +%s%3N)" >> "${logDir}/starts"`, `echo "$NYL_RUN" >> "${logDir}/$NYL_UNIT.log"`, 'sleep 1'].join('\n'),
    }));
    const sc = new Scenario({ transport: 'daemon', daemon: { base, url: d.url }, publishDaemon: { url: p.url }, units, lease: '2s' });
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      // One wave of four units, one at a time, 1 s each: the last starts about 3 s in, past any
      // deadline the holder could have pushed before it was cut off.
      const h = sc.start(['reconcile', '-e', ENV, '--concurrency', '1', '-o', 'json']);
      await waitForFile(path.join(sc.logDir, 'a.log'));
      await p.stop(); // pushes fail from now on: renewals too
      const r = await h.done;
      sc.record('holder ended');
      assert.notEqual(r.code, 0, describeResult(r));
      // The deadline the others see: the last lease the holder managed to push.
      const deadline = Date.parse(sc.leaseDoc().deadline);
      const starts = fs
        .readFileSync(path.join(sc.logDir, 'starts'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' '))
        .map(([unit, ms]) => ({ unit, ms: Number(ms) }));
      const late = starts.filter((s) => s.ms >= deadline).map((s) => `${s.unit} started ${s.ms - deadline} ms after the deadline`);
      t.diagnostic(
        `deadline ${sc.leaseDoc().deadline}; starts: ${starts.map((s) => `${s.unit}@${s.ms - deadline}ms`).join(', ')}; exit ${r.code} ${errorCodes(r)}`,
      );
      await t.test('no unit starts once the deadline has passed without a renewal', () => {
        assert.deepEqual(late, []);
      });
    } finally {
      await p.stop();
      await d.stop();
      await sc.cleanup();
    }
  });

  test('a holder frozen (SIGSTOP) past its 2s deadline is taken over; woken, it writes no state and its late receipt does not replace the newer one', async () => {
    const units = [
      { name: 'slow', recovery: 'converge', dependsOn: [], wave: 1 },
      { name: 'after', dependsOn: ['slow'], wave: 2 },
    ];
    const sc = new Scenario({ units, lease: '2s' });
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const slowDir = fs.mkdtempSync(path.join(sc.dir, 'slow-'));
      fs.writeFileSync(path.join(slowDir, 'gate'), '');
      const holder = sc.start(['reconcile', '-e', ENV, '-o', 'json'], { env: { CRASH_SLOW_UNIT: 'slow', CRASH_SLOW_DIR: slowDir } });
      await waitForFile(path.join(slowDir, 'running'));
      const [run] = sc.noteDeadRuns();
      holder.signal('SIGSTOP');
      try {
        const deadline = Date.parse(sc.leaseDoc().deadline);
        await sleep(Math.max(0, deadline - Date.now()) + 1100);
        // The taker imports the frozen run: slow is uncertain and converges, so it runs again.
        const take = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], 0);
        assert.deepEqual(take.json.details.recovered, ['slow'], describeResult(take));
        assert.equal(take.json.units.slow.result, 'executed');
        const takerRun = take.json.run;
        assert.equal(sc.observedDoc('slow').receipt.run, takerRun);
        // The frozen run's tool finishes; then the run wakes up.
        fs.rmSync(path.join(slowDir, 'gate'));
        await sleep(300);
        const before = sc.stateRefs();
        holder.signal('SIGCONT');
        const r = await holder.done;
        sc.record('holder woke');
        assert.equal(r.code, 4, describeResult(r));
        assert.deepEqual(errorCodes(r), ['NYL-LEASE-LOST']);
        assert.deepEqual(sc.stateRefs(), before, 'the woken holder wrote no state');
        assert.equal(sc.readRunCommit(sc.refs()[`${RUNS}${run}`]).units.get('slow').checkpoint?.result, 'receipt', 'its late checkpoint is left behind');

        const next = await sc.nyl(['reconcile', '-e', ENV, '-o', 'json']);
        assert.ok([0, 2, 4].includes(next.code), describeResult(next));
        assert.equal(sc.refs()[`${RUNS}${run}`], undefined, 'the late record is consumed');
        // The late checkpoint is reported, not imported over the newer receipt, and kept as
        // evidence (as its warning says) although slow is not uncertain.
        assert.equal(sc.observedDoc('slow').receipt.run, takerRun, `slow keeps the receipt of ${takerRun}: ${JSON.stringify(sc.observedDoc('slow').receipt)}`);
        assert.ok(allCodes(next).includes('NYL-RUN-LATE-CHECKPOINT'), describeResult(next));
        const evidence = sc.refs()[`${EVIDENCE}slow/late/${run}`];
        assert.ok(evidence, `the late checkpoint is kept as evidence: ${Object.keys(sc.refs()).join(', ')}`);
        assert.equal(sc.readRunCommit(evidence).units.get('slow').checkpoint?.result, 'receipt');
        const summary = await assertCrashInvariants(sc, { allCurrent: true });
        assert.deepEqual(summary.counts, { slow: 2, after: 1 });
      } finally {
        holder.signal('SIGCONT');
      }
    } finally {
      await sc.cleanup();
    }
  });
});

// A writer decides on the refs it read, then takes the lease with a compare-and-swap on the lease
// ref alone. A lease ref that was absent at the read may have been taken and let go again before
// that push lands (another writer's whole transaction; seconds when the push is retried over a
// flaky network), with the state moved meanwhile: the writer must decide on the state under its
// lease, not on what it read before. (Found by the hold campaign over smart HTTP with 503s.)
// A writer whose read is older than the lease it takes: 'another reconcile ran from start to end
// before its lease push landed: it runs nothing again', 'a hold commit landed before its lease
// push: the held unit and its dependents are not started' and 'the holder of an expired lease
// checkpoints between the taker's read and its lease push: the taker imports that checkpoint'
// are in process in test/protocol/crash-points.test.mjs (the tests of those titles). The last
// was here, with a taker whose clock ran ahead of a live holder; a taker now watches an expired
// lease first and sees a live holder renew, so the race needs a holder whose renewals cannot
// reach the repository, which the in-process store arranges.
