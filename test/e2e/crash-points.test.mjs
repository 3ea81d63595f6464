// Crash safety at every protocol step of `nyl reconcile`: kill the run at a
// fault point (or while a unit runs, or at a random moment), recover the environment the way an
// operator would, and check that nothing was lost, forgotten, forced or executed twice.
// Both recovery paths: (a) `nyl lease break` + `nyl reconcile` (takeover); (b) `nyl lease break`,
// `nyl recover -e`, `nyl recover --unit U --retry` per uncertain unit, `nyl reconcile`.
// The matrix runs over file://, over a git daemon remote, and over smart HTTP with a server that
// answers pushes and fetches with a 503 at random positions ('http-faults': a server of each
// test's own, its faults drawn from a seed per test, NYL_FAULT_SEED + the test's index; at most
// two in a row, so every fault is transient and retried).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanupAll, git, tempDir } from '../support/git-fixtures.mjs';
import { startGitDaemon } from '../support/git-daemon.mjs';
import { FULL_CAMPAIGNS, campaignSize } from '../support/campaign.mjs';
import {
  ENV,
  LEASE,
  RECONCILE_POINTS,
  RUNS,
  Scenario,
  UNITS,
  allCodes,
  assertCrashInvariants,
  crashReconcile,
  describeResult,
  errorCodes,
  recoverPath,
  takeoverPath,
} from '../support/crash-harness.mjs';

after(cleanupAll);

const ALL = Object.fromEntries(UNITS.map((u) => [u.name, 1]));
/** A run of the first wave only: killed before its transition, it leaves wave 1 checkpointed and nothing else started. */
const WAVE1 = ['base', 'config'];
const counts = (over) => ({ ...ALL, ...over });

/**
 * What each crash leaves, for a crash in wave 2 (base, config ran in wave 1; db, migrate in wave
 * 2; app, report in wave 3). `a`: executions after the takeover path and the units left
 * uncertain; `b`: executions after the recover path (every unit current in the end).
 * Checkpoints are pushed as each unit ends (group commit): at a checkpoint point of db, its
 * sibling migrate still runs (see RECONCILE_POINTS).
 */
const EXPECT = {
  'lease-acquired': { a: { counts: ALL, stuck: [] }, b: { counts: ALL } },
  // db and migrate started, drivers not run: db (converge) runs in the takeover, migrate (manual) waits.
  'after-started-push': { a: { counts: counts({ migrate: 0, app: 0 }), stuck: ['migrate'] }, b: { counts: ALL } },
  // db ran without checkpoint, migrate was still running: both uncertain; db converges (second execution).
  'before-checkpoint-push': { a: { counts: counts({ db: 2, app: 0 }), stuck: ['migrate'] }, b: { counts: counts({ db: 2, migrate: 2 }) } },
  // db's checkpoint landed while migrate still ran: db is imported, migrate uncertain. It landed
  // with report's started marker (report waits only for db: the ready queue starts it at once).
  'after-checkpoint-push': { a: { counts: counts({ app: 0, report: 0 }), stuck: ['migrate', 'report'] }, b: { counts: counts({ migrate: 2 }) } },
  'before-transition-push': { a: { counts: ALL, stuck: [] }, b: { counts: ALL } },
  'after-transition-push': { a: { counts: ALL, stuck: [] }, b: { counts: ALL } },
  // migrate killed while running; db of the same wave finished and its checkpoint landed first,
  // with the started marker of report, which was running too.
  'while-unit-runs': { a: { counts: counts({ app: 0 }), stuck: ['migrate', 'report'] }, b: { counts: counts({ migrate: 2, report: 2 }) } },
};

/** Units whose checkpoint a crash at this point leaves as a receipt in the dead run's ref. */
const CHECKPOINTED = {
  'lease-acquired': [],
  'after-started-push': ['base', 'config'],
  'before-checkpoint-push': ['base', 'config'],
  'after-checkpoint-push': ['base', 'config', 'db'],
  'before-transition-push': UNITS.map((u) => u.name),
  'after-transition-push': null, // the run ref is gone with the transition
  'while-unit-runs': ['base', 'config', 'db'],
};

/**
 * The second started write is not one fixed wave with the ready queue: base and config end at
 * their own moments, and each end lets its dependent start (db, migrate, or both at once when
 * they end together). So at `after-started-push` of that write, what to expect follows from what
 * the dead run recorded: the units with a started marker and no checkpoint (a unit of wave 1
 * whose checkpoint had not landed yet, or one the write started) are uncertain; the manual ones
 * among them stay so after the takeover. The invariants still hold whichever way it went.
 */
