// A teardown killed at every protocol step, in process: the six units of the crash suite leave
// source under deletionPolicy Teardown and are torn down consumers first (app and report, then db
// and migrate, then base and config). The run is killed at a point of its second lifecycle wave,
// its lease broken, and a reconcile takes it over; units left uncertain under manual recovery are
// retried with recover. Whatever the point: every unit ends removed from state, no unit whose
// removal was checkpointed is torn down again, and a unit started without a checkpoint is torn
// down again only by the takeover (converge) or after recover --retry (manual).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SIX_UNITS, World } from './world.mjs';

const UNITS = SIX_UNITS.map((u) => ({ ...u, policy: 'Teardown' }));
const CONVERGE = new Set(UNITS.filter((u) => u.recovery === 'converge').map((u) => u.name));
const POINTS = [
  'lease-acquired',
  'after-started-push',
  'before-checkpoint-push',
  'after-checkpoint-push',
  'while-unit-runs',
  'before-transition-push',
  'after-transition-push',
];

/** A world whose six units ran, then left source. */
async function leaving() {
  const world = await World.create({ units: UNITS, driver: { teardown: true } });
  const setup = world.process('setup');
  await setup.run('state init');
  assert.equal((await setup.run('reconcile')).code, 0);
  await world.setUnits([]);
  world.driver.reset();
  return world;
}

/** Kills the teardown run at `point` of its second lifecycle wave (db and migrate); returns what its run ref recorded. */
async function crash(world, point) {
  const proc = world.process('victim');
  let release;
  if (['before-checkpoint-push', 'after-checkpoint-push', 'while-unit-runs'].includes(point)) release = world.driver.hold('migrate', 'teardown');
  if (point === 'after-started-push') proc.crashAt(point, { nth: 2 });
  else if (point === 'before-checkpoint-push' || point === 'after-checkpoint-push') proc.crashAt(point, { unit: 'db' });
  else if (point !== 'while-unit-runs') proc.crashAt(point);
  const run = proc.start('reconcile', { allowTeardown: true });
  if (point === 'while-unit-runs') {
    await world.until(() => world.runRefs().some((r) => world.runRecords(r).get('db.teardown')?.checkpoint), "db's checkpoint in the run ref");
    proc.kill();
  }
  assert.ok((await run.outcome).died, `the teardown died at ${point}`);
  release?.();
  // A teardown's record is NAME.teardown.yaml.
  const records = new Map(world.runRefs().flatMap((r) => [...world.runRecords(r)].map(([file, doc]) => [file.replace(/\.teardown$/, ''), doc])));
  return {
    removed: [...records].filter(([, d]) => d.checkpoint?.result === 'removed').map(([n]) => n),
    started: [...records].filter(([, d]) => !d.checkpoint).map(([n]) => n),
  };
}

const calls = (world, unit) => world.driver.callsOf(unit, 'teardown').length;

