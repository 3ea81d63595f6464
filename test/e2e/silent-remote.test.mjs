// The "stops answering" campaign: a reconcile over smart HTTP whose server goes silent mid-run
// (test/support/git-http.mjs withFaults silentFile: while the file exists, requests are accepted
// and never answered), with a short network timeout (NYL_GIT_TIMEOUT=1s) and a short lease (3s).
// Whatever the moment, the run ends (no hang) with the documented outcome:
// - units ran: exit 4 NYL-RUN-UNRECORDED naming exactly the units it started;
// - nothing ran: exit 1 NYL-STATE-UNAVAILABLE;
// - it finished before the silence: exit 0.
// Once the server answers again, the next reconcile (--wait-lease: after the lease's deadline)
// imports the run, and the crash invariants hold (nothing lost, nothing run twice, nothing
// force-moved; test/support/crash-harness.mjs assertCrashInvariants).
//
// Moments: right after the lease is taken; after the first wave's started markers landed; while a
// unit of the second wave runs (its sibling's checkpoint landed); and at random moments drawn from
// NYL_FAULT_SEED (default 9700). And one where the silence outlasts the lease and ends while the
// run still retries and another reconcile waits to take over.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanupAll, tempDir } from '../support/git-fixtures.mjs';
import { waitForFile } from '../support/cli.mjs';
import { ENV, RUNS, Scenario, assertCrashInvariants, describeResult, errorCodes, killPid } from '../support/crash-harness.mjs';
import { seededRandom } from '../support/seeded.mjs';
import { campaignSize } from '../support/campaign.mjs';

after(cleanupAll);

const TIMEOUT = '1s';
const LEASE = '3s';
/** The longest a run may take to give up once the remote is silent: retries of one write stop 15 s after its first try, then one try each to end the run ref and let the lease go, each ended by the 1 s timeout. */
const GIVE_UP_MS = 40_000;
const FAULT_SEED = Number(process.env.NYL_FAULT_SEED ?? 9700);
// The fixed moments above run in `npm test`; random ones only in `npm run test:campaigns`.
const RANDOM_TRIALS = campaignSize('NYL_SILENT_TRIALS', { quick: 0, full: 4 });

const ARGS = ['reconcile', '-e', ENV, '-o', 'json'];

/** Removes the pause marker whenever the paused process reaches its point again, until it exits. */
async function releaseUntilExit(h, marker) {
  while (!h.exited) {
    if (fs.existsSync(marker)) fs.rmSync(marker, { force: true });
    await sleep(20);
  }
  return h.done;
}

/** The receipt checkpoints in the run refs of the state repository now. */
function receiptsInRunRefs(sc) {
  const refs = sc.refs();
  return sc
    .runRefs(refs)
    .flatMap((run) => [...sc.readRunCommit(refs[`${RUNS}${run}`]).units].filter(([, d]) => d.checkpoint?.result === 'receipt').map(([n]) => n));
}

/**
 * Ways to make the server go silent (touch `silent`) at a moment of a run. Each starts the
 * reconcile and returns {silencedAt, result}.
 */
const MOMENTS = {
  /** Right after the lease was taken: no unit has started. */
  'lease-acquired': (sc, silent) => pausedThenSilent(sc, silent, 'lease-acquired'),
  /** The first wave's started markers landed: its units start, their checkpoints cannot land. */
  'after-started-push': (sc, silent) => pausedThenSilent(sc, silent, 'after-started-push'),
  /** migrate (wave 2) runs and db's checkpoint landed; then silence, and migrate ends. */
  'while-unit-runs': async (sc, silent) => {
    const gate = fs.mkdtempSync(path.join(sc.dir, 'slow-'));
    (sc.slowDirs ??= []).push(gate);
    fs.writeFileSync(path.join(gate, 'gate'), '');
    const h = sc.start(ARGS, { env: { CRASH_SLOW_UNIT: 'migrate', CRASH_SLOW_DIR: gate } });
    await Promise.race([
      waitForFile(path.join(gate, 'running'), 30000),
      h.done.then((r) => {
        throw new Error(`reconcile ended before migrate ran: ${describeResult(r)}`);
      }),
    ]);
    for (const until = Date.now() + 15000; !receiptsInRunRefs(sc).includes('db') && Date.now() < until; ) await sleep(20);
    assert.ok(receiptsInRunRefs(sc).includes('db'), "db's checkpoint landed before the silence");
    fs.writeFileSync(silent, '');
    const silencedAt = Date.now();
    fs.rmSync(path.join(gate, 'gate'));
    return { silencedAt, result: await h.done };
  },
};

