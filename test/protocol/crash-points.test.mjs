// The end-to-end crash suite's scenarios (test/e2e/crash-points.test.mjs), in process: the same
// six units, killed at every protocol step of a reconcile, then recovered the two ways an
// operator would, checked against the same invariants and the same expected executions. A crash
// here is deterministic: the process stops at its next I/O.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SIX_UNITS, World } from './world.mjs';
import { assertInvariants, Journal } from './invariants.mjs';

const ALL = { base: 1, config: 1, db: 1, migrate: 1, app: 1, report: 1 };
const counts = (over) => ({ ...ALL, ...over });

/**
 * A crash in wave 2 (base, config ran in wave 1; db, migrate in wave 2; report as soon as db ended,
 * app once migrate did too):
 * `a`, the takeover path (executions, units left uncertain); `b`, the recover path (executions;
 * every unit current in the end). As in the end-to-end suite.
 */
const EXPECT = {
  'lease-acquired': { a: { counts: ALL, stuck: [] }, b: { counts: ALL }, checkpointed: [] },
  'after-started-push': { a: { counts: counts({ migrate: 0, app: 0 }), stuck: ['migrate'] }, b: { counts: ALL }, checkpointed: ['base', 'config'] },
  'before-checkpoint-push': {
    a: { counts: counts({ db: 2, app: 0 }), stuck: ['migrate'] },
    b: { counts: counts({ db: 2, migrate: 2 }) },
    checkpointed: ['base', 'config'],
  },
  // db's checkpoint rides on the write of report's started marker (report waits only for db: the
  // ready queue starts it while migrate still runs), so report is left started without a checkpoint.
  'after-checkpoint-push': {
    a: { counts: counts({ app: 0, report: 0 }), stuck: ['migrate', 'report'] },
    b: { counts: counts({ migrate: 2 }) },
    checkpointed: ['base', 'config', 'db'],
  },
  'before-transition-push': { a: { counts: ALL, stuck: [] }, b: { counts: ALL }, checkpointed: ['app', 'base', 'config', 'db', 'migrate', 'report'] },
  'after-transition-push': { a: { counts: ALL, stuck: [] }, b: { counts: ALL }, checkpointed: null },
  'while-unit-runs': {
    a: { counts: counts({ app: 0 }), stuck: ['migrate', 'report'] },
    b: { counts: counts({ migrate: 2, report: 2 }) },
    checkpointed: ['base', 'config', 'db'],
  },
};

/** Kills a reconcile at `point` of wave 2 (for per-unit points: db's push, while migrate still runs). */
async function crash(world, journal, point) {
  const proc = world.process('victim');
  let release;
  if (['before-checkpoint-push', 'after-checkpoint-push', 'while-unit-runs'].includes(point)) release = world.driver.hold('migrate');
  if (point === 'after-started-push') proc.crashAt(point, { nth: 2 });
  else if (point === 'before-checkpoint-push' || point === 'after-checkpoint-push') proc.crashAt(point, { unit: 'db' });
  else if (point !== 'while-unit-runs') proc.crashAt(point);
  const run = proc.start('reconcile');
  if (point === 'while-unit-runs') {
    await world.until(() => world.runRefs().some((r) => world.receiptsIn(r).includes('db')), "db's checkpoint in the run ref");
    proc.kill();
  }
  const outcome = await run.outcome;
  assert.ok(outcome.died, `the reconcile died at ${point}: ${JSON.stringify(outcome.report?.units ?? outcome.codes)}`);
  release?.();
  return journal.noteDeadRuns();
}

/** What `nyl lease break` answers after a crash at `point`: nothing to break once the transition landed. */
const breakResult = (point) => (point === 'after-transition-push' ? 'unchanged' : 'done');

async function takeoverPath(world, journal, point) {
  const broke = await journal.leaseBreak(world.process('operator'));
  assert.equal(broke.report.result, breakResult(point), 'lease break');
  const reconcile = await world.process('takeover').run('reconcile');
  journal.note();
  return { broke, reconcile };
}

