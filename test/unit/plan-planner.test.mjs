import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadProject } from '../../dist/project/load.js';
import { currentUid, formatWait, planEnvironment, resolveUnit } from '../../dist/plan/planner.js';
import { executable } from '../../dist/plan/actions.js';
import { renderingDigest } from '../../dist/plan/input.js';
import { preparationFrom } from '../../dist/plan/preparation.js';
import { runDetail, statusDetail, statusPhase } from '../../dist/plan/reasons.js';
import { BUILTIN_KINDS, versionOf } from '../../dist/drivers/kinds.js';
import { BUILTIN_DRIVERS } from '../../dist/drivers/registry.js';
import { documents, memoryTree, resource } from '../support/memory-tree.mjs';

const U = {
  db: '0192f0c0-0000-7000-8000-00000000000d',
  app: '0192f0c0-0000-7000-8000-00000000000a',
  report: '0192f0c0-0000-7000-8000-00000000000b',
  cache: '0192f0c0-0000-7000-8000-00000000000c',
  old: '0192f0c0-0000-7000-8000-0000000000ff',
};

// db <- app (reference in env.DB), db <- report (explicit dependsOn); cache is independent.
async function shop(extraDocs = [], envLines = []) {
  const project = await loadProject(
    '/project',
    memoryTree({
      'nyl.yaml': documents(
        resource('Project', 'shop'),
        resource('Environment', 'dev', ...envLines),
        resource('Command', 'app', 'run: [deploy]', 'env: {DB: "${{ units.db.outputs.url }}"}'),
        resource('Command', 'db', 'run: [create-db]'),
        resource('Command', 'report', 'dependsOn: [db]', 'run: [report]'),
        resource('Command', 'cache', 'run: [cache]'),
        ...extraDocs,
      ),
    }),
  );
  return { project, env: project.environments.get('dev') };
}

function keyOf(ctx, name, uid, outputs = {}) {
  return resolveUnit(ctx.project.units.get(name), uid, {
    env: ctx.env,
    kinds: BUILTIN_KINDS,
    receiptOf: (n) => (outputs[n] === undefined ? undefined : { outputs: outputs[n], run: 'r' }),
  });
}

const active = (ctx, name, uid, outputs = {}, extra = {}) => ({
  uid,
  kind: 'Command',
  generation: 1,
  source: 'c1',
  rendering: keyOf(ctx, name, uid, outputs).rendering,
  lifecycle: { state: 'active' },
  ...extra,
});

/** An observed doc with a receipt current for the unit's rendering with these dependency outputs, produced for its active() document. */
const currentReceipt = (ctx, name, uid, outputs = {}, receiptOutputs = {}) => ({
  uid,
  receipt: {
    run: 'r1',
    executionKey: keyOf(ctx, name, uid, outputs).executionKey,
    finishedAt: 'x',
    outputs: receiptOutputs,
    desired: active(ctx, name, uid, outputs),
  },
});

const planOf = (ctx, { desired = {}, observed = {}, generation = 1, sourceCommit, run, newUids, prepared } = {}) =>
  planEnvironment({
    project: ctx.project,
    env: ctx.env,
    generation,
    drivers: BUILTIN_DRIVERS,
    desired: new Map(Object.entries(desired)),
    observed: new Map(Object.entries(observed)),
    ...(sourceCommit ? { sourceCommit } : {}),
    ...(run ? { run } : {}),
    ...(newUids ? { newUids: new Map(Object.entries(newUids)) } : {}),
    ...(prepared ? { prepared: new Map(Object.entries(prepared)) } : {}),
  });

/** The plan as `nyl status` shows it: phase and detail rendered from each action. */
function resolve(ctx, input) {
  const plan = planOf(ctx, input);
  const units = new Map(
    [...plan.units].map(([n, u]) => {
      const a = u.action;
      const waits = a.type === 'wait' || (a.type === 'blocked' && a.reason === 'dependency-blocked') ? a.waits : [];
      const errors = a.type === 'blocked' && a.reason === 'render-error' ? a.errors : [];
      return [n, { ...u, phase: statusPhase(u), detail: statusDetail(u), waits, errors }];
    }),
  );
  return { order: plan.order, units, plan };
}

const phases = (res) => Object.fromEntries([...res.units].map(([n, u]) => [n, u.phase]));
const failed = (retryable, reason = 'command exited with code 1') => ({ type: 'failed', retryable, reason, run: 'r2', since: 'x' });
const uncertain = (reason = 'run r2 started db and ended without a checkpoint') => ({ type: 'uncertain', retryable: false, reason, run: 'r2', since: 'x' });

test('currentUid: the desired uid unless an older generation', () => {
  assert.equal(currentUid(undefined, 1), undefined);
  assert.equal(currentUid({ lifecycle: { state: 'held' } }, 1), undefined);
  assert.equal(currentUid({ uid: 'u', lifecycle: { state: 'active' } }, 1), 'u', 'generation defaults to 1');
  assert.equal(currentUid({ uid: 'u', lifecycle: { state: 'active' } }, 2), undefined);
  assert.equal(currentUid({ uid: 'u', generation: 2, lifecycle: { state: 'active' } }, 2), 'u');
  assert.equal(currentUid({ uid: 'u', generation: 3, lifecycle: { state: 'active' } }, 2), 'u');
});