async function pausedThenSilent(sc, silent, point) {
  const marker = path.join(sc.dir, `pause-${point}`);
  const h = sc.start(ARGS, { env: { NYL_FAULT_AT: point, NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: marker } });
  await Promise.race([
    waitForFile(marker, 30000),
    h.done.then((r) => {
      throw new Error(`reconcile ended before ${point}: ${describeResult(r)}`);
    }),
  ]);
  fs.writeFileSync(silent, '');
  const silencedAt = Date.now();
  return { silencedAt, result: await releaseUntilExit(h, marker) };
}

/** A moment `delayMs` after the reconcile started (units take 0.3 s each, so that the run lasts). */
function randomMoment(delayMs) {
  return async (sc, silent) => {
    const h = sc.start(ARGS, { env: { CRASH_UNIT_SLEEP: '0.3' } });
    await Promise.race([sleep(delayMs), h.done]);
    fs.writeFileSync(silent, '');
    return { silencedAt: Date.now(), result: await h.done };
  };
}

/** Units that executed (their log has a line), sorted. */
function executed(sc) {
  return Object.entries(sc.executionCounts())
    .filter(([, n]) => n > 0)
    .map(([name]) => name)
    .sort();
}

/**
 * One trial: the run over a remote that goes silent at `moment`, its outcome checked; then the
 * server answers again, the next reconcile imports the run, and the invariants hold.
 * Returns a one-line summary.
 */