async function recoverPath(world, journal, point) {
  const op = world.process('operator');
  const broke = await journal.leaseBreak(op);
  assert.equal(broke.report.result, breakResult(point), 'lease break');
  const recover = await op.run('recover');
  if (broke.report.result === 'done') assert.equal(recover.code, 0, JSON.stringify(recover.codes));
  else assert.deepEqual(recover.codes, ['NYL-RECOVER-NOTHING']);
  const status = (await op.run('status')).report;
  const uncertain = Object.values(status.units)
    .filter((u) => u.condition?.type === 'uncertain')
    .map((u) => u.name);
  for (const unit of uncertain) assert.equal((await op.run('recover', { unit, retry: true, reason: 'checked: safe to run again' })).code, 0);
  const reconcile = await world.process('last').run('reconcile');
  assert.equal(reconcile.code, 0, JSON.stringify(reconcile.report?.units));
  journal.note();
  return { uncertain };
}

describe('crash points, in process', { concurrency: 4 }, () => {
  for (const point of Object.keys(EXPECT)) {
    for (const way of ['takeover', 'recover']) {
      test(`killed at ${point}: ${way === 'takeover' ? 'lease break + reconcile takes over' : 'lease break, recover, retry, reconcile'}`, async () => {
        const world = await World.create();
        try {
          const journal = new Journal(world);
          await world.process('init').run('state init');
          journal.note();
          const before = world.stateRefs();
          const dead = await crash(world, journal, point);
          const expected = EXPECT[point];
          if (point === 'after-transition-push') {
            assert.deepEqual(dead, [], 'the transition consumed the run ref');
            assert.equal(world.refs()[world.leaseRef], undefined, 'and released the lease');
          } else {
            assert.equal(dead.length, 1);
            assert.deepEqual(world.stateRefs(), before, 'a dead run changed no state ref');
            assert.deepEqual(world.receiptsIn(dead[0]), expected.checkpointed, 'receipt checkpoints in the run ref');
          }
          if (way === 'takeover') {
            const { reconcile } = await takeoverPath(world, journal, point);
            if (dead.length > 0) {
              assert.equal(reconcile.report.details.leaseBroken?.run, dead[0], 'the takeover records the break');
              assert.equal(reconcile.code, expected.a.stuck.length > 0 ? 4 : 0);
              for (const name of expected.a.stuck) assert.equal(reconcile.report.units[name].result, 'recovered');
              for (const name of expected.checkpointed) assert.equal(reconcile.report.units[name].result, 'imported', name);
            } else {
              // The dead run finished its work: there is nothing to take over, every unit is current.
              assert.equal(reconcile.code, 0, JSON.stringify(reconcile.codes ?? reconcile.report.units));
              assert.equal(reconcile.report.details.leaseBroken, undefined, 'no break to record');
              for (const { name } of world.units) assert.equal(reconcile.report.units[name].result, 'current', name);
            }
          } else {
            await recoverPath(world, journal, point);
          }
          const summary = await assertInvariants(world, journal, { allCurrent: way === 'recover' });
          const want = way === 'takeover' ? expected.a : expected.b;
          assert.deepEqual(summary.counts, want.counts, 'executions per unit');
          if (way === 'takeover') assert.deepEqual(summary.stuck, want.stuck, 'units left uncertain');
        } finally {
          world.cleanup();
        }
      });
    }
  }
});

