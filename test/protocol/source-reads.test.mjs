// What a unit reads besides its spec enters its execution key, in process: the files its
// `inputs` globs match (an added migration runs the migrating unit again, an unrelated file does
// not), and the receipt runs of the units its `triggers` name (a smoke test runs again whenever
// the deployment executed, and only then). The desired document records the reads, so that the
// key can be computed again from state alone.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { executionKey } from '../../dist/project/execution-key.js';
import { World } from './world.mjs';

const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });

/** Runs a reconcile and returns the units it executed, in order. */
async function executed(world, name) {
  const applies = () => world.driver.calls.filter((c) => c.phase === 'apply');
  const before = applies().length;
  const result = await world.process(name).run('reconcile');
  assert.equal(result.code, 0, name);
  return applies()
    .slice(before)
    .map((c) => c.unit)
    .sort();
}

describe('inputs: the Git object ids of matched source files enter the key', () => {
  test('an added or changed migration runs the unit again; an unrelated file does not', async () => {
    const units = [unit('migrate', { inputs: ['migrations/*.sql'] }), unit('app')];
    const files = { 'migrations/001.sql': 'create table a;', 'README.md': 'hello' };
    const world = await World.create({ units, files });
    try {
      await world.process('init').run('state init');
      assert.deepEqual(await executed(world, 'first'), ['app', 'migrate']);
      const reads = world.desiredDoc('migrate').reads;
      assert.deepEqual(Object.keys(reads.sources), ['migrations/001.sql']);
      assert.equal(world.desiredDoc('app').reads, undefined, 'a unit that reads nothing records no reads');

      await world.setUnits(units, { ...files, 'README.md': 'changed' });
      assert.deepEqual(await executed(world, 'unrelated'), []);

      await world.setUnits(units, { ...files, 'migrations/002.sql': 'create table b;' });
      assert.deepEqual(await executed(world, 'added'), ['migrate']);
      assert.deepEqual(Object.keys(world.desiredDoc('migrate').reads.sources), ['migrations/001.sql', 'migrations/002.sql']);

      await world.setUnits(units, { ...files, 'migrations/001.sql': 'create table a2;', 'migrations/002.sql': 'create table b;' });
      assert.deepEqual(await executed(world, 'changed'), ['migrate']);
      assert.deepEqual(await executed(world, 'again'), [], 'nothing changed since');

      const doc = world.desiredDoc('migrate');
      const recomputed = executionKey({ kind: doc.kind, rendering: doc.rendering, uid: doc.uid, driverVersion: 'fake/1', reads: doc.reads });
      assert.equal(world.observedDoc('migrate').receipt.executionKey, recomputed, 'the key is computed again from the desired document alone');
    } finally {
      world.cleanup();
    }
  });

  test('a plain path names a file, or a directory by its tree', async () => {
    const units = [unit('a', { inputs: ['conf'] })];
    const world = await World.create({ units, files: { 'conf/x.yaml': 'x: 1' } });
    try {
      await world.process('init').run('state init');
      assert.deepEqual(await executed(world, 'first'), ['a']);
      assert.deepEqual(Object.keys(world.desiredDoc('a').reads.sources), ['conf/']);
      await world.setUnits(units, { 'conf/x.yaml': 'x: 1', 'conf/y.yaml': 'y: 2' });
      assert.deepEqual(await executed(world, 'added'), ['a']);
    } finally {
      world.cleanup();
    }
  });
});

describe('triggers: a unit runs again whenever a named unit executed', () => {
  test('the smoke test runs after every deployment, and only then; it waits for the unit it names', async () => {
    const units = [unit('deploy', { version: 'v1' }), unit('smoke', { triggers: ['deploy'] }), unit('other')];
    const world = await World.create({ units });
    try {
      await world.process('init').run('state init');
      assert.deepEqual(await executed(world, 'first'), ['deploy', 'other', 'smoke']);
      const order = world.driver.calls.filter((c) => c.phase === 'apply').map((c) => c.unit);
      assert.ok(order.indexOf('deploy') < order.indexOf('smoke'), 'a trigger orders the unit after the one it names');
      const firstRun = world.observedDoc('deploy').receipt.run;
      assert.deepEqual(world.desiredDoc('smoke').reads.triggers, { deploy: firstRun });

      assert.deepEqual(await executed(world, 'nothing'), []);

      await world.setUnits([unit('deploy', { version: 'v2' }), unit('smoke', { triggers: ['deploy'] }), unit('other')]);
      assert.deepEqual(await executed(world, 'deploy-again'), ['deploy', 'smoke']);
      assert.notEqual(world.desiredDoc('smoke').reads.triggers.deploy, firstRun);
    } finally {
      world.cleanup();
    }
  });
});

describe("a Command's program file enters the key as if inputs named it", () => {
  const actionFields = { argv: 'run', shellText: 'script', workingDir: 'workingDir' };

  test('run: [./bin/deploy.sh] runs again when deploy.sh changes, and only then', async () => {
    const units = [unit('deploy', { run: ['./bin/deploy.sh', '--prod'] }), unit('other')];
    const files = { 'bin/deploy.sh': 'echo v1', 'README.md': 'hello' };
    const world = await World.create({ units, files, driver: { actionFields } });
    try {
      await world.process('init').run('state init');
      assert.deepEqual(await executed(world, 'first'), ['deploy', 'other']);
      assert.deepEqual(Object.keys(world.desiredDoc('deploy').reads.sources), ['bin/deploy.sh']);
      assert.equal(world.desiredDoc('other').reads, undefined, 'a program found on PATH is no file of the source');

      await world.setUnits(units, { ...files, 'README.md': 'changed' });
      assert.deepEqual(await executed(world, 'unrelated'), []);

      await world.setUnits(units, { ...files, 'bin/deploy.sh': 'echo v2' });
      assert.deepEqual(await executed(world, 'program changed'), ['deploy']);
      assert.deepEqual(await executed(world, 'again'), [], 'nothing changed since');
    } finally {
      world.cleanup();
    }
  });
});