test('versionOf: the version tag of each kind, or kind/1 for a kind nobody knows', () => {
  assert.equal(versionOf('Command', BUILTIN_KINDS), 'command/1');
  assert.equal(versionOf('OciImage', BUILTIN_KINDS), 'ociimage/1');
  assert.equal(versionOf('Helm', BUILTIN_KINDS), 'helm/1');
});

test('formatWait', () => {
  assert.equal(formatWait({ pointer: '/dependsOn/0', unit: 'db', reason: 'no-current-receipt' }), '/dependsOn/0 waits for db (no-current-receipt)');
});

test('an environment never reconciled: dependencies pending without incarnation, consumers pending behind them', async () => {
  const ctx = await shop();
  const res = resolve(ctx);
  assert.deepEqual(res.order, ['cache', 'db', 'app', 'report']);
  assert.deepEqual(phases(res), { cache: 'pending', db: 'pending', app: 'pending', report: 'pending' });
  const db = res.units.get('db');
  assert.equal(db.detail, 'no incarnation yet');
  assert.equal(db.uid, undefined);
  assert.equal(db.executionKey, undefined, 'no key without a uid');
  assert.deepEqual(db.rendering, { run: ['create-db'] });
  assert.equal(db.kind, 'Command');
  assert.equal(db.unit, ctx.project.units.get('db'));
  assert.equal(res.units.get('app').detail, '/env/DB waits for db (no-current-receipt)');
  assert.deepEqual(res.units.get('app').waits, [{ pointer: '/env/DB', unit: 'db', reason: 'no-current-receipt' }]);
  assert.equal(res.units.get('report').detail, '/dependsOn/0 waits for db (no-current-receipt)');
});

test('current: the receipt key equals the resolved one; consumers resolve from its outputs', async () => {
  const ctx = await shop();
  const out = { db: { url: 'postgres://db' } };
  const res = resolve(ctx, {
    desired: {
      db: active(ctx, 'db', U.db),
      app: active(ctx, 'app', U.app, out),
      report: active(ctx, 'report', U.report, out),
      cache: active(ctx, 'cache', U.cache),
    },
    observed: {
      db: currentReceipt(ctx, 'db', U.db, {}, { url: 'postgres://db' }),
      app: currentReceipt(ctx, 'app', U.app, out),
      report: currentReceipt(ctx, 'report', U.report, out),
      cache: currentReceipt(ctx, 'cache', U.cache),
    },
  });
  assert.deepEqual(phases(res), { cache: 'current', db: 'current', app: 'current', report: 'current' });
  const app = res.units.get('app');
  assert.equal(app.detail, '');
  assert.equal(app.uid, U.app);
  assert.deepEqual(app.rendering.env, { DB: 'postgres://db' });
  assert.equal(app.executionKey, keyOf(ctx, 'app', U.app, out).executionKey);
  assert.deepEqual(app.waits, []);
  assert.deepEqual(app.errors, []);
});

test('pending with an incarnation but no receipt; outdated with a receipt for another key', async () => {
  const ctx = await shop();
  const res = resolve(ctx, {
    desired: { db: active(ctx, 'db', U.db), cache: active(ctx, 'cache', U.cache) },
    observed: { cache: { uid: U.cache, receipt: { run: 'r1', executionKey: 'sha256:before', finishedAt: 'x', outputs: {}, desired: {} } } },
  });
  assert.equal(res.units.get('db').phase, 'pending');
  assert.equal(res.units.get('db').detail, 'no receipt');
  assert.equal(res.units.get('db').uid, U.db);
  assert.match(res.units.get('db').executionKey, /^sha256:/);
  assert.equal(res.units.get('cache').phase, 'outdated');
  assert.equal(res.units.get('cache').detail, 'execution key changed');
});

test('a consumer of an outdated dependency is pending (the next reconcile runs the dependency first)', async () => {
  const ctx = await shop();
  const res = resolve(ctx, {
    desired: { db: active(ctx, 'db', U.db) },
    observed: { db: { uid: U.db, receipt: { run: 'r1', executionKey: 'sha256:before', finishedAt: 'x', outputs: { url: 'u' }, desired: {} } } },
  });
  assert.equal(res.units.get('db').phase, 'outdated');
  assert.equal(res.units.get('app').phase, 'pending');
  assert.equal(res.units.get('report').phase, 'pending');
  assert.equal(res.units.get('report').detail, '/dependsOn/0 waits for db (no-current-receipt)');
});