describe('a teardown killed at each protocol step, then taken over', () => {
  for (const point of POINTS) {
    test(point, async () => {
      const world = await leaving();
      try {
        const dead = await crash(world, point);
        const before = Object.fromEntries(UNITS.map((u) => [u.name, calls(world, u.name)]));
        // Removed before the takeover: its checkpoint, or the dead run's own transition, says so.
        const gone = new Set([...dead.removed, ...UNITS.map((u) => u.name).filter((n) => world.desiredDoc(n) === undefined)]);
        const op = world.process('operator');
        await op.run('lease break');
        const takeover = await world.process('takeover').run('reconcile');
        const uncertain = Object.entries(takeover.report.units)
          .filter(([, u]) => u.result === 'recovered')
          .map(([n]) => n);
        assert.deepEqual(
          uncertain.sort(),
          dead.started.filter((n) => !CONVERGE.has(n)).sort(),
          'manual units started without a checkpoint wait for an operator',
        );
        for (const unit of uncertain) await op.run('recover', { unit, retry: true, reason: 'checked: nothing was removed' });
        const last = await world.process('last').run('reconcile', { allowTeardown: true });
        assert.equal(last.code, 0, JSON.stringify(last.report?.units ?? last.codes));
        for (const u of UNITS) {
          assert.equal(world.desiredDoc(u.name), undefined, `${u.name}: its desired file is gone`);
          assert.equal(world.observedDoc(u.name), undefined, `${u.name}: its observed file is gone`);
          const total = calls(world, u.name);
          if (gone.has(u.name)) assert.equal(total, 1, `${u.name}: removed before the crash, never torn down again`);
          else
            assert.equal(
              total - before[u.name],
              1,
              `${u.name}: torn down once after the crash${dead.started.includes(u.name) ? ' (started without a checkpoint)' : ''}`,
            );
        }
        assert.deepEqual(world.runRefs(), [], 'every run imported');
        assert.deepEqual(world.evidenceRefs(), [], 'no evidence left once nothing is uncertain');
        const order = world.driver.calls.filter((c) => c.phase === 'teardown').map((c) => c.unit);
        assert.ok(order.indexOf('app') < order.lastIndexOf('db') && order.indexOf('report') < order.lastIndexOf('db'), `consumers first: ${order}`);
      } finally {
        world.cleanup();
      }
    });
  }
});

test('a teardown cancelled while it runs: exit 4, its run ref kept; the next reconcile imports it (the unit uncertain and still deleting)', async () => {
  const world = await leaving();
  try {
    const proc = world.process('victim');
    world.driver.hold('migrate', 'teardown');
    const run = proc.start('reconcile', { allowTeardown: true });
    await world.driver.whenCalled('migrate', 'teardown');
    proc.cancel();
    const cancelled = await run.done;
    assert.equal(cancelled.code, 4);
    assert.ok(cancelled.report.errors.some((d) => d.code === 'NYL-RUN-CANCELLED'));
    assert.equal(cancelled.report.units.migrate.result, 'uncertain');
    assert.equal(world.runRefs().length, 1, 'its run ref waits for the import');
    const next = await world.process('next').run('reconcile');
    assert.equal(next.code, 4);
    assert.equal(next.report.units.migrate.result, 'recovered');
    assert.equal(world.desiredDoc('migrate').lifecycle.state, 'deleting');
    assert.equal(world.observedDoc('migrate').condition.type, 'uncertain');
    assert.equal(world.desiredDoc('app'), undefined, 'what the cancelled run removed is imported');
  } finally {
    world.cleanup();
  }
});

test('a teardown run whose lease was broken while a teardown ran: exit 4 NYL-LEASE-LOST, nothing reaches state, the importer keeps the unit uncertain and deleting', async () => {
  const world = await leaving();
  try {
    // Both consumers of the next level (db of base, migrate of config) hold: with the ready queue,
    // a teardown that ended would let its dependency's teardown start before the break.
    const releases = [world.driver.hold('db', 'teardown'), world.driver.hold('migrate', 'teardown')];
    const run = world.process('holder').start('reconcile', { allowTeardown: true });
    await world.driver.whenCalled('db', 'teardown');
    await world.driver.whenCalled('migrate', 'teardown');
    const op = world.process('operator');
    await op.run('lease break');
    const imported = await world.process('importer').run('recover');
    assert.equal(imported.code, 0);
    const after = world.stateRefs();
    for (const release of releases) release();
    const lost = await run.outcome;
    assert.deepEqual(lost.codes, ['NYL-LEASE-LOST']);
    assert.equal(lost.code, 4);
    assert.deepEqual(world.stateRefs(), after, 'the holder wrote nothing more to state');
    assert.equal(calls(world, 'config') + calls(world, 'base'), 0, 'the next lifecycle wave never started');
    assert.equal(world.desiredDoc('migrate').lifecycle.state, 'deleting');
    assert.equal(world.observedDoc('migrate').condition.type, 'uncertain');
  } finally {
    world.cleanup();
  }
});
