// The planner's lifecycle pass, in process: deletion policies, consumers first, --allow-*
// options, kind changes, requested teardowns, holds and the run's filters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadProject } from '../../dist/project/load.js';
import { planEnvironment, resolveUnit } from '../../dist/plan/planner.js';
import { teardowns } from '../../dist/plan/actions.js';
import { runDetail, statusPhase } from '../../dist/plan/reasons.js';
import { BUILTIN_KINDS } from '../../dist/drivers/kinds.js';
import { BUILTIN_DRIVERS } from '../../dist/drivers/registry.js';
import { documents, memoryTree, resource } from '../support/memory-tree.mjs';

const uid = (n) => `0192f0c0-0000-7000-8000-0000000000${n}`;

/** Source: db <- app (reference), cache alone. Everything else a test puts in state has left it. */
async function project() {
  const p = await loadProject(
    '/project',
    memoryTree({
      'nyl.yaml': documents(
        resource('Project', 'shop'),
        resource('Environment', 'dev'),
        resource('Command', 'app', 'run: [deploy]', 'env: {DB: "${{ units.db.outputs.url }}"}'),
        resource('Command', 'db', 'run: [create-db]', 'deletionPolicy: Teardown', 'teardown: {run: [drop-db]}'),
        resource('Command', 'cache', 'run: [cache]'),
      ),
    }),
  );
  return { project: p, env: p.environments.get('dev') };
}

/** A desired document of a unit that is no longer in source. */
function gone(n, { policy = 'Teardown', dependsOn = [], state = 'active', ...extra } = {}) {
  return {
    uid: uid(n),
    kind: 'Command',
    generation: 1,
    source: 'c0',
    rendering: { deletionPolicy: policy, run: ['x'], teardown: { run: ['y'] } },
    dependsOn,
    lifecycle: { state },
    ...extra,
  };
}

function owned(ctx, name, n, outputs = {}, extra = {}) {
  const r = resolveUnit(ctx.project.units.get(name), uid(n), {
    env: ctx.env,
    kinds: BUILTIN_KINDS,
    receiptOf: (u) => (outputs[u] === undefined ? undefined : { outputs: outputs[u], run: 'r' }),
  });
  const desired = {
    uid: uid(n),
    kind: 'Command',
    generation: 1,
    source: 'c1',
    rendering: r.rendering,
    dependsOn: ctx.project.units.get(name).dependsOn,
    lifecycle: { state: 'active' },
    ...extra,
  };
  return {
    desired,
    observed: { uid: uid(n), receipt: { run: 'r1', executionKey: r.executionKey, finishedAt: 'x', outputs: name === 'db' ? { url: 'db://' } : {}, desired } },
  };
}

/** Every owned unit current; plus the given desired (and observed) documents. */
function state(ctx, desired = {}, observed = {}) {
  const db = owned(ctx, 'db', '0d');
  const app = owned(ctx, 'app', '0a', { db: { url: 'db://' } });
  const cache = owned(ctx, 'cache', '0c');
  return {
    desired: { db: db.desired, app: app.desired, cache: cache.desired, ...desired },
    observed: { db: db.observed, app: app.observed, cache: cache.observed, ...observed },
  };
}

function plan(ctx, { desired, observed }, { lifecycle, run, newUids } = {}) {
  return planEnvironment({
    project: ctx.project,
    env: ctx.env,
    generation: 1,
    drivers: BUILTIN_DRIVERS,
    sourceCommit: 'c1',
    desired: new Map(Object.entries(desired)),
    observed: new Map(Object.entries(observed)),
    ...(lifecycle ? { lifecycle } : {}),
    ...(run ? { run: { runId: 'run1', at: '2026-12-01T00:00:00Z', ...run } } : {}),
    ...(newUids ? { newUids: new Map(Object.entries(newUids)) } : {}),
  });
}

const actionOf = (p, name) => p.units.get(name).action;
const brief = (p, name) => {
  const a = actionOf(p, name);
  return a.reason ? `${a.type}/${a.reason}` : a.type;
};

/** A diamond that left source: top -> left, right -> base, all deletionPolicy Teardown. */
const diamond = () => ({
  top: gone('01', { dependsOn: ['left', 'right'] }),
  left: gone('02', { dependsOn: ['base'] }),
  right: gone('03', { dependsOn: ['base'] }),
  base: gone('04'),
});