describe('crashes of the operations that recover, in process', () => {
  async function initialized() {
    const world = await World.create();
    const journal = new Journal(world);
    await world.process('init').run('state init');
    journal.note();
    return { world, journal };
  }

  test('killed before its lease push: nothing was written, and the next reconcile needs no break', async () => {
    const { world, journal } = await initialized();
    try {
      const refs = world.refs();
      const victim = world.process('victim').crashAt('before-lease-push');
      assert.ok((await victim.start('reconcile').outcome).died);
      assert.deepEqual(world.refs(), refs, 'no ref moved');
      const next = await world.process('next').run('reconcile');
      assert.equal(next.code, 0, JSON.stringify(next.codes));
      assert.equal(next.report.details.leaseBroken, undefined);
      await assertInvariants(world, journal, { allCurrent: true });
    } finally {
      world.cleanup();
    }
  });

  test('the takeover dies too: the next takeover imports both runs, and both breaks are on record', async () => {
    const { world, journal } = await initialized();
    try {
      const [first] = await crash(world, journal, 'after-started-push');
      await journal.leaseBreak(world.process('operator'));
      const taker = world.process('taker').crashAt('after-started-push');
      assert.ok((await taker.start('reconcile').outcome).died, 'the takeover died once its units started');
      const [second] = journal.noteDeadRuns();
      assert.ok(second && second !== first);
      await journal.leaseBreak(world.process('operator2'));
      const last = await world.process('last').run('reconcile');
      journal.note();
      assert.deepEqual(journal.breaks.sort(), [first, second].sort(), 'both breaks are on record');
      // The last takeover reports the break it made and, as an earlier break, the first one.
      assert.equal(last.report.details.leaseBroken?.run, second);
      assert.deepEqual(
        (last.report.details.leaseBrokenEarlier ?? []).map((b) => [b.run, b.reason]),
        [[first, 'the runner was killed']],
      );
      // Both dead runs started migrate (manual) without a checkpoint: it stays uncertain, and app,
      // which depends on it, never ran; everything else ran once.
      assert.equal(last.code, 4, JSON.stringify(last.codes ?? last.report.units));
      assert.equal(last.report.units.migrate.result, 'recovered');
      assert.deepEqual(world.runRefs(), [], 'both run refs were imported');
      const summary = await assertInvariants(world, journal);
      assert.deepEqual(summary.stuck, ['migrate'], 'units left uncertain');
      assert.deepEqual(summary.counts, counts({ migrate: 0, app: 0 }), 'executions per unit');
    } finally {
      world.cleanup();
    }
  });

  // Both decided on the broken lease; one push lands, the other is rejected, reads the lease again
  // and finds it held (a live recover's lease is held like any other). Were it taken over,
  // fencing would still keep it safe: the replaced one lands nothing.
  test('two importers race for the lease of a broken run: exactly one imports, the other writes nothing', async () => {
    const { world, journal } = await initialized();
    try {
      await crash(world, journal, 'after-checkpoint-push');
      await journal.leaseBreak(world.process('operator'));
      const commitsBefore = world.repo.commitsOf(world.loc.observedRef).length;
      const [a, b] = [world.process('a'), world.process('b')];
      const pauses = [a.pauseAt('before-lease-push'), b.pauseAt('before-lease-push')];
      const runs = [a.start('recover'), b.start('reconcile')];
      await Promise.all(pauses.map((p) => p.reached));
      pauses.forEach((p) => p.release());
      const outcomes = await Promise.all(runs.map((r) => r.outcome));
      journal.note();
      const losers = outcomes.filter((o) => o.codes?.some((c) => c === 'NYL-LEASE-HELD' || c === 'NYL-LEASE-LOST'));
      const winners = outcomes.filter((o) => !losers.includes(o) && (o.code === 0 || o.code === 4));
      assert.deepEqual([winners.length, losers.length], [1, 1], JSON.stringify(outcomes.map((o) => ({ code: o.code, codes: o.codes }))));
      assert.equal(world.repo.commitsOf(world.loc.observedRef).length, commitsBefore + 1, "one transition commit: the winner's");
      // A recover that won imports only: the next reconcile executes what is left.
      await world.process('last').run('reconcile');
      journal.note();
      await assertInvariants(world, journal);
    } finally {
      world.cleanup();
    }
  });

  /** A crashed reconcile, its lease broken, and a recover that holds the lease, paused before its push. */
  async function recoverHolding(world, journal) {
    const [dead] = await crash(world, journal, 'after-checkpoint-push');
    await journal.leaseBreak(world.process('operator'));
    const holder = world.process('holder');
    const paused = holder.pauseAt('before-recover-push');
    const recovering = holder.start('recover');
    await paused.reached;
    assert.equal(world.leaseDoc().operation, 'recover', 'the recover holds the lease');
    assert.equal(world.leaseDoc().broken?.reason, 'the runner was killed', 'carrying the break it imports');
    return { dead, paused, recovering, run: world.leaseDoc().run };
  }

  // The break a recover carries is the dead run's, not its own: while it runs, its lease is live.
  test('a live recover holds its lease like any holder: another importer refuses NYL-LEASE-HELD or waits, and takes nothing over', async () => {
    const { world, journal } = await initialized();
    try {
      const { dead, paused, recovering, run } = await recoverHolding(world, journal);
      const status = await world.process('viewer').run('status');
      assert.equal(status.report.lease.status, 'live', JSON.stringify(status.report.lease));
      assert.equal(status.report.lease.broken, undefined, 'a live lease shows no break');
      for (const [op, options] of [
        ['reconcile', {}],
        ['recover', {}],
        ['hold', { unit: 'app' }],
      ]) {
        const r = await world.process(`other ${op}`).run(op, options);
        assert.deepEqual([r.code, r.codes], [2, ['NYL-LEASE-HELD']], `${op}: ${JSON.stringify(r.codes ?? r.report?.units)}`);
      }
      assert.equal(world.leaseDoc().run, run, 'nobody took the lease over');
      // With --wait-lease a reconcile waits for the recover, then finds nothing left to import.
      const waiter = world.process('waiter');
      const waiting = waiter.pauseAt('lease-waiting');
      const waited = waiter.start('reconcile', { waitMs: 10 * 60_000 });
      await waiting.reached;
      waiting.release();
      paused.release();
      const recovered = await recovering.outcome;
      assert.equal(recovered.code, 0, JSON.stringify(recovered.codes ?? recovered.report));
      assert.equal(recovered.report.details.leaseBroken?.run, dead, 'the recover records the break');
      const after = await waited.outcome;
      journal.note();
      // Exit 4: migrate, started without a checkpoint by the dead run, stays uncertain.
      assert.equal(after.code, 4, JSON.stringify(after.codes ?? after.report?.units));
      assert.equal(after.report.units.migrate.result, 'uncertain');
      assert.equal(after.report.details.leaseBroken, undefined, 'the waiter took over no break');
      await assertInvariants(world, journal);
    } finally {
      world.cleanup();
    }
  });

  test('lease break of a live recover breaks it: the next importer takes over at once and records both breaks', async () => {
    const { world, journal } = await initialized();
    try {
      const { dead, paused, recovering, run } = await recoverHolding(world, journal);
      const broke = await journal.leaseBreak(world.process('operator2'), 'the recover hangs');
      assert.equal(broke.report.result, 'done', JSON.stringify(broke.report.notes));
      assert.equal(broke.report.details.run, run, 'the recover is the holder broken');
      const taker = await world.process('taker').run('reconcile');
      assert.equal(taker.report.details.leaseBroken?.run, run, JSON.stringify(taker.report.details));
      assert.equal(taker.report.details.leaseBroken?.reason, 'the recover hangs');
      assert.deepEqual(
        (taker.report.details.leaseBrokenEarlier ?? []).map((b) => [b.run, b.reason]),
        [[dead, 'the runner was killed']],
        'and the break it carried',
      );
      paused.release();
      const lost = await recovering.outcome;
      assert.ok(lost.codes?.includes('NYL-LEASE-LOST'), JSON.stringify(lost.codes ?? lost.report));
      journal.note();
      await assertInvariants(world, journal);
    } finally {
      world.cleanup();
    }
  });

  for (const next of ['recover', 'reconcile']) {
    test(`recover killed before its push: state unchanged; its lease is held until it expires, then the ${next} that takes it over records the break`, async () => {
      const { world, journal } = await initialized();
      try {
        const [dead] = await crash(world, journal, 'after-checkpoint-push');
        await journal.leaseBreak(world.process('operator'));
        const before = world.stateRefs();
        const dying = world.process('dying').crashAt('before-recover-push');
        assert.ok((await dying.start('recover').outcome).died);
        assert.deepEqual(world.stateRefs(), before, 'state unchanged');
        assert.equal(world.runRefs().length, 1, 'the dead run still waits for its import');
        assert.equal(world.leaseDoc().operation, 'recover', 'the dead recover took the lease over');
        assert.equal(world.leaseDoc().broken?.reason, 'the runner was killed', 'and carries the break');
        // Until its deadline nobody can tell a dead recover from a live one.
        const early = await world.process('early').run(next);
        assert.deepEqual([early.code, early.codes], [2, ['NYL-LEASE-HELD']], JSON.stringify(early.codes ?? early.report?.units));
        // Past its deadline and the skew margin the break it carried is the lease's again: no
        // second break is needed, and writers that import nothing still refuse.
        await world.clock.advance(6 * 60_000);
        const hold = await world.process('hold').run('hold', { unit: 'app' });
        assert.deepEqual([hold.code, hold.codes], [2, ['NYL-LEASE-BROKEN']]);
        const status = await world.process('viewer').run('status');
        assert.equal(status.report.lease.status, 'broken');
        assert.equal(status.report.lease.broken?.reason, 'the runner was killed');
        const again = await world.process('again').run(next);
        journal.note();
        assert.ok([0, 4].includes(again.code), JSON.stringify(again.codes ?? again.report.units));
        assert.equal(again.report.details.leaseBroken?.run, dead, 'it records the break of the run that died first');
        assert.equal(again.report.details.leaseBrokenEarlier, undefined);
        assert.deepEqual(world.runRefs(), []);
        if (next === 'recover') {
          assert.deepEqual(again.report.details.runs, [dead]);
          await world.process('last').run('reconcile');
          journal.note();
        }
        await assertInvariants(world, journal);
      } finally {
        world.cleanup();
      }
    });
  }

  // Ported from the end-to-end crash suite (file://): what a takeover reports, the exit code.
  test('a takeover that leaves a unit without dependents uncertain: the unit is reported, the exit says so', async () => {
    const { world, journal } = await initialized();
    try {
      const release = world.driver.hold('report');
      const victim = world.process('victim');
      const run = victim.start('reconcile');
      await world.until(() => world.runRefs().some((r) => world.receiptsIn(r).includes('app')), "app's checkpoint in the run ref");
      victim.kill();
      assert.ok((await run.outcome).died);
      release();
      const [dead] = journal.noteDeadRuns();
      await journal.leaseBreak(world.process('operator'));
      const take = await world.process('takeover').run('reconcile');
      journal.note();
      assert.equal(take.report.units.report.result, 'recovered', JSON.stringify(take.report.units));
      assert.equal(take.report.units.app.result, 'imported', 'app ran with report in wave 3; its checkpoint landed before the crash');
      assert.equal(world.observedDoc('report').condition?.run, dead);
      // Exit 4 and NYL-UNIT-UNCERTAIN although nothing else is left to do.
      assert.equal(take.code, 4, JSON.stringify(take.codes ?? take.report.units));
      assert.ok(
        take.report.warnings.some((w) => w.code === 'NYL-UNIT-UNCERTAIN' && w.units?.includes('report')),
        JSON.stringify(take.report.warnings),
      );
      const summary = await assertInvariants(world, journal);
      assert.deepEqual(summary.stuck, ['report']);
      assert.deepEqual(summary.counts, ALL);
    } finally {
      world.cleanup();
    }
  });

  test('a dead run checkpointed a receipt for a key the unit no longer resolves to: uncertain, NYL-RUN-SUPERSEDED', async () => {
    const { world, journal } = await initialized();
    try {
      const victim = world.process('victim').crashAt('before-transition-push');
      assert.ok((await victim.start('reconcile', { units: ['base', 'config'] }).outcome).died);
      const [dead] = journal.noteDeadRuns();
      assert.deepEqual(world.receiptsIn(dead), ['base', 'config']);
      // base (converge) and config (manual) change what they run.
      await world.setUnits(SIX_UNITS.map((u) => (['base', 'config'].includes(u.name) ? { ...u, version: '2' } : u)));
      await journal.leaseBreak(world.process('operator'));
      const r = await world.process('takeover').run('reconcile');
      journal.note();
      assert.ok([2, 4].includes(r.code), `exit ${r.code}: ${JSON.stringify(r.codes ?? r.report.units)}`);
      const superseded = r.report.warnings
        .filter((w) => w.code === 'NYL-RUN-SUPERSEDED')
        .flatMap((w) => w.units ?? [])
        .sort();
      assert.deepEqual(superseded, ['base', 'config'], JSON.stringify(r.report.warnings));
      assert.equal(r.report.units.base.result, 'executed', 'base converges: it runs again for its new key');
      assert.equal(r.report.units.config.result, 'recovered');
      const config = world.observedDoc('config');
      assert.equal(config.condition?.type, 'uncertain');
      assert.equal(config.condition?.run, dead);
      assert.equal(config.condition?.code, 'NYL-RUN-SUPERSEDED');
      const summary = await assertInvariants(world, journal, { superseded: ['base', 'config'] });
      assert.deepEqual(summary.stuck, ['config']);
      assert.deepEqual(summary.counts, counts({ base: 2, migrate: 0, app: 0 }));
    } finally {
      world.cleanup();
    }
  });

  // Ported from test/e2e/recover-import.test.mjs: a deterministic interleaving of two recovers.
  test('a recover that finds the break already imported when it takes the lease imports nothing and says so', async () => {
    const { world, journal } = await initialized();
    try {
      await crash(world, journal, 'before-transition-push');
      await journal.leaseBreak(world.process('operator'));
      // The late recover read the broken lease and pauses right before its lease push while
      // another recover imports the run; then its push is rejected and it reads the lease again.
      const late = world.process('late');
      const pause = late.pauseAt('before-lease-push');
      const lateRun = late.start('recover');
      await pause.reached;
      const first = await world.process('first').run('recover');
      journal.note();
      assert.equal(first.code, 0, JSON.stringify(first.codes));
      assert.ok(first.report.details.leaseBroken, 'the first recover imports the broken run');
      const afterFirst = world.refs();
      pause.release();
      const r = await lateRun.outcome;
      assert.ok(!r.died);
      assert.deepEqual(world.refs(), afterFirst, 'the late recover wrote nothing');
      assert.equal(r.report?.details?.leaseBroken, undefined);
      // It refuses NYL-RECOVER-NOTHING instead of reporting done.
      assert.equal(r.code, 1, JSON.stringify(r.codes ?? r.report));
      assert.deepEqual(r.codes, ['NYL-RECOVER-NOTHING']);
      await assertInvariants(world, journal);
    } finally {
      world.cleanup();
    }
  });

  // Ported from test/e2e/recover-import.test.mjs.
  test('a recover that fails before its commit (unknown unit) puts the broken lease back', async () => {
    const { world, journal } = await initialized();
    try {
      const [dead] = await crash(world, journal, 'after-started-push');
      await journal.leaseBreak(world.process('operator'));
      const brokenLease = world.refs()[world.leaseRef];
      const before = world.stateRefs();
      const r = await world.process('op').run('recover', { unit: 'nosuch', retry: true });
      assert.equal(r.code, 1);
      assert.deepEqual(r.codes, ['NYL-UNIT-UNKNOWN']);
      assert.equal(world.refs()[world.leaseRef], brokenLease, 'the broken lease is put back as it was');
      assert.ok(world.runRefs().includes(dead), 'the run ref stays');
      assert.deepEqual(world.stateRefs(), before, 'state unchanged');
    } finally {
      world.cleanup();
    }
  });

  // Ported from test/e2e/recover-unit.test.mjs (the CLI's refusals of --accept stay there).
  test('--accept of a run without a checkpoint of the unit: NYL-RECOVER-CHECKPOINT-MISSING; --retry clears it and its evidence refs', async () => {
    const { world, journal } = await initialized();
    try {
      const [dead] = await crash(world, journal, 'while-unit-runs');
      await journal.leaseBreak(world.process('operator'));
      const take = await world.process('takeover').run('reconcile');
      journal.note();
      assert.equal(take.code, 4, JSON.stringify(take.codes ?? take.report.units));
      const evidenceOf = (unit) => world.evidenceRefs().filter((r) => r.includes(`/evidence/${unit}/`));
      assert.deepEqual(evidenceOf('migrate'), [`refs/nyl/dev/evidence/migrate/${dead}`]);
      const refs = world.refs();
      const op = world.process('op');
      const r = await op.run('recover', { unit: 'migrate', accept: dead, reason: 'r' });
      assert.equal(r.code, 1);
      assert.deepEqual(r.codes, ['NYL-RECOVER-CHECKPOINT-MISSING']);
      const other = await op.run('recover', { unit: 'migrate', accept: '01a00000-0000-7000-8000-000000000000', reason: 'r' });
      assert.deepEqual(other.codes, ['NYL-RECOVER-CHECKPOINT-MISSING'], 'a run that recorded nothing');
      assert.deepEqual(world.refs(), refs, 'nothing written');
      // --retry clears it; the evidence refs go with the last uncertain unit that needs them.
      const retry = await op.run('recover', { unit: 'migrate', retry: true, reason: 'checked' });
      journal.note();
      assert.equal(retry.code, 0, JSON.stringify(retry.codes));
      assert.deepEqual(evidenceOf('migrate'), []);
      // report, whose only dependency db had ended, was started by the dead run too: uncertain as well.
      assert.equal((await op.run('recover', { unit: 'report', retry: true, reason: 'checked' })).code, 0);
      journal.note();
      await world.process('last').run('reconcile');
      journal.note();
      await assertInvariants(world, journal, { allCurrent: true });
    } finally {
      world.cleanup();
    }
  });
});

