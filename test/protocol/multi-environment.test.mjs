// In-process: the schedule of a multi-environment run (commands/shared/multi-environment.ts,
// runSchedule) over real reconciles of three environments, each a World of its own (its own
// in-memory state repository, lease, runs and fake driver). Each environment is its own
// transaction: a failing dependency leaves its dependents' state untouched, two independent
// environments run at once, and a signal cancels the running environment only (it keeps its run
// ref for the next run to import) and starts no other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSchedule } from '../../dist/commands/shared/multi-environment.js';
import { failed } from '../fakes/driver.mjs';
import { World } from './world.mjs';

const UNITS = [
  { name: 'a', recovery: 'converge', dependsOn: [] },
  { name: 'b', recovery: 'converge', dependsOn: ['a'] },
];

/** network, and dev and staging that depend on it: a World each, state initialized. */
async function platform(options = {}) {
  const worlds = {};
  for (const env of ['network', 'dev', 'staging']) {
    worlds[env] = await World.create({ units: UNITS, ...(options[env] ?? {}) });
    await worlds[env].process('init').run('state init');
  }
  const schedule = {
    order: ['network', 'dev', 'staging'],
    dependencies: new Map([
      ['network', []],
      ['dev', ['network']],
      ['staging', ['network']],
    ]),
  };
  return { worlds, schedule };
}

/** An environment's run: a reconcile in a fresh process of its World, ended as the CLI would exit. */
function reconcileIn(worlds, procs = {}) {
  return async (env) => {
    const proc = worlds[env].process(`run-${env}`);
    procs[env] = proc;
    const { report, error, code } = await proc.run('reconcile');
    return { document: report ?? { errors: error.diagnostics }, exit: code };
  };
}

test('each environment is its own transaction; a failing dependency leaves its dependents untouched', async () => {
  const { worlds, schedule } = await platform({ network: { apply: { b: failed('quota exceeded') } } });
  const before = { dev: worlds.dev.refs(), staging: worlds.staging.refs() };
  const ended = await runSchedule({ cancel: new AbortController().signal }, schedule, 2, reconcileIn(worlds));
  assert.equal(ended.get('network').exit, 3);
  for (const env of ['dev', 'staging']) {
    assert.equal(ended.get(env).exit, 2);
    assert.deepEqual(ended.get(env).document.details.blockedBy, ['network']);
    assert.deepEqual(worlds[env].refs(), before[env], `${env}: no lease, run ref or commit`);
    assert.deepEqual(worlds[env].counts(), { a: 0, b: 0 });
  }
  assert.deepEqual(worlds.network.counts(), { a: 1, b: 1 });
  assert.equal(worlds.network.runRefs().length, 0, 'network ended its run: its run ref is gone');
});

test('independent environments run at once, each under its own lease', async () => {
  const { worlds, schedule } = await platform();
  const holds = { dev: worlds.dev.driver.hold('a'), staging: worlds.staging.driver.hold('a') };
  const done = runSchedule({ cancel: new AbortController().signal }, schedule, 2, reconcileIn(worlds));
  await Promise.all([worlds.dev.driver.whenCalled('a'), worlds.staging.driver.whenCalled('a')]);
  for (const env of ['dev', 'staging']) assert.ok(worlds[env].leaseDoc(), `${env} holds its own lease`);
  assert.equal(worlds.network.leaseDoc(), undefined, 'network ended before them');
  holds.dev();
  holds.staging();
  const ended = await done;
  assert.deepEqual(
    [...ended.values()].map((e) => e.exit),
    [0, 0, 0],
  );
  for (const env of ['network', 'dev', 'staging']) assert.deepEqual(worlds[env].counts(), { a: 1, b: 1 });
});

test('a signal cancels the running environment only; it keeps its run ref and the next run imports it', async () => {
  const { worlds, schedule } = await platform();
  const controller = new AbortController();
  const procs = {};
  const release = worlds.dev.driver.hold('a');
  const done = runSchedule({ cancel: controller.signal }, schedule, 1, reconcileIn(worlds, procs));
  await worlds.dev.driver.whenCalled('a');
  // SIGINT reaches the process once: the schedule and the running reconcile see the same signal.
  controller.abort('SIGINT');
  procs.dev.cancel('SIGINT');
  release();
  const ended = await done;
  assert.deepEqual(
    [...ended].map(([env, e]) => [env, e.exit]),
    [
      ['network', 0],
      ['dev', 4],
      ['staging', 4],
    ],
  );
  assert.equal(ended.get('staging').document.details.notStarted, true);
  assert.equal(worlds.dev.runRefs().length, 1, 'the cancelled run keeps its run ref');
  assert.equal(worlds.staging.counts().a, 0);
  const next = await worlds.dev.process('next').run('reconcile');
  assert.equal(next.code, 0);
  assert.equal(worlds.dev.runRefs().length, 0, 'imported');
  // a was running when the signal came: left uncertain, and under recovery: converge run again.
  assert.deepEqual(worlds.dev.counts(), { a: 2, b: 1 });
});