test('Teardown without --allow-teardown: every leaving unit is pending-teardown and marked so', async () => {
  const ctx = await project();
  const p = plan(ctx, state(ctx, diamond()), { run: {} });
  for (const n of ['top', 'left', 'right', 'base']) {
    assert.equal(brief(p, n), 'pending-teardown/needs-allow-teardown', n);
    assert.equal(p.units.get(n).next?.lifecycle.state, 'pending-teardown', n);
    assert.equal(statusPhase(p.units.get(n)), 'pending-teardown');
  }
  assert.deepEqual(p.order.slice(3), ['base', 'left', 'right', 'top'], 'leaving units after the owned ones, by name');
  assert.equal(teardowns(p).length, 0);
});

test('consumers first: a diamond is torn down level by level', async () => {
  const ctx = await project();
  const s = state(ctx, diamond());
  const p1 = plan(ctx, s, { lifecycle: { allowTeardown: true }, run: {} });
  assert.deepEqual(
    teardowns(p1).map((u) => u.name),
    ['top'],
  );
  assert.equal(brief(p1, 'left'), 'pending-teardown/consumers-first');
  assert.deepEqual(actionOf(p1, 'left').dependents, ['top']);
  assert.equal(brief(p1, 'base'), 'pending-teardown/consumers-first', 'base waits for left and right, which wait for top');
  assert.deepEqual(actionOf(p1, 'base').dependents, ['left', 'right']);
  const top = p1.units.get('top').next;
  assert.equal(top.lifecycle.state, 'deleting');
  assert.deepEqual(top.deletion, { cause: 'source', policy: 'Teardown', since: '2026-12-01T00:00:00Z', run: 'run1' });

  delete s.desired.top;
  const p2 = plan(ctx, s, { lifecycle: { allowTeardown: true }, run: {} });
  assert.deepEqual(
    teardowns(p2).map((u) => u.name),
    ['left', 'right'],
  );
  delete s.desired.left;
  delete s.desired.right;
  const p3 = plan(ctx, s, { lifecycle: { allowTeardown: true }, run: {} });
  assert.deepEqual(
    teardowns(p3).map((u) => u.name),
    ['base'],
  );
});

test('Retain keeps a tombstone, Release drops the file; a tombstone stays as it is', async () => {
  const ctx = await project();
  const p = plan(
    ctx,
    state(ctx, { kept: gone('05', { policy: 'Retain' }), freed: gone('06', { policy: 'Release' }), old: gone('07', { policy: 'Retain', state: 'retained' }) }),
    { run: {} },
  );
  assert.equal(brief(p, 'kept'), 'retain/left-ownership-set');
  assert.equal(p.units.get('kept').next.lifecycle.state, 'retained');
  assert.equal(brief(p, 'freed'), 'release/left-ownership-set');
  assert.equal(brief(p, 'old'), 'retained/tombstone');
  assert.equal(p.units.get('old').next, undefined, 'nothing to write');
  assert.equal(statusPhase(p.units.get('old')), 'retained');
});

test('a retained tombstone that cites a unit blocks its teardown unless --allow-dependents', async () => {
  const ctx = await project();
  const s = state(ctx, { base: gone('04'), stone: gone('08', { policy: 'Retain', state: 'retained', dependsOn: ['base'] }) });
  const blocked = plan(ctx, s, { lifecycle: { allowTeardown: true }, run: {} });
  assert.equal(brief(blocked, 'base'), 'pending-teardown/cited-by-tombstones');
  assert.deepEqual(actionOf(blocked, 'base').dependents, ['stone']);
  assert.match(runDetail(blocked.units.get('base'), 'c1'), /retained tombstones cite it: stone/);
  const allowed = plan(ctx, s, { lifecycle: { allowTeardown: true, allowDependents: true }, run: {} });
  assert.equal(brief(allowed, 'base'), 'teardown/source');
  assert.deepEqual(actionOf(allowed, 'base').allowedDependents, ['stone']);
  // A unit that leaves under Retain in the same run is a tombstone too.
  const both = plan(ctx, state(ctx, { base: gone('04'), user: gone('09', { policy: 'Retain', dependsOn: ['base'] }) }), {
    lifecycle: { allowTeardown: true },
    run: {},
  });
  assert.equal(brief(both, 'user'), 'retain/left-ownership-set');
  assert.equal(brief(both, 'base'), 'pending-teardown/cited-by-tombstones');
});