// Ported from test/e2e/crash-races.test.mjs ('a writer whose read is older than the lease it takes').
describe('a writer whose read is older than the lease it takes, in process', () => {
  // Ported from test/e2e/crash-races.test.mjs, where a taker whose clock ran ahead took over a
  // live holder (no longer possible: a taker watches an expired lease first, and a live holder
  // renews meanwhile). Here the holder's renewals cannot reach the repository: its lease truly
  // expires, the taker watches it stay unchanged, and a fenced checkpoint of the holder lands
  // between the taker's read and its lease push. That checkpoint renews the lease (every write of
  // a holder does), so the taker's push is rejected, and reading again it sees that the holder
  // wrote while its lease looked expired: the holder is live, and it is not taken over. The
  // holder goes on under its renewed lease and ends its run.
  test("the holder of an expired lease checkpoints between the taker's read and its lease push: the taker's push is rejected, and the holder goes on", async () => {
    const world = await World.create({
      units: [
        { name: 'slow', dependsOn: [] },
        { name: 'after', dependsOn: ['slow'] },
      ],
    });
    try {
      await world.process('init').run('state init');
      let renewalsDown = false;
      // Every write of a holder renews its lease; the periodic renewals are those without a checkpoint.
      const message = (oid) => world.repo.object(oid).content.toString();
      const renews = (u) => u.ref === world.leaseRef && u.to && /^nyl: renew lease/m.test(message(u.to));
      const checkpoints = (u) => u.ref.includes('/runs/') && u.to && /^nyl: (start .*; )?checkpoint /m.test(message(u.to));
      const renewal = (call, updates = []) => call === 'write' && updates.some(renews) && !updates.some(checkpoints);
      const release = world.driver.hold('slow');
      const holder = world.process('holder', { unreachable: (call, updates) => renewalsDown && renewal(call, updates) });
      const holding = holder.start('reconcile');
      await world.driver.whenCalled('slow');
      renewalsDown = true;
      const lease = world.leaseDoc();
      await world.clock.advance(Date.parse(lease.deadline) + 31_000 - world.clock.now());
      const taker = world.process('taker');
      const pause = taker.pauseAt('before-lease-push');
      const taking = taker.start('reconcile');
      await pause.reached;
      assert.ok(
        taker.lines.some((l) => /watching it for 130 s/.test(l)),
        'it watched the expired lease first',
      );
      const [run] = world.runRefs();
      release();
      for (let turns = 0; !world.receiptsIn(run).includes('slow'); turns++) {
        assert.ok(turns < 10_000, 'the holder checkpointed slow');
        await new Promise((r) => setImmediate(r));
      }
      pause.release();
      const took = await taking.outcome;
      assert.deepEqual(took.codes, ['NYL-LEASE-HELD'], 'the holder wrote while its lease looked expired: it is live, and a live holder is never taken over');
      // That checkpoint renewed the lease too: the holder goes on, and ends its run.
      const holderEnd = await holding.outcome;
      assert.equal(holderEnd.code, 0, JSON.stringify(holderEnd.codes));
      assert.deepEqual([holderEnd.report.units.slow.result, holderEnd.report.units.after.result], ['executed', 'executed']);
      const next = await world.process('next').run('reconcile');
      assert.deepEqual([next.report.units.slow.result, next.report.units.after.result], ['current', 'current'], JSON.stringify(next.report.units));
      assert.equal(world.driver.callsOf('after').length, 1, 'after ran once');
      assert.equal(world.driver.callsOf('slow').length, 1, 'slow ran once');
    } finally {
      world.cleanup();
    }
  });

  test('a hold commit landed before its lease push: the held unit and its dependents are not started', async () => {
    const world = await World.create();
    try {
      await world.process('init').run('state init');
      const late = world.process('late');
      const pause = late.pauseAt('before-lease-push');
      const lateRun = late.start('reconcile');
      await pause.reached;
      const held = await world.process('op').run('hold', { unit: 'migrate', reason: 'incident' });
      assert.equal(held.code, 0, JSON.stringify(held.codes));
      assert.equal(held.report.result, 'done');
      pause.release();
      const r = await lateRun.outcome;
      assert.ok(!r.died);
      assert.equal(r.code, 2, JSON.stringify(r.codes ?? r.report.units));
      assert.deepEqual(r.report.errors ?? [], []);
      assert.equal(r.report.units.migrate.result, 'held');
      assert.deepEqual(world.counts(), counts({ migrate: 0, app: 0 }), 'the held unit and its dependent never ran; the others ran once');
    } finally {
      world.cleanup();
    }
  });

  test('another reconcile ran from start to end before its lease push landed: it runs nothing again', async () => {
    const world = await World.create();
    try {
      const journal = new Journal(world);
      await world.process('init').run('state init');
      journal.note();
      const late = world.process('late');
      const pause = late.pauseAt('before-lease-push');
      const lateRun = late.start('reconcile');
      await pause.reached;
      const other = await world.process('other').run('reconcile');
      journal.note();
      assert.equal(other.code, 0, JSON.stringify(other.codes ?? other.report.units));
      assert.deepEqual(
        Object.values(other.report.units).map((u) => u.result),
        world.units.map(() => 'executed'),
      );
      pause.release();
      const r = await lateRun.outcome;
      journal.note();
      assert.ok(!r.died);
      assert.equal(r.code, 0, JSON.stringify(r.codes ?? r.report.units));
      assert.deepEqual(
        Object.values(r.report.units).map((u) => u.result),
        world.units.map(() => 'current'),
      );
      const summary = await assertInvariants(world, journal, { allCurrent: true });
      assert.deepEqual(summary.counts, ALL, 'nothing ran twice');
    } finally {
      world.cleanup();
    }
  });
});

