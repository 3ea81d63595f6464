// `nyl teardown` of units that stay in source, killed midway and taken over, in process (the
// e2e file test/e2e/teardown-command.test.mjs keeps the same two cases over smart HTTP with
// protected branches, where a real SIGKILL and a real Git transport matter):
// - killed after its started marker: the takeover tears a converging unit down again and leaves a
//   manual one deleting and uncertain until recover --retry; the next reconcile finishes it;
// - killed after the removal was checkpointed: the takeover imports the removal and, the unit
//   being in source, creates it again; nothing is torn down twice.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { World } from './world.mjs';

const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });
const teardowns = (world, name) => world.driver.callsOf(name, 'teardown').length;

async function reconciled(units) {
  const world = await World.create({ units, driver: { teardown: true } });
  const setup = world.process('setup');
  await setup.run('state init');
  assert.equal((await setup.run('reconcile')).code, 0);
  return world;
}

describe('nyl teardown killed midway, then taken over', () => {
  test('killed after its started marker: a converging teardown runs again in the takeover; a manual one waits for recover --retry', async () => {
    const world = await reconciled([unit('conv', { recovery: 'converge' }), unit('man')]);
    try {
      const victim = world.process('victim').crashAt('after-started-push');
      assert.ok((await victim.start('reconcile', { teardown: { units: 'all' }, reason: 'decommission' }).outcome).died);
      const oldMan = world.desiredDoc('man').uid;
      const op = world.process('operator');
      assert.equal((await op.run('lease break')).code, 0);
      const takeover = await world.process('takeover').run('reconcile');
      assert.equal(takeover.code, 4, JSON.stringify(takeover.report?.units ?? takeover.codes));
      assert.deepEqual([...takeover.report.details.recovered].sort(), ['conv', 'man']);
      assert.equal(takeover.report.units.conv.result, 'removed', 'converge: torn down again by the takeover');
      assert.equal(takeover.report.units.man.result, 'recovered');
      assert.equal(world.desiredDoc('man').lifecycle.state, 'deleting');
      assert.equal(world.desiredDoc('man').uid, oldMan);
      assert.equal(world.observedDoc('man').condition.type, 'uncertain');
      assert.equal(teardowns(world, 'man'), 0, 'the manual unit is not torn down by the takeover');
      assert.equal((await op.run('recover', { unit: 'man', retry: true, reason: 'checked' })).code, 0);
      const done = await world.process('last').run('reconcile');
      assert.equal(done.code, 0, JSON.stringify(done.report?.units ?? done.codes));
      assert.equal(done.report.units.man.result, 'removed');
      assert.equal(world.desiredDoc('man'), undefined);
      assert.equal(teardowns(world, 'man'), 1, 'torn down once, after recover --retry');
    } finally {
      world.cleanup();
    }
  });

  test('killed after its removal was checkpointed: the takeover imports the removal without tearing down again', async () => {
    const world = await reconciled([unit('gone')]);
    try {
      const oldUid = world.desiredDoc('gone').uid;
      const victim = world.process('victim').crashAt('before-transition-push');
      assert.ok((await victim.start('reconcile', { teardown: { units: ['gone'] }, reason: 'replace' }).outcome).died);
      assert.equal(teardowns(world, 'gone'), 1);
      assert.equal((await world.process('operator').run('lease break')).code, 0);
      const takeover = await world.process('takeover').run('reconcile');
      assert.equal(takeover.code, 0, JSON.stringify(takeover.report?.units ?? takeover.codes));
      assert.deepEqual(takeover.report.details.imported, ['gone']);
      assert.deepEqual(takeover.report.details.removed, ['gone'], 'the removal is imported');
      assert.equal(takeover.report.units.gone.result, 'executed', 'still in source: the takeover, the next reconcile, creates it again');
      assert.equal(teardowns(world, 'gone'), 1, 'torn down once');
      assert.notEqual(world.desiredDoc('gone').uid, oldUid, 'a new incarnation');
    } finally {
      world.cleanup();
    }
  });
});