test('a requested teardown of an owned unit waits while an owned consumer remains; both requested: consumer first', async () => {
  const ctx = await project();
  const s = state(ctx);
  const request = { by: 'Alice <a@x>', at: 'x' };
  s.desired.db = { ...s.desired.db, teardownRequest: request };
  const p1 = plan(ctx, s, { run: {} });
  assert.equal(brief(p1, 'db'), 'pending-teardown/dependents-remain');
  assert.deepEqual(actionOf(p1, 'db').dependents, ['app']);
  assert.equal(actionOf(p1, 'db').cause, 'request');
  assert.match(runDetail(p1.units.get('db'), 'c1'), /^teardown requested by Alice <a@x>; units with an incarnation still depend on it: app$/);
  assert.equal(p1.units.get('db').next, undefined, 'a request needs no pending-teardown mark');
  assert.equal(brief(p1, 'app'), 'current/receipt-current', 'app resolves from the receipt db keeps');
  s.desired.app = { ...s.desired.app, teardownRequest: request };
  const p2 = plan(ctx, s, { run: { mode: 'teardown' } });
  assert.equal(brief(p2, 'app'), 'teardown/request', 'no --allow-teardown needed');
  assert.equal(brief(p2, 'db'), 'pending-teardown/consumers-first');
  assert.equal(brief(p2, 'cache'), 'current/receipt-current', 'a teardown leaves every other unit as it is');
});

test('a unit torn down in this run while still owned is not created again until the next reconcile', async () => {
  const ctx = await project();
  const s = state(ctx);
  delete s.desired.cache;
  delete s.observed.cache;
  const p = plan(ctx, s, { run: { removed: new Set(['cache']) }, newUids: { cache: uid('99') } });
  assert.equal(brief(p, 'cache'), 'removed/torn-down-in-run');
  const next = plan(ctx, s, { run: {}, newUids: { cache: uid('99') } });
  assert.equal(brief(next, 'cache'), 'execute/no-incarnation');
});

test('kind change: the old incarnation goes first under its old policy, then the new kind executes', async () => {
  const ctx = await project();
  const s = state(ctx);
  s.desired.db = { ...s.desired.db, kind: 'OciImage' };
  const waits = plan(ctx, s, { run: {} });
  assert.equal(brief(waits, 'db'), 'pending-teardown/needs-allow-teardown');
  assert.equal(actionOf(waits, 'db').cause, 'kind-change');
  assert.equal(waits.units.get('db').kind, 'OciImage', 'the row names the old kind');
  const torn = plan(ctx, s, { lifecycle: { allowTeardown: true }, run: {} });
  assert.equal(brief(torn, 'db'), 'teardown/kind-change', 'its consumer app does not hold it back');
  assert.equal(torn.units.get('db').next.deletion.cause, 'kind-change');
  s.desired.db = { ...s.desired.db, rendering: { ...s.desired.db.rendering, deletionPolicy: 'Retain' } };
  assert.equal(brief(plan(ctx, s, { run: {} }), 'db'), 'release/kind-change', 'Retain cannot keep a tombstone under a name the new kind takes');
  delete s.desired.db;
  delete s.observed.db;
  const fresh = plan(ctx, s, { run: {}, newUids: { db: uid('98') } });
  assert.equal(brief(fresh, 'db'), 'execute/no-incarnation');
  assert.equal(fresh.units.get('db').uid, uid('98'));
});

test('--unit does no lifecycle work; --leaving does only lifecycle work', async () => {
  const ctx = await project();
  const s = state(ctx, { base: gone('04') });
  s.desired.db = { ...s.desired.db, kind: 'OciImage' };
  const only = plan(ctx, s, { lifecycle: { allowTeardown: true }, run: { only: new Set(['db', 'cache']) } });
  assert.equal(brief(only, 'base'), 'skip/not-selected');
  assert.equal(brief(only, 'db'), 'pending-teardown/lifecycle-excluded');
  assert.equal(only.units.get('db').next, undefined, '--unit writes no lifecycle mark');
  s.observed.cache = { ...s.observed.cache, receipt: { ...s.observed.cache.receipt, executionKey: 'sha256:other' } };
  const leaving = plan(ctx, s, { lifecycle: { allowTeardown: true }, run: { mode: 'leaving' } });
  assert.equal(brief(leaving, 'base'), 'teardown/source');
  assert.equal(brief(leaving, 'cache'), 'skip/leaving-only', 'an outdated unit does not execute');
});