function startedWithoutCheckpoint(sc, run) {
  return [...sc.deadRuns.get(run).units]
    .filter(([, d]) => !d.checkpoint)
    .map(([n]) => n)
    .sort();
}

function receiptsIn(sc, run) {
  return [...sc.deadRuns.get(run).units]
    .filter(([, d]) => d.checkpoint?.result === 'receipt')
    .map(([n]) => n)
    .sort();
}

/**
 * Which recovery ways run at a crash point over a transport. The full matrix (NYL_CAMPAIGN=full):
 * both ways everywhere, except over git daemon, where the recover way adds no transport behaviour
 * that file:// (the same recover path) and smart HTTP (a remote, with faults) do not show. `npm
 * test` runs a sample spread over the transports: each transport crashed at least once, each kind
 * of push (started, checkpoint, transition) crashed before or after at least once, both ways over
 * file:// and smart HTTP, and a crash while a tool runs (which must stop with Nyl; see also
 * test/e2e/tools-die-with-nyl.test.mjs) over smart HTTP. The whole matrix runs in process in
 * test/protocol/crash-points.test.mjs, so these show what a real process and transport add.
 */
const QUICK_MATRIX = {
  file: { takeover: ['before-transition-push'], recover: ['before-checkpoint-push'] },
  daemon: { takeover: ['after-checkpoint-push'], recover: [] },
  'http-faults': { takeover: ['after-started-push'], recover: ['while-unit-runs'] },
};
function matrixWays(transport, point) {
  if (FULL_CAMPAIGNS) return transport === 'daemon' ? ['takeover'] : ['takeover', 'recover'];
  return ['takeover', 'recover'].filter((way) => QUICK_MATRIX[transport][way].includes(point));
}

const TRANSPORT_NAMES = { file: 'file://', daemon: 'git daemon', 'http-faults': 'smart HTTP with 503s at random positions' };
const FAULT_SEED = Number(process.env.NYL_FAULT_SEED ?? 9100);

