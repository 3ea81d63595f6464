// A lease no clock can fool, in process on virtual time: a holder and a taker whose clocks
// disagree by ±1 min, ±10 min and ±1 h, the taker arriving at moments of the holder's run spread
// over it (seeded, so a failure repeats), while the tool of a converge unit still runs. The
// invariant: no two executions of one unit overlap, whatever the skew. And a dead run is still
// taken over without `nyl lease break`: at once by a taker ahead of it (once it watched the lease
// stay unchanged), and by a taker far behind it (its stamps in the taker's future) once the lease
// stayed unchanged for a whole lease and the watch window, when the taker waits that long.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { receipt } from '../fakes/driver.mjs';
import { seededRandom } from '../support/seeded.mjs';
import { World } from './world.mjs';

const MINUTE = 60_000;
const SKEWS = [MINUTE, -MINUTE, 10 * MINUTE, -10 * MINUTE, 60 * MINUTE, -60 * MINUTE];
/** How long the converge unit's tool runs: longer than the 5-minute lease, so it is renewed meanwhile. */
const LONG_MS = 12 * MINUTE;
const ARRIVALS_PER_SKEW = 3;

/** A world whose unit `long` (recovery converge) runs LONG_MS on virtual time, recording each execution's interval. */
async function skewWorld() {
  const intervals = [];
  let world;
  // On the world's time: every process's own clock is off by its skew.
  const long = async (ctx) => {
    const interval = { start: world.clock.now(), end: undefined, run: ctx.run };
    intervals.push(interval);
    await ctx.clock.sleep(LONG_MS, ctx.cancel);
    interval.end = world.clock.now();
    return receipt({ done: 'yes' });
  };
  world = await World.create({
    units: [
      { name: 'long', dependsOn: [], recovery: 'converge' },
      { name: 'next', dependsOn: ['long'] },
    ],
    apply: { long },
  });
  await world.process('init').run('state init');
  return { world, intervals };
}

/** Intervals of one unit that overlap (an unfinished one lasts for ever). */
function overlaps(intervals) {
  const found = [];
  for (let i = 0; i < intervals.length; i++) {
    for (let j = i + 1; j < intervals.length; j++) {
      const [a, b] = [intervals[i], intervals[j]];
      if (a.start < (b.end ?? Infinity) && b.start < (a.end ?? Infinity)) found.push([a, b]);
    }
  }
  return found;
}