test('a started teardown goes on without --allow-teardown; its conditions follow the recovery policy', async () => {
  const ctx = await project();
  const deleting = gone('04', { state: 'deleting', deletion: { cause: 'source', policy: 'Teardown', since: 'x', run: 'r0' } });
  const cond = (type, retryable, run = 'r0') => ({ type, retryable, reason: 'boom', run, since: 'x' });
  const with_ = (condition, rendering) =>
    plan(
      ctx,
      state(
        ctx,
        { base: rendering ? { ...deleting, rendering: { ...deleting.rendering, ...rendering } } : deleting },
        condition ? { base: { uid: uid('04'), condition } } : {},
      ),
      { run: {} },
    );
  assert.equal(brief(with_(), 'base'), 'teardown/source');
  assert.equal(with_().units.get('base').next, deleting, 'its deletion record is kept');
  assert.equal(brief(with_(cond('failed', true)), 'base'), 'teardown/source', 'a retryable failure is retried');
  assert.equal(brief(with_(cond('failed', false)), 'base'), 'failed/needs-acknowledgement');
  assert.equal(brief(with_(cond('uncertain', false)), 'base'), 'uncertain/needs-recovery', 'a Command is manual by default');
  assert.equal(brief(with_(cond('uncertain', false), { recovery: 'converge' }), 'base'), 'teardown/source', 'a converging teardown runs again');
  assert.equal(brief(with_(cond('failed', true, 'run1')), 'base'), 'failed/failed-in-run');
  assert.equal(statusPhase(with_().units.get('base')), 'tearing-down');
  const retried = with_(cond('failed', true)).units.get('base');
  assert.equal(statusPhase(retried), 'failed', 'a teardown that failed shows failed until it runs again');
  assert.match(runDetail(retried, 'c1'), /its teardown failed \(boom\) and runs again$/);
});

test('holds: a held unit that leaves pauses; a hold delivered to the run stops its teardown', async () => {
  const ctx = await project();
  const held = gone('04', { state: 'held', hold: { by: 'A', since: 'x' }, deletion: { cause: 'source', policy: 'Teardown', since: 'x' } });
  const p = plan(ctx, state(ctx, { base: held }), { lifecycle: { allowTeardown: true }, run: {} });
  assert.equal(brief(p, 'base'), 'held/held-leaving');
  const delivered = plan(ctx, state(ctx, { base: gone('04') }), {
    lifecycle: { allowTeardown: true },
    run: { holds: new Map([['base', { by: 'B', at: 'x' }]]) },
  });
  assert.equal(brief(delivered, 'base'), 'held/hold-delivered');
});

test('a stopped run starts no teardown', async () => {
  const ctx = await project();
  const p = plan(ctx, state(ctx, { base: gone('04') }), { lifecycle: { allowTeardown: true }, run: { stopped: { reason: 'cancelled' } } });
  assert.equal(brief(p, 'base'), 'blocked/run-stopped');
});

test('nyl teardown carries out a request whatever started the deletion; --leaving leaves owned units alone', async () => {
  const ctx = await project();
  const started = gone('04', { state: 'deleting', deletion: { cause: 'source', policy: 'Teardown', since: 'x', run: 'r0' } });
  const s = state(ctx, { base: { ...started, teardownRequest: { by: 'A', at: 'x' } }, other: started });
  const p = plan(ctx, s, { run: { mode: 'teardown' } });
  assert.equal(brief(p, 'base'), 'teardown/source', 'requested: torn down by the teardown run');
  assert.equal(brief(p, 'other'), 'skip/teardown-only', 'not requested: left for reconcile');
  const owned = state(ctx);
  owned.desired.cache = { ...owned.desired.cache, teardownRequest: { by: 'A', at: 'x' } };
  owned.desired.db = { ...owned.desired.db, kind: 'OciImage' };
  const leaving = plan(ctx, owned, { lifecycle: { allowTeardown: true }, run: { mode: 'leaving' } });
  assert.equal(brief(leaving, 'cache'), 'skip/leaving-only', '--leaving: only units outside the ownership set');
  assert.equal(brief(leaving, 'db'), 'skip/leaving-only');
  const unitOnly = plan(ctx, owned, { run: { only: new Set(['db']) } });
  assert.equal(actionOf(unitOnly, 'db').allowTeardown, true, 'its old incarnation waits for --allow-teardown too');
});