async function trial(t, label, moment) {
  const silent = path.join(tempDir('nyl-silent-'), 'silent');
  const sc = await Scenario.open({ transport: 'http', faults: { silentFile: silent }, lease: LEASE, env: { NYL_GIT_TIMEOUT: TIMEOUT } });
  try {
    return await sc.noting(async () => {
      await sc.ok(['state', 'init', '-e', ENV]);
      const { silencedAt, result: r } = await moment(sc, silent);
      const took = Date.now() - silencedAt;
      sc.record(`the run over a silent remote ended (${label})`);
      const ran = executed(sc);
      assert.ok(took < GIVE_UP_MS, `the run gave up ${took} ms after the silence began`);
      let outcome;
      let beforeRun = false;
      if (r.code === 0) {
        // Finished before the silence reached it.
        assert.deepEqual(ran, sc.unitNames.slice().sort(), describeResult(r));
        outcome = 'finished before the silence';
      } else if (ran.length === 0) {
        assert.equal(r.code, 1, describeResult(r));
        assert.deepEqual(errorCodes(r), ['NYL-STATE-UNAVAILABLE'], describeResult(r));
        // On a loaded machine the silence can come before the run had its lease: the first fetch
        // or the lease push gives up, and no run began (its lease may still have landed).
        beforeRun = !/no unit was started/.test(r.json.errors[0].message);
        if (beforeRun) assert.match(r.json.errors[0].message, /(git fetch|git push) did not finish within/, describeResult(r));
        outcome = beforeRun ? 'silent before the run began: exit 1 NYL-STATE-UNAVAILABLE' : 'nothing started: exit 1 NYL-STATE-UNAVAILABLE';
      } else {
        assert.equal(r.code, 4, describeResult(r));
        assert.deepEqual(errorCodes(r), ['NYL-RUN-UNRECORDED'], describeResult(r));
        assert.deepEqual([...r.json.errors[0].units].sort(), ran, `NYL-RUN-UNRECORDED names the units it started: ${describeResult(r)}`);
        assert.match(r.json.errors[0].fix, /nyl reconcile -e dev/);
        outcome = `exit 4 NYL-RUN-UNRECORDED (${ran.join(', ')}; without checkpoint: ${(r.json.errors[0].data?.withoutCheckpoint ?? []).join(', ') || 'none'})`;
      }
      const deadRuns = sc.noteDeadRuns();
      if (r.code !== 0 && !beforeRun) assert.equal(deadRuns.length, 1, 'the run ref waits for the next import');
      if (beforeRun) assert.ok(deadRuns.length <= 1, 'at most the lease push landed without its reply');

      // The server answers again: the next reconcile waits for the lease's deadline and imports the run.
      fs.rmSync(silent);
      const next = await sc.ok(['reconcile', '-e', ENV, '--wait-lease', '30s', '-o', 'json'], [0, 4]);
      assert.ok(next.json.run, describeResult(next));
      const summary = await assertCrashInvariants(sc);
      for (const name of sc.unitNames) assert.ok(summary.counts[name] <= 2, `${name}: ${JSON.stringify(summary.counts)}`);
      const faults = await sc.faultCounts();
      const line = `${outcome}; gave up after ${took} ms; ${faults.silenced} of ${faults.requests} requests unanswered; next reconcile exit ${next.code}, executions ${JSON.stringify(summary.counts)}${summary.stuck.length ? `, uncertain ${summary.stuck.join(', ')}` : ''}`;
      t.diagnostic(line);
      return line;
    });
  } finally {
    fs.rmSync(silent, { force: true });
    for (const dir of sc.slowDirs ?? []) killPid(Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8').trim() || 0) || undefined);
    await sc.cleanup();
  }
}

/**
 * The remote is silent for longer than the lease while a unit runs, then answers again while the
 * run still retries its checkpoint, and another reconcile waits to take over: whichever lands
 * first, exactly one of them goes on, and the invariants hold.
 */
async function comesBack(t) {
  const silent = path.join(tempDir('nyl-silent-'), 'silent');
  const sc = await Scenario.open({ transport: 'http', faults: { silentFile: silent }, lease: LEASE, env: { NYL_GIT_TIMEOUT: TIMEOUT } });
  try {
    return await sc.noting(async () => {
      await sc.ok(['state', 'init', '-e', ENV]);
      const gate = fs.mkdtempSync(path.join(sc.dir, 'slow-'));
      (sc.slowDirs ??= []).push(gate);
      fs.writeFileSync(path.join(gate, 'gate'), '');
      const a = sc.start(ARGS, { env: { CRASH_SLOW_UNIT: 'migrate', CRASH_SLOW_DIR: gate } });
      await Promise.race([
        waitForFile(path.join(gate, 'running'), 30000),
        a.done.then((r) => {
          throw new Error(`reconcile ended before migrate ran: ${describeResult(r)}`);
        }),
      ]);
      for (const until = Date.now() + 15000; !receiptsInRunRefs(sc).includes('db') && Date.now() < until; ) await sleep(20);
      sc.noteDeadRuns();
      fs.writeFileSync(silent, '');
      fs.rmSync(path.join(gate, 'gate'));
      // Past the lease's deadline (3 s after the last renewal, plus a 0.3 s skew margin).
      await sleep(4500);
      fs.rmSync(silent);
      const b = sc.start(['reconcile', '-e', ENV, '--wait-lease', '30s', '-o', 'json']);
      const [ra, rb] = await Promise.all([a.done, b.done]);
      sc.record('the run and the taker ended');
      const codesA = errorCodes(ra);
      assert.ok(
        ra.code === 0 || (ra.code === 4 && ['NYL-LEASE-LOST', 'NYL-RUN-UNRECORDED'].includes(codesA[0])),
        `the run that lost its remote: ${describeResult(ra)}`,
      );
      // The taker goes on (exit 0, or 4 with units left uncertain), or, when the run marked its
      // run ref ended (unfenced: its lease is gone) while the taker imported it, refuses its
      // transition as documented (NYL-STATE-CONFLICT naming a run or evidence ref; its own
      // checkpoints wait in its run ref).
      const refused = rb.code === 1 && errorCodes(rb)[0] === 'NYL-STATE-CONFLICT' && /a run or evidence ref of dev changed/.test(rb.json.errors[0].message);
      assert.ok([0, 4].includes(rb.code) || refused, `the taker: ${describeResult(rb)}`);
      // A's records as the silence found them stay in deadRuns; the taker's run is dead if it refused.
      sc.noteDeadRuns();
      // Whatever is left (run refs, uncertain units) the next reconcile settles.
      const last = await sc.ok(['reconcile', '-e', ENV, '--wait-lease', '30s', '-o', 'json'], [0, 4]);
      const summary = await assertCrashInvariants(sc);
      const faults = await sc.faultCounts();
      const line = `run exit ${ra.code} ${codesA.join(',') || ''}; taker exit ${rb.code} ${errorCodes(rb).join(',')}; last exit ${last.code}; ${faults.silenced} of ${faults.requests} requests unanswered; executions ${JSON.stringify(summary.counts)}${summary.stuck.length ? `, uncertain ${summary.stuck.join(', ')}` : ''}`;
      t.diagnostic(line);
      return line;
    });
  } finally {
    fs.rmSync(silent, { force: true });
    await sc.cleanup();
  }
}

describe('a remote that stops answering mid-run (NYL_GIT_TIMEOUT=1s, lease 3s)', { concurrency: true }, () => {
  for (const [name, moment] of Object.entries(MOMENTS)) {
    test(`silent from ${name}: the run ends with the documented outcome; once the remote answers, the next reconcile imports it`, async (t) => {
      await trial(t, name, moment);
    });
  }
  test('silent past the lease while a unit runs, then back while the run retries and another reconcile waits to take over: one goes on, the invariants hold', async (t) => {
    await comesBack(t);
  });
  const rnd = seededRandom(FAULT_SEED);
  for (let i = 0; i < RANDOM_TRIALS; i++) {
    const delay = Math.round(rnd() * 2000);
    test(`silent ${delay} ms after the start (NYL_FAULT_SEED=${FAULT_SEED}, trial ${i + 1}): the same`, async (t) => {
      await trial(t, `${delay} ms`, randomMoment(delay));
    });
  }
});
