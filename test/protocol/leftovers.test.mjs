// What a dead run left running outside Nyl (an OciImage's container outlives the process that
// started it) is ended by the importer of that run, before any unit starts: the takeover of a
// reconcile and `nyl recover -e` both call the reap phase of the driver of each kind the dead run
// started without recording how it ended, with exactly those runs. In process, with a fake driver
// whose reap is scripted; test/e2e/oci-leftovers.test.mjs shows it with podman.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ENV, World } from './world.mjs';

const UNITS = [{ name: 'a', recovery: 'converge' }, { name: 'b' }];

/**
 * Runs body({ world, events }) in a world, state initialised, whose fake driver reaps: every call is
 * recorded in `events`, in order with the driver's other calls.
 */
async function inReapingWorld(body) {
  const events = [];
  const world = await World.create({ units: UNITS, driver: { onCall: async (call) => events.push(`${call.phase} ${call.unit}`) } });
  world.driver.reap = async (ctx) => {
    events.push(`reap ${ctx.runs.join(',')}`);
    return { ended: ctx.runs.map((run) => ({ unit: 'a', run, what: `container nyl_${ENV}_a_${run} (running)` })) };
  };
  try {
    await world.process('init').run('state init');
    await body({ world, events });
  } finally {
    world.cleanup();
  }
}

/** A reconcile killed while a runs (b, its sibling of the same wave, finished), its lease broken: the run that died. */
async function deadWhileARuns(world) {
  const release = world.driver.hold('a');
  const p = world.process('dies');
  p.start('reconcile');
  await world.driver.whenCalled('a');
  await world.until(() => world.receiptsIn(world.runRefs()[0] ?? '').includes('b'), 'b checkpointed');
  p.kill();
  release();
  const [dead] = world.runRefs();
  assert.equal((await world.process('breaker').run('lease break')).code, 0);
  return dead;
}

describe('leftovers of dead runs', () => {
  test('the takeover reaps the dead run before any unit starts, and says what it ended', () =>
    inReapingWorld(async ({ world, events }) => {
      const dead = await deadWhileARuns(world);
      events.length = 0;
      const taker = world.process('taker');
      const r = await taker.run('reconcile');
      assert.equal(r.code, 0, JSON.stringify(r.report.units));
      assert.deepEqual(events, [`reap ${dead}`, 'apply a'], 'reaped once, with the dead run, before a runs again');
      assert.ok(taker.lines.includes(`[${ENV}/a] removed container nyl_${ENV}_a_${dead} (running), which the dead run ${dead} left`), taker.lines.join('\n'));
    }));

  test('recover -e reaps the dead run it imports', () =>
    inReapingWorld(async ({ world, events }) => {
      const dead = await deadWhileARuns(world);
      events.length = 0;
      const r = await world.process('recover').run('recover');
      assert.equal(r.code, 0, JSON.stringify(r.codes));
      assert.deepEqual(events, [`reap ${dead}`]);
    }));

  test('a dead run that recorded how every unit it started ended leaves nothing to reap', () =>
    inReapingWorld(async ({ world, events }) => {
      const p = world.process('dies').crashAt('before-transition-push');
      p.start('reconcile');
      await p.died;
      assert.equal((await world.process('breaker').run('lease break')).code, 0);
      events.length = 0;
      const r = await world.process('taker').run('reconcile');
      assert.equal(r.code, 0);
      assert.deepEqual(events, [], 'no reap, and nothing executed again');
    }));

  test('a reap that cannot look says so and the takeover goes on', () =>
    inReapingWorld(async ({ world }) => {
      world.driver.reap = async () => ({ ended: [], problem: 'cannot start podman: ENOENT' });
      await deadWhileARuns(world);
      const taker = world.process('taker');
      const r = await taker.run('reconcile');
      assert.equal(r.code, 0);
      assert.ok(
        taker.lines.some((l) => l === `[${ENV}] cannot look for what dead runs of Command units left on this machine: cannot start podman: ENOENT`),
        taker.lines.join('\n'),
      );
    }));
});
