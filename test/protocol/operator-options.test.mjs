// Operator options and operations on virtual time, in process: recover on a held unit,
// --fail-fast after an uncertain outcome, the kill grace of a cancelled run, --wait-lease that
// gives up, a dead run's run ref that holds the environment once its lease ref is gone, and what
// --unit counts and lists (the exit code, the units a takeover changes).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { receipt, uncertain } from '../fakes/driver.mjs';
import { ignoring, sleepFor } from '../fakes/process-runner.mjs';
import { commitBody } from '../support/commit-evidence.mjs';
import { T0, World } from './world.mjs';
import { Journal } from './invariants.mjs';

const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });

describe('recover', () => {
  test('recover on a held unit: --accept refuses NYL-RECOVER-KEY-MISMATCH, --retry clears the condition and the unit stays held', async () => {
    const world = await World.create({ units: [unit('s'), unit('t')] });
    await world.process('init').run('state init');
    try {
      const journal = new Journal(world);
      const releaseS = world.driver.hold('s');
      const run = world.process('holder').start('reconcile');
      await world.driver.whenCalled('s');
      const [holderRun] = journal.noteDeadRuns();
      await journal.leaseBreak(world.process('operator'));
      assert.equal((await world.process('importer').run('recover')).code, 0);
      releaseS();
      await run.outcome; // NYL-LEASE-LOST; its late receipt stays as evidence
      const op = world.process('op');
      assert.equal((await op.run('hold', { unit: 's', reason: 'incident' })).code, 0);
      const refs = world.refs();
      const accepted = await op.run('recover', { unit: 's', accept: holderRun, reason: 'checked' });
      assert.equal(accepted.code, 1);
      assert.deepEqual(accepted.codes, ['NYL-RECOVER-KEY-MISMATCH']);
      assert.deepEqual(world.refs(), refs, 'nothing written');
      const retried = await op.run('recover', { unit: 's', retry: true, reason: 'checked' });
      assert.equal(retried.code, 0, JSON.stringify(retried.codes));
      assert.equal(world.observedDoc('s').condition, undefined, 'the condition is cleared');
      assert.equal(world.desiredDoc('s').lifecycle.state, 'held', 'the unit stays held');
    } finally {
      world.cleanup();
    }
  });
});

describe('--fail-fast', () => {
  test('--fail-fast stops after an uncertain outcome: exit 4, no further unit, NYL-RUN-STOPPED, transition written', async () => {
    const world = await World.create({ units: [unit('a'), unit('b'), unit('c')], apply: { a: uncertain('lost track of the tool') } });
    await world.process('init').run('state init');
    try {
      const state = world.stateRefs();
      const r = await world.process('runner').run('reconcile', { failFast: true, concurrency: 1 });
      assert.equal(r.code, 4);
      assert.notDeepEqual(world.stateRefs(), state, 'the transition is written');
      assert.equal(world.observedDoc('a').condition?.type, 'uncertain', 'it records what the run decided');
      assert.deepEqual([world.counts().b, world.counts().c], [0, 0]);
      assert.deepEqual(r.report.warnings.map((w) => w.code).sort(), ['NYL-RUN-STOPPED', 'NYL-UNIT-UNCERTAIN']);
      for (const n of ['b', 'c']) assert.match(r.report.units[n].detail, /not started.*--fail-fast.*a/);
    } finally {
      world.cleanup();
    }
  });
});

describe('cancellation', () => {
  test('SIGTERM: a tool that ignores it is killed exactly 30 s later; exit 4 NYL-RUN-CANCELLED; run ref kept, no transition', async () => {
    const world = await World.create({
      units: [unit('stubborn'), unit('after', { dependsOn: ['stubborn'] })],
      autoAdvance: false,
      delayMs: 0,
      driver: { startProcess: { stubborn: ['tool'] } },
      apply: { stubborn: (ctx, call) => (call.process?.signal ? uncertain(`ended by ${call.process.signal}`) : receipt({})) },
    });
    await world.process('init').run('state init');
    try {
      const before = world.stateRefs();
      const p = world.process('runner');
      p.rt.runner.register('tool', ignoring('SIGTERM', sleepFor(3_600_000)));
      const run = p.start('reconcile');
      await world.until(() => p.rt.runner.calls.length === 1, 'the tool runs');
      p.cancel('SIGTERM');
      await world.until(() => p.rt.runner.calls[0].signals.length === 1, 'SIGTERM delivered');
      await world.clock.advance(29_999);
      assert.deepEqual(p.rt.runner.calls[0].signals, ['SIGTERM'], 'no SIGKILL before 30 s');
      await world.clock.advance(1);
      await world.until(() => p.rt.runner.calls[0].signals.length === 2, 'SIGKILL');
      world.clock.autoAdvance = true;
      const r = await run.outcome;
      assert.equal(r.code, 4);
      assert.deepEqual(
        r.report.errors.map((e) => e.code),
        ['NYL-RUN-CANCELLED'],
      );
      assert.equal(r.report.units.stubborn.result, 'uncertain');
      assert.equal(world.driver.callsOf('after').length, 0);
      assert.deepEqual(world.stateRefs(), before, 'no transition commit');
      assert.equal(world.runRefs().length, 1, 'the run ref stays for the next run');
      assert.equal(world.refs()[world.leaseRef], undefined, 'the lease is released');
    } finally {
      world.cleanup();
    }
  });
});

