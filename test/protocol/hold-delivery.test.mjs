// A hold delivered to a running reconcile, in process (moved here from
// test/e2e/hold-delivery.test.mjs, which keeps the cases where real processes race: the signal
// ref written while the run reads its signals, a hold that pauses mid-way, the late hold commit):
// a unit the run already executed, or is executing, is held as it ran; a hold delivered to a run
// that then died takes effect through the import, and the next reconcile does not start the unit.
// Whatever the path: no lease, run or signal ref is left, and exactly one commit records the hold.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { receipt } from '../fakes/driver.mjs';
import { World } from './world.mjs';

const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });
/** a; b follows it; c follows b. */
const CHAIN = [unit('a'), unit('b', { dependsOn: ['a'] }), unit('c', { dependsOn: ['b'] })];

const without = ({ lifecycle: _l, hold: _h, formatVersion: _f, ...rest }) => rest;

/** The body of a state commit message (the YAML between the headline and the trailers). */
function bodyOf(message) {
  const lines = message.replace(/\n+$/, '').split('\n');
  let end = lines.length;
  while (end > 1 && /^[A-Z][A-Za-z-]+: /.test(lines[end - 1])) end--;
  return YAML.parse(lines.slice(1, end).join('\n').trim() || '{}') ?? {};
}

/** No lease, run or signal ref; exactly one desired commit records the hold of unit; it is held. Returns that commit's body. */
function assertSettled(world, name) {
  assert.deepEqual(
    Object.keys(world.refs()).filter((r) => r.startsWith('refs/nyl/dev/')),
    [],
    'no lease, run or signal ref left',
  );
  const found = world.repo
    .commitsOf(world.loc.desiredRef)
    .map((c) => bodyOf(c.message))
    .filter((b) => (b.operation === 'hold' && b.units?.[name]?.action === 'hold') || (Array.isArray(b.held) && b.held.includes(name)));
  assert.equal(found.length, 1, `exactly one commit records the hold of ${name}`);
  assert.equal(world.desiredDoc(name)?.lifecycle?.state, 'held');
  return found[0];
}

const delivered = (r) => r.report.notes.some((n) => n.code === 'NYL-HOLD-DELIVERED');

describe('a hold delivered to a running reconcile', () => {
  test('a unit the run already executed is held as it ran; its consumers resolve from what it ran', async () => {
    const world = await World.create({
      units: [unit('a'), unit('b', { dependsOn: ['a'] }), unit('c', { dependsOn: ['b'], env: { X: '${{ units.a.outputs.v }}' } })],
      apply: { a: receipt({ v: '1' }) },
    });
    await world.process('init').run('state init');
    try {
      const release = world.driver.hold('b');
      const run = world.process('runner').start('reconcile');
      await world.driver.whenCalled('b');
      const h = await world.process('operator').run('hold', { unit: 'a', reason: 'incident' });
      assert.equal(h.code, 0);
      assert.ok(delivered(h), JSON.stringify(h.report.notes));
      release();
      const done = await run.outcome;
      assert.equal(done.code, 2);
      assert.equal(done.report.units.a.result, 'held');
      assert.equal(done.report.units.a.dispatched, true);
      assert.equal(done.report.units.b.result, 'executed');
      assert.equal(done.report.units.c.result, 'executed', 'its consumers go on');
      assert.equal(world.desiredDoc('c').rendering.env.X, '1', 'resolved from what a ran');
      assert.deepEqual(world.counts(), { a: 1, b: 1, c: 1 });
      const obs = world.observedDoc('a');
      assert.equal(obs.receipt.run, done.report.run, 'the receipt the run produced is kept');
      const doc = world.desiredDoc('a');
      assert.equal(doc.uid, obs.uid);
      assert.deepEqual(without(doc), without(obs.receipt.desired), 'held as it ran');
      const body = assertSettled(world, 'a');
      assert.equal(body.operation, 'reconcile');
      assert.equal(body.run, done.report.run);
    } finally {
      world.cleanup();
    }
  });

  test('a unit executing when the hold arrives finishes and is held as it ran', async () => {
    const world = await World.create({ units: CHAIN });
    await world.process('init').run('state init');
    try {
      const release = world.driver.hold('a');
      const run = world.process('runner').start('reconcile');
      await world.driver.whenCalled('a');
      const h = await world.process('operator').run('hold', { unit: 'a', reason: 'incident' });
      assert.ok(delivered(h), JSON.stringify(h.report.notes));
      assert.deepEqual(world.counts(), { a: 1, b: 0, c: 0 }, 'a still runs: the hold does not interrupt it');
      release();
      const done = await run.outcome;
      assert.equal(done.code, 2);
      assert.equal(done.report.units.a.result, 'held');
      assert.equal(done.report.units.a.dispatched, true);
      const obs = world.observedDoc('a');
      assert.ok(obs.receipt, 'a finished');
      assert.equal(obs.receipt.run, done.report.run);
      assert.deepEqual(without(world.desiredDoc('a')), without(obs.receipt.desired), 'held as it ran');
      assertSettled(world, 'a');
    } finally {
      world.cleanup();
    }
  });

  test('a hold delivered to a run that then died takes effect: the next reconcile does not start the unit', async () => {
    const world = await World.create({ units: CHAIN });
    await world.process('init').run('state init');
    try {
      const victim = world.process('victim');
      const paused = victim.pauseAt('lease-acquired');
      const run = victim.start('reconcile');
      await paused.reached;
      const h = await world.process('operator').run('hold', { unit: 'b', reason: 'incident' });
      assert.equal(h.code, 0);
      assert.ok(delivered(h), JSON.stringify(h.report.notes));
      victim.kill();
      assert.ok((await run.outcome).died);
      const op = world.process('op');
      assert.equal((await op.run('lease break')).code, 0);
      assert.equal((await op.run('recover', { reason: 'import' })).code, 0);
      const next = await world.process('next').run('reconcile');
      assert.equal(next.code, 2);
      assert.equal(next.report.units.a.result, 'executed');
      assert.equal(next.report.units.b.result, 'held');
      assert.deepEqual(world.counts(), { a: 1, b: 0, c: 0 });
      assertSettled(world, 'b');
    } finally {
      world.cleanup();
    }
  });
});
