// `nyl teardown --cancel` in process: a teardown request made by mistake on a unit with a
// dependent makes every later reconcile wait (exit 2) until it is withdrawn; withdrawing takes
// the lease and writes one desired commit (operation teardown-cancel), and refuses a unit whose
// teardown started (deleting, uncertain, or a started marker in a run not imported yet).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { World } from './world.mjs';

const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });
const codesOf = (r) => (r.report ? [...r.report.errors, ...r.report.warnings, ...r.report.notes].map((d) => d.code) : r.codes);
const tornDown = (world) => world.driver.calls.filter((c) => c.phase === 'teardown').map((c) => c.unit);
const stateRefs = (world) => world.stateRefs();

/** The body of the newest commit on the desired ref. */
function topBody(world) {
  const [top] = world.repo.commitsOf(world.loc.desiredRef);
  return YAML.parse(
    top.message
      .split('\n')
      .slice(1)
      .filter((l) => !/^[A-Z][A-Za-z-]+: /.test(l))
      .join('\n'),
  );
}

async function reconciled(units, driver = { teardown: true }) {
  const world = await World.create({ units, driver });
  const setup = world.process('setup');
  await setup.run('state init');
  assert.equal((await setup.run('reconcile')).code, 0);
  return world;
}

const chain = () => [unit('db'), unit('migrate', { dependsOn: ['db'] }), unit('app', { dependsOn: ['migrate'] })];

