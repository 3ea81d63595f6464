// A holder's writes against a takeover that happens while the write is in flight, and after a
// write whose outcome the holder never learned.
//
// A push checks a ref it sends to its own value only against the refs the remote advertised as
// the push began; only the refs it moves are checked again under the remote's ref lock (pinned
// for git and for the memory store by test/conformance/state-store.test.mjs, "a ref moved while a
// push is in flight"). So a fence spelled as "the lease to itself" let a holder whose lease was
// taken over after the advertisement still land its write. Every write of a holder renews the
// lease instead (a child lease commit), and the takeover rejects it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acquireLease } from '../../dist/lease/lease.js';
import { FaultPoints } from '../../dist/util/runtime.js';
import { ManualClock } from '../fakes/clock.mjs';
import { MemoryRepository, MemoryStateStore, memoryLocation } from '../fakes/memory-store.mjs';

const T0 = 1767225600000;
const AUTHOR = { name: 'Nyl Test', email: 'nyl@example.com' };
const LEASE = 'refs/nyl/dev/lease';
const RUN_REF = 'refs/nyl/dev/runs/r1';

/** A holder of dev's lease, and a way to let another writer take it over during the holder's next write. */
async function holderWithRacer() {
  const repo = new MemoryRepository('fence');
  const [taker, checkpoint] = repo.writeCommits([
    { changes: new Map([['lease.yaml', 'taken over\n']]), message: 'taker\n', author: AUTHOR, timeMs: T0 },
    { changes: new Map([['checkpoint', 'late\n']]), message: 'checkpoint\n', author: AUTHOR, timeMs: T0 },
  ]);
  let raceArmed = false;
  const store = new MemoryStateStore(repo, memoryLocation('dev'), {
    beforeWrite() {
      if (raceArmed) repo.setRef(LEASE, taker);
      raceArmed = false;
    },
  });
  const clock = new ManualClock(T0);
  const rt = { clock, cancel: new AbortController().signal, faults: new FaultPoints({}, clock) };
  const { handle } = await acquireLease(rt, store, { operation: 'reconcile', run: 'r1', author: AUTHOR, durationMs: 60_000 });
  return { repo, handle, clock, taker, checkpoint, armRace: () => (raceArmed = true) };
}

test('a fenced write of a holder whose lease is taken over while the write is in flight lands nothing', async () => {
  const { repo, handle, taker, checkpoint, armRace } = await holderWithRacer();
  armRace();
  const written = await handle.write('renew', () => ({ updates: [{ ref: RUN_REF, expect: null, to: checkpoint }] }));
  assert.equal(written.ok, false, 'the write must not land once the lease is not the holder’s');
  assert.equal(written.lost, true, 'the holder knows it lost the lease');
  assert.equal(repo.refs().get(RUN_REF), undefined, 'the late checkpoint did not reach the repository');
  assert.equal(repo.refs().get(LEASE), taker, 'the taker keeps the lease');
});

test('confirming the lease while it is taken over in flight says it is not held', async () => {
  const { repo, handle, taker, armRace } = await holderWithRacer();
  armRace();
  assert.equal(await handle.confirm(0), false);
  assert.equal(handle.lost, true);
  assert.equal(repo.refs().get(LEASE), taker);
});

test('a write that lands renews the lease: a child of the lease it had, with a new deadline', async () => {
  const { repo, handle, clock, checkpoint } = await holderWithRacer();
  const before = { oid: handle.oid, deadline: handle.record.deadline };
  await clock.advance(10_000);
  const written = await handle.write('renew', () => ({ updates: [{ ref: RUN_REF, expect: null, to: checkpoint }] }));
  assert.equal(written.ok, true);
  assert.notEqual(handle.oid, before.oid, 'the lease moved');
  assert.equal(repo.refs().get(LEASE), handle.oid);
  assert.equal(repo.refs().get(RUN_REF), checkpoint);
  assert.equal(Date.parse(handle.record.deadline) - Date.parse(before.deadline), 10_000, 'the deadline moved with the clock');
  assert.match(repo.read(handle.oid).content.toString(), new RegExp(`^parent ${before.oid}$`, 'm'));
});

test('a write that landed although the holder never heard back does not cost it the lease: the next write adopts it', async () => {
  const repo = new MemoryRepository('unknown-outcome');
  const [c1, c2] = repo.writeCommits([
    { changes: new Map([['a', '1\n']]), message: 'one\n', author: AUTHOR, timeMs: T0 },
    { changes: new Map([['a', '2\n']]), message: 'two\n', author: AUTHOR, timeMs: T0 },
  ]);
  // The first write while the network is down lands, but its answer is lost; everything else
  // fails until the network is back.
  let down = false;
  let silentLanding = false;
  const store = new MemoryStateStore(repo, memoryLocation('dev'), {
    unreachable: (call, updates) => {
      if (!down) return false;
      if (call === 'write' && silentLanding) {
        silentLanding = false;
        repo.applyUpdates(updates, 'push');
      }
      return true;
    },
  });
  const clock = new ManualClock(T0, { autoAdvance: true });
  const rt = { clock, cancel: new AbortController().signal, faults: new FaultPoints({}, clock) };
  const { handle } = await acquireLease(rt, store, { operation: 'reconcile', run: 'r1', author: AUTHOR, durationMs: 60_000 });
  let runRef = null;
  const checkpointTo = (to) => () => ({ updates: [{ ref: RUN_REF, expect: runRef, to }], landed: () => (runRef = to) });
  down = true;
  silentLanding = true;
  const lost = await handle.write('renew', checkpointTo(c1));
  assert.equal(lost.ok, false, 'the holder never heard that its write landed');
  assert.equal(repo.refs().get(RUN_REF), c1, 'it did land');
  down = false;
  const next = await handle.write('renew', checkpointTo(c2));
  assert.equal(next.ok, true, JSON.stringify(next));
  assert.equal(handle.lost, false, 'the lease is still the holder’s');
  assert.equal(repo.refs().get(RUN_REF), c2);
  assert.equal(repo.refs().get(LEASE), handle.oid);
});