// Ported from test/e2e/recover-unit.test.mjs (the CLI's evidence listing stays there).
describe('recover --unit --accept of a late receipt, in process', () => {
  test('--accept of a run whose late receipt waits in its run ref adopts it', async () => {
    const world = await World.create({
      units: [
        { name: 'slow', recovery: 'converge', dependsOn: [] },
        { name: 'after', recovery: 'converge', dependsOn: ['slow'] },
      ],
    });
    try {
      const journal = new Journal(world);
      await world.process('init').run('state init');
      journal.note();
      // K is killed while slow runs.
      let release = world.driver.hold('slow');
      const kProc = world.process('k');
      const kRun = kProc.start('reconcile');
      await world.until(() => world.driver.callsOf('slow').length === 1, 'K runs slow');
      kProc.kill();
      assert.ok((await kRun.outcome).died);
      release();
      const [k] = journal.noteDeadRuns();
      await journal.leaseBreak(world.process('operator'));
      // L takes K over, runs slow again, and loses its lease to `recover -e` before it checkpoints late.
      release = world.driver.hold('slow');
      const lRun = world.process('l').start('reconcile');
      await world.until(() => world.driver.callsOf('slow').length === 2, 'L runs slow');
      const [l] = journal.noteDeadRuns();
      assert.ok(l && l !== k);
      await journal.leaseBreak(world.process('operator2'));
      const imported = await world.process('importer').run('recover');
      journal.note();
      assert.equal(imported.code, 0, JSON.stringify(imported.codes));
      release();
      const lost = await lRun.outcome;
      assert.deepEqual(lost.codes, ['NYL-LEASE-LOST']);
      const slowEvidence = () =>
        world
          .evidenceRefs()
          .filter((r) => r.includes('/evidence/slow/'))
          .sort();
      assert.deepEqual(slowEvidence(), [k, l].map((run) => `refs/nyl/dev/evidence/slow/${run}`).sort(), 'evidence of both runs');
      assert.equal(world.runRecords(l).get('slow')?.checkpoint?.result, 'receipt', "L's late checkpoint waits in its run ref");

      // Adopted, although an evidence ref of the same run holds only its start.
      const r = await world.process('op').run('recover', { unit: 'slow', accept: l, reason: 'L finished after losing its lease' });
      journal.note();
      assert.equal(r.code, 0, JSON.stringify(r.codes));
      assert.equal(r.report.result, 'done');
      assert.equal(world.observedDoc('slow').receipt?.run, l);
      assert.equal(world.observedDoc('slow').condition, undefined);
      assert.deepEqual(slowEvidence(), [], 'no uncertain unit needs the evidence any more');
      assert.ok(world.runRefs().includes(l), 'recover --unit deletes no run ref');
      // The next reconcile imports L's run ref: the receipt stays L's, slow does not run again.
      await world.process('last').run('reconcile');
      journal.note();
      assert.equal(world.observedDoc('slow').receipt?.run, l);
      const summary = await assertInvariants(world, journal, { allCurrent: true });
      assert.deepEqual(summary.counts, { slow: 2, after: 1 }, 'K and L ran slow; nothing after the accept');
    } finally {
      world.cleanup();
    }
  });
});