test('consumers with receipts of an outdated dependency: re-evaluated after it (awaiting-dependencies) unless something of their own changed', async () => {
  const ctx = await shop();
  const out = { db: { url: 'u' } };
  const outdatedDb = { uid: U.db, receipt: { run: 'r1', executionKey: 'sha256:before', finishedAt: 'x', outputs: { url: 'u' }, desired: {} } };
  const desired = { db: active(ctx, 'db', U.db), app: active(ctx, 'app', U.app, out), report: active(ctx, 'report', U.report, out) };
  const res = resolve(ctx, {
    desired,
    observed: { db: outdatedDb, app: currentReceipt(ctx, 'app', U.app, out), report: currentReceipt(ctx, 'report', U.report, out) },
  });
  assert.equal(res.units.get('db').phase, 'outdated');
  for (const name of ['app', 'report']) {
    const u = res.units.get(name);
    assert.deepEqual(u.action, { type: 'wait', reason: 'upstream-pending', waits: u.waits }, name);
    assert.equal(u.phase, 'awaiting-dependencies', name);
    assert.equal(u.executionKey, undefined, 'no key until db ran');
  }
  assert.equal(
    res.units.get('app').detail,
    '/env/DB waits for db (no-current-receipt); re-evaluated after its dependencies run (its receipt may stay current)',
  );
  // app's receipt was made from other outputs than db's latest receipt holds, or for another spec: a change of its own.
  const moved = resolve(ctx, { desired, observed: { db: outdatedDb, app: currentReceipt(ctx, 'app', U.app, { db: { url: 'elsewhere' } }) } }).units.get('app');
  assert.deepEqual([moved.action.reason, moved.action.executes, moved.phase], ['dependency-pending', 'key-changed', 'outdated']);
  assert.equal(moved.detail, '/env/DB waits for db (no-current-receipt); spec field env changed');
  // Conditions of its own: it executes after db, and status says so as it would without the wait.
  const retry = resolve(ctx, {
    desired,
    observed: { db: outdatedDb, app: { ...currentReceipt(ctx, 'app', U.app, out), condition: failed(true, 'connection refused') } },
  }).units.get('app');
  assert.deepEqual([retry.action.executes, retry.phase], ['retry-failure', 'failed']);
  assert.equal(retry.detail, '/env/DB waits for db (no-current-receipt); connection refused (retried by the next reconcile)');
  const converging = await shop();
  converging.project.units.get('app').spec.recovery = 'converge';
  const unsure = resolve(converging, {
    desired,
    observed: { db: outdatedDb, app: { ...currentReceipt(ctx, 'app', U.app, out), condition: uncertain('run r2 started app') } },
  }).units.get('app');
  assert.deepEqual(
    [unsure.action.executes, unsure.phase, unsure.detail],
    ['converge-uncertain', 'uncertain', '/env/DB waits for db (no-current-receipt); run r2 started app'],
  );
  // db has no receipt at all: nothing tells whether app's own inputs changed.
  const unknown = resolve(ctx, { desired, observed: { app: currentReceipt(ctx, 'app', U.app, out) } }).units.get('app');
  assert.equal(unknown.phase, 'awaiting-dependencies');
  assert.equal(unknown.detail, '/env/DB waits for db (no-current-receipt); re-evaluated after its dependencies run (its receipt may stay current)');
  assert.deepEqual(unknown.preview, { env: { DB: '(known after apply)' }, run: ['deploy'] }, 'what db outputs next is not known yet');
  // ... unless its preview differs where db's outputs do not reach: a change of its own.
  const edited = await shop();
  edited.project.units.get('app').spec.run = ['deploy', '--fast'];
  const own = resolve(edited, { desired, observed: { app: currentReceipt(ctx, 'app', U.app, out) } }).units.get('app');
  assert.deepEqual([own.action.reason, own.action.executes, own.phase], ['dependency-pending', 'key-changed', 'outdated']);
  // In a run, a waiting unit is reported blocked with its wait, whatever it does after.
  assert.equal(runDetail(res.units.get('app'), 'c1'), '/env/DB waits for db (no-current-receipt)');
});

test('failed, not retryable: failed with its reason; consumers blocked with the pointer of their wait', async () => {
  const ctx = await shop();
  const res = resolve(ctx, {
    desired: { db: active(ctx, 'db', U.db) },
    observed: { db: { uid: U.db, condition: failed(false) } },
  });
  assert.equal(res.units.get('db').phase, 'failed');
  assert.equal(res.units.get('db').detail, 'command exited with code 1');
  assert.equal(res.units.get('report').phase, 'blocked');
  assert.equal(res.units.get('report').detail, '/dependsOn/0 waits for db (no-current-receipt)');
  assert.equal(res.units.get('app').phase, 'blocked');
  assert.equal(res.units.get('app').detail, '/env/DB waits for db (no-current-receipt)');
  assert.equal(res.units.get('cache').phase, 'pending');
});

test('failed, retryable: failed "(retried by the next reconcile)"; consumers pending', async () => {
  const ctx = await shop();
  const res = resolve(ctx, {
    desired: { db: active(ctx, 'db', U.db) },
    observed: { db: { uid: U.db, condition: failed(true, 'connection refused') } },
  });
  assert.equal(res.units.get('db').phase, 'failed');
  assert.equal(res.units.get('db').detail, 'connection refused (retried by the next reconcile)');
  assert.equal(res.units.get('report').phase, 'pending');
  assert.equal(res.units.get('report').detail, '/dependsOn/0 waits for db (no-current-receipt)');
  assert.equal(res.units.get('app').phase, 'pending');
});

test('a retryable failure with a receipt still has no current receipt for consumers', async () => {
  const ctx = await shop();
  const res = resolve(ctx, {
    desired: { db: active(ctx, 'db', U.db) },
    observed: { db: { ...currentReceipt(ctx, 'db', U.db, {}, { url: 'u' }), condition: failed(true) } },
  });
  assert.equal(res.units.get('db').phase, 'failed');
  assert.equal(res.units.get('app').phase, 'pending');
});

test('uncertain: the reason as detail; consumers blocked', async () => {
  const ctx = await shop();
  const res = resolve(ctx, {
    desired: { db: active(ctx, 'db', U.db) },
    observed: { db: { ...currentReceipt(ctx, 'db', U.db, {}, { url: 'u' }), condition: uncertain() } },
  });
  assert.equal(res.units.get('db').phase, 'uncertain');
  assert.equal(res.units.get('db').detail, 'run r2 started db and ended without a checkpoint');
  assert.equal(res.units.get('app').phase, 'blocked');
  assert.equal(res.units.get('report').phase, 'blocked');
});

