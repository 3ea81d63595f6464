// Round trips to the state repository, in process (issue 33): on a network remote every read of
// the refs and every write is one round trip at least. A writer that takes a free lease fences in
// the same push every ref its decision read (lease/lease.ts, decisionFences), so it does not read
// them again under the lease; a ref that moved in between rejects the push, and the writer reads
// again and decides anew.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { World } from './world.mjs';

/** Counts the reads of the refs (snapshot, not of the refs last seen: `cached`) and the writes of a process's store. */
function counting(proc) {
  const calls = { snapshot: 0, write: 0 };
  const inner = proc.store;
  proc.store = new Proxy(inner, {
    get(target, prop) {
      if (prop === 'snapshot' || prop === 'write') {
        return (...args) => {
          if (prop === 'write' || !args[0]?.cached) calls[prop]++;
          return inner[prop](...args);
        };
      }
      return Reflect.get(target, prop);
    },
  });
  return calls;
}

/** The reads of hold signals ('read signals') and the writes (named by `nameWrite`) of a process's store, in order. */
function callsOf(proc, nameWrite) {
  const calls = [];
  const inner = proc.store;
  proc.store = new Proxy(inner, {
    get(target, prop) {
      if (prop === 'snapshotPrefix') return (...args) => (calls.push('read signals'), inner.snapshotPrefix(...args));
      if (prop === 'write') return (updates) => (calls.push(nameWrite(updates)), inner.write(updates));
      return Reflect.get(target, prop);
    },
  });
  return calls;
}

test('hold and resume read the refs once and write twice: the lease, then the commit with the release', async () => {
  const world = await World.create();
  try {
    await world.process('init').run('state init');
    await world.process('first').run('reconcile');
    const op = world.process('op');
    const calls = counting(op);
    const held = await op.run('hold', { unit: 'migrate', reason: 'incident' });
    assert.equal(held.report.result, 'done', JSON.stringify(held.codes ?? held.report));
    assert.deepEqual(calls, { snapshot: 1, write: 2 });
    const resumed = await op.run('resume', { unit: 'migrate', reason: 'fixed' });
    assert.equal(resumed.report.result, 'done', JSON.stringify(resumed.codes ?? resumed.report));
    assert.deepEqual(calls, { snapshot: 2, write: 4 });
    // Once it saw the refs, a hold decides on them without reading: its lease push proves them.
    const again = await op.run('hold', { unit: 'app', reason: 'second' });
    assert.equal(again.report.result, 'done', JSON.stringify(again.codes ?? again.report));
    assert.deepEqual(calls, { snapshot: 2, write: 6 });
    assert.ok(world.desiredDoc('app')?.hold);
  } finally {
    world.cleanup();
  }
});

test('a hold decided on refs this process saw before another moved them: the fenced lease push is rejected, and it decides on the refs as they are', async () => {
  const world = await World.create();
  try {
    await world.process('init').run('state init');
    await world.process('first').run('reconcile');
    const op = world.process('op');
    const other = world.process('other');
    await op.run('status');
    // Held by another since op last looked: op's look on its refs says "not held".
    assert.equal((await other.run('hold', { unit: 'migrate', reason: 'other' })).report.result, 'done');
    const held = await op.run('hold', { unit: 'migrate', reason: 'op' });
    assert.equal(held.report.result, 'unchanged', JSON.stringify(held.codes ?? held.report));
    assert.equal(world.desiredDoc('migrate').hold.reason, 'other');
    // Resumed by another since op last looked: op's refs say "held", which it never answers from them.
    assert.equal((await other.run('resume', { unit: 'migrate', reason: 'other' })).report.result, 'done');
    const again = await op.run('hold', { unit: 'migrate', reason: 'op again' });
    assert.equal(again.report.result, 'done', JSON.stringify(again.codes ?? again.report));
    assert.equal(world.desiredDoc('migrate').hold.reason, 'op again');
  } finally {
    world.cleanup();
  }
});

test('a reconcile reads the refs once: not again after taking the lease', async () => {
  const world = await World.create();
  try {
    await world.process('init').run('state init');
    const run = world.process('run');
    const calls = counting(run);
    const r = await run.run('reconcile');
    assert.equal(r.code, 0, JSON.stringify(r.codes ?? r.report.units));
    assert.equal(calls.snapshot, 1);
  } finally {
    world.cleanup();
  }
});

test('a state commit lands between the read and the lease push: the fence rejects the push, and the hold decides on the refs anew', async () => {
  const world = await World.create();
  try {
    await world.process('init').run('state init');
    await world.process('first').run('reconcile');
    const late = world.process('late');
    const calls = counting(late);
    const pause = late.pauseAt('before-lease-push');
    const holding = late.start('hold', { unit: 'migrate', reason: 'late' });
    await pause.reached;
    const other = await world.process('other').run('hold', { unit: 'app', reason: 'meanwhile' });
    assert.equal(other.report.result, 'done');
    pause.release();
    const held = await holding.outcome;
    assert.equal(held.report?.result, 'done', JSON.stringify(held.codes ?? held.report));
    assert.ok(calls.snapshot >= 2, 'the hold read the refs again after its push was rejected');
    assert.ok(world.desiredDoc('migrate')?.hold, 'migrate is held');
    assert.ok(world.desiredDoc('app')?.hold, 'the other hold is kept');
  } finally {
    world.cleanup();
  }
});

test("a run's first look at hold signals, right after taking the lease, reads the refs the lease was taken on: no fetch before its first started markers", async () => {
  const world = await World.create();
  try {
    await world.process('init').run('state init');
    const run = world.process('run', { network: true });
    const calls = callsOf(run, (updates) => {
      const runRef = updates.find((u) => u.ref.includes('/runs/'));
      return runRef?.expect === null ? 'take the lease' : runRef && runRef.to ? 'write the run ref' : 'other write';
    });
    const r = await run.run('reconcile');
    assert.equal(r.code, 0, JSON.stringify(r.codes ?? r.report.units));
    const taken = calls.indexOf('take the lease');
    const marked = calls.indexOf('write the run ref');
    assert.ok(taken >= 0 && marked > taken, calls.join(', '));
    assert.deepEqual(
      calls.slice(taken, marked).filter((c) => c === 'read signals'),
      [],
      calls.join(', '),
    );
    assert.ok(calls.includes('read signals'), 'later looks still read the signals');
  } finally {
    world.cleanup();
  }
});

test('a run reads the hold signals only where a hold can still change what it does: not at a dispatch point with nothing left to start', async () => {
  const world = await World.create({ units: [{ name: 'a', dependsOn: [] }] });
  try {
    await world.process('init').run('state init');
    await world.process('first').run('reconcile');
    await world.setUnits([
      { name: 'a', dependsOn: [] },
      { name: 'b', dependsOn: [] },
    ]);
    const run = world.process('run', { network: true });
    const calls = callsOf(run, (updates) => (updates.some((u) => u.ref.startsWith('refs/heads/')) ? 'state' : 'coordination'));
    const r = await run.run('reconcile');
    assert.equal(r.report.units.b.result, 'executed', JSON.stringify(r.report.units));
    // After b ended nothing is left to start: the look after the units' end and the one after the
    // transition (late holds) are the only reads.
    assert.equal(calls.filter((c) => c === 'read signals').length, 2, calls.join(', '));
  } finally {
    world.cleanup();
  }
});
