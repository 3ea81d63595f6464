// The run protocol in process, on virtual time: group commit of checkpoints, failures contained
// per unit, the lease as fencing token, the skew and safety margins, delivered holds, and one
// push in flight. Each test is deterministic: time moves only when the test (or the idle clock)
// moves it, and a process stops at its next I/O when it is killed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { unitFile } from '../../dist/state/run-record.js';
import { failed, receipt } from '../fakes/driver.mjs';
import { ENV, World } from './world.mjs';
import { assertInvariants, Journal } from './invariants.mjs';

const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });

async function initialized(options) {
  const world = await World.create(options);
  await world.process('init').run('state init');
  return world;
}

describe('group commit', () => {
  test('a unit that finishes while a sibling runs 30 s is checkpointed at once; killed then, the next run imports it', async () => {
    const world = await initialized({ units: [unit('fast', { recovery: 'converge' }), unit('slow')], delayMs: { fast: 500, slow: 30_000 } });
    try {
      const journal = new Journal(world);
      world.clock.autoAdvance = false;
      const victim = world.process('victim');
      const run = victim.start('reconcile');
      await world.until(() => world.driver.callsOf('slow').length === 1 && world.driver.callsOf('fast').length === 1, 'both units started');
      const started = world.clock.now();
      const fastCheckpointed = () => world.runRefs().some((r) => world.receiptsIn(r).includes('fast'));
      assert.equal(fastCheckpointed(), false, 'no checkpoint of fast before it ends');
      await world.clock.advance(500);
      // Time stands still now (autoAdvance is off): the checkpoint lands without waiting for anything.
      await world.until(fastCheckpointed, "fast's checkpoint in the run ref");
      assert.equal(world.clock.now() - started, 500, 'checkpointed the moment fast ended, while slow still runs');
      assert.equal(world.driver.callsOf('slow')[0].outcome, undefined, 'slow still runs');
      victim.kill();
      assert.ok((await run.outcome).died);
      journal.noteDeadRuns();
      world.clock.autoAdvance = true;
      await journal.leaseBreak(world.process('operator'));
      const take = await world.process('takeover').run('reconcile');
      assert.equal(take.report.units.fast.result, 'imported', JSON.stringify(take.report.units));
      assert.equal(take.report.units.slow.result, 'recovered');
      const summary = await assertInvariants(world, journal);
      assert.deepEqual(summary.counts, { fast: 1, slow: 1 });
      assert.deepEqual(summary.stuck, ['slow']);
    } finally {
      world.cleanup();
    }
  });

  test('one push in flight at a time; a wave of quick units needs a handful of pushes, not one per unit', async () => {
    const units = Array.from({ length: 40 }, (_, i) => unit(`u${String(i).padStart(2, '0')}`));
    const world = await initialized({ units, delayMs: 5 });
    try {
      const p = world.process('runner');
      const r = await p.run('reconcile', { concurrency: 8 });
      assert.equal(r.code, 0);
      assert.equal(p.stats.maxWritesInFlight, 1, 'never two pushes of one run at once');
      // Deterministic on virtual time: 1 lease push (with the run ref), 26 pushes that each carry
      // the checkpoints of the units that ended and the markers of the units that start next
      // (group commit), 1 transition: 28. A push per marker and one per checkpoint would make 82.
      assert.ok(p.stats.writes <= 28, `${p.stats.writes} writes for 40 units`);
    } finally {
      world.cleanup();
    }
  });
});

describe('failures are contained per unit', () => {
  test('a driver that throws fails its unit alone; the sibling finishes under the lease; nothing runs twice', async () => {
    let leaseWhileSiblingEnds;
    const world = await initialized({
      units: [unit('bad'), unit('after', { dependsOn: ['bad'] }), unit('slow')],
      driver: { throws: { bad: 'spawn refused the arguments' } },
      apply: {
        slow: async (ctx) => {
          await ctx.clock.sleep(5000);
          leaseWhileSiblingEnds = world.refs()[world.leaseRef];
          return receipt({ unit: 'slow' });
        },
      },
    });
    try {
      const first = world.process('first').start('reconcile');
      const second = world.process('second');
      const r = await first.outcome;
      assert.ok(leaseWhileSiblingEnds, 'the lease was held while the sibling ran');
      assert.equal(r.code, 3);
      assert.equal(r.report.units.bad.result, 'failed');
      assert.match(r.report.units.bad.detail, /the Command driver failed: spawn refused the arguments/);
      assert.equal(r.report.units.slow.result, 'executed');
      assert.equal(r.report.units.after.result, 'blocked');
      assert.equal(world.observedDoc('bad').condition.retryable, true, 'nothing started: the next reconcile retries it');
      const again = await second.run('reconcile');
      assert.equal(world.counts().slow, 1, 'slow never ran twice');
      assert.equal(again.report.units.bad.result, 'failed', 'retried, and failed again');
    } finally {
      world.cleanup();
    }
  });

  test('a failure reason of several lines is kept whole in the report and in the condition the commit records; the end line shows its first line', async () => {
    const reason = 'NYL_OUTPUTS holds invalid JSON\n  line 2: unexpected token o\n  line 3: the file ends here';
    const world = await initialized({
      units: [unit('parse'), unit('thrower')],
      apply: { parse: failed(`${reason}\r\n\n`) },
      driver: { throws: { thrower: 'the tool said:\nfirst problem\nsecond problem' } },
    });
    try {
      const p = world.process('runner');
      const r = await p.run('reconcile');
      assert.equal(r.code, 3);
      assert.equal(r.report.units.parse.detail, reason, 'the report keeps every line');
      assert.equal(world.observedDoc('parse').condition.reason, reason, 'so does the condition the commit records');
      assert.equal(r.report.units.thrower.detail, 'the Command driver failed: the tool said:\nfirst problem\nsecond problem');
      assert.equal(world.observedDoc('thrower').condition.reason, r.report.units.thrower.detail);
      assert.ok(p.lines.includes('[dev/parse] failed in 0.0s: NYL_OUTPUTS holds invalid JSON'), p.lines.join('\n'));
      assert.ok(p.lines.includes('[dev/thrower] failed in 0.0s: the Command driver failed: the tool said:'), p.lines.join('\n'));
      const again = await world.process('again').run('reconcile');
      assert.equal(again.report.units.parse.detail, reason, 'read back from state as it was written');
    } finally {
      world.cleanup();
    }
  });

  test('a driver that throws after its tool started leaves the unit uncertain', async () => {
    const world = await initialized({ units: [unit('half')], driver: { startProcess: { half: ['tool'] }, throws: { half: 'lost track of the tool' } } });
    try {
      world.processes[0].rt.runner.register('tool', async () => ({ code: 0 }));
      const p = world.process('runner');
      p.rt.runner.register('tool', async () => ({ code: 0 }));
      const r = await p.run('reconcile');
      assert.equal(r.code, 4);
      assert.equal(r.report.units.half.result, 'uncertain');
      assert.equal(world.observedDoc('half').condition.type, 'uncertain');
    } finally {
      world.cleanup();
    }
  });
});

