// The engine as a ready queue (issue 33, section 1), on virtual time: a unit starts as soon as its
// own dependencies have ended and a slot is free, never waiting for an unrelated sibling. Store
// operations cost no virtual time here, so a run's wall time is the schedule's makespan alone.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRandom as random } from '../support/seeded.mjs';
import { World } from './world.mjs';

/**
 * A random DAG: 10 to 29 units, each depending on each earlier unit with a probability that keeps
 * about two dependencies per unit, durations from 100 ms to 5 s, and a concurrency of 2 to 6.
 */
function randomDag(seed) {
  const rnd = random(seed);
  const n = 10 + Math.floor(rnd() * 20);
  const units = [];
  const durations = {};
  for (let i = 0; i < n; i++) {
    const name = `u${String(i).padStart(2, '0')}`;
    const dependsOn = units.filter(() => rnd() < Math.min(1, 2 / Math.max(1, i))).map((u) => u.name);
    units.push({ name, dependsOn });
    durations[name] = 100 + Math.floor(rnd() * 4900);
  }
  return { units, durations, concurrency: 2 + Math.floor(rnd() * 5) };
}

/** max(critical path, total work / concurrency): no schedule can do better. */
function listBound({ units, durations, concurrency }) {
  const finish = new Map();
  for (const u of units) finish.set(u.name, Math.max(0, ...u.dependsOn.map((d) => finish.get(d))) + durations[u.name]);
  const critical = Math.max(...finish.values());
  const work = Object.values(durations).reduce((a, b) => a + b, 0);
  return Math.max(critical, work / concurrency);
}

/**
 * Runs one reconcile of the world; returns each unit's start and end, and the time from the run's
 * start to the end of its last unit, on the virtual clock (the run's own end is not measured: once
 * every unit has ended, the idle clock may jump to the lease's next renewal while the run does
 * real I/O).
 */
async function schedule(world, concurrency, durations) {
  await world.process('init').run('state init');
  const began = world.clock.now();
  const r = await world.process('runner').run('reconcile', { concurrency });
  assert.equal(r.code, 0, JSON.stringify(r.report?.units));
  const spans = new Map(world.driver.calls.filter((c) => c.phase === 'apply').map((c) => [c.unit, { start: c.at, end: c.at + durations[c.unit] }]));
  assert.equal(spans.size, Object.keys(durations).length, 'every unit executed once');
  return { began, spans, makespan: Math.max(...[...spans.values()].map((s) => s.end)) - began };
}

/**
 * The list-scheduling property: no unit waited while a slot was free. Between the moment a unit's
 * last dependency ended (or the run began) and its start, `concurrency` units ran at every moment.
 * Returns the units that waited with a slot free, and when.
 */
function idleWhileReady(units, { began, spans }, concurrency) {
  const running = (t) => [...spans.values()].filter((s) => s.start <= t && t < s.end).length;
  const waited = [];
  for (const u of units) {
    const ready = Math.max(began, ...u.dependsOn.map((d) => spans.get(d).end));
    const { start } = spans.get(u.name);
    const moments = [ready, ...[...spans.values()].map((s) => s.end).filter((t) => t > ready && t < start)];
    const idle = moments.find((t) => t < start && running(t) < concurrency);
    if (idle !== undefined) waited.push(`${u.name} (ready at ${ready - began} ms, started at ${start - began} ms, a slot free at ${idle - began} ms)`);
  }
  return waited;
}