test('a blocked dependency blocks its consumers too', async () => {
  const ctx = await shop([resource('Command', 'top', 'dependsOn: [report]', 'run: [top]')]);
  const res = resolve(ctx, { desired: { db: active(ctx, 'db', U.db) }, observed: { db: { uid: U.db, condition: failed(false) } } });
  assert.equal(res.units.get('report').phase, 'blocked');
  assert.equal(res.units.get('top').phase, 'blocked');
  assert.equal(res.units.get('top').detail, '/dependsOn/0 waits for report (no-current-receipt)');
});

test('a rendering error blocks the unit with the error as detail', async () => {
  const ctx = await shop();
  // db's receipt has no output url, which app references.
  const res = resolve(ctx, { desired: { db: active(ctx, 'db', U.db) }, observed: { db: currentReceipt(ctx, 'db', U.db, {}, { host: 'h' }) } });
  assert.equal(res.units.get('db').phase, 'current');
  const app = res.units.get('app');
  assert.equal(app.phase, 'blocked');
  assert.equal(app.errors.length, 1);
  assert.equal(app.errors[0].code, 'NYL-SOURCE-INVALID');
  assert.equal(app.detail, app.errors[0].message);
  assert.match(app.detail, /db has no output url/);
  assert.equal(res.units.get('report').phase, 'pending', 'report needs no output');
});

test('a condition of another incarnation is ignored', async () => {
  const ctx = await shop();
  const res = resolve(ctx, { desired: { db: active(ctx, 'db', U.db) }, observed: { db: { uid: U.old, condition: uncertain() } } });
  assert.equal(res.units.get('db').phase, 'pending');
  assert.equal(res.units.get('db').detail, 'no receipt');
});

test('a receipt of another incarnation is not current and not outdated', async () => {
  const ctx = await shop();
  const res = resolve(ctx, { desired: { db: active(ctx, 'db', U.db) }, observed: { db: { ...currentReceipt(ctx, 'db', U.old), uid: U.old } } });
  assert.equal(res.units.get('db').phase, 'pending');
});

test('--fresh: incarnations of older generations are over', async () => {
  const ctx = await shop();
  const desired = { db: active(ctx, 'db', U.db), cache: active(ctx, 'cache', U.cache, {}, { generation: 2 }) };
  const observed = { db: { ...currentReceipt(ctx, 'db', U.db, {}, { url: 'u' }), condition: uncertain() }, cache: currentReceipt(ctx, 'cache', U.cache) };
  const before = resolve(ctx, { desired, observed, generation: 1 });
  assert.equal(before.units.get('db').phase, 'uncertain');
  assert.equal(before.units.get('db').uid, U.db);
  const after = resolve(ctx, { desired, observed, generation: 2 });
  const db = after.units.get('db');
  assert.equal(db.phase, 'pending');
  assert.equal(db.detail, 'no incarnation yet');
  assert.equal(db.uid, undefined);
  assert.equal(after.units.get('app').phase, 'pending');
  assert.equal(after.units.get('cache').phase, 'current', 'an incarnation of the new generation stays');
  assert.equal(after.units.get('cache').uid, U.cache);
});

test('held with a receipt: "held", and consumers keep resolving from its receipt', async () => {
  const ctx = await shop();
  const out = { db: { url: 'postgres://held' } };
  const res = resolve(ctx, {
    desired: { db: { ...active(ctx, 'db', U.db), lifecycle: { state: 'held' }, hold: { by: 'A', since: 'x' } }, app: active(ctx, 'app', U.app, out) },
    observed: { db: currentReceipt(ctx, 'db', U.db, {}, { url: 'postgres://held' }), app: currentReceipt(ctx, 'app', U.app, out) },
    sourceCommit: 'c9',
  });
  assert.equal(res.units.get('db').phase, 'held');
  assert.equal(res.units.get('db').detail, 'held');
  assert.equal(res.units.get('db').uid, U.db);
  assert.equal(res.units.get('app').phase, 'current');
});

test('held: "pending changes from <commit>" when the source renders differently', async () => {
  const ctx = await shop();
  const heldDoc = { ...active(ctx, 'db', U.db), rendering: { run: ['create-db', '--old'] }, lifecycle: { state: 'held' }, hold: { by: 'A', since: 'x' } };
  const res = resolve(ctx, { desired: { db: heldDoc }, sourceCommit: '3e7b9c1' });
  assert.equal(res.units.get('db').phase, 'held');
  assert.equal(res.units.get('db').detail, 'pending changes from 3e7b9c1');
  // Without the source commit: the hold's own pending record, else plain held.
  assert.equal(resolve(ctx, { desired: { db: heldDoc } }).units.get('db').detail, 'held');
  const recorded = { ...heldDoc, hold: { by: 'A', since: 'x', pending: 'c2' } };
  assert.equal(resolve(ctx, { desired: { db: recorded } }).units.get('db').detail, 'pending changes from c2');
  // A later source that still differs: changes have been pending since the recorded commit.
  assert.equal(resolve(ctx, { desired: { db: recorded }, sourceCommit: 'c3' }).units.get('db').detail, 'pending changes from c2');
  // Same rendering (source reverted): nothing is pending any more.
  const same = { ...active(ctx, 'db', U.db), lifecycle: { state: 'held' }, hold: { by: 'A', since: 'x', pending: 'c2' } };
  assert.equal(resolve(ctx, { desired: { db: same }, sourceCommit: 'c3' }).units.get('db').detail, 'held');
  assert.equal(resolve(ctx, { desired: { db: { ...same, hold: { by: 'A', since: 'x' } } }, sourceCommit: 'c3' }).units.get('db').detail, 'held');
});