describe('the lease is the fencing token', () => {
  test('a holder whose lease was taken starts nothing more: its next start push fails whole', async () => {
    const world = await initialized({ units: [unit('first'), unit('second', { dependsOn: ['first'] })] });
    try {
      const before = world.stateRefs();
      const holder = world.process('holder');
      // first's checkpoint rides on the write of second's started marker (the ready queue): the
      // lease goes just before that write.
      const paused = holder.pauseAt('before-checkpoint-push', { unit: 'first' });
      const run = holder.start('reconcile');
      await paused.reached;
      world.repo.setRef(world.leaseRef, null); // someone deleted the lease behind its back
      paused.release();
      const r = await run.outcome;
      assert.deepEqual(r.codes, ['NYL-LEASE-LOST']);
      assert.equal(r.code, 4);
      assert.equal(world.driver.callsOf('second').length, 0, 'the second wave never started');
      const [dead] = world.runRefs();
      const records = world.runRecords(dead);
      // The failed start push may have landed its markers with a renewal; so when the run marks its
      // end, every unit of that wave gets a record that says it never started.
      assert.equal(world.runDoc(dead).ended?.reason, 'lease-lost', 'the run marked its end');
      assert.equal(records.get('second')?.checkpoint?.result, 'not-started', JSON.stringify(records.get('second')));
      assert.match(records.get('second').checkpoint.reason, /not started: the run lost its lease/);
      assert.equal(records.get('first')?.checkpoint?.result, 'receipt');
      for (const [name, doc] of records) assert.ok(doc.checkpoint, `${name} has no started marker without a checkpoint: no importer may take it for uncertain`);
      assert.deepEqual(world.stateRefs(), before, 'nothing reached state');
    } finally {
      world.cleanup();
    }
  });

  test('a run that lost its lease mid-unit records its late checkpoint as evidence; the importer keeps the unit uncertain', async () => {
    const world = await initialized({ units: [unit('slow'), unit('next', { dependsOn: ['slow'] })] });
    try {
      const journal = new Journal(world);
      const release = world.driver.hold('slow');
      const run = world.process('holder').start('reconcile');
      await world.driver.whenCalled('slow');
      const [holderRun] = journal.noteDeadRuns();
      await journal.leaseBreak(world.process('operator'), 'the runner looked dead');
      const imported = await world.process('importer').run('recover');
      assert.equal(imported.code, 0);
      assert.equal(imported.report.details.leaseBroken?.run, holderRun);
      assert.deepEqual(imported.report.details.recovered, ['slow']);
      assert.equal(world.observedDoc('slow').condition.type, 'uncertain');
      const stateAfterImport = world.stateRefs();
      release();
      const lost = await run.outcome;
      assert.deepEqual(lost.codes, ['NYL-LEASE-LOST']);
      assert.equal(lost.code, 4);
      assert.deepEqual(world.stateRefs(), stateAfterImport, 'the run that lost its lease changed no state ref');
      assert.equal(world.driver.callsOf('next').length, 0, 'nothing started after the lease was lost');
      assert.equal(world.runRecords(holderRun).get('slow')?.checkpoint?.result, 'receipt', 'the late record was written again');
      const next = await world.process('next').run('reconcile');
      assert.ok(
        next.report.warnings.some((w) => w.code === 'NYL-RUN-LATE-CHECKPOINT'),
        JSON.stringify(next.report.warnings),
      );
      assert.equal(world.observedDoc('slow').condition?.type, 'uncertain', 'a late checkpoint never overwrites the uncertain condition');
      assert.ok(
        world.evidenceRefs().some((r) => r.endsWith(`slow/${holderRun}`)),
        'its evidence is kept for recover --accept',
      );
      assert.deepEqual(world.runRefs(), [], 'the run ref is consumed');
    } finally {
      world.cleanup();
    }
  });

  test('a late checkpoint of a unit executed again meanwhile is kept as evidence, and later runs keep it', async () => {
    let open;
    const gate = new Promise((resolve) => (open = resolve));
    let calls = 0;
    const world = await World.create({
      units: [unit('slow', { recovery: 'converge' })],
      apply: { slow: async () => (++calls === 1 ? (await gate, receipt({ v: 'late' })) : receipt({ v: 'taker' })) },
    });
    await world.process('init').run('state init');
    try {
      const journal = new Journal(world);
      const holder = world.process('holder').start('reconcile');
      await world.driver.whenCalled('slow');
      const [holderRun] = journal.noteDeadRuns();
      await journal.leaseBreak(world.process('operator'));
      // The taker imports slow as uncertain and, as it converges, runs it again.
      const taker = await world.process('taker').run('reconcile');
      assert.equal(taker.report.units.slow.result, 'executed');
      open();
      assert.deepEqual((await holder.outcome).codes, ['NYL-LEASE-LOST']);
      assert.equal(world.receiptsIn(holderRun).length, 1, 'the late receipt is left in a run ref');

      const next = await world.process('next').run('reconcile');
      assert.ok(
        next.report.warnings.some((w) => w.code === 'NYL-RUN-LATE-CHECKPOINT'),
        JSON.stringify(next.report.warnings),
      );
      assert.equal(world.observedDoc('slow').receipt.run, taker.report.run, 'it never replaces the newer receipt');
      const evidence = `refs/nyl/${ENV}/evidence/slow/late/${holderRun}`;
      assert.ok(world.refs()[evidence], `kept as evidence: ${JSON.stringify(world.evidenceRefs())}`);
      assert.equal(world.doc(evidence, unitFile('slow')).checkpoint.outputs.v, 'late');

      // Later runs, which delete the evidence no uncertain unit needs, keep it.
      await world.setUnits([unit('slow', { recovery: 'converge', version: 'v2' })]);
      assert.equal((await world.process('later').run('reconcile')).code, 0);
      assert.equal(calls, 3);
      assert.ok(world.refs()[evidence], 'still kept');
    } finally {
      world.cleanup();
    }
  });
});

