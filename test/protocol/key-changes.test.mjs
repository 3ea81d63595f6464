// Why a unit's execution key changed, named read by read in process: `nyl plan`'s detail and its
// row's keyChanges, `nyl status`'s detail and a reconcile's start line all say `input
// migrations/002.sql added`, `triggered by deploy` or `spec field env changed` instead of
// "execution key changed". A directory read is named file by file from the files its desired
// document recorded (readFiles); state written before they were recorded names the directory, and
// only when nothing recorded tells does the detail say "execution key changed".
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { planOpened } from '../../dist/commands/plan/plan.js';
import YAML from 'yaml';
import { World } from './world.mjs';

const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });
const S2 = 'c0ffee0000000000000000000000000000000002';

async function reconciled(units, files = {}) {
  const world = await World.create({ units, files });
  await world.process('init').run('state init');
  const first = await world.process('first').run('reconcile');
  assert.equal(first.code, 0, JSON.stringify(first.report?.units ?? first.codes));
  return world;
}

/** What plan, status and a reconcile's start line say of each unit. */
async function said(world) {
  const proc = world.process();
  const plan = await planOpened(proc.rt, proc.opened(), {});
  const status = await world.process().run('status');
  const run = world.process();
  const result = await run.run('reconcile');
  assert.equal(result.code, 0);
  const of = (name) => ({
    plan: plan.units[name],
    status: status.report.units[name].detail,
    start: run.lines.find((l) => l.includes(`[dev/${name}] starting`)),
  });
  return of;
}

describe('a changed key names what changed', () => {
  test('an input file added, a file of an input directory changed: plan, status and the start line say which', async () => {
    const units = [unit('migrate', { inputs: ['migrations/*.sql'] }), unit('conf', { inputs: ['conf'] })];
    const files = { 'migrations/001.sql': 'create table a;', 'conf/x.yaml': 'x: 1' };
    const world = await reconciled(units, files);
    try {
      assert.deepEqual(world.desiredDoc('conf').readFiles, { 'conf/x.yaml': world.desiredDoc('conf').readFiles['conf/x.yaml'] });
      assert.equal(world.desiredDoc('migrate').readFiles, undefined, 'a unit that reads no directory records no files');
      await world.setUnits(units, { ...files, 'migrations/002.sql': 'create table b;', 'conf/x.yaml': 'x: 2' });
      world.sourceCommit = S2;
      const of = await said(world);
      const migrate = of('migrate');
      assert.equal(migrate.plan.detail, 'input migrations/002.sql added');
      assert.deepEqual(migrate.plan.keyChanges, [{ read: 'input', path: 'migrations/002.sql', how: 'added' }]);
      assert.equal(migrate.status, 'input migrations/002.sql added');
      assert.match(migrate.start, /starting Command \(reconcile\): input migrations\/002\.sql added$/);
      const conf = of('conf');
      assert.equal(conf.plan.detail, 'input conf/x.yaml changed');
      assert.match(conf.start, /: input conf\/x\.yaml changed$/);
    } finally {
      world.cleanup();
    }
  });

  test('a trigger that executed and a spec field that changed', async () => {
    const units = (v, mode) => [unit('deploy', { version: v }), unit('smoke', { triggers: ['deploy'], env: { MODE: mode } })];
    const world = await reconciled(units('v1', 'a'));
    try {
      await world.setUnits(units('v2', 'a'));
      world.sourceCommit = S2;
      assert.equal((await world.process().run('reconcile')).code, 0);
      // deploy ran again since smoke's receipt: smoke is triggered (it ran in the same run, so plan again after one more change).
      await world.setUnits(units('v3', 'b'));
      const proc = world.process();
      const plan = await planOpened(proc.rt, proc.opened(), {});
      assert.equal(plan.units.deploy.detail, 'spec field run changed');
      assert.deepEqual(plan.units.smoke.result, 'wait');
      assert.match(plan.units.smoke.detail, /^\/triggers\/0 waits for deploy \(no-current-receipt\); spec field env changed; /);
      const run = world.process();
      assert.equal((await run.run('reconcile')).code, 0);
      assert.ok(
        run.lines.some((l) => /\[dev\/smoke\] starting Command \(reconcile\): spec field env changed; triggered by deploy$/.test(l)),
        run.lines.join('\n'),
      );
    } finally {
      world.cleanup();
    }
  });

  test('state written before files were recorded names the directory; nothing recorded that tells: "execution key changed"', async () => {
    const units = [unit('conf', { inputs: ['conf'] })];
    const world = await reconciled(units, { 'conf/x.yaml': 'x: 1' });
    try {
      const plan = async () => {
        const proc = world.process();
        return (await planOpened(proc.rt, proc.opened(), {})).units.conf;
      };
      // As an earlier version wrote it: no readFiles, the receipt with a copy of its desired document.
      const { readFiles: _files, ...desired } = world.desiredDoc('conf');
      const observed = world.observedDoc('conf');
      const rewrite = (receipt) => {
        world.edit(world.loc.desiredRef, { 'units/conf.yaml': YAML.stringify({ formatVersion: 2, ...desired }) });
        world.edit(world.loc.observedRef, { 'units/conf.yaml': YAML.stringify({ formatVersion: 2, ...observed, receipt: { ...receipt, desired } }) });
      };
      rewrite(observed.receipt);
      assert.equal((await plan()).result, 'current', 'the rewritten state reads as it was');
      await world.setUnits(units, { 'conf/x.yaml': 'x: 2' });
      const named = await plan();
      assert.equal(named.detail, 'input conf/ changed');
      assert.deepEqual(named.keyChanges, [{ read: 'input', path: 'conf/', how: 'changed' }]);

      // The same reads and spec, another key (a new driver version): nothing recorded tells.
      await world.setUnits(units, { 'conf/x.yaml': 'x: 1' });
      rewrite({ ...observed.receipt, executionKey: `sha256:${'0'.repeat(64)}` });
      const unknown = await plan();
      assert.equal(unknown.detail, 'execution key changed');
      assert.equal(unknown.keyChanges, undefined);
    } finally {
      world.cleanup();
    }
  });
});