test('held marker: no incarnation; consumers blocked', async () => {
  const ctx = await shop();
  const res = resolve(ctx, { desired: { db: { lifecycle: { state: 'held' }, hold: { by: 'A', since: 'x' } } }, sourceCommit: 'c1' });
  assert.equal(res.units.get('db').phase, 'held');
  assert.equal(res.units.get('db').detail, '', 'a held marker has no detail');
  assert.equal(res.units.get('db').uid, undefined);
  assert.equal(res.units.get('report').phase, 'blocked');
  assert.equal(res.units.get('report').detail, '/dependsOn/0 waits for db (no-current-receipt)');
  assert.equal(res.units.get('app').phase, 'blocked');
  assert.equal(res.units.get('app').detail, '/env/DB waits for db (no-current-receipt)');
});

test('held and uncertain: "held (uncertain): <reason>"', async () => {
  const ctx = await shop();
  const res = resolve(ctx, {
    desired: { db: { ...active(ctx, 'db', U.db), lifecycle: { state: 'held' }, hold: { by: 'A', since: 'x' } } },
    observed: { db: { uid: U.db, condition: uncertain('lost') } },
  });
  assert.equal(res.units.get('db').phase, 'held');
  assert.equal(res.units.get('db').detail, 'held (uncertain): lost');
  assert.equal(res.units.get('app').phase, 'blocked');
});

test('leaving: units in state but not in the ownership set, after the owned ones, by name', async () => {
  const ctx = await shop();
  const res = resolve(ctx, {
    desired: {
      zeta: { uid: U.old, kind: 'Terraform', lifecycle: { state: 'active' } },
      alpha: { lifecycle: { state: 'deleting' } },
      frozen: { uid: U.old, kind: 'Command', lifecycle: { state: 'held' }, hold: { by: 'A', since: 'x' } },
    },
    observed: { zeta: { uid: U.old } },
  });
  assert.deepEqual(res.order, ['cache', 'db', 'app', 'report', 'alpha', 'frozen', 'zeta']);
  const zeta = res.units.get('zeta');
  assert.equal(zeta.phase, 'leaving');
  assert.equal(zeta.detail, 'left the ownership set: a tombstone keeps its receipt (deletionPolicy Retain)');
  assert.equal(zeta.kind, 'Terraform');
  assert.equal(zeta.uid, U.old);
  assert.deepEqual(zeta.observed, { uid: U.old });
  assert.equal(zeta.unit, undefined);
  assert.equal(res.units.get('alpha').kind, '-');
  assert.equal(res.units.get('alpha').phase, 'leaving');
  assert.equal(res.units.get('frozen').phase, 'held');
  assert.equal(res.units.get('frozen').detail, 'held with a pending deletion');
});

test('the unitSelector decides the ownership set; a dependency outside it blocks', async () => {
  const ctx = await shop(
    [
      ['apiVersion: nyl.io/v1', 'kind: Command', 'metadata: {name: web, labels: {app: shop}}', 'spec:', '  dependsOn: [db]', '  run: [web]'],
      ['apiVersion: nyl.io/v1', 'kind: Command', 'metadata: {name: solo, labels: {app: shop}}', 'spec:', '  run: [solo]'],
    ],
    ['unitSelector: {matchLabels: {app: shop}}'],
  );
  const res = resolve(ctx, { desired: { db: active(ctx, 'db', U.db) }, observed: { db: currentReceipt(ctx, 'db', U.db) } });
  assert.deepEqual(res.order, ['solo', 'web', 'db']);
  assert.equal(res.units.get('db').phase, 'leaving');
  assert.equal(res.units.get('web').phase, 'blocked');
  assert.equal(res.units.get('web').detail, '/dependsOn/0 waits for db (no-current-receipt)');
  assert.equal(res.units.get('solo').phase, 'pending');
});

// --- the planner's actions: one decision per unit, for status and runs alike ----------------

const RUN = '0192f0c4-8d0a-7c3e-9a51-00000000aaaa';
const action = (plan, name) => plan.units.get(name).action;

test('regression: a failure that needs acknowledgement outranks a receipt that matches again', async () => {
  // db executed K1 (receipt), then failed not retryably for K2 (a timeout), then source reverted
  // to K1: the receipt matches, but what the timed-out execution did is unknown.
  const ctx = await shop();
  const desired = { db: active(ctx, 'db', U.db), cache: active(ctx, 'cache', U.cache) };
  const observed = {
    db: { ...currentReceipt(ctx, 'db', U.db, {}, { url: 'u' }), condition: failed(false, 'timed out after 1s and was killed') },
    cache: currentReceipt(ctx, 'cache', U.cache),
  };
  for (const run of [undefined, { runId: RUN }]) {
    const plan = planOf(ctx, { desired, observed, run });
    assert.deepEqual(action(plan, 'db'), { type: 'failed', reason: 'needs-acknowledgement', condition: observed.db.condition }, run ? 'in a run' : 'in status');
    assert.equal(action(plan, 'app').type, 'blocked', 'its consumers do not resolve from the receipt');
    assert.equal(runDetail(plan.units.get('db'), 'c1'), 'timed out after 1s and was killed (needs nyl recover --retry)');
  }
});

