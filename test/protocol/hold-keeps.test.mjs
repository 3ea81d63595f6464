// What a hold keeps, in process (moved here from test/e2e/hold-keeps.test.mjs): hold.pending records
// the first source commit the hold keeps from applying, also when nothing else would change, keeps
// it (and writes nothing) while later source still differs, and clears it once source renders
// the held document again. And resume of a unit the state does not hold (from test/e2e/hold-basics.test.mjs).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { World } from './world.mjs';

const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });
const source = (n) => `c0ffee${String(n).padStart(34, '0')}`;

describe('hold.pending', () => {
  test('records the first source the hold keeps from applying, also when nothing else would change, and clears it when source renders the held document again', async () => {
    const world = await World.create({ units: [unit('a', { version: '1' })] });
    try {
      const op = world.process('op');
      await op.run('state init');
      assert.equal((await op.run('reconcile')).code, 0);
      assert.equal((await op.run('hold', { unit: 'a', reason: 'incident' })).code, 0);
      assert.equal(world.desiredDoc('a').hold.pending, undefined);

      const s2 = source(2);
      world.sourceCommit = s2;
      await world.setUnits([unit('a', { version: '2' })]);
      const r = await op.run('reconcile');
      assert.equal(r.code, 2);
      assert.equal(r.report.units.a.result, 'held');
      assert.deepEqual(world.counts(), { a: 1 }, 'nothing executed');
      assert.equal(world.desiredDoc('a').hold.pending, s2, 'recorded by a run that executed nothing');
      assert.match(world.repo.commitsOf(world.loc.desiredRef)[0].message, /^operation: reconcile$/m);

      // Newer source that still differs: changes have been pending since s2; nothing is written.
      world.sourceCommit = source(3);
      await world.setUnits([unit('a', { version: '3' })]);
      const tip = world.refs()[world.loc.desiredRef];
      assert.equal((await op.run('reconcile')).code, 2);
      assert.equal(world.refs()[world.loc.desiredRef], tip, 'no commit per source commit while held');
      assert.equal(world.desiredDoc('a').hold.pending, s2);
      const st = await op.run('status');
      assert.match(st.report.units.a.detail, new RegExp(`pending changes from ${s2}`), 'status shows the first source kept from applying');

      // Source renders the held document again: nothing is pending any more.
      world.sourceCommit = source(4);
      await world.setUnits([unit('a', { version: '1' })]);
      assert.equal((await op.run('reconcile')).code, 2);
      assert.equal(world.desiredDoc('a').hold.pending, undefined);
      assert.doesNotMatch((await op.run('status')).report.units.a.detail ?? '', /pending changes/);
    } finally {
      world.cleanup();
    }
  });
});

test('resume of a unit the state does not hold: exit 1 NYL-UNIT-UNKNOWN, nothing written', async () => {
  const world = await World.create({ units: [unit('a')] });
  try {
    const op = world.process('op');
    await op.run('state init');
    assert.equal((await op.run('reconcile')).code, 0);
    // In source, but never reconciled: the state does not hold it.
    await world.setUnits([unit('a'), unit('fresh')]);
    const refs = world.refs();
    for (const name of ['fresh', 'ghost']) {
      const r = await op.run('resume', { unit: name, reason: 'r' });
      assert.equal(r.code, 1, name);
      assert.deepEqual(r.codes ?? r.report.errors.map((d) => d.code), ['NYL-UNIT-UNKNOWN'], name);
    }
    assert.deepEqual(world.refs(), refs, 'nothing written, no lease left');
  } finally {
    world.cleanup();
  }
});
