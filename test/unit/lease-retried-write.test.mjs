// writeRetried (src/lease/retried-write.ts) against a scripted store: a write that did not reach
// the repository is tried again after a growing pause, unless a read in between shows that it
// landed after all, or that someone else moved the refs; a refused write is never tried again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WRITE_RETRY_DELAYS_MS, writeRetried } from '../../dist/lease/retried-write.js';

const LEASE = 'refs/nyl/dev/lease';
const UPDATES = [{ ref: LEASE, expect: 'l1', to: 'l2' }];
const DOWN = { ok: false, kind: 'unreachable', message: 'HTTP 503' };

/** answers: what each write returns; reads: what each snapshot between tries returns ('throw' when it fails). */
function scriptedStore(answers, reads = []) {
  const calls = { writes: 0, snapshots: 0 };
  return {
    calls,
    write: async () => (calls.writes++, answers.shift() ?? { ok: true }),
    snapshot: async () => {
      calls.snapshots++;
      const refs = reads.shift() ?? { [LEASE]: 'l1' };
      if (refs === 'throw') throw new Error('still down');
      return new Map(Object.entries(refs));
    },
  };
}

function recordingClock() {
  const sleeps = [];
  return { sleeps, now: () => 0, sleep: async (ms) => void sleeps.push(ms) };
}

test('a write that did not reach the repository is tried again after 0.5 s, then 1 s; it lands', async () => {
  const store = scriptedStore([DOWN, DOWN, { ok: true }]);
  const clock = recordingClock();
  assert.deepEqual(await writeRetried({ clock }, store, UPDATES), { ok: true });
  assert.deepEqual(clock.sleeps, [500, 1000]);
  assert.equal(store.calls.writes, 3);
});

test('gives up after four retries (7.5 s in all) and answers unreachable; a read that fails meanwhile changes nothing', async () => {
  const store = scriptedStore(Array(10).fill(DOWN), ['throw', 'throw']);
  const clock = recordingClock();
  assert.deepEqual(await writeRetried({ clock }, store, UPDATES), DOWN);
  assert.deepEqual(clock.sleeps, [...WRITE_RETRY_DELAYS_MS]);
  assert.deepEqual(WRITE_RETRY_DELAYS_MS, [500, 1000, 2000, 4000]);
  assert.equal(store.calls.writes, 5);
});

test('a write whose refs are already where it moves them landed after all: it is not pushed again', async () => {
  const store = scriptedStore([DOWN], [{ [LEASE]: 'l2' }]);
  assert.deepEqual(await writeRetried({ clock: recordingClock() }, store, UPDATES), { ok: true });
  assert.equal(store.calls.writes, 1);
});

test('refs that moved elsewhere meanwhile make the write rejected, not pushed again', async () => {
  const store = scriptedStore([DOWN], [{ [LEASE]: 'someone-else' }]);
  const result = await writeRetried({ clock: recordingClock() }, store, UPDATES);
  assert.equal(result.ok, false);
  assert.equal(result.kind, 'rejected');
  assert.equal(store.calls.writes, 1);
});

test('a refused write is the answer: never tried again, no read, no pause', async () => {
  const refused = { ok: false, kind: 'rejected', refs: [{ ref: LEASE, reason: 'stale info' }], message: 'stale info' };
  const store = scriptedStore([refused]);
  const clock = recordingClock();
  assert.deepEqual(await writeRetried({ clock }, store, UPDATES), refused);
  assert.deepEqual(clock.sleeps, []);
  assert.equal(store.calls.snapshots, 0);
});

test('no retry starts more than 15 s after the first try: a push that hung until its timeout is not tried again', async () => {
  let now = 0;
  const store = scriptedStore([DOWN, DOWN]);
  store.write = async () => {
    store.calls.writes++;
    now += 60_000; // each try ends by the network timeout
    return DOWN;
  };
  const clock = { now: () => now, sleep: async () => {} };
  assert.deepEqual(await writeRetried({ clock }, store, UPDATES), DOWN);
  assert.equal(store.calls.writes, 1);
});

test('once a write of a store gave up, its next writes are tried once each, until one lands', async () => {
  const store = scriptedStore([...Array(5).fill(DOWN), DOWN, { ok: true }, DOWN, DOWN]);
  const clock = recordingClock();
  assert.deepEqual(await writeRetried({ clock }, store, UPDATES), DOWN, 'the first write retries, then gives up');
  assert.equal(store.calls.writes, 5);
  assert.deepEqual(await writeRetried({ clock }, store, UPDATES), DOWN, 'the next one: one try');
  assert.equal(store.calls.writes, 6);
  assert.deepEqual(await writeRetried({ clock }, store, UPDATES), { ok: true });
  assert.equal(store.calls.writes, 7);
  assert.deepEqual(await writeRetried({ clock }, store, UPDATES), { ok: true }, 'retried in full again after a write landed');
  assert.equal(store.calls.writes, 10, 'two failures, then the script runs out: ok');
});