test('a retryable failure executes again even when the receipt matches: it does not become current', async () => {
  const ctx = await shop();
  const observed = { db: { ...currentReceipt(ctx, 'db', U.db, {}, { url: 'u' }), condition: failed(true) } };
  const plan = planOf(ctx, { desired: { db: active(ctx, 'db', U.db) }, observed, run: { runId: RUN } });
  assert.equal(action(plan, 'db').type, 'execute');
  assert.equal(action(plan, 'db').reason, 'retry-failure');
  assert.equal(action(plan, 'app').type, 'wait', 'its consumer waits for the retry');
});

test("current against a receipt of another decision than the desired document: the run writes the receipt's document again", async () => {
  // db executed K1 at c1; a change to K2 failed and wrote its document; an operator cleared the
  // failure and source reverted to K1. The receipt is current; the desired branch still says K2.
  const ctx = await shop();
  const observed = { db: currentReceipt(ctx, 'db', U.db, {}, { url: 'u' }) };
  const abandoned = { ...active(ctx, 'db', U.db), source: 'c2', rendering: { run: ['create-db', 'v2'] } };
  for (const run of [undefined, { runId: RUN }, { runId: RUN, only: new Set(['db']) }]) {
    const db = planOf(ctx, { desired: { db: abandoned }, observed, run, sourceCommit: 'c3' }).units.get('db');
    assert.deepEqual(db.action, { type: 'current', reason: 'desired-restored' });
    assert.deepEqual(db.next, observed.db.receipt.desired, 'the document the receipt was produced for, with its source');
  }
  const db = planOf(ctx, { desired: { db: abandoned }, observed }).units.get('db');
  assert.equal(statusPhase(db), 'current');
  assert.equal(
    statusDetail(db),
    'its receipt is current; the desired branch holds another decision, and the next reconcile records the desired document of its receipt again (source c1)',
  );
  assert.equal(runDetail(db, 'c3'), 'recorded the desired document of its receipt again (source c1)');
  const other = planOf(ctx, { desired: { db: abandoned }, observed, run: { runId: RUN, only: new Set(['cache']) } }).units.get('db');
  assert.deepEqual(other.action, { type: 'current', reason: 'receipt-current' }, '--unit names other units: a run changes nothing about db');
  assert.equal(other.next, undefined);
  // The same decision rendered from another commit is not another decision.
  const same = planOf(ctx, { desired: { db: { ...active(ctx, 'db', U.db), source: 'c9' } }, observed }).units.get('db');
  assert.deepEqual(same.action, { type: 'current', reason: 'receipt-current' });
  assert.equal(same.next, undefined);
});

test('a condition of this very run is final for the run: failed-in-run, uncertain-in-run', async () => {
  const ctx = await shop();
  const inRun = (type, retryable) => ({ type, retryable, reason: 'r', run: RUN, since: 'x' });
  const desired = { db: active(ctx, 'db', U.db), cache: active(ctx, 'cache', U.cache) };
  const plan = planOf(ctx, {
    desired,
    observed: { db: { uid: U.db, condition: inRun('failed', true) }, cache: { uid: U.cache, condition: inRun('uncertain', false) } },
    run: { runId: RUN },
  });
  assert.equal(action(plan, 'db').reason, 'failed-in-run');
  assert.equal(action(plan, 'cache').reason, 'uncertain-in-run');
  assert.equal(action(plan, 'app').type, 'blocked');
  // The same documents in status: the next reconcile retries db.
  assert.equal(action(planOf(ctx, { desired, observed: { db: { uid: U.db, condition: inRun('failed', true) } } }), 'db').reason, 'retry-failure');
});

test('uncertain: converge executes again, manual waits for an operator', async () => {
  const ctx = await shop([], []);
  const observed = { db: { uid: U.db, condition: uncertain() } };
  const desired = { db: active(ctx, 'db', U.db) };
  assert.deepEqual(action(planOf(ctx, { desired, observed }), 'db').type, 'uncertain', 'Command defaults to manual');
  const converging = await shop([], []);
  converging.project.units.get('db').spec.recovery = 'converge';
  const a = action(planOf(converging, { desired, observed }), 'db');
  assert.equal(a.type, 'execute');
  assert.equal(a.reason, 'converge-uncertain');
});

test('a run: new incarnations get the minted uid, a key and the desired document they execute for', async () => {
  const ctx = await shop();
  const plan = planOf(ctx, { sourceCommit: 'c7', newUids: { db: U.db, cache: U.cache, app: U.app, report: U.report }, run: { runId: RUN } });
  const db = plan.units.get('db');
  assert.equal(db.action.reason, 'no-incarnation');
  assert.equal(db.uid, U.db);
  assert.equal(db.newIncarnation, true);
  assert.equal(db.executionKey, keyOf(ctx, 'db', U.db).executionKey);
  assert.deepEqual(db.next, {
    uid: U.db,
    kind: 'Command',
    generation: 1,
    source: 'c7',
    rendering: { run: ['create-db'] },
    dependsOn: [],
    lifecycle: { state: 'active' },
  });
  assert.equal(action(plan, 'app').type, 'wait');
  assert.deepEqual(
    executable(plan).map((u) => u.name),
    ['cache', 'db'],
    'a wave in name order',
  );
});

