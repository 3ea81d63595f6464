// What the state says Nyl decided, in process: the desired branch holds the decision a unit's
// receipt is current for, also after a source revert brought a failed unit back to that receipt;
// and `nyl status` tells units that will execute from units that are only re-evaluated after their
// dependencies ran.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { failed } from '../fakes/driver.mjs';
import { commitBody } from '../support/commit-evidence.mjs';
import { World } from './world.mjs';

const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });
const S1 = 'c0ffee0000000000000000000000000000000001';
const S2 = 'c0ffee0000000000000000000000000000000002';
const S3 = 'c0ffee0000000000000000000000000000000003';

/** Moves source to a new commit that declares these units. */
async function commitSource(world, commit, units) {
  await world.setUnits(units);
  world.sourceCommit = commit;
}

describe('the desired branch says what Nyl decided', () => {
  test('a source revert makes a failed unit current against its old receipt: the run writes the desired document of that receipt again, and the next reconcile writes nothing', async () => {
    // v2 fails and needs an operator: only `recover --retry` clears it.
    const world = await World.create({
      units: [unit('u')],
      apply: { u: (ctx) => (ctx.rendering.run[1] === 'v2' ? failed('v2 is broken', { retryable: false }) : { result: 'receipt', outputs: {} }) },
    });
    try {
      await world.process('init').run('state init');
      assert.equal((await world.process('s1').run('reconcile')).code, 0);
      const decided = world.desiredDoc('u');
      assert.deepEqual(decided.rendering, { run: ['u'] });
      assert.equal(decided.source, S1);

      await commitSource(world, S2, [unit('u', { version: 'v2' })]);
      assert.equal((await world.process('s2').run('reconcile')).code, 3);
      assert.deepEqual(world.desiredDoc('u').rendering, { run: ['u', 'v2'] }, 'the failed change is what Nyl decided then');

      await commitSource(world, S3, [unit('u')]);
      assert.equal((await world.process('op').run('recover', { unit: 'u', retry: true, reason: 'reverted v2' })).code, 0);
      const before = world.stateRefs();
      const back = await world.process('s3').run('reconcile');
      assert.equal(back.code, 0, JSON.stringify(back.report.units));
      assert.equal(back.report.units.u.result, 'current');
      assert.equal(back.report.units.u.dispatched, false);
      assert.deepEqual(world.counts(), { u: 2 }, 'nothing executed: the receipt of S1 is current again');
      assert.deepEqual(world.desiredDoc('u'), world.observedDoc('u').receipt.desired, 'the decision its receipt was produced for');
      assert.deepEqual(world.desiredDoc('u'), decided);
      assert.match(back.report.units.u.detail, new RegExp(`desired document of its receipt again \\(source ${S1}\\)`));

      const [commit] = world.repo.commitsOf(world.loc.desiredRef);
      assert.equal(commit.message.split('\n')[0], 'nyl: reconcile dev: 1 restored (u)');
      const body = commitBody(commit.message);
      assert.deepEqual(body.units, { u: 'current' });
      assert.deepEqual(body.desiredRestored, ['u']);
      assert.equal(body.executed, undefined);
      assert.equal(world.stateRefs().observed, before.observed, 'nothing observed changed');
      assert.equal(back.report.committed, true);

      const again = await world.process('noop').run('reconcile');
      assert.equal(again.code, 0);
      assert.equal(again.report.run, undefined, 'no lease taken: nothing to do');
      assert.deepEqual(world.stateRefs(), { desired: commit.oid, observed: before.observed }, 'nothing written');
      const status = await world.process('look').run('status');
      assert.equal(status.code, 0);
      assert.equal(status.report.units.u.state, 'current');
    } finally {
      world.cleanup();
    }
  });
});

describe('status says which units execute and which are re-evaluated after their dependencies', () => {
  test('only the upstream changed: its dependent awaits its dependencies (exit 2) and ends current without executing; dependents with changes of their own are outdated or pending', async () => {
    const world = await World.create({ units: [unit('up'), unit('down', { dependsOn: ['up'] }), unit('own', { dependsOn: ['up'] })] });
    try {
      await world.process('init').run('state init');
      assert.equal((await world.process('s1').run('reconcile')).code, 0);
      await commitSource(world, S2, [
        unit('up', { version: 'v2' }),
        unit('down', { dependsOn: ['up'] }),
        unit('own', { dependsOn: ['up'], version: 'v2' }),
        unit('fresh', { dependsOn: ['up'] }),
      ]);

      const status = await world.process('look').run('status');
      const view = Object.fromEntries(Object.entries(status.report.units).map(([n, u]) => [n, [u.state, u.receipt]]));
      assert.deepEqual(view, {
        up: ['outdated', 'outdated'],
        down: ['awaiting-dependencies', 'unresolved'],
        own: ['outdated', 'outdated'],
        fresh: ['pending', 'none'],
      });
      assert.equal(
        status.report.units.down.detail,
        '/dependsOn/0 waits for up (no-current-receipt); re-evaluated after its dependencies run (its receipt may stay current)',
      );
      assert.equal(status.report.units.own.detail, '/dependsOn/0 waits for up (no-current-receipt); spec field run changed');
      assert.deepEqual(status.report.units.down.waits, [{ pointer: '/dependsOn/0', unit: 'up', reason: 'no-current-receipt' }]);
      assert.equal(status.code, 2, 'not reconciled yet, nothing failed');

      const run = await world.process('s2').run('reconcile');
      assert.equal(run.code, 0);
      assert.deepEqual(Object.fromEntries(Object.entries(run.report.units).map(([n, u]) => [n, u.result])), {
        up: 'executed',
        own: 'executed',
        fresh: 'executed',
        down: 'current',
      });
      assert.deepEqual(world.counts(), { up: 2, down: 1, own: 2, fresh: 1 }, 'down was re-evaluated, not executed');
    } finally {
      world.cleanup();
    }
  });
});