describe('a run that cannot push for a moment', () => {
  test('a checkpoint push that does not reach the repository is retried while a sibling runs; the run goes on', async () => {
    let down = false;
    const world = await initialized({ units: [unit('a'), unit('slow'), unit('b', { dependsOn: ['a'] })] });
    try {
      const p = world.process('flaky', { unreachable: () => down });
      const releaseSlow = world.driver.hold('slow');
      const first = p.pauseAt('before-checkpoint-push', { unit: 'a' });
      const run = p.start('reconcile');
      await first.reached;
      down = true;
      const failedAt = world.clock.now();
      first.release();
      await world.until(() => p.store.stats.unreachable === 1, 'the push did not reach the repository');
      down = false;
      await world.until(() => world.runRefs().some((r) => world.receiptsIn(r).includes('a')), "a's checkpoint in the run ref");
      assert.ok(world.clock.now() - failedAt >= 500, 'the retry waited a little first');
      assert.equal(world.driver.callsOf('slow')[0].outcome, undefined, 'while slow still runs');
      releaseSlow();
      const r = await run.outcome;
      assert.equal(r.code, 0, JSON.stringify(r.report?.units));
      assert.equal(r.report.units.b.result, 'executed', 'the blip did not stop the run');
    } finally {
      world.cleanup();
    }
  });

  test('a checkpoint push refused because the lease moved is not retried, and no queued unit starts after it', async () => {
    const world = await initialized({ units: [unit('long'), unit('queued')], delayMs: { long: 5_000, queued: 10 } });
    try {
      const p = world.process('holder');
      const run = p.start('reconcile', { concurrency: 1 });
      await world.driver.whenCalled('long');
      world.repo.setRef(world.leaseRef, null); // the lease is gone while long runs
      const r = await run.outcome;
      assert.deepEqual(r.codes, ['NYL-LEASE-LOST']);
      assert.equal(r.code, 4);
      assert.equal(world.driver.callsOf('queued').length, 0, 'queued was next in line when long ended: it must not start');
      const [dead] = world.runRefs();
      assert.equal(world.runRecords(dead).get('queued')?.checkpoint?.result, 'not-started', 'its record says it never started');
    } finally {
      world.cleanup();
    }
  });

  test('a queued unit starts only when the lease was confirmed within a second', async () => {
    const world = await initialized({ units: [unit('long'), unit('queued')], delayMs: { long: 5_000, queued: 10 } });
    try {
      const p = world.process('holder');
      // long's checkpoint push waits: nothing but a push of its own can tell queued that the lease is gone.
      const paused = p.pauseAt('before-checkpoint-push', { unit: 'long' });
      const run = p.start('reconcile', { concurrency: 1 });
      await world.driver.whenCalled('long');
      world.repo.setRef(world.leaseRef, null);
      await paused.reached;
      await world.until(() => p.stats.writes >= 3, 'a push that confirms the lease');
      paused.release();
      const r = await run.outcome;
      assert.deepEqual(r.codes, ['NYL-LEASE-LOST']);
      assert.equal(r.code, 4);
      assert.equal(world.driver.callsOf('queued').length, 0, 'the lease was confirmed 5 s ago, and then it was gone');
    } finally {
      world.cleanup();
    }
  });
});