test('--unit: other units are skipped; a named unit whose dependency is skipped and has no receipt is blocked', async () => {
  const ctx = await shop();
  const plan = planOf(ctx, { newUids: { db: U.db, cache: U.cache, app: U.app, report: U.report }, run: { runId: RUN, only: new Set(['report']) } });
  assert.deepEqual(action(plan, 'db'), { type: 'skip', reason: 'not-selected' });
  assert.equal(action(plan, 'report').type, 'blocked');
  assert.deepEqual(action(plan, 'report').waits, [{ pointer: '/dependsOn/0', unit: 'db', reason: 'no-current-receipt' }]);
});

test('a stopped run starts nothing: executions become run-stopped, their consumers blocked by them', async () => {
  const ctx = await shop();
  const plan = planOf(ctx, {
    newUids: { db: U.db, cache: U.cache, app: U.app, report: U.report },
    run: { runId: RUN, stopped: { reason: 'fail-fast', after: 'broken' } },
  });
  assert.deepEqual(action(plan, 'db'), { type: 'blocked', reason: 'run-stopped', stop: 'fail-fast', after: 'broken' });
  assert.equal(runDetail(plan.units.get('db'), 'c1'), 'not started: --fail-fast stopped the run after broken');
  assert.equal(action(plan, 'report').reason, 'dependency-blocked');
  assert.equal(runDetail(plan.units.get('report'), 'c1'), '/dependsOn/0 waits for db (no-current-receipt)');
});

test('a hold delivered to the run holds a unit it has not run, not one it ran', async () => {
  const ctx = await shop();
  const hold = { by: 'Alice <a@example.com>', reason: 'incident', at: 'x' };
  const ran = { uid: U.cache, ...currentReceipt(ctx, 'cache', U.cache), lastRun: { run: RUN, result: 'executed', at: 'x' } };
  const plan = planOf(ctx, {
    desired: { cache: active(ctx, 'cache', U.cache) },
    observed: { cache: ran },
    newUids: { db: U.db },
    run: {
      runId: RUN,
      holds: new Map([
        ['db', hold],
        ['cache', hold],
      ]),
    },
  });
  assert.deepEqual(action(plan, 'db'), { type: 'held', reason: 'hold-delivered', delivered: hold });
  assert.equal(runDetail(plan.units.get('db'), 'c1'), 'held by Alice <a@example.com> (incident), delivered to this run');
  assert.equal(action(plan, 'cache').type, 'current', 'it ran: the run holds it as it ran, when it writes its transition');
});

test('a resumed held marker that left the ownership set is dropped, unless --unit names other units', async () => {
  const ctx = await shop();
  const desired = { gone: { lifecycle: { state: 'active' } } };
  assert.deepEqual(action(planOf(ctx, { desired }), 'gone'), { type: 'drop', reason: 'marker-left' });
  assert.deepEqual(action(planOf(ctx, { desired, run: { runId: RUN, only: new Set(['db']) } }), 'gone').type, 'skip');
});

test('a held unit in a run: its detail names the source commit whose changes wait', async () => {
  const ctx = await shop();
  const heldDoc = { ...active(ctx, 'db', U.db), rendering: { run: ['create-db', '--old'] }, lifecycle: { state: 'held' }, hold: { by: 'A', since: 'x' } };
  const plan = planOf(ctx, { desired: { db: heldDoc }, sourceCommit: 'c5', run: { runId: RUN } });
  assert.equal(runDetail(plan.units.get('db'), 'c5'), 'held; changes from c5 wait');
  const marker = planOf(ctx, { desired: { db: { lifecycle: { state: 'held' }, hold: { by: 'A', since: 'x' } } }, sourceCommit: 'c5' });
  assert.equal(runDetail(marker.units.get('db'), 'c5'), 'held; changes from c5 wait', 'a marker always has changes waiting');
});

test('the planner is pure: the same input gives the same plan', async () => {
  const ctx = await shop();
  const input = { desired: { db: active(ctx, 'db', U.db) }, observed: { db: { uid: U.db, condition: failed(true) } }, sourceCommit: 'c1', run: { runId: RUN } };
  assert.deepEqual(planOf(ctx, input), planOf(ctx, input));
});

test('carry: decisions kept from the plan of a moment ago give the plan a fresh decision gives', async () => {
  const ctx = await shop();
  const newUids = { db: U.db, cache: U.cache, app: U.app, report: U.report };
  const run = { runId: RUN, holds: new Map() };
  const first = planOf(ctx, { newUids, run, sourceCommit: 'c1' });
  // db and cache ran in this run: db with a receipt, cache failed.
  const dbKey = first.units.get('db').executionKey;
  const observed = {
    db: {
      uid: U.db,
      receipt: { run: RUN, executionKey: dbKey, finishedAt: 'x', outputs: { url: 'u' }, desired: {} },
      lastRun: { run: RUN, result: 'executed', at: 'x' },
    },
    cache: {
      uid: U.cache,
      condition: { type: 'failed', retryable: true, reason: 'r', run: RUN, since: 'x' },
      lastRun: { run: RUN, result: 'failed', at: 'x' },
    },
  };
  const input = {
    project: ctx.project,
    env: ctx.env,
    generation: 1,
    drivers: BUILTIN_DRIVERS,
    desired: new Map(),
    observed: new Map(Object.entries(observed)),
    sourceCommit: 'c1',
    newUids: new Map(Object.entries(newUids)),
    run,
  };
  const fresh = planEnvironment(input);
  const kept = planEnvironment({ ...input, carry: first });
  assert.deepEqual(kept, fresh);
  assert.equal(kept.units.get('app').action.type, 'execute', 'app is ready now that db has a receipt');
  // A hold that arrives for a unit with a kept decision is decided again.
  const held = planEnvironment({ ...input, carry: fresh, run: { ...run, holds: new Map([['cache', { by: 'A', at: 'x' }]]) } });
  assert.equal(held.units.get('cache').action.type, 'failed', 'cache already ran in this run: held as it ran, by the transition');
});

