// The Clock port (src/util/clock.ts): one suite run against SystemClock, OffsetClock and the
// test fake ManualClock (driven by autoAdvance), then ManualClock's own virtual-time semantics.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { OffsetClock, SystemClock } from '../../dist/util/clock.js';
import { ManualClock } from '../fakes/clock.mjs';

const START = Date.parse('2024-05-01T12:00:00Z');

const CLOCKS = [
  { name: 'SystemClock', make: () => new SystemClock(), virtual: false },
  { name: 'OffsetClock', make: () => new OffsetClock(START), virtual: false, start: START },
  { name: 'ManualClock (autoAdvance)', make: () => new ManualClock(START, { autoAdvance: true }), virtual: true, start: START },
];

/** Resolves with 'late' if `promise` has not settled within `ms` real milliseconds. */
function within(promise, ms) {
  let timer;
  return Promise.race([promise.then(() => 'settled'), new Promise((r) => (timer = setTimeout(r, ms, 'late')))]).finally(() => clearTimeout(timer));
}

for (const impl of CLOCKS) {
  describe(`Clock port: ${impl.name}`, () => {
    test('now() is milliseconds since the epoch (near the start instant when pinned)', () => {
      const clock = impl.make();
      const t = clock.now();
      assert.equal(typeof t, 'number');
      assert.ok(Number.isFinite(t));
      if (impl.start !== undefined) assert.ok(Math.abs(t - impl.start) < 1000, `${t} vs ${impl.start}`);
      else assert.ok(Math.abs(t - Date.now()) < 1000);
    });

    test('sleep(ms) resolves once ms have passed on this clock, and now() never goes back', async () => {
      const clock = impl.make();
      const before = clock.now();
      const result = await clock.sleep(60);
      assert.equal(result, undefined);
      const after = clock.now();
      // Real timers may fire up to a millisecond early against the wall clock.
      assert.ok(after - before >= 59, `slept ${after - before} ms`);
      if (impl.virtual) assert.equal(after - before, 60);
    });

    test('an already-aborted signal: sleep resolves at once, even for a long sleep', async () => {
      const clock = impl.make();
      const ac = new AbortController();
      ac.abort('SIGINT');
      const before = clock.now();
      assert.equal(await within(clock.sleep(60_000, ac.signal), 500), 'settled');
      assert.ok(clock.now() - before < 500);
    });

    test('an abort during a sleep ends it early, without rejecting, and removes its listener', async () => {
      const clock = impl.make();
      const ac = new AbortController();
      const sleeping = clock.sleep(60_000, ac.signal);
      assert.equal(getEventListeners(ac.signal, 'abort').length, 1);
      setTimeout(() => ac.abort(new Error('stop')), 20);
      assert.equal(await within(sleeping, 2000), 'settled');
      assert.equal(await sleeping, undefined);
      assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
    });

    test('a completed sleep leaves no abort listener behind (polling loops share one signal)', async () => {
      const clock = impl.make();
      const ac = new AbortController();
      for (let i = 0; i < 20; i++) await clock.sleep(1, ac.signal);
      assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
    });

    test('sleep(0) resolves', async () => {
      const clock = impl.make();
      assert.equal(await within(clock.sleep(0), 500), 'settled');
    });
  });
}

