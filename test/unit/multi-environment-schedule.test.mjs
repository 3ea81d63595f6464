// The schedule of a multi-environment reconcile (commands/shared/multi-environment.ts, runSchedule),
// with fake environment runs: dependsOn order, blocked dependents (transitively), the
// --environment-concurrency limit, and a signal that starts no further environment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSchedule } from '../../dist/commands/shared/multi-environment.js';

const report = (env) => ({ kind: 'ReconcileReport', environment: env, unitOrder: [], units: {}, errors: [], warnings: [], notes: [] });

/** A fake run: records starts and ends, ends with exits[env] (default 0) after a tick. */
function fakeRuns(exits = {}, { onStart } = {}) {
  const events = [];
  let active = 0;
  let peak = 0;
  const run = async (env) => {
    events.push(`start ${env}`);
    active++;
    peak = Math.max(peak, active);
    onStart?.(env);
    await new Promise((r) => setTimeout(r, 5));
    active--;
    events.push(`end ${env}`);
    return { document: report(env), exit: exits[env] ?? 0 };
  };
  return { run, events, peak: () => peak };
}

const schedule = {
  order: ['base', 'network', 'dev', 'staging', 'app'],
  dependencies: new Map([
    ['base', []],
    ['network', ['base']],
    ['dev', ['base', 'network']],
    ['staging', ['base', 'network']],
    ['app', ['base', 'dev', 'network']],
  ]),
};
const live = () => ({ cancel: new AbortController().signal });

test('concurrency 1 runs the order one at a time', async () => {
  const f = fakeRuns();
  const ended = await runSchedule(live(), schedule, 1, f.run);
  assert.deepEqual(
    f.events.filter((e) => e.startsWith('start')),
    schedule.order.map((e) => `start ${e}`),
  );
  assert.equal(f.peak(), 1);
  assert.deepEqual(
    [...ended.values()].map((e) => e.exit),
    [0, 0, 0, 0, 0],
  );
});

test('concurrency 2 runs independent environments together, never one before its dependencies ended', async () => {
  const f = fakeRuns();
  await runSchedule(live(), schedule, 2, f.run);
  assert.equal(f.peak(), 2);
  const at = (e) => f.events.indexOf(e);
  assert.ok(at('start dev') < at('end staging') && at('start staging') < at('end dev'), f.events.join(', '));
  for (const [env, deps] of schedule.dependencies) for (const d of deps) assert.ok(at(`end ${d}`) < at(`start ${env}`), `${env} after ${d}`);
});

test('a dependency that did not end 0 blocks its dependents, transitively, naming it', async () => {
  const f = fakeRuns({ dev: 3 });
  const ended = await runSchedule(live(), schedule, 1, f.run);
  assert.equal(ended.get('dev').exit, 3);
  const app = ended.get('app');
  assert.equal(app.exit, 2);
  assert.deepEqual(app.document.details.blockedBy, ['dev']);
  assert.equal(app.document.errors[0].code, 'NYL-ENVIRONMENT-BLOCKED');
  assert.equal(ended.get('staging').exit, 0, 'staging does not depend on dev');
  assert.ok(!f.events.includes('start app'));

  const g = fakeRuns({ base: 2 });
  const all = await runSchedule(live(), schedule, 3, g.run);
  assert.deepEqual(g.events, ['start base', 'end base']);
  assert.deepEqual(all.get('network').document.details.blockedBy, ['base']);
  assert.deepEqual(all.get('app').document.details.blockedBy, ['base', 'dev', 'network'], 'blocked ones block too');
});

test('a signal lets the running environment end and starts no other (NYL-RUN-CANCELLED, not started)', async () => {
  const controller = new AbortController();
  const f = fakeRuns({}, { onStart: (env) => env === 'network' && controller.abort() });
  const ended = await runSchedule({ cancel: controller.signal }, schedule, 1, f.run);
  assert.deepEqual(f.events, ['start base', 'end base', 'start network', 'end network']);
  for (const env of ['dev', 'staging', 'app']) {
    assert.equal(ended.get(env).exit, 4);
    assert.equal(ended.get(env).document.errors[0].code, 'NYL-RUN-CANCELLED');
    assert.equal(ended.get(env).document.details.notStarted, true);
  }
});