describe('lease timing', () => {
  test('deadlines have millisecond precision: a 2 s lease taken at .050 lasts until .050 two seconds later', async () => {
    const world = await initialized({ units: [unit('a')], lease: '2s', autoAdvance: false });
    try {
      const p = world.process('runner', { offsetMs: 50 });
      const paused = p.pauseAt('lease-acquired');
      const takenAt = p.clock.now();
      const run = p.start('reconcile');
      await paused.reached;
      assert.equal(takenAt % 1000, 50);
      assert.equal(Date.parse(world.leaseDoc().deadline), takenAt + 2000, world.leaseDoc().deadline);
      const runDoc = world.runDoc();
      assert.equal(Date.parse(runDoc.deadline), takenAt + 2000, 'the run ref carries the same deadline');
      world.clock.autoAdvance = true;
      paused.release();
      assert.equal((await run.outcome).code, 0);
    } finally {
      world.cleanup();
    }
  });

  test('a run that waited for the lease carries the deadline of the lease it took, not of its start', async () => {
    const world = await initialized({ units: [unit('a')], lease: '1m' });
    try {
      const release = world.driver.hold('a');
      const first = world.process('first').start('reconcile');
      await world.driver.whenCalled('a');
      const waiter = world.process('waiter');
      const paused = waiter.pauseAt('lease-acquired');
      const second = waiter.start('reconcile', { waitMs: 10 * 60_000 });
      await world.clock.sleep(20_000);
      release();
      assert.equal((await first.outcome).code, 0);
      await paused.reached;
      const runDoc = world.runDoc();
      assert.equal(runDoc.deadline, world.leaseDoc().deadline, 'the run ref and the lease share one deadline');
      paused.release();
      assert.equal((await second.outcome).code, 0);
    } finally {
      world.cleanup();
    }
  });

  test('a taker whose clock is behind by more than a lease reports NYL-CLOCK-SKEW naming both hosts, and takes nothing over', async () => {
    const world = await initialized({ units: [unit('a')], lease: '5m' });
    try {
      const release = world.driver.hold('a');
      const holder = world.process('holder').start('reconcile');
      await world.driver.whenCalled('a');
      const [holderRun] = world.runRefs();
      const state = world.stateRefs();
      const behind = await world.process('behind', { offsetMs: -10 * 60_000 }).run('reconcile', { waitMs: 60_000 });
      assert.equal(behind.code, 1, JSON.stringify(behind.codes));
      assert.deepEqual(behind.codes, ['NYL-CLOCK-SKEW'], 'reported at once, not waited for');
      const data = behind.error.diagnostics[0].data;
      assert.deepEqual(data.hosts, [world.leaseDoc().holder.host, hostname()]);
      assert.ok(data.aheadMs > 5 * 60_000, `stamped ${data.aheadMs} ms ahead: more than a lease`);
      // The holder renews meanwhile; the taker wrote nothing.
      assert.equal(world.leaseDoc().run, holderRun, 'the holder keeps its lease');
      assert.deepEqual(world.runRefs(), [holderRun], 'no run ref of the taker');
      assert.deepEqual(world.stateRefs(), state);
      const status = await world.process('behind-status', { offsetMs: -10 * 60_000 }).run('status');
      assert.deepEqual(
        status.report.warnings.map((w) => w.code),
        ['NYL-CLOCK-SKEW'],
        'status warns of it too',
      );
      release();
      assert.equal((await holder.outcome).code, 0);
    } finally {
      world.cleanup();
    }
  });

  test('a live run whose lease ref is gone, stamped in the future beyond the margin, is reported as clock skew', async () => {
    const world = await initialized({ units: [unit('a'), unit('b', { dependsOn: ['a'] })], lease: '5m' });
    try {
      const victim = world.process('victim').crashAt('after-started-push', { nth: 2 });
      assert.ok((await victim.start('reconcile').outcome).died);
      world.repo.setRef(world.leaseRef, null);
      const refs = world.refs();
      const behind = await world.process('behind', { offsetMs: -10 * 60_000 }).run('reconcile');
      assert.deepEqual(behind.codes, ['NYL-CLOCK-SKEW']);
      assert.equal(behind.code, 1);
      assert.deepEqual(world.refs(), refs, 'nothing written');
      // The fix the error names: an operator who knows the holder is gone breaks the lease, and an
      // importer takes it over whatever the clocks say.
      const operator = world.process('operator', { offsetMs: -10 * 60_000 });
      assert.equal((await operator.run('lease break', { reason: 'clock skew' })).report.result, 'done');
      const recovered = await operator.run('recover');
      assert.equal(recovered.code, 0, JSON.stringify(recovered.codes ?? recovered.report?.errors));
      assert.deepEqual(world.runRefs(), [], 'the dead run is imported');
    } finally {
      world.cleanup();
    }
  });

  // Pins: a taker whose clock ran ahead of a live holder's lease judged it expired by its stamps,
  // took it over and started the unit the holder was running (fencing kept state whole, but the
  // tool ran twice at once). Now a taker watches an expired-looking lease for a renewal interval
  // and a margin on its own clock first: the live holder renews meanwhile, so it is held.
  test('a taker whose clock is ahead by more than a lease watches, sees the holder renew, and takes nothing over; nothing runs twice', async () => {
    const world = await initialized({ units: [unit('first'), unit('second')], lease: '5m' });
    try {
      const journal = new Journal(world);
      const release = world.driver.hold('first');
      const holder = world.process('holder').start('reconcile', { concurrency: 1 });
      await world.driver.whenCalled('first');
      const ahead = world.process('ahead', { offsetMs: 10 * 60_000 });
      let watchFrom;
      const push = ahead.lines.push.bind(ahead.lines);
      ahead.lines.push = (line) => ((watchFrom ??= world.clock.now()), push(line));
      const refused = await ahead.run('reconcile');
      assert.deepEqual(refused.codes, ['NYL-LEASE-HELD']);
      const held = refused.error.diagnostics[0];
      assert.equal(held.data.clocksDisagree, true);
      assert.match(held.message, /renewed while its deadline .* had passed by this host's clock/);
      const watched = world.clock.now() - watchFrom;
      assert.ok(watched <= 130_000, `it watched no longer than one renewal interval and the margin (${watched} ms)`);
      assert.ok(
        ahead.lines.some((l) => /watching it for 130 s before taking it over/.test(l)),
        ahead.lines.join('\n'),
      );
      release();
      const done = await holder.outcome;
      assert.equal(done.code, 0, JSON.stringify(done.codes));
      journal.note();
      assert.deepEqual(world.counts(), { first: 1, second: 1 }, 'each unit ran once: the taker started nothing');
    } finally {
      world.cleanup();
    }
  });

  test('lease.skewMargin widens the margin: a taker 10 min behind waits, one 10 min past the deadline does not take over', async () => {
    const world = await initialized({ units: [unit('a'), unit('b', { dependsOn: ['a'] })], lease: '5m, skewMargin: 15m' });
    try {
      const victim = world.process('victim').crashAt('after-started-push', { nth: 2 });
      assert.ok((await victim.start('reconcile').outcome).died);
      const deadline = Date.parse(world.leaseDoc().deadline);
      const behind = await world.process('behind', { offsetMs: -10 * 60_000 }).run('reconcile');
      assert.deepEqual(behind.codes, ['NYL-LEASE-HELD'], 'within the margin: live, not skew');
      const early = await world.process('early', { offsetMs: deadline + 10 * 60_000 - world.clock.now() }).run('reconcile');
      assert.deepEqual(early.codes, ['NYL-LEASE-HELD']);
      const late = await world.process('late', { offsetMs: deadline + 16 * 60_000 - world.clock.now() }).run('reconcile');
      assert.equal(late.report.units.a.result, 'imported');
    } finally {
      world.cleanup();
    }
  });

  test('a taker waits for the deadline plus the skew margin on its own clock before it takes over', async () => {
    const world = await initialized({ units: [unit('a'), unit('b', { dependsOn: ['a'] })], lease: '5m' });
    try {
      const journal = new Journal(world);
      const victim = world.process('victim').crashAt('after-started-push', { nth: 2 });
      assert.ok((await victim.start('reconcile').outcome).died);
      journal.noteDeadRuns();
      const deadline = Date.parse(world.leaseDoc().deadline);
      // 20 s past the deadline on the taker's clock: within the 30 s margin, the lease holds.
      const early = world.process('early', { offsetMs: deadline + 20_000 - world.clock.now() });
      const refs = world.refs();
      const held = await early.run('reconcile');
      assert.deepEqual(
        held.codes,
        ['NYL-LEASE-HELD'],
        JSON.stringify({ deadline: world.leaseDoc().deadline, now: early.clock.now(), report: held.report?.units }),
      );
      assert.equal(held.code, 2);
      assert.deepEqual(world.refs(), refs, 'the early taker moved no ref');
      const late = world.process('late', { offsetMs: deadline + 31_000 - world.clock.now() });
      const take = await late.run('reconcile');
      assert.equal(take.report.details.leaseBroken, undefined, 'an expired lease is no break');
      assert.equal(take.report.units.a.result, 'imported');
      assert.equal(take.report.units.b.result, 'recovered', 'b started and may have had effects');
    } finally {
      world.cleanup();
    }
  });

  test('a holder whose renewals fail starts no unit within the safety margin of the deadline it last pushed', async () => {
    let writing; // the updates of the write about to be checked, set by beforeWrite
    let leftWhenLongEnded;
    const leftAtStart = {};
    const pushedDeadline = () => Date.parse(world.leaseDoc().deadline);
    const world = await initialized({
      units: [unit('long'), unit('queued')],
      lease: '10s', // safety margin 1 s
      delayMs: { queued: 10 },
      apply: {
        long: async (ctx) => {
          await ctx.clock.sleep(9_500);
          leftWhenLongEnded = pushedDeadline() - ctx.clock.now();
          return receipt({ unit: 'long' });
        },
      },
      storeOptions: { beforeWrite: (updates) => (writing = updates) },
      driver: { onCall: async (call) => (leftAtStart[call.unit] = pushedDeadline() - call.at) },
    });
    try {
      // Only renewals fail (a push that moves the lease to a new commit), and only while long runs:
      // the lease stays ours and its checkpoint fences land, so nothing but the margin stops queued.
      // The store asks right after beforeWrite; each answer is for that write alone (reads never fail).
      const renewal = (updates) => updates?.some((u) => u.ref === world.leaseRef && u.expect && u.to && u.expect !== u.to);
      const longRuns = () => world.driver.callsOf('long').length === 1 && world.driver.callsOf('long')[0].outcome === undefined;
      const unreachable = () => {
        const refused = renewal(writing) && longRuns();
        writing = undefined;
        return refused;
      };
      const p = world.process('holder', { unreachable });
      const r = await p.run('reconcile', { concurrency: 1 });
      assert.equal(r.code, 0, JSON.stringify(r.codes ?? r.report?.units));
      // The renewal at 3.3 s and its retries 0.5, 1 and 2 s later fail while long runs; the last
      // retry, 4 s after that (10.8 s), lands once long has ended.
      assert.equal(p.store.stats.unreachable, 4, 'the renewal and its retries while long ran failed');
      assert.ok(leftWhenLongEnded < 1000, `long ended ${leftWhenLongEnded} ms before the deadline last pushed: within the margin`);
      assert.equal(world.driver.callsOf('queued').length, 1, 'queued started once a renewal landed');
      assert.ok(leftAtStart.queued >= 1000, `queued started with ${leftAtStart.queued} ms left on the lease (safety margin 1 s)`);
    } finally {
      world.cleanup();
    }
  });

  test('a run whose state repository stays unreachable starts nothing more, exits 4 NYL-RUN-UNRECORDED naming what ran; status shows it running', async () => {
    let unreachable = false;
    const world = await initialized({ units: [unit('long'), unit('queued')], lease: '5m', delayMs: { long: 9_500, queued: 10 } });
    try {
      const p = world.process('holder', { unreachable: () => unreachable });
      const paused = p.pauseAt('after-started-push');
      const run = p.start('reconcile', { concurrency: 1 });
      await paused.reached;
      unreachable = true; // renewals, checkpoints, the run's end and the release fail from now on
      paused.release();
      const r = await run.outcome;
      assert.equal(world.driver.callsOf('long').length, 1);
      assert.equal(world.driver.callsOf('queued').length, 0, 'no push confirms the lease: queued must not start');
      assert.deepEqual(
        r.report.errors.map((e) => e.code),
        ['NYL-RUN-UNRECORDED'],
        'its transition cannot be pushed either',
      );
      assert.equal(r.code, 4, 'effects that are not recorded: exit 4');
      const [unrecorded] = r.report.errors;
      assert.deepEqual(unrecorded.units, ['long']);
      assert.deepEqual(unrecorded.data.withoutCheckpoint, ['long'], "long's checkpoint never reached the run ref");
      assert.match(unrecorded.fix, /nyl reconcile -e dev/);
      assert.equal(r.report.units.long.result, 'executed');

      // The repository is back. The holder could not let its lease go: until its deadline, status
      // shows long as started and not recorded; then the next run imports it as uncertain.
      const status = await world.process('operator').run('status');
      assert.equal(status.report.units.long.state, 'running', JSON.stringify(status.report.units.long));
      assert.match(status.report.units.long.detail, /started by run .* at .*; its result is not recorded/);
      // queued's started marker went out with long's (one push per wave), and the record that it
      // never started could not be pushed: state cannot tell it from a unit that ran.
      assert.equal(status.report.units.queued.state, 'running');
      const next = await world.process('next', { offsetMs: 6 * 60_000 }).run('reconcile');
      assert.equal(next.report.units.long.result, 'recovered', 'started without a checkpoint: uncertain, not run again');
      assert.equal(next.report.units.queued.result, 'recovered');
      assert.equal(world.driver.callsOf('queued').length, 0, 'nothing ran twice, nothing ran unrecorded');
    } finally {
      world.cleanup();
    }
  });
});

describe('holds delivered to a running run', () => {
  test('a unit not started yet is held as it was; one that ran is held as it ran', async () => {
    const world = await initialized({ units: [unit('a'), unit('c'), unit('b', { dependsOn: ['a'] })] });
    try {
      const release = world.driver.hold('a');
      const run = world.process('runner').start('reconcile');
      await world.driver.whenCalled('a');
      await world.until(() => world.driver.callsOf('c')[0]?.outcome !== undefined, 'c ran');
      const operator = world.process('operator');
      assert.equal((await operator.run('hold', { unit: 'b', reason: 'incident' })).report.result, 'delivered');
      assert.equal((await operator.run('hold', { unit: 'c', reason: 'incident' })).report.result, 'delivered');
      release();
      const r = await run.outcome;
      assert.equal(r.report.units.b.result, 'held');
      assert.equal(r.report.units.c.result, 'held');
      assert.equal(r.report.units.c.detail, 'held as it ran (executed)');
      assert.equal(world.driver.callsOf('b').length, 0, 'b never started');
      assert.equal(world.desiredDoc('b').lifecycle.state, 'held');
      assert.equal(world.desiredDoc('c').lifecycle.state, 'held');
      assert.deepEqual(
        Object.keys(world.refs()).filter((ref) => ref.includes('/signals/')),
        [],
        'the signals were consumed',
      );
    } finally {
      world.cleanup();
    }
  });

  // Over a network every look at the signals is a read (the process's store cannot tell cheaply
  // whether a signal exists). `failSignalReads(n)` makes the next n of those reads unreachable;
  // every other read and write of the run still works.
  function flakySignals() {
    const reads = { failing: 0, failed: 0 };
    const unreachable = (call) => {
      if (call !== 'snapshotPrefix' || reads.failing === 0) return false;
      reads.failing--;
      reads.failed++;
      return true;
    };
    return { reads, options: { network: true, unreachable } };
  }

  /** The run published its transition, without an error (one that stopped ends NYL-RUN-UNRECORDED); exit 2 for the held unit. */
  function assertCompleted(r) {
    assert.deepEqual(r.codes ?? r.report.errors.map((e) => e.code), [], JSON.stringify(r.report?.errors ?? r.codes));
    assert.equal(r.report.committed, true);
    assert.equal(r.code, 2);
  }

  test('a signal read that fails between waves is tried again: the run goes on, and the hold it then reads takes effect', async () => {
    const world = await initialized({ units: [unit('a'), unit('b', { dependsOn: ['a'] })] });
    try {
      const { reads, options } = flakySignals();
      const release = world.driver.hold('a');
      const run = world.process('runner', options).start('reconcile');
      await world.driver.whenCalled('a');
      assert.equal((await world.process('operator').run('hold', { unit: 'b', reason: 'incident' })).report.result, 'delivered');
      reads.failing = 1; // the read once a has ended
      const failedAt = world.clock.now();
      release();
      const r = await run.outcome;
      assert.equal(reads.failed, 1, 'the read between the waves failed once');
      assert.ok(world.clock.now() - failedAt >= 500, 'and was tried again a little later');
      assertCompleted(r);
      assert.equal(r.report.units.a.result, 'executed');
      assert.equal(r.report.units.b.result, 'held', JSON.stringify(r.report.units.b));
      assert.equal(world.driver.callsOf('b').length, 0, 'b never started');
      assert.equal(world.desiredDoc('b').lifecycle.state, 'held');
    } finally {
      world.cleanup();
    }
  });

  test('a signal read that keeps failing does not end the run; a hold delivered after the failure takes effect at the next read', async () => {
    const world = await initialized({ units: [unit('a'), unit('b', { dependsOn: ['a'] }), unit('c', { dependsOn: ['b'] })] });
    try {
      const { reads, options } = flakySignals();
      const releaseA = world.driver.hold('a');
      const releaseB = world.driver.hold('b');
      const run = world.process('runner', options).start('reconcile');
      await world.driver.whenCalled('a');
      reads.failing = 4; // the read once a has ended, and every retry of it
      releaseA();
      const first = await Promise.race([world.driver.whenCalled('b').then(() => 'b started'), run.outcome.then((r) => r)]);
      assert.equal(first, 'b started', `the run went on: ${JSON.stringify(first.codes ?? first.report?.units)}`);
      assert.equal(reads.failed, 4, 'the read between the waves and its retries failed');
      assert.equal((await world.process('operator').run('hold', { unit: 'c', reason: 'incident' })).report.result, 'delivered');
      releaseB();
      const r = await run.outcome;
      assertCompleted(r);
      assert.equal(r.report.units.b.result, 'executed');
      assert.equal(r.report.units.c.result, 'held', JSON.stringify(r.report.units.c));
      assert.equal(world.driver.callsOf('c').length, 0, 'c never started');
      assert.equal(world.desiredDoc('c').lifecycle.state, 'held');
    } finally {
      world.cleanup();
    }
  });
});

describe('the prepare phase', () => {
  /** A prepare that pins what the unit runs: its rendering gains the digest a registry lookup found. */
  const pin = (digest) => async (ctx) => ({ result: 'prepared', rendering: { ...ctx.rendering, digest } });

  test('a unit is prepared before its key exists, executes with the prepared rendering, and is current after', async () => {
    const world = await initialized({
      units: [unit('img'), unit('after', { dependsOn: ['img'] })],
      driver: { prepare: { img: pin('sha256:aaa'), default: true } },
    });
    try {
      const r = await world.process('runner').run('reconcile');
      assert.equal(r.code, 0, JSON.stringify(r.report?.units));
      const [apply] = world.driver.callsOf('img');
      assert.equal(apply.rendering.digest, 'sha256:aaa', 'apply sees the prepared rendering');
      assert.ok(world.driver.callsOf('img', 'prepare')[0].at <= apply.at, 'prepare comes first');
      assert.equal(world.desiredDoc('img').rendering.digest, 'sha256:aaa', 'the desired document records what ran');
      const again = await world.process('again').run('reconcile');
      assert.equal(again.report.units.img.result, 'current', JSON.stringify(again.report.units.img));
      assert.equal(world.driver.callsOf('img').length, 1, 'the same digest: no second execution');
    } finally {
      world.cleanup();
    }
  });

  test("a dead run's checkpoint of a prepared unit is imported (its key resolved with the recorded preparation), not superseded", async () => {
    const world = await initialized({ units: [unit('img'), unit('slow')], driver: { prepare: { img: pin('sha256:aaa'), default: true } } });
    const journal = new Journal(world);
    try {
      const releaseSlow = world.driver.hold('slow');
      const victim = world.process('victim');
      const run = victim.start('reconcile');
      await world.until(() => world.runRefs().some((r) => world.receiptsIn(r).includes('img')), "img's checkpoint");
      victim.kill();
      await run.outcome;
      releaseSlow();
      journal.noteDeadRuns();
      await journal.leaseBreak(world.process('operator'));
      const take = await world.process('takeover').run('reconcile');
      assert.equal(take.report.units.img.result, 'imported', JSON.stringify(take.report.units.img));
      assert.deepEqual(
        take.report.warnings.filter((w) => w.code === 'NYL-RUN-SUPERSEDED'),
        [],
      );
      assert.equal(world.driver.callsOf('img').length, 1, 'not executed again');
      assert.equal(world.desiredDoc('img').preparedFrom.startsWith('sha256:'), true, 'the desired document records what the preparation was made from');
      // status runs no driver: it shows the unit pending its preparation, with the key the recorded one gives.
      const img = (await world.process('status').run('status')).report.units.img;
      assert.equal(img.state, 'pending');
      assert.equal(img.executionKey, img.receiptKey, JSON.stringify(img));
    } finally {
      world.cleanup();
    }
  });

  test('a prepare that fails or throws fails its unit alone; its dependents are blocked; exit 3', async () => {
    const world = await initialized({
      units: [unit('bad'), unit('broken'), unit('dep', { dependsOn: ['bad'] }), unit('fine')],
      driver: {
        prepare: {
          bad: { result: 'failed', reason: 'tag v9 not found', retryable: true },
          broken: async () => {
            throw new Error('registry client bug');
          },
          default: true,
        },
      },
    });
    try {
      const r = await world.process('runner').run('reconcile');
      assert.equal(r.code, 3, JSON.stringify(r.report?.units));
      assert.equal(r.report.units.bad.result, 'failed');
      assert.match(r.report.units.bad.detail, /tag v9 not found/);
      assert.equal(r.report.units.broken.result, 'failed');
      assert.match(r.report.units.broken.detail, /failed to prepare: registry client bug/);
      assert.equal(r.report.units.dep.result, 'blocked');
      assert.equal(r.report.units.fine.result, 'executed');
      assert.deepEqual([world.driver.callsOf('bad').length, world.driver.callsOf('broken').length], [0, 0], 'nothing unprepared is applied');
    } finally {
      world.cleanup();
    }
  });

  test('an input absent on this machine: a current unit stays current on its recorded preparation; one that must execute fails; a present input is resolved again', async () => {
    // What the machine has: the digest the tag points to, or nothing (absent, as the OciImage driver says it).
    const machine = { digest: 'sha256:aaa' };
    const absent = {
      result: 'absent',
      failure: { ...failed('image app:1 is not present locally, and Nyl never pulls one\nmake it present first'), code: 'NYL-IMAGE-UNRESOLVED' },
    };
    const prepare = async (ctx) => (machine.digest ? { result: 'prepared', rendering: { ...ctx.rendering, digest: machine.digest } } : absent);
    const world = await initialized({
      units: [unit('img', { recovery: 'converge' }), unit('after', { dependsOn: ['img'], env: { D: '${{ units.img.outputs.unit }}' } })],
      driver: { prepare: { img: prepare, default: true } },
    });
    try {
      assert.equal((await world.process('first').run('reconcile')).code, 0);
      const recorded = world.desiredDoc('img');
      const observed = world.observedDoc('img');

      machine.digest = undefined;
      const quiet = await world.process('absent').run('reconcile');
      assert.equal(quiet.code, 0, JSON.stringify(quiet.report.units));
      assert.equal(quiet.report.units.img.result, 'current');
      assert.match(
        quiet.report.units.img.detail,
        /^current on the preparation its desired document recorded \(image app:1 is not present locally, and Nyl never pulls one: only an execution needs it\)$/,
      );
      assert.equal(quiet.report.units.after.result, 'current', 'its consumers resolve from its receipt');
      assert.deepEqual(
        [world.desiredDoc('img'), world.observedDoc('img')],
        [recorded, observed],
        'nothing recorded: no failure, the recorded preparation stands',
      );
      assert.equal(world.driver.callsOf('img').length, 1, 'not executed');

      // --reapply must execute it: the absence is its failure, with the driver's code and fix.
      const reapplied = await world.process('reapply').run('reconcile', { units: ['img'], reapply: true, reason: 'run it again' });
      assert.equal(reapplied.code, 3, JSON.stringify(reapplied.report.units));
      assert.match(reapplied.report.units.img.detail, /^image app:1 is not present locally/);
      assert.match(world.observedDoc('img').condition.reason, /make it present first/);
      assert.equal(world.driver.callsOf('img').length, 1, 'nothing applied');

      // The image is here again, under another digest (the tag moved): resolved, and run again.
      machine.digest = 'sha256:bbb';
      const moved = await world.process('moved').run('reconcile');
      assert.equal(moved.code, 0, JSON.stringify(moved.report.units));
      assert.equal(moved.report.units.img.result, 'executed');
      assert.equal(world.desiredDoc('img').rendering.digest, 'sha256:bbb');

      // A change of its own while the image is absent: it must execute, and fails.
      machine.digest = undefined;
      await world.setUnits([
        unit('img', { recovery: 'converge', version: 'v2' }),
        unit('after', { dependsOn: ['img'], env: { D: '${{ units.img.outputs.unit }}' } }),
      ]);
      const changed = await world.process('changed').run('reconcile');
      assert.equal(changed.code, 3, JSON.stringify(changed.report.units));
      assert.equal(changed.report.units.img.result, 'failed');
      assert.match(changed.report.units.img.detail, /image app:1 is not present locally/);
      assert.equal(changed.report.units.after.result, 'blocked');
    } finally {
      world.cleanup();
    }
  });

  test("a wave's checkpoints are pushed before the next prepare wave, not after it", async () => {
    // a and b end together: b's checkpoint arrives while a's push is in flight, and would wait
    // for the next wave's started markers, after img's prepare.
    const world = await initialized({ units: [unit('a'), unit('b'), unit('img', { dependsOn: ['a', 'b'] })], delayMs: 10, driver: { prepare: { img: true } } });
    try {
      const gate = world.driver.hold('img', 'prepare');
      const run = world.process('runner').start('reconcile');
      await world.driver.whenCalled('img', 'prepare');
      const receiptsWhenPreparing = world
        .runRefs()
        .flatMap((r) => world.receiptsIn(r))
        .sort();
      gate();
      assert.equal((await run.outcome).code, 0);
      assert.deepEqual(receiptsWhenPreparing, ['a', 'b'], "a's and b's checkpoints landed before img's prepare began");
    } finally {
      world.cleanup();
    }
  });
});