describe('the ready queue', () => {
  test('c, whose only dependency a takes 0.1 s, starts when a ends, not when the unrelated b (5 s) does', async () => {
    const units = [
      { name: 'a', dependsOn: [] },
      { name: 'b', dependsOn: [] },
      { name: 'c', dependsOn: ['a'] },
    ];
    const world = await World.create({ units, delayMs: { a: 100, b: 5000, c: 100 } });
    try {
      const { makespan: wall } = await schedule(world, 4, { a: 100, b: 5000, c: 100 });
      const [a] = world.driver.callsOf('a');
      const [b] = world.driver.callsOf('b');
      const [c] = world.driver.callsOf('c');
      const aEnd = a.at + 100;
      assert.ok(c.at - aEnd <= 100, `c started ${c.at - aEnd} ms after a ended`);
      assert.ok(c.at < b.at + 5000, 'c started before b ended');
      assert.ok(wall <= 5000 * 1.05, `the run took ${wall} ms for a critical path of 5000 ms`);
    } finally {
      world.cleanup();
    }
  });

  // The bound max(critical path, total work / concurrency) is a lower bound, not always reachable:
  // with 2 slots, seed 5's best list schedule, even knowing every duration ahead (longest remaining
  // path first), is 23% above it. What the engine owes is a list schedule (no slot idle while a
  // unit is executable), which is checked exactly; the ratios are reported, and their median held
  // to the 5% of the target.
  test('20 random DAGs: no unit waits while a slot is free; the median run is within 5% of max(critical path, work / concurrency)', async () => {
    const ratios = [];
    for (let seed = 1; seed <= 20; seed++) {
      const dag = randomDag(seed);
      const world = await World.create({ units: dag.units, delayMs: dag.durations });
      try {
        const run = await schedule(world, dag.concurrency, dag.durations);
        assert.deepEqual(idleWhileReady(dag.units, run, dag.concurrency), [], `seed ${seed}: units that waited with a slot free`);
        ratios.push({ seed, ratio: run.makespan / listBound(dag), units: dag.units.length, concurrency: dag.concurrency });
      } finally {
        world.cleanup();
      }
    }
    const sorted = ratios.map((r) => r.ratio).sort((a, b) => a - b);
    const median = (sorted[9] + sorted[10]) / 2;
    const worst = ratios.find((r) => r.ratio === sorted.at(-1));
    console.log(
      `# makespan / bound over 20 random DAGs: median ${median.toFixed(3)}, worst ${worst.ratio.toFixed(3)} (seed ${worst.seed}, ${worst.units} units, concurrency ${worst.concurrency})`,
    );
    assert.ok(median <= 1.05, `median ratio ${median.toFixed(3)}`);
  });
});

test('a unit that ends while the run reads its hold signals at a dispatch point is not started again', async () => {
  const world = await World.create({
    units: [
      { name: 'a', dependsOn: [] },
      { name: 'b', dependsOn: [] },
      { name: 'c', dependsOn: ['a'] },
    ],
    delayMs: 1500,
  });
  try {
    await world.process('init').run('state init');
    const release = world.driver.hold('b');
    const run = world.process('run', { network: true });
    const inner = run.store;
    let released = false;
    run.store = new Proxy(inner, {
      get(target, prop) {
        if (prop !== 'snapshotPrefix') return Reflect.get(target, prop);
        return async (...args) => {
          // The read after a ended (b still running): b ends while the read is on its way.
          if (!released && world.driver.callsOf('a').length === 1) {
            released = true;
            release();
            for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
          }
          return inner.snapshotPrefix(...args);
        };
      },
    });
    const r = await run.run('reconcile');
    assert.ok(released, 'the read happened while b ran');
    assert.equal(r.code, 0, JSON.stringify(r.codes ?? r.report.units));
    assert.deepEqual(
      ['a', 'b', 'c'].map((u) => world.driver.callsOf(u).length),
      [1, 1, 1],
      'every unit ran once',
    );
  } finally {
    world.cleanup();
  }
});

test('a prepare that ends while the checkpoints before it are pushed: its unit still executes in this run', async () => {
  let releasePrepare;
  const world = await World.create({
    units: [
      { name: 'y', dependsOn: [] },
      { name: 'p', dependsOn: [] },
    ],
    driver: { prepare: true },
    storeOptions: {
      // y's checkpoint push: p's prepare ends while it is on its way.
      async beforeWrite(updates) {
        const runRef = updates.find((u) => u.ref.includes('/runs/') && u.to);
        if (!releasePrepare || !runRef || !/^nyl: checkpoint y/m.test(world.repo.object(runRef.to).content.toString())) return;
        releasePrepare();
        releasePrepare = undefined;
        for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
      },
    },
  });
  try {
    await world.process('init').run('state init');
    releasePrepare = world.driver.hold('p', 'prepare');
    const r = await world.process('run').run('reconcile');
    assert.equal(releasePrepare, undefined, "p's prepare ended during y's checkpoint push");
    assert.deepEqual([r.report.units.y.result, r.report.units.p.result], ['executed', 'executed'], JSON.stringify(r.report.units));
    assert.equal(world.driver.callsOf('p', 'prepare').length, 1, 'prepared once');
  } finally {
    world.cleanup();
  }
});