/**
 * A world where run `holder` executes a (held by the fake driver until release()) and a
 * `lease break --wait-lease 60s` waits for it: { world, run, release, breaker, outcome() }.
 */
async function breakerWaiting() {
  const world = await World.create({ units: [unit('a')], lease: '5m', autoAdvance: false });
  await world.process('init').run('state init');
  const release = world.driver.hold('a');
  const run = world.process('holder').start('reconcile');
  await world.driver.whenCalled('a');
  const holderRun = world.leaseDoc().run;
  const sleepers = world.clock.sleepers();
  const breaker = world.process('breaker');
  let settled;
  const waiting = breaker.start('lease break', { waitMs: 60_000 });
  waiting.outcome.then((o) => (settled = o));
  await world.until(() => settled || world.clock.sleepers() > sleepers, 'the breaker waits');
  return { world, run, release, breaker, holderRun, waiting, settled: () => settled };
}

describe('waiting for the lease', () => {
  for (const releasesInTime of [true, false]) {
    const title = releasesInTime ? 'a holder that releases the lease in time is not broken' : 'a holder still there when the wait ends is broken then';
    test(`lease break --wait-lease: ${title}`, async () => {
      const { world, run, release, settled } = await breakerWaiting();
      try {
        await world.clock.advance(30_000);
        assert.equal(settled(), undefined, 'still waiting after 30 s');
        assert.equal(world.leaseDoc()?.broken, undefined, 'nothing broken while waiting');
        world.clock.autoAdvance = true; // the wait goes on in one-second looks
        if (releasesInTime) {
          release();
          assert.equal((await run.outcome).code, 0, 'the holder finished and released the lease');
          await world.until(settled, 'the breaker ended');
          assert.equal(settled().code, 0);
          assert.equal(settled().report.result, 'unchanged');
          assert.deepEqual(
            settled().report.notes.map((n) => n.code),
            ['NYL-UNCHANGED'],
          );
          assert.match(settled().report.notes[0].message, /released the lease of dev while lease break waited/);
        } else {
          await world.until(settled, 'the breaker broke the lease');
          assert.ok(world.clock.now() >= T0 + 60_000, 'not before the wait ended');
          assert.equal(settled().code, 0);
          assert.equal(settled().report.result, 'done');
          assert.equal(world.leaseDoc().broken.reason, 'the runner was killed');
          release();
          assert.notEqual((await run.outcome).code, 0, 'the broken holder cannot write');
        }
      } finally {
        world.cleanup();
      }
    });
  }

  test('lease break --wait-lease breaks only the holder it waited for: a run that took the lease after it released is left alone', async () => {
    const { world, run: run1, release: release1, holderRun: firstRun, settled } = await breakerWaiting();
    try {
      await world.clock.advance(5_000);
      release1();
      let done1;
      run1.outcome.then((o) => (done1 = o));
      for (let i = 0; i < 500 && !done1; i++) {
        await world.clock.advance(1);
        await new Promise((r) => setImmediate(r));
      }
      assert.equal(done1?.code, 0, 'the awaited holder finished by itself');
      // Another run takes the lease before the breaker looks again (source changed: it has work).
      await world.setUnits([unit('a', { version: 'v2' })]);
      world.sourceCommit = 'c0ffee0000000000000000000000000000000002';
      const release2 = world.driver.hold('a');
      const run2 = world.process('holder2').start('reconcile');
      await world.until(() => world.leaseDoc() && world.leaseDoc().run !== firstRun, 'the second run holds the lease');
      world.clock.autoAdvance = true;
      await world.until(settled, 'the breaker ended');
      assert.equal(settled().code, 0);
      assert.equal(settled().report.result, 'unchanged');
      assert.match(settled().report.notes[0].message, new RegExp(`${firstRun} released the lease of dev while lease break waited`));
      assert.equal(world.leaseDoc()?.broken, undefined, 'the new holder is not broken');
      release2();
      assert.equal((await run2.outcome).code, 0, 'and it finishes');
    } finally {
      world.cleanup();
    }
  });

  test('lease break --wait-lease cancelled while waiting: NYL-RUN-CANCELLED, nothing written', async () => {
    const { world, run, release, breaker, waiting } = await breakerWaiting();
    try {
      const refs = world.refs();
      breaker.cancel('SIGINT');
      const settled = await waiting.outcome;
      assert.equal(settled.code, 1);
      assert.deepEqual(settled.codes, ['NYL-RUN-CANCELLED']);
      assert.deepEqual(world.refs(), refs, 'nothing written');
      world.clock.autoAdvance = true;
      release();
      assert.equal((await run.outcome).code, 0);
    } finally {
      world.cleanup();
    }
  });

  test('--wait-lease gives up after its duration: exit 2 NYL-LEASE-HELD, nothing written', async () => {
    const world = await World.create({ units: [unit('a')], lease: '5m', autoAdvance: false });
    await world.process('init').run('state init');
    try {
      const release = world.driver.hold('a');
      const first = world.process('first').start('reconcile');
      await world.driver.whenCalled('a');
      let settled;
      const refs = world.refs();
      const sleepers = world.clock.sleepers();
      const waiter = world.process('waiter').start('reconcile', { waitMs: 60_000 });
      waiter.outcome.then((o) => (settled = o));
      await world.until(() => settled || world.clock.sleepers() > sleepers, 'the waiter waits');
      await world.clock.advance(59_000);
      assert.equal(settled, undefined, 'still waiting after 59 s');
      await world.clock.advance(2_000);
      await world.until(() => settled, 'the waiter gave up');
      assert.equal(settled.code, 2);
      assert.deepEqual(settled.codes, ['NYL-LEASE-HELD']);
      assert.deepEqual(world.refs(), refs, 'the waiter wrote nothing (the holder did not write meanwhile either)');
      world.clock.autoAdvance = true;
      release();
      assert.equal((await first.outcome).code, 0);
    } finally {
      world.cleanup();
    }
  });

  test('a dead run whose lease ref is gone holds the environment until its run ref deadline plus the skew margin', async () => {
    const world = await World.create({ units: [unit('a'), unit('b', { dependsOn: ['a'] })], lease: '5m' });
    await world.process('init').run('state init');
    try {
      const victim = world.process('victim').crashAt('after-started-push', { nth: 2 });
      assert.ok((await victim.start('reconcile').outcome).died);
      const [run] = world.runRefs();
      const deadline = Date.parse(world.runDoc(run).deadline);
      world.repo.setRef(world.leaseRef, null);
      const refs = world.refs();
      const early = await world.process('early', { offsetMs: deadline + 20_000 - world.clock.now() }).run('reconcile');
      assert.equal(early.code, 2);
      assert.deepEqual(early.codes, ['NYL-LEASE-HELD']);
      assert.deepEqual(world.refs(), refs, 'nothing written');
      const late = await world.process('late', { offsetMs: deadline + 31_000 - world.clock.now() }).run('reconcile');
      assert.equal(late.report.units.a.result, 'imported');
      assert.equal(late.report.units.b.result, 'recovered');
    } finally {
      world.cleanup();
    }
  });
});

