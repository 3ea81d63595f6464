// `nyl teardown` of units that stay in source, killed midway and taken over, in process (the
// e2e file test/e2e/teardown-command.test.mjs keeps the same two cases over smart HTTP with
// protected branches, where a real SIGKILL and a real Git transport matter):
// - killed after its started marker: the takeover tears a converging unit down again and leaves a
//   manual one deleting and uncertain until recover --retry; the next reconcile finishes it;
// - killed after the removal was checkpointed: the takeover imports the removal and, the unit
//   being in source, creates it again; nothing is torn down twice.
// Also what a teardown decides (moved here from the e2e file): --all tears down consumers first, a
// unit whose consumer is not named waits (NYL-TEARDOWN-PENDING), a held unit only gets the request
// recorded on its file (carried out by the first reconcile after resume), and asking again
// changes nothing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { World } from './world.mjs';

const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });
const codesOf = (r) => (r.report ? [...r.report.errors, ...r.report.warnings, ...r.report.notes].map((d) => d.code) : r.codes);
const tornDown = (world) => world.driver.calls.filter((c) => c.phase === 'teardown').map((c) => c.unit);
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

describe('what nyl teardown decides', () => {
  test('--all tears everything down consumers first; a unit whose consumer is not named waits (exit 2, NYL-TEARDOWN-PENDING)', async () => {
    const world = await reconciled([unit('db'), unit('app', { dependsOn: ['db'] }), unit('web', { dependsOn: ['app'] })]);
    try {
      const waits = await world.process('p1').run('reconcile', { teardown: { units: ['db'] } });
      assert.equal(waits.code, 2, JSON.stringify(codesOf(waits)));
      assert.equal(waits.report.units.db.result, 'pending-teardown');
      const pending = waits.report.warnings.find((w) => w.code === 'NYL-TEARDOWN-PENDING');
      assert.match(pending.fix, /nyl teardown -e dev --unit app/);
      assert.deepEqual(tornDown(world), []);
      assert.ok(world.desiredDoc('db').teardownRequest, 'the request is recorded');
      const all = await world.process('p2').run('reconcile', { teardown: { units: 'all' }, concurrency: 1 });
      assert.equal(all.code, 0, JSON.stringify(codesOf(all)));
      assert.deepEqual(tornDown(world), ['web', 'app', 'db']);
      assert.deepEqual(all.report.unitOrder, ['web', 'app', 'db']);
    } finally {
      world.cleanup();
    }
  });

  test('teardown of a held unit only records the request on its file; the first reconcile after resume carries it out', async () => {
    const world = await reconciled([unit('db'), unit('app')]);
    try {
      const op = world.process('op');
      assert.equal((await op.run('hold', { unit: 'db', reason: 'incident' })).code, 0);
      const r = await op.run('reconcile', { teardown: { units: ['db'] } });
      assert.equal(r.code, 2, JSON.stringify(codesOf(r)));
      assert.equal(r.report.units.db.result, 'held');
      assert.ok(codesOf(r).includes('NYL-UNIT-HELD'));
      const held = world.desiredDoc('db');
      assert.equal(held.lifecycle.state, 'held');
      assert.equal(held.teardownRequest.by.includes('<'), true, 'the request names who asked');
      assert.deepEqual(tornDown(world), [], 'nothing torn down');
      assert.equal((await op.run('reconcile')).code, 2, 'a reconcile leaves a held unit alone');
      assert.deepEqual(tornDown(world), []);
      assert.equal((await op.run('resume', { unit: 'db', reason: 'resolved' })).code, 0);
      assert.ok(world.desiredDoc('db').teardownRequest, 'resume keeps the request');
      const after = await op.run('reconcile');
      assert.equal(after.code, 0, JSON.stringify(codesOf(after)));
      assert.equal(after.report.units.db.result, 'removed');
      assert.deepEqual(tornDown(world), ['db']);
    } finally {
      world.cleanup();
    }
  });

  test('a teardown asked again of a held unit whose request is recorded changes nothing and still reports it held (exit 2)', async () => {
    const world = await reconciled([unit('db')]);
    try {
      const op = world.process('op');
      assert.equal((await op.run('hold', { unit: 'db', reason: 'incident' })).code, 0);
      assert.equal((await op.run('reconcile', { teardown: { units: ['db'] } })).code, 2);
      const refs = world.refs();
      const again = await op.run('reconcile', { teardown: { units: ['db'] } });
      assert.equal(again.code, 2, JSON.stringify(codesOf(again)));
      assert.equal(again.report.units.db.result, 'held');
      assert.equal(again.report.run, undefined, 'nothing to do: no lease, no run');
      assert.deepEqual(world.refs(), refs, 'nothing written');
    } finally {
      world.cleanup();
    }
  });
});

test('a hold delivered to a teardown run: the unit it did not start yet is held with its request; the run tears down the rest', async () => {
  const world = await reconciled([unit('aslow'), unit('zother')]);
  try {
    // One wave, one at a time, by name: aslow's teardown runs while zother waits its turn.
    const release = world.driver.hold('aslow', 'teardown');
    const run = world.process('runner').start('reconcile', { teardown: { units: 'all' }, concurrency: 1 });
    await world.driver.whenCalled('aslow', 'teardown');
    const h = await world.process('operator').run('hold', { unit: 'zother', reason: 'incident' });
    assert.equal(h.code, 0);
    assert.ok(codesOf(h).includes('NYL-HOLD-DELIVERED'), JSON.stringify(codesOf(h)));
    release();
    const r = await run.outcome;
    assert.equal(r.code, 2, JSON.stringify(codesOf(r)));
    assert.equal(r.report.units.aslow.result, 'removed');
    assert.equal(r.report.units.zother.result, 'held');
    assert.deepEqual(tornDown(world), ['aslow'], 'zother was not torn down');
    const held = world.desiredDoc('zother');
    assert.equal(held.lifecycle.state, 'held');
    assert.ok(held.teardownRequest, 'its request waits next to the hold');
    const [top] = world.repo.commitsOf(world.loc.desiredRef);
    const body = YAML.parse(
      top.message
        .split('\n')
        .slice(1)
        .filter((l) => !/^[A-Z][A-Za-z-]+: /.test(l))
        .join('\n'),
    );
    assert.deepEqual(body.held, ['zother']);
    const op = world.process('op');
    assert.equal((await op.run('resume', { unit: 'zother', reason: 'resolved' })).code, 0);
    const after = await op.run('reconcile');
    assert.equal(after.report.units.zother.result, 'removed', JSON.stringify(codesOf(after)));
    assert.deepEqual(tornDown(world), ['aslow', 'zother']);
  } finally {
    world.cleanup();
  }
});