/**
 * An OciImage unit `job` (its driver prepares: image tag -> digest) with a receipt for the
 * preparation its desired document recorded from `image: app:1`.
 */
async function preparedJob(image = 'app:1') {
  const ctx = await shop([resource('OciImage', 'job', `image: ${image}`)]);
  const uid = '0192f0c0-0000-7000-8000-0000000000e1';
  const unit = ctx.project.units.get('job');
  const scope = { env: ctx.env, kinds: BUILTIN_KINDS, receiptOf: () => undefined };
  const recorded = { from: renderingDigest({ image: 'app:1' }), rendering: { image: `app@sha256:${'a'.repeat(64)}` } };
  const key = resolveUnit(unit, uid, scope, recorded).executionKey;
  const desired = {
    uid,
    kind: 'OciImage',
    generation: 1,
    source: 'c1',
    rendering: recorded.rendering,
    preparedFrom: recorded.from,
    dependsOn: [],
    lifecycle: { state: 'active' },
  };
  const observed = { uid, receipt: { run: 'r1', executionKey: key, finishedAt: 'x', outputs: {}, desired } };
  return { ctx, recorded, state: { desired: { job: desired }, observed: { job: observed } } };
}

const ABSENT = {
  result: 'absent',
  failure: {
    result: 'failed',
    reason: 'image app:1 is not present locally, and Nyl never pulls one\nmake it present first',
    retryable: true,
    code: 'NYL-IMAGE-UNRESOLVED',
  },
};

test('an input absent on this machine: the planner says ahead whether the recorded preparation keeps the unit current; only a unit that must execute needs it', async () => {
  const { ctx, recorded, state } = await preparedJob();
  const run = { runId: RUN };
  const preparing = planOf(ctx, { ...state, run }).units.get('job');
  assert.deepEqual(preparing.action, { type: 'prepare', reason: 'driver-input', recordedStands: true }, 'current on its recorded preparation');
  assert.deepEqual(preparing.rendering, { image: 'app:1' }, 'prepared from source, not from the recorded preparation');

  // Absent: the recorded preparation stands in, and the unit is current, saying why.
  const taken = preparationFrom(preparing, ABSENT);
  assert.deepEqual(taken, { ...recorded, absent: 'image app:1 is not present locally, and Nyl never pulls one' });
  const plan = planOf(ctx, { ...state, run, prepared: { job: taken } });
  const job = plan.units.get('job');
  assert.deepEqual(job.action, { type: 'current', reason: 'input-absent', absent: taken.absent });
  assert.equal(job.executionKey, state.observed.job.receipt.executionKey);
  assert.equal(job.next, undefined, 'nothing to record');
  assert.equal(
    statusDetail(job),
    'current on the preparation its desired document recorded (image app:1 is not present locally, and Nyl never pulls one: only an execution needs it)',
  );
  assert.equal(runDetail(job, 'c1'), statusDetail(job));
  // Present: resolved as usual (a moved tag executes the unit again).
  const moved = planOf(ctx, {
    ...state,
    run,
    prepared: { job: preparationFrom(preparing, { result: 'prepared', rendering: { image: `app@sha256:${'b'.repeat(64)}` } }) },
  });
  assert.deepEqual(moved.units.get('job').action.type, 'execute');
  assert.equal(moved.units.get('job').action.reason, 'key-changed');
});

test('an input absent on this machine fails a unit that must execute: no receipt, a change of its own, a failure to retry, --reapply', async () => {
  const { ctx, state } = await preparedJob();
  const run = { runId: RUN };
  const failure = ABSENT.failure;
  const mustExecute = {
    'no receipt': planOf(ctx, { desired: state.desired, run }),
    'a change of its own': planOf(await preparedJob('app:2').then((j) => j.ctx), { ...state, run }),
    'a receipt for another key': planOf(ctx, {
      ...state,
      observed: { job: { ...state.observed.job, receipt: { ...state.observed.job.receipt, executionKey: 'sha256:other' } } },
      run,
    }),
    'a failure to retry': planOf(ctx, {
      ...state,
      observed: { job: { ...state.observed.job, condition: { type: 'failed', retryable: true, reason: 'r', run: 'r0', since: 'x' } } },
      run,
    }),
    '--reapply': planOf(ctx, { ...state, run: { ...run, reapply: new Set(['job']) } }),
    'no recorded preparation': planOf(ctx, { desired: { job: { ...state.desired.job, preparedFrom: undefined } }, observed: state.observed, run }),
  };
  for (const [why, plan] of Object.entries(mustExecute)) {
    const job = plan.units.get('job');
    assert.deepEqual(job.action, { type: 'prepare', reason: 'driver-input' }, why);
    assert.deepEqual(preparationFrom(job, ABSENT), failure, `${why}: the absence is its failure`);
  }
  // Not a run's question only: status (no run) gets the same decision; it runs no driver.
  assert.equal(statusPhase(planOf(ctx, state).units.get('job')), 'pending');
});