describe('nyl teardown --cancel', () => {
  test('a request waiting for a dependent keeps every reconcile at exit 2 until withdrawn; the withdrawal is one desired commit and tears nothing down', async () => {
    const world = await reconciled(chain());
    try {
      const op = world.process('op');
      const mistake = await op.run('reconcile', { teardown: { units: ['migrate'] } });
      assert.equal(mistake.code, 2, JSON.stringify(codesOf(mistake)));
      assert.equal((await op.run('reconcile')).code, 2, 'the request keeps waiting for app');
      const uid = world.desiredDoc('migrate').uid;
      const commits = world.repo.commitsOf(world.loc.desiredRef).length;
      const r = await op.run('teardown cancel', { units: ['migrate'], reason: 'asked by mistake' });
      assert.equal(r.code, 0, JSON.stringify(codesOf(r)));
      assert.equal(r.report.kind, 'StateOperationReport');
      assert.equal(r.report.operation, 'teardown-cancel');
      assert.equal(r.report.result, 'done');
      assert.deepEqual(r.report.details.withdrawn, ['migrate']);
      assert.equal(world.repo.commitsOf(world.loc.desiredRef).length, commits + 1, 'one desired commit');
      const body = topBody(world);
      assert.equal(body.operation, 'teardown-cancel');
      assert.deepEqual(body.withdrawn, ['migrate']);
      const doc = world.desiredDoc('migrate');
      assert.equal(doc.teardownRequest, undefined, 'the request is gone');
      assert.equal(doc.uid, uid, 'the incarnation stays');
      const after = await op.run('reconcile');
      assert.equal(after.code, 0, JSON.stringify(codesOf(after)));
      assert.deepEqual(tornDown(world), []);
    } finally {
      world.cleanup();
    }
  });

  test('nothing to withdraw: NYL-UNCHANGED, nothing written; an unknown unit: NYL-UNIT-UNKNOWN (exit 1)', async () => {
    const world = await reconciled(chain());
    try {
      const op = world.process('op');
      const refs = stateRefs(world);
      const r = await op.run('teardown cancel', { units: ['migrate'] });
      assert.equal(r.code, 0);
      assert.equal(r.report.result, 'unchanged');
      assert.deepEqual(codesOf(r), ['NYL-UNCHANGED']);
      const all = await op.run('teardown cancel', { units: 'all' });
      assert.equal(all.report.result, 'unchanged');
      assert.deepEqual(stateRefs(world), refs, 'nothing written');
      const unknown = await op.run('teardown cancel', { units: ['nope'] });
      assert.equal(unknown.code, 1);
      assert.deepEqual(unknown.codes, ['NYL-UNIT-UNKNOWN']);
    } finally {
      world.cleanup();
    }
  });

  test('a held unit keeps its hold; the request withdrawn, resume and reconcile tear nothing down', async () => {
    const world = await reconciled([unit('db')]);
    try {
      const op = world.process('op');
      assert.equal((await op.run('hold', { unit: 'db', reason: 'incident' })).code, 0);
      assert.equal((await op.run('reconcile', { teardown: { units: ['db'] } })).code, 2);
      const r = await op.run('teardown cancel', { units: 'all', reason: 'not after all' });
      assert.equal(r.code, 0, JSON.stringify(codesOf(r)));
      assert.deepEqual(r.report.details.withdrawn, ['db']);
      const held = world.desiredDoc('db');
      assert.equal(held.lifecycle.state, 'held');
      assert.equal(held.teardownRequest, undefined);
      assert.equal((await op.run('resume', { unit: 'db', reason: 'resolved' })).code, 0);
      assert.equal((await op.run('reconcile')).code, 0);
      assert.deepEqual(tornDown(world), []);
    } finally {
      world.cleanup();
    }
  });

  test('a started teardown is refused by name (NYL-TEARDOWN-STARTED, exit 1, nothing written): in a run not imported yet, and uncertain after a takeover; --all withdraws the rest', async () => {
    const world = await reconciled([unit('man'), unit('other')]);
    try {
      const victim = world.process('victim').crashAt('after-started-push', { unit: 'man' });
      assert.ok((await victim.start('reconcile', { teardown: { units: ['man'] }, reason: 'decommission' }).outcome).died);
      const op = world.process('op');
      const refs = stateRefs(world);
      const inRun = await op.run('teardown cancel', { units: ['man'] });
      assert.equal(inRun.code, 1, JSON.stringify(inRun.codes));
      assert.deepEqual(inRun.codes, ['NYL-TEARDOWN-STARTED']);
      assert.equal(inRun.error.diagnostics[0].data.why, 'in-run');
      assert.match(inRun.error.diagnostics[0].fix, /nyl hold -e dev --unit man --reason/);
      assert.equal((await op.run('lease break')).code, 0);
      assert.equal((await world.process('takeover').run('reconcile')).code, 4);
      assert.equal(world.desiredDoc('man').lifecycle.state, 'deleting');
      // A second request, not started: --all withdraws it and warns about man.
      assert.equal((await op.run('hold', { unit: 'other', reason: 'keep it' })).code, 0);
      assert.equal((await op.run('reconcile', { teardown: { units: ['other'] } })).code, 4);
      assert.ok(world.desiredDoc('other').teardownRequest);
      const named = await op.run('teardown cancel', { units: ['man', 'other'] });
      assert.equal(named.code, 1);
      assert.deepEqual(named.codes, ['NYL-TEARDOWN-STARTED']);
      assert.equal(named.error.diagnostics[0].data.why, 'uncertain');
      assert.match(named.error.diagnostics[0].fix, /nyl recover -e dev --unit man --retry/);
      assert.ok(world.desiredDoc('other').teardownRequest, 'refused as a whole: nothing written');
      const all = await op.run('teardown cancel', { units: 'all' });
      assert.equal(all.code, 0, JSON.stringify(codesOf(all)));
      assert.deepEqual(all.report.details.withdrawn, ['other']);
      assert.deepEqual(all.report.details.started, ['man']);
      assert.deepEqual(codesOf(all), ['NYL-TEARDOWN-STARTED']);
      assert.equal(world.desiredDoc('other').teardownRequest, undefined);
      assert.ok(world.desiredDoc('man').teardownRequest, 'the started one stays');
      assert.notDeepEqual(stateRefs(world), refs);
    } finally {
      world.cleanup();
    }
  });
});