for (const transport of ['file', 'daemon', 'http-faults']) {
  // Tests of a transport run concurrently: each has its own project and state repository.
  // Over http-faults, tests spend much of their time waiting for retries: more of them at once.
  describe(`crash points over ${TRANSPORT_NAMES[transport]}`, { concurrency: transport === 'http-faults' ? 5 : 3 }, () => {
    let daemon;
    let seeds = FAULT_SEED;
    /**
     * A test's scenario: over 'http-faults', with a server of its own and the next seed (taken when
     * the test is defined, so that its seed does not depend on the order tests finish in).
     */
    const scenarioFor = () => {
      const seed = seeds++;
      return async (t, opts = {}) => {
        const sc = await Scenario.open({ transport, daemon, seed, ...opts });
        if (transport === 'http-faults') t.diagnostic(`NYL_FAULT_SEED=${seed}`);
        return sc;
      };
    };
    /** Runs the test body; over 'http-faults' its failure names the seed and what was injected, and its end reports the faults. */
    const run = async (t, sc, body) => {
      try {
        await sc.noting(body);
        const note = await sc.faultNote();
        if (note) t.diagnostic(note);
      } finally {
        await sc.cleanup();
      }
    };
    before(async () => {
      if (transport !== 'daemon') return;
      const base = tempDir('nyl-crash-daemon-');
      const d = await startGitDaemon(base);
      daemon = { base, url: d.url, stop: d.stop };
    });
    after(async () => {
      await daemon?.stop();
    });

    for (const point of RECONCILE_POINTS) {
      for (const way of matrixWays(transport, point)) {
        const title =
          way === 'takeover' ? `killed at ${point}: lease break + reconcile takes over` : `killed at ${point}: lease break, recover, retry, reconcile`;
        const open = scenarioFor();
        test(title, async (t) => {
          const sc = await open(t);
          await run(t, sc, async () => {
            await sc.ok(['state', 'init', '-e', ENV]);
            const before = sc.stateRefs();
            const { deadRuns } = await crashReconcile(sc, point, { wave: 2 });

            // What the crash left: the lease and the run ref, except after the transition landed.
            const refs = sc.refs();
            if (point === 'after-transition-push') {
              assert.equal(refs[LEASE], undefined, 'the transition released the lease');
              assert.deepEqual(deadRuns, [], 'the transition consumed the run ref');
              assert.notEqual(sc.stateRefs().observed, before.observed);
            } else {
              assert.ok(refs[LEASE], 'the dead run still holds the lease');
              assert.equal(deadRuns.length, 1, `one run ref: ${Object.keys(refs)}`);
              assert.deepEqual(sc.stateRefs(), before, 'a dead run changed no state ref');
              if (point !== 'after-started-push')
                assert.deepEqual(receiptsIn(sc, deadRuns[0]), [...CHECKPOINTED[point]].sort(), 'receipt checkpoints in the run ref');
            }

            let expected = EXPECT[point][way === 'takeover' ? 'a' : 'b'];
            let checkpointed = CHECKPOINTED[point];
            if (point === 'after-started-push') {
              const uncertain = startedWithoutCheckpoint(sc, deadRuns[0]);
              checkpointed = receiptsIn(sc, deadRuns[0]);
              assert.ok(
                uncertain.some((n) => n === 'db' || n === 'migrate'),
                `the second write started db or migrate: ${uncertain}`,
              );
              assert.ok(checkpointed.includes('base') || checkpointed.includes('config'), `its end let it go: ${checkpointed}`);
              const manual = new Set(UNITS.filter((u) => u.recovery !== 'converge').map((u) => u.name));
              expected = { ...expected, stuck: uncertain.filter((n) => manual.has(n)) };
            }
            if (way === 'takeover') {
              const { broke, reconcile } = await takeoverPath(sc);
              if (point === 'after-transition-push') {
                assert.equal(broke.json.result, 'unchanged', 'nothing holds the lease after the transition');
                assert.equal(reconcile.code, 0, describeResult(reconcile));
              } else {
                assert.equal(broke.json.result, 'done');
                assert.equal(reconcile.json.details.leaseBroken?.run, deadRuns[0], `the takeover records the break: ${describeResult(reconcile)}`);
                // A unit left uncertain is an uncertain execution: exit 4 with NYL-UNIT-UNCERTAIN.
                assert.equal(reconcile.code, expected.stuck.length > 0 ? 4 : 0, describeResult(reconcile));
                for (const name of expected.stuck) {
                  assert.equal(reconcile.json.units[name].result, 'recovered', `${name}: ${JSON.stringify(reconcile.json.units[name])}`);
                  assert.ok(
                    reconcile.json.warnings.some((w) => w.code === 'NYL-UNIT-UNCERTAIN' && w.units?.includes(name)),
                    `NYL-UNIT-UNCERTAIN for ${name}: ${allCodes(reconcile)}`,
                  );
                }
                for (const name of checkpointed)
                  assert.equal(reconcile.json.units[name].result, 'imported', `${name} is imported: ${JSON.stringify(reconcile.json.units[name])}`);
              }
            } else {
              const { uncertain } = await recoverPath(sc);
              t.diagnostic(`${point}: retried ${uncertain.join(', ') || 'nothing'}`);
            }

            const summary = await assertCrashInvariants(sc, { allCurrent: way === 'recover' });
            // after-started-push: which units ran depends on the order the wave-1 units ended (above).
            // while-unit-runs: report starts as soon as db ends (ready queue) and the kill comes once
            // migrate runs, so report's tool may or may not have run before the kill: once or twice.
            // The takeover path leaves it uncertain (0 or 1 runs); the recover path retries it (1 or 2).
            const raced = point === 'while-unit-runs' ? { report: way === 'takeover' ? [0, 1] : [1, 2] } : {};
            for (const [name, allowed] of Object.entries(raced)) assert.ok(allowed.includes(summary.counts[name]), `${name} ran ${summary.counts[name]} times`);
            const exact = (c) => Object.fromEntries(Object.entries(c).filter(([name]) => !(name in raced)));
            if (point !== 'after-started-push') assert.deepEqual(exact(summary.counts), exact(expected.counts), 'executions per unit');
            if (way === 'takeover') assert.deepEqual(summary.stuck.sort(), expected.stuck, 'units left uncertain');
          });
        });
      }
    }

    // The protocol decisions of the next three run in process (test/protocol/crash-points.test.mjs,
    // 'crashes of the operations that recover, in process', tests of the same titles): over a real
    // process only in the full campaign.
    if (transport === 'file' && FULL_CAMPAIGNS) {
      test('a takeover that leaves a unit without dependents uncertain: the unit is reported, the exit says so', async () => {
        const sc = new Scenario({ transport, daemon });
        try {
          await sc.ok(['state', 'init', '-e', ENV]);
          const { deadRuns } = await crashReconcile(sc, 'while-unit-runs', { slowUnit: 'report' });
          const { reconcile } = await takeoverPath(sc);
          assert.equal(reconcile.json.units.report.result, 'recovered', describeResult(reconcile));
          assert.equal(reconcile.json.units.app.result, 'imported', 'app ran with report in wave 3; its checkpoint landed before the crash');
          assert.equal(sc.observedDoc('report').condition?.run, deadRuns[0]);
          // Exit 4 and NYL-UNIT-UNCERTAIN although nothing else is left to do.
          assert.equal(reconcile.code, 4, describeResult(reconcile));
          assert.ok(allCodes(reconcile).includes('NYL-UNIT-UNCERTAIN'), `warnings: ${allCodes(reconcile)}`);
          const summary = await assertCrashInvariants(sc);
          assert.deepEqual(summary.stuck, ['report']);
          assert.deepEqual(summary.counts, ALL);
        } finally {
          await sc.cleanup();
        }
      });
    }

    if (transport === 'file' && FULL_CAMPAIGNS) {
      test('the takeover dies too: the next takeover imports both runs, and both breaks are on record', async () => {
        const sc = new Scenario({ transport, daemon });
        try {
          await sc.ok(['state', 'init', '-e', ENV]);
          const {
            deadRuns: [k],
          } = await crashReconcile(sc, 'before-transition-push', { units: WAVE1 });
          await sc.leaseBreak('first runner killed');
          // The takeover imports K in memory, runs db and migrate, and dies after checkpointing them.
          const {
            deadRuns: [l],
          } = await crashReconcile(sc, 'before-transition-push', { units: ['db', 'migrate'] });
          assert.ok(l && l !== k);
          assert.ok(sc.refs()[`${RUNS}${k}`], "K's run ref waits for an import that lands");
          await sc.leaseBreak('second runner killed');
          const m = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], 0);
          assert.deepEqual([...m.json.details.imported].sort(), ['base', 'config', 'db', 'migrate'], describeResult(m));
          assert.equal(m.json.details.leaseBroken?.run, l);
          assert.equal(sc.observedDoc('base').receipt.run, k);
          assert.equal(sc.observedDoc('db').receipt.run, l);
          // The first break (K's) is on record too, although the takeover that took it over died.
          assert.deepEqual(
            (m.json.details.leaseBrokenEarlier ?? []).map((b) => [b.run, b.reason]),
            [[k, 'first runner killed']],
            describeResult(m),
          );
          const summary = await assertCrashInvariants(sc, { allCurrent: true });
          assert.deepEqual(summary.counts, ALL, 'nothing ran twice');
        } finally {
          await sc.cleanup();
        }
      });

      test('a dead run checkpointed a receipt for a key the unit no longer resolves to: uncertain, NYL-RUN-SUPERSEDED', async () => {
        const sc = new Scenario({ transport, daemon });
        try {
          await sc.ok(['state', 'init', '-e', ENV]);
          const {
            deadRuns: [dead],
          } = await crashReconcile(sc, 'before-transition-push', { units: WAVE1 });
          // base (converge) and config (manual) change what they run.
          const file = path.join(sc.project, 'nyl.yaml');
          let text = fs.readFileSync(file, 'utf8');
          for (const name of ['base', 'config'])
            text = text.replace(`metadata: {name: ${name}}\nspec:\n`, `metadata: {name: ${name}}\nspec:\n  env: {VERSION: "2"}\n`);
          fs.writeFileSync(file, text);
          git(sc.project, 'commit', '-qam', 'base and config: version 2');
          await sc.leaseBreak();
          const r = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], [2, 4]);
          const superseded = r.json.warnings
            .filter((w) => w.code === 'NYL-RUN-SUPERSEDED')
            .flatMap((w) => w.units ?? [])
            .sort();
          assert.deepEqual(superseded, ['base', 'config'], describeResult(r));
          assert.equal(r.json.units.base.result, 'executed', 'base converges: it runs again for its new key');
          assert.equal(r.json.units.config.result, 'recovered');
          const config = sc.observedDoc('config');
          assert.equal(config.condition?.type, 'uncertain');
          assert.equal(config.condition?.run, dead);
          assert.equal(config.condition?.code, 'NYL-RUN-SUPERSEDED');
          const summary = await assertCrashInvariants(sc, { superseded: ['base', 'config'] });
          assert.deepEqual(summary.stuck, ['config']);
          assert.deepEqual(summary.counts, counts({ base: 2, migrate: 0, app: 0 }));
        } finally {
          await sc.cleanup();
        }
      });
    }

    const openExpiring = scenarioFor();
    // Expiry is a matter of clocks, not transports, and its protocol runs in process
    // (test/protocol/run-protocol.test.mjs, 'a taker waits for the deadline plus the skew margin on
    // its own clock before it takes over'); a real 2s lease expiring between real processes is
    // taken over in test/e2e/crash-races.test.mjs ('a holder frozen (SIGSTOP) past its 2s deadline
    // is taken over'). Here: in the full campaign.
    if (FULL_CAMPAIGNS)
      test('a lease that EXPIRES (2s) is taken over by the next reconcile, which imports the dead run', async (t) => {
        const sc = await openExpiring(t, { lease: '2s' });
        await run(t, sc, async () => {
          await sc.ok(['state', 'init', '-e', ENV]);
          const { deadRuns } = await crashReconcile(sc, 'before-transition-push', { units: WAVE1 });
          const lease = sc.leaseDoc();
          assert.ok(lease && !lease.broken, 'the dead run left a live lease');
          // While the deadline lies ahead, the lease holds. (On a loaded machine the deadline may
          // pass while that reconcile starts: then it is the takeover.)
          let r;
          if (Date.parse(lease.deadline) - Date.now() > 1000) {
            const early = await sc.nyl(['reconcile', '-e', ENV, '-o', 'json']);
            if (early.code === 0 && Date.now() >= Date.parse(lease.deadline)) r = early;
            else {
              assert.equal(early.code, 2, describeResult(early));
              assert.deepEqual(errorCodes(early), ['NYL-LEASE-HELD']);
              assert.equal(sc.leaseDoc()?.run, deadRuns[0], 'the refused run left the lease alone');
            }
          }
          if (!r) {
            const wait = Date.parse(sc.leaseDoc()?.deadline ?? 0) - Date.now() + 1100;
            if (wait > 0) await sleep(wait);
            r = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], 0);
          }
          assert.equal(r.json.details.leaseBroken, undefined, 'an expired lease is no break');
          assert.deepEqual([...r.json.details.imported].sort(), ['base', 'config'], describeResult(r));
          assert.equal(r.json.units.base.result, 'imported');
          assert.ok(!Object.keys(sc.refs()).some((ref) => ref.startsWith(RUNS)), 'the dead run ref is consumed');
          const summary = await assertCrashInvariants(sc, { allCurrent: true });
          assert.deepEqual(summary.counts, ALL);
          assert.equal(sc.observedDoc('base').receipt.run, deadRuns[0]);
        });
      });
  });
}

