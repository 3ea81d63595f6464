import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadProject } from '../../dist/project/load.js';
import { currentUid, driverVersionOf, formatWait, resolveEnvironment, resolveUnit } from '../../dist/plan/resolve.js';
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
  return resolveUnit(ctx.project.units.get(name), ctx.env, uid, (n) => outputs[n]);
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

/** An observed doc with a receipt current for the unit's rendering with these dependency outputs. */
const currentReceipt = (ctx, name, uid, outputs = {}, receiptOutputs = {}) => ({
  uid,
  receipt: { run: 'r1', executionKey: keyOf(ctx, name, uid, outputs).executionKey, finishedAt: 'x', outputs: receiptOutputs, desired: {} },
});

const resolve = (ctx, { desired = {}, observed = {}, generation = 1, sourceCommit } = {}) =>
  resolveEnvironment({
    project: ctx.project,
    env: ctx.env,
    generation,
    desired: new Map(Object.entries(desired)),
    observed: new Map(Object.entries(observed)),
    ...(sourceCommit ? { sourceCommit } : {}),
  });

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

test('driverVersionOf: the table, or kind/1 for others', () => {
  assert.equal(driverVersionOf('Command'), 'command/1');
  assert.equal(driverVersionOf('OciImage'), 'ociimage/1');
  assert.equal(driverVersionOf('Helm'), 'helm/1');
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
    desired: { db: active(ctx, 'db', U.db), app: active(ctx, 'app', U.app, out), report: active(ctx, 'report', U.report, out), cache: active(ctx, 'cache', U.cache) },
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
  // Same rendering: the recorded pending commit is still shown.
  const same = { ...active(ctx, 'db', U.db), lifecycle: { state: 'held' }, hold: { by: 'A', since: 'x', pending: 'c2' } };
  assert.equal(resolve(ctx, { desired: { db: same }, sourceCommit: 'c3' }).units.get('db').detail, 'pending changes from c2');
  assert.equal(resolve(ctx, { desired: { db: { ...same, hold: { by: 'A', since: 'x' } } }, sourceCommit: 'c3' }).units.get('db').detail, 'held');
});

test('held marker: no incarnation; consumers blocked', async () => {
  const ctx = await shop();
  const res = resolve(ctx, { desired: { db: { lifecycle: { state: 'held' }, hold: { by: 'A', since: 'x' } } }, sourceCommit: 'c1' });
  assert.equal(res.units.get('db').phase, 'held');
  assert.equal(res.units.get('db').detail, '', 'a held marker has no detail, as in the spec\'s status example');
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
  assert.equal(zeta.detail, 'left the ownership set');
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