/** The units whose files the last commit of each state ref changed, sorted. */
function changedByLastCommits(world) {
  const names = new Set();
  for (const ref of [world.loc.desiredRef, world.loc.observedRef]) {
    const [last] = world.repo.commitsOf(ref);
    const files = (oid) => (oid ? world.repo.filesAt(oid, 'units') : new Map());
    const now = files(last.oid);
    const before = files(last.parents[0]);
    for (const f of new Set([...now.keys(), ...before.keys()])) if (now.get(f) !== before.get(f)) names.add(f.replace(/\.yaml$/, ''));
  }
  return [...names].sort();
}

/** Runs a reconcile of every unit that dies while `running` runs, then breaks its lease. */
async function deadRunWhile(world, running) {
  const release = world.driver.hold(running);
  const victim = world.process('victim');
  victim.start('reconcile');
  await world.driver.whenCalled(running);
  await world.until(() => world.receiptsIn(world.runRefs()[0]).length > 0, 'a sibling checkpointed');
  victim.kill();
  release();
  assert.equal((await world.process('operator').run('lease break')).code, 0);
}

describe('--unit', () => {
  test('the report lists every unit the transition commit changes: what the takeover imported and recovered, besides the named unit', async () => {
    const world = await World.create({ units: [unit('a'), unit('c')] });
    await world.process('init').run('state init');
    try {
      await deadRunWhile(world, 'c');
      await world.setUnits([unit('a'), unit('c'), unit('g')]);
      const r = await world.process('runner').run('reconcile', { units: ['g'] });
      const results = Object.fromEntries(r.report.unitOrder.map((n) => [n, r.report.units[n].result]));
      assert.deepEqual(results, { g: 'executed', a: 'imported', c: 'recovered' });
      assert.deepEqual([...r.report.unitOrder].sort(), changedByLastCommits(world), 'one row per unit the commit changes');
      const body = commitBody(world.repo.commitsOf(world.loc.observedRef)[0].message);
      assert.deepEqual(body.units, { g: 'executed', a: 'imported', c: 'recovered' }, 'the commit summary says what the table says');
      assert.deepEqual([body.imported, body.recovered], [['a'], ['c']]);
      assert.equal(r.code, 0, 'only the named unit counts: the recovered c is a warning');
      assert.deepEqual(
        r.report.warnings.map((w) => [w.code, w.units]),
        [['NYL-UNIT-UNCERTAIN', ['c']]],
      );
    } finally {
      world.cleanup();
    }
  });

  test('a hold delivered to a unit not named is listed: the commit holds it', async () => {
    const world = await World.create({ units: [unit('g'), unit('h')] });
    await world.process('init').run('state init');
    try {
      const release = world.driver.hold('g');
      const run = world.process('runner').start('reconcile', { units: ['g'] });
      await world.driver.whenCalled('g');
      assert.equal((await world.process('operator').run('hold', { unit: 'h', reason: 'incident' })).report.result, 'delivered');
      release();
      const r = await run.outcome;
      assert.deepEqual(r.report.unitOrder, ['g', 'h']);
      assert.deepEqual([r.report.units.g.result, r.report.units.h.result], ['executed', 'held']);
      assert.deepEqual(r.report.unitOrder.slice().sort(), changedByLastCommits(world));
      assert.equal(r.code, 0, 'only g counts');
    } finally {
      world.cleanup();
    }
  });

  test("an unrelated unit's resolution error is a warning that leaves the exit code alone", async () => {
    const b = (output) => unit('b', { env: { U: `\${{ units.a.outputs.${output} }}` } });
    const world = await World.create({ units: [unit('a'), b('missing'), unit('g')] });
    await world.process('init').run('state init');
    try {
      const all = await world.process('all').run('reconcile');
      assert.equal(all.code, 1, 'without --unit it is an error');
      assert.deepEqual(
        all.report.errors.map((e) => [e.code, e.message]),
        [['NYL-SOURCE-INVALID', 'unit a has no output missing']],
      );
      await world.setUnits([unit('a'), b('missing'), unit('g', { version: '2' })]);
      const named = await world.process('named').run('reconcile', { units: ['g'] });
      assert.equal(named.report.units.g.result, 'executed');
      assert.equal(named.code, 0, JSON.stringify(named.report.errors));
      assert.deepEqual(named.report.errors, []);
      assert.deepEqual(
        named.report.warnings.map((w) => [w.code, w.severity, w.units, w.message]),
        [['NYL-SOURCE-INVALID', 'warning', ['b'], 'unit a has no output missing']],
      );
    } finally {
      world.cleanup();
    }
  });

  test('a unit the takeover recovered is listed, and its resolution error is still only a warning', async () => {
    const b = (output) => unit('b', { dependsOn: ['a'], env: { U: `\${{ units.a.outputs.${output} }}` } });
    const world = await World.create({ units: [unit('a'), b('unit')] });
    await world.process('init').run('state init');
    try {
      await deadRunWhile(world, 'b');
      await world.setUnits([unit('a'), b('missing'), unit('g')]);
      const r = await world.process('runner').run('reconcile', { units: ['g'] });
      assert.equal(r.report.units.g.result, 'executed');
      assert.equal(r.report.units.b?.result, 'recovered', 'b is listed: the commit makes it uncertain');
      assert.match(r.report.units.b.detail, /^run \S+ started b and ended without a checkpoint; unit a has no output missing$/);
      assert.equal(r.code, 0, JSON.stringify(r.report.errors));
      assert.deepEqual(r.report.errors, []);
      assert.deepEqual(r.report.warnings.map((w) => w.code).sort(), ['NYL-SOURCE-INVALID', 'NYL-UNIT-UNCERTAIN']);
    } finally {
      world.cleanup();
    }
  });
});