describe('random kills', () => {
  test('SIGKILL at a random moment of a reconcile, then recovery: the invariants hold', async (t) => {
    const trials = campaignSize('NYL_CRASH_TRIALS', { quick: 2, full: 10 });
    const outcomes = new Map();
    const tally = (k) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
    for (let trial = 0; trial < trials; trial++) {
      const sc = new Scenario();
      const delay = Math.floor(Math.random() * 1500);
      const way = trial % 2 === 0 ? 'takeover' : 'recover';
      try {
        await sc.ok(['state', 'init', '-e', ENV]);
        const before = sc.stateRefs();
        const h = sc.start(['reconcile', '-e', ENV, '-o', 'json'], { env: { CRASH_UNIT_SLEEP: '0.3' } });
        await Promise.race([sleep(delay), h.done]);
        const finished = h.exited;
        const result = await h.crash();
        // Tools of the killed run are detached: let them end (they sleep 0.3 s).
        await sleep(500);
        sc.record(`reconcile killed after ${delay} ms`);
        const deadRuns = sc.noteDeadRuns();
        const refs = sc.refs();
        let outcome;
        if (finished || (result.signal !== 'SIGKILL' && result.code !== null)) outcome = `finished (exit ${result.code})`;
        else if (!refs[LEASE] && deadRuns.length === 0)
          outcome = sc.stateRefs().observed === before.observed ? 'killed before the lease' : 'killed after the transition';
        else {
          const rec = deadRuns.length ? sc.deadRuns.get(deadRuns[0]) : undefined;
          const docs = rec ? [...rec.units.values()] : [];
          const done = docs.filter((d) => d.checkpoint).length;
          outcome = docs.length === 0 ? 'killed holding the lease, no unit started' : `killed mid-run (${docs.length} started, ${done} checkpointed)`;
        }
        tally(outcome);
        if (way === 'takeover') await takeoverPath(sc);
        else await recoverPath(sc);
        const summary = await assertCrashInvariants(sc, { allCurrent: way === 'recover' });
        t.diagnostic(
          `trial ${trial}: kill after ${delay} ms: ${outcome}; ${way}; executions ${JSON.stringify(summary.counts)}${summary.stuck.length ? `; uncertain ${summary.stuck}` : ''}`,
        );
      } finally {
        await sc.cleanup();
      }
    }
    t.diagnostic(`outcomes of ${trials} trials: ${JSON.stringify(Object.fromEntries(outcomes))}`);
  });
});