describe('a lease no clock can fool', () => {
  // Seeded: the same arrivals on every run, so a failure repeats.
  const random = seededRandom(31);
  const tried = [];

  for (const skew of SKEWS) {
    for (let k = 0; k < ARRIVALS_PER_SKEW; k++) {
      const arrival = Math.floor(random() * LONG_MS);
      test(`a live holder, a taker ${skew / MINUTE} min off arriving ${Math.round(arrival / 1000)} s into the unit: no execution overlaps another`, async () => {
        const { world, intervals } = await skewWorld();
        try {
          const holding = world.process('holder').start('reconcile');
          await world.driver.whenCalled('long');
          await world.clock.advance(arrival);
          const taker = await world.process('taker', { offsetMs: skew }).run('reconcile');
          // Held (or skew) while the holder runs; a taker that watched until the holder ended finds everything current.
          const finished = taker.code === 0 && Object.values(taker.report.units).every((u) => u.result === 'current');
          assert.ok(finished || ['NYL-LEASE-HELD', 'NYL-CLOCK-SKEW'].includes(taker.codes?.[0]), JSON.stringify(taker.codes ?? taker.report?.units));
          const held = await holding.outcome;
          assert.equal(held.code, 0, JSON.stringify(held.codes));
          assert.deepEqual(overlaps(intervals), []);
          assert.equal(intervals.length, 1, 'long ran once');
          tried.push({ skew, arrival, overlaps: 0 });
        } finally {
          world.cleanup();
        }
      });
    }
  }

  for (const skew of SKEWS) {
    test(`a dead holder, a taker ${skew / MINUTE} min off: taken over without lease break; long runs again, never beside the dead run's`, async () => {
      const { world, intervals } = await skewWorld();
      try {
        const holder = world.process('holder');
        holder.start('reconcile');
        await world.driver.whenCalled('long');
        await world.clock.advance(MINUTE);
        holder.kill();
        const deadAt = world.clock.now();
        // The dead run's tool is stopped with it (the watchdog's job); the interval ends there.
        intervals[0].end = deadAt;
        const taker = await world.process('taker', { offsetMs: skew }).run('reconcile', { waitMs: 2 * 60 * MINUTE });
        assert.equal(taker.code, 0, JSON.stringify(taker.codes ?? taker.report?.units));
        assert.equal(taker.report.details.leaseBroken, undefined, 'no lease break was needed');
        assert.equal(taker.report.units.long.result, 'executed', 'converge: run again');
        assert.equal(intervals.length, 2);
        assert.deepEqual(overlaps(intervals), []);
        const waited = intervals[1].start - deadAt;
        const lease = 5 * MINUTE;
        const window = lease / 3 + 30_000;
        assert.ok(waited <= lease + window + 5_000 || skew < 0, `a taker ahead waited ${waited} ms`);
        assert.ok(waited <= 2 * lease + window + 5_000, `no taker waited much more than a lease and the window (${waited} ms)`);
        tried.push({ skew, dead: true, waited, overlaps: 0 });
      } finally {
        world.cleanup();
      }
    });
  }

  test('status, on a clock 10 min ahead, says how long an expired-looking lease must stay unchanged, then that the holder renewed it anyway: the clocks disagree', async () => {
    const { world } = await skewWorld();
    try {
      const holding = world.process('holder').start('reconcile');
      await world.driver.whenCalled('long');
      const first = (await world.process('status-1', { offsetMs: 10 * MINUTE }).run('status')).report;
      assert.ok(
        first.notes.some((n) => /a taker takes the lease of dev over once it stayed unchanged for 130 s/.test(n.message)),
        JSON.stringify(first.notes),
      );
      assert.ok(!first.warnings.some((w) => w.data?.observedRenewal), 'no renewal seen yet');
      await world.clock.advance(2 * MINUTE);
      const second = (await world.process('status-2', { offsetMs: 10 * MINUTE }).run('status')).report;
      const skew = second.warnings.find((w) => w.code === 'NYL-CLOCK-SKEW' && w.data?.observedRenewal);
      assert.ok(skew, JSON.stringify(second.warnings));
      assert.match(skew.message, /renewed by .* while its deadline had passed by this host's clock/);
      assert.equal((await holding.outcome).code, 0);
    } finally {
      world.cleanup();
    }
  });

  test('every combination was tried', () => {
    assert.equal(tried.length, SKEWS.length * (ARRIVALS_PER_SKEW + 1));
  });
});

describe('an observation outlives its command (the cache of one boot)', () => {
  test('status saw the expired lease unchanged; a reconcile a window later takes it over without watching again', async () => {
    const { world } = await skewWorld();
    try {
      const holder = world.process('holder');
      holder.start('reconcile');
      await world.driver.whenCalled('long');
      holder.kill();
      const lease = world.leaseDoc();
      await world.clock.advance(Date.parse(lease.deadline) + 31_000 - world.clock.now());
      const seen = (await world.process('status').run('status')).report;
      assert.ok(
        seen.notes.some((n) => /stayed unchanged for 130 s \(as this host saw it, 0 s so far\)/.test(n.message)),
        JSON.stringify(seen.notes),
      );
      await world.clock.advance(131_000);
      const taker = world.process('taker');
      const took = await taker.run('reconcile');
      assert.equal(took.code, 0, JSON.stringify(took.codes ?? took.report.units));
      assert.ok(!taker.lines.some((l) => /watching it/.test(l)), 'the earlier observation counted');
    } finally {
      world.cleanup();
    }
  });
});