describe('ManualClock: virtual time', () => {
  test('time moves only when advanced; a sleeper wakes exactly at its wake time', async () => {
    const clock = new ManualClock(1000);
    assert.equal(clock.now(), 1000);
    let wokeAt;
    clock.sleep(500).then(() => (wokeAt = clock.now()));
    assert.equal(clock.sleepers(), 1);
    assert.equal(clock.nextWake(), 1500);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(wokeAt, undefined, 'real time does not move it');
    await clock.advance(499);
    assert.equal(wokeAt, undefined);
    assert.equal(clock.now(), 1499);
    await clock.advance(1);
    assert.equal(wokeAt, 1500);
    assert.equal(clock.sleepers(), 0);
  });

  test('one advance wakes sleepers in wake-time order (FIFO for equal times), each seeing its own wake time', async () => {
    const clock = new ManualClock(0);
    const woken = [];
    const sleep = (name, ms) => clock.sleep(ms).then(() => woken.push(`${name}@${clock.now()}`));
    sleep('c', 300);
    sleep('a', 100);
    sleep('b1', 200);
    sleep('b2', 200);
    sleep('late', 5000);
    await clock.advance(1000);
    assert.deepEqual(woken, ['a@100', 'b1@200', 'b2@200', 'c@300']);
    assert.equal(clock.now(), 1000);
    assert.equal(clock.sleepers(), 1);
  });

  test('code woken inside an advance that sleeps again is woken by the same advance when due within it', async () => {
    const clock = new ManualClock(0);
    const ticks = [];
    (async () => {
      for (;;) {
        await clock.sleep(1000);
        // A few awaits between wakes, as real code has.
        await Promise.resolve();
        await null;
        ticks.push(clock.now());
        await clock.sleep(100);
        ticks.push(clock.now());
        if (clock.now() >= 3000) return;
      }
    })();
    await clock.advance(1100);
    assert.deepEqual(ticks, [1000, 1100]);
    await clock.advance(999);
    assert.deepEqual(ticks, [1000, 1100]);
    assert.equal(clock.now(), 2099);
    await clock.advance(1);
    assert.deepEqual(ticks, [1000, 1100, 2100]);
    await clock.advance(10_000);
    assert.deepEqual(ticks, [1000, 1100, 2100, 2200, 3200, 3300]);
    assert.equal(clock.now(), 12_100);
    assert.equal(clock.sleepers(), 0);
  });

  test('an aborted sleep stops counting as a sleeper; an already-aborted one never counts', async () => {
    const clock = new ManualClock(0);
    const ac = new AbortController();
    const p = clock.sleep(100, ac.signal);
    assert.equal(clock.sleepers(), 1);
    ac.abort();
    await p;
    assert.equal(clock.sleepers(), 0);
    assert.equal(clock.now(), 0);
    await clock.sleep(100, ac.signal);
    assert.equal(clock.sleepers(), 0);
  });

  test('set(ms): forward wakes like advance, backward wakes nobody and keeps absolute wake times', async () => {
    const clock = new ManualClock(1000);
    let woke = false;
    clock.sleep(100).then(() => (woke = true)); // wakes at 1100
    await clock.set(500);
    assert.equal(clock.now(), 500);
    assert.equal(woke, false);
    await clock.set(1099);
    assert.equal(woke, false);
    await clock.set(1100);
    assert.equal(woke, true);
    assert.equal(clock.now(), 1100);
  });

  test('advance(negative) throws', () => {
    assert.throws(() => new ManualClock(0).advance(-1), RangeError);
  });

  test('runUntilIdle jumps from wake to wake until nobody sleeps', async () => {
    const clock = new ManualClock(0);
    const seen = [];
    (async () => {
      for (let i = 0; i < 5; i++) {
        await clock.sleep(250);
        seen.push(clock.now());
      }
    })();
    assert.equal(await clock.runUntilIdle(), 1250);
    assert.deepEqual(seen, [250, 500, 750, 1000, 1250]);
  });

  test('runUntilIdle throws after maxSteps for a poller that never ends', async () => {
    const clock = new ManualClock(0);
    const stop = new AbortController();
    (async () => {
      while (!stop.signal.aborted) await clock.sleep(10, stop.signal);
    })();
    await assert.rejects(clock.runUntilIdle({ maxSteps: 50 }), /after 50 steps/);
    stop.abort();
  });

  test('drive(promise) settles a promise that waits on sleeps, and passes its value or error through', async () => {
    const clock = new ManualClock(0);
    const work = async () => {
      await clock.sleep(60_000);
      await new Promise((r) => setImmediate(r)); // some real event-loop work in between
      await clock.sleep(30_000);
      return clock.now();
    };
    assert.equal(await clock.drive(work()), 90_000);
    const failing = async () => {
      await clock.sleep(5);
      throw new Error('boom');
    };
    await assert.rejects(clock.drive(failing()), /boom/);
  });

  test('drive: timeouts race on virtual time (the earlier wake wins)', async () => {
    const clock = new ManualClock(0);
    const ac = new AbortController();
    const slow = clock.sleep(10_000, ac.signal).then(() => 'slow');
    const timeout = clock.sleep(1_000).then(() => {
      ac.abort();
      return 'timeout';
    });
    assert.equal(await clock.drive(Promise.race([slow, timeout])), 'timeout');
    assert.equal(clock.now(), 1_000);
    assert.equal(clock.sleepers(), 0);
  });

  test('drive gives up after maxSteps, and when nobody sleeps for realTimeoutMs', async () => {
    const clock = new ManualClock(0);
    const stop = new AbortController();
    const never = (async () => {
      while (!stop.signal.aborted) await clock.sleep(10, stop.signal);
    })();
    await assert.rejects(clock.drive(never, { maxSteps: 20 }), /after 20 time jumps/);
    stop.abort();
    await never;
    await assert.rejects(clock.drive(new Promise(() => {}), { realTimeoutMs: 30 }), /nobody sleeping/);
  });

  test('autoAdvance: time jumps to the next wake whenever only sleeps are pending', async () => {
    const clock = new ManualClock(0, { autoAdvance: true });
    const began = Date.now();
    await clock.sleep(3_600_000);
    assert.equal(clock.now(), 3_600_000);
    const order = [];
    await Promise.all([
      clock.sleep(300).then(() => order.push(300)),
      clock.sleep(100).then(() => order.push(100)),
      clock.sleep(200).then(() => order.push(200)),
    ]);
    assert.deepEqual(order, [100, 200, 300]);
    assert.equal(clock.now(), 3_600_300);
    assert.ok(Date.now() - began < 1000, 'virtual hours took no real time');
    clock.autoAdvance = false;
    let woke = false;
    clock.sleep(10).then(() => (woke = true));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(woke, false, 'switched off: time waits for advance()');
    clock.autoAdvance = true;
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(woke, true, 'switched back on: pending sleepers are woken');
  });

  test('autoAdvance: a sleep cancelled while the idle clock is about to jump does not move time', async () => {
    // A renewal timer stopped when its operation ends: time must not jump to its wake time.
    const clock = new ManualClock(0, { autoAdvance: true, idleTurns: 2 });
    const stop = new AbortController();
    void clock.sleep(100_000, stop.signal);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    stop.abort(); // the jump to 100 s was picked; its sleeper is gone before it happens
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(clock.now(), 0);
    await clock.sleep(5);
    assert.equal(clock.now(), 5, 'the next sleeper decides the next jump');
  });
});
