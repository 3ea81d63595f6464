import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadProject } from '../../dist/project/load.js';
import { importRuns } from '../../dist/run/import.js';
import { BUILTIN_KINDS } from '../../dist/drivers/kinds.js';
import { resolveUnit } from '../../dist/plan/planner.js';
import { documents, memoryTree, resource } from '../support/memory-tree.mjs';

const NOW = '2026-10-27T10:00:00Z';
const R1 = '0192f0c4-8d0a-7c3e-9a51-000000000001';
const R2 = '0192f0c4-8d0a-7c3e-9a51-000000000002';
const R3 = '0192f0c4-8d0a-7c3e-9a51-000000000003';
const U = {
  db: '0192f0c0-0000-7000-8000-00000000000d',
  app: '0192f0c0-0000-7000-8000-00000000000a',
  migrate: '0192f0c0-0000-7000-8000-00000000000e',
  other: '0192f0c0-0000-7000-8000-0000000000ff',
};

// db <- app (through a reference), db <- migrate (explicit dependsOn); cache is independent.
async function shop() {
  const project = await loadProject(
    '/project',
    memoryTree({
      'nyl.yaml': documents(
        resource('Project', 'shop'),
        resource('Environment', 'dev', 'values: {size: 2}'),
        resource('Command', 'app', 'run: [deploy, "${{ units.db.outputs.url }}"]'),
        resource('Command', 'db', 'run: [create-db, "${{ env.values.size }}"]'),
        resource('Command', 'migrate', 'dependsOn: [db]', 'run: [migrate]'),
        resource('Command', 'cache', 'run: [cache]'),
      ),
    }),
  );
  return { project, env: project.environments.get('dev') };
}

/** The execution key the unit resolves to with these dependency outputs. */
function keyOf(ctx, name, uid, outputs = {}) {
  const r = resolveUnit(ctx.project.units.get(name), uid, {
    env: ctx.env,
    kinds: BUILTIN_KINDS,
    receiptOf: (n) => (outputs[n] === undefined ? undefined : { outputs: outputs[n], run: 'r' }),
  });
  assert.ok(r.executionKey, `${name} resolves`);
  return r;
}

function desiredDoc(ctx, name, uid, outputs = {}, extra = {}) {
  const r = keyOf(ctx, name, uid, outputs);
  return {
    uid,
    kind: 'Command',
    generation: 1,
    source: 'src1',
    rendering: r.rendering,
    dependsOn: ctx.project.units.get(name).dependsOn,
    lifecycle: { state: 'active' },
    ...extra,
  };
}

function unitDoc(ctx, name, uid, { outputs = {}, checkpoint, key, desired } = {}) {
  const doc = {
    unit: name,
    uid,
    kind: 'Command',
    executionKey: key ?? keyOf(ctx, name, uid, outputs).executionKey,
    startedAt: '2026-10-27T09:00:00Z',
    desired: desired ?? desiredDoc(ctx, name, uid, outputs),
  };
  if (checkpoint) doc.checkpoint = checkpoint;
  return doc;
}

const receipt = (outputs = {}, finishedAt = '2026-10-27T09:01:00Z') => ({ result: 'receipt', finishedAt, outputs });

function run(id, ...docs) {
  return { run: id, ref: `refs/nyl/dev/runs/${id}`, oid: 'a'.repeat(40), units: new Map(docs.map((d) => [d.unit, d])), teardowns: new Map(), damage: [] };
}

function input(ctx, { desired = {}, observed = {}, runs, generation = 1 }) {
  return {
    project: ctx.project,
    env: ctx.env,
    generation,
    drivers: BUILTIN_KINDS,
    desired: new Map(Object.entries(desired)),
    observed: new Map(Object.entries(observed)),
    runs,
    now: NOW,
  };
}

test('no runs: nothing imported, nothing consumed, maps copied', async () => {
  const ctx = await shop();
  const inp = input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, runs: [] });
  const r = importRuns(inp);
  assert.deepEqual(r.imported, []);
  assert.deepEqual(r.recovered, []);
  assert.deepEqual(r.consumed, []);
  assert.deepEqual(r.diagnostics, []);
  assert.equal(r.evidence.size, 0);
  assert.notEqual(r.desired, inp.desired);
  assert.deepEqual(r.desired, inp.desired);
});

test('a receipt checkpoint with the current key and uid is imported as the receipt of that run', async () => {
  const ctx = await shop();
  const doc = unitDoc(ctx, 'db', U.db, { checkpoint: receipt({ url: 'postgres://db' }) });
  const inp = input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, runs: [run(R1, doc)] });
  const r = importRuns(inp);
  assert.deepEqual(r.imported, ['db']);
  assert.deepEqual(r.recovered, []);
  assert.deepEqual(r.diagnostics, []);
  assert.equal(r.evidence.size, 0);
  assert.deepEqual(r.observed.get('db'), {
    uid: U.db,
    receipt: { run: R1, executionKey: doc.executionKey, finishedAt: '2026-10-27T09:01:00Z', outputs: { url: 'postgres://db' }, desired: doc.desired },
    lastRun: { run: R1, result: 'executed', at: '2026-10-27T09:01:00Z' },
  });
  assert.equal(inp.observed.size, 0, 'the input map is not changed');
  assert.deepEqual(
    r.consumed.map((x) => x.run),
    [R1],
  );
});

test('a receipt checkpoint without outputs imports empty outputs', async () => {
  const ctx = await shop();
  const doc = unitDoc(ctx, 'cache', U.other, { checkpoint: { result: 'receipt', finishedAt: '2026-10-27T09:01:00Z' } });
  const r = importRuns(input(ctx, { desired: { cache: desiredDoc(ctx, 'cache', U.other) }, runs: [run(R1, doc)] }));
  assert.deepEqual(r.observed.get('cache').receipt.outputs, {});
});

test('a started unit without checkpoint is recovered: uncertain, naming the run, with the run as evidence', async () => {
  const ctx = await shop();
  const prev = { uid: U.db, receipt: { run: R1, executionKey: 'sha256:old', finishedAt: 'x', outputs: {}, desired: {} } };
  const r = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, observed: { db: prev }, runs: [run(R2, unitDoc(ctx, 'db', U.db))] }));
  assert.deepEqual(r.imported, []);
  assert.deepEqual(r.recovered, ['db']);
  const o = r.observed.get('db');
  assert.equal(o.uid, U.db);
  assert.deepEqual(o.receipt, prev.receipt, 'the earlier receipt stays');
  assert.deepEqual(o.condition, { type: 'uncertain', retryable: false, reason: `run ${R2} started db and ended without a checkpoint`, run: R2, since: NOW });
  assert.equal(o.condition.code, undefined);
  assert.deepEqual([...r.evidence], [['db', new Set([R2])]]);
  assert.deepEqual(r.diagnostics, []);
});

test("an 'uncertain' checkpoint is recovered with the checkpoint's reason", async () => {
  const ctx = await shop();
  const doc = unitDoc(ctx, 'db', U.db, { checkpoint: { result: 'uncertain', finishedAt: '2026-10-27T09:02:00Z', reason: 'killed by SIGTERM after 30s' } });
  const r = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, runs: [run(R1, doc)] }));
  assert.deepEqual(r.recovered, ['db']);
  assert.deepEqual(r.imported, []);
  assert.deepEqual(r.observed.get('db').condition, {
    type: 'uncertain',
    retryable: false,
    reason: `run ${R1}: killed by SIGTERM after 30s`,
    run: R1,
    since: NOW,
  });
  assert.deepEqual(r.evidence.get('db'), new Set([R1]));
  const bare = unitDoc(ctx, 'db', U.db, { checkpoint: { result: 'uncertain', finishedAt: '2026-10-27T09:02:00Z' } });
  const r2 = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, runs: [run(R1, bare)] }));
  assert.match(r2.observed.get('db').condition.reason, /ended without a checkpoint/);
});

test('a receipt checkpoint for another execution key is uncertain with NYL-RUN-SUPERSEDED', async () => {
  const ctx = await shop();
  const doc = unitDoc(ctx, 'db', U.db, { key: 'sha256:what-source-said-then', checkpoint: receipt({ url: 'postgres://old' }) });
  const r = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, runs: [run(R1, doc)] }));
  assert.deepEqual(r.imported, []);
  assert.deepEqual(r.recovered, ['db']);
  const o = r.observed.get('db');
  assert.equal(o.receipt, undefined, 'the superseded checkpoint is not adopted');
  assert.equal(o.condition.type, 'uncertain');
  assert.equal(o.condition.code, 'NYL-RUN-SUPERSEDED');
  assert.equal(o.condition.run, R1);
  assert.equal(o.condition.retryable, false);
  assert.match(o.condition.reason, /sha256:what-source-said-then/);
  assert.deepEqual(r.evidence.get('db'), new Set([R1]));
  assert.equal(r.diagnostics.length, 1);
  const d = r.diagnostics[0];
  assert.equal(d.code, 'NYL-RUN-SUPERSEDED');
  assert.equal(d.severity, 'warning');
  assert.deepEqual(d.units, ['db']);
  assert.ok(d.fix.length > 0);
});

test('a receipt checkpoint of another incarnation (uid) is superseded too', async () => {
  const ctx = await shop();
  // The run executed an older incarnation; the key is right for that uid, not for the current one.
  const doc = unitDoc(ctx, 'db', U.other, { checkpoint: receipt() });
  const r = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, runs: [run(R1, doc)] }));
  assert.deepEqual(r.imported, []);
  assert.equal(r.observed.get('db').condition.code, 'NYL-RUN-SUPERSEDED');
  assert.equal(r.observed.get('db').uid, U.db);
  assert.deepEqual(
    r.diagnostics.map((x) => x.code),
    ['NYL-RUN-SUPERSEDED'],
  );
});

test('a failed checkpoint with the current key is imported as that failure', async () => {
  const ctx = await shop();
  const prevReceipt = { run: R1, executionKey: 'sha256:old', finishedAt: 'x', outputs: { url: 'u' }, desired: {} };
  const doc = unitDoc(ctx, 'db', U.db, {
    checkpoint: { result: 'failed', finishedAt: '2026-10-27T09:03:00Z', reason: 'command exited with code 1', retryable: false, acknowledgementRequired: true },
  });
  const r = importRuns(
    input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, observed: { db: { uid: U.db, receipt: prevReceipt } }, runs: [run(R2, doc)] }),
  );
  assert.deepEqual(r.imported, ['db']);
  assert.deepEqual(r.recovered, []);
  assert.deepEqual(r.observed.get('db'), {
    uid: U.db,
    receipt: prevReceipt,
    condition: {
      type: 'failed',
      retryable: false,
      reason: 'command exited with code 1',
      run: R2,
      since: '2026-10-27T09:03:00Z',
      acknowledgementRequired: true,
    },
    lastRun: { run: R2, result: 'failed', at: '2026-10-27T09:03:00Z' },
  });
  assert.equal(r.evidence.size, 0);
});

test('a failed checkpoint defaults to retryable, without acknowledgement, reason "failed"; a receipt of another uid is dropped', async () => {
  const ctx = await shop();
  const doc = unitDoc(ctx, 'db', U.db, { checkpoint: { result: 'failed', finishedAt: '2026-10-27T09:03:00Z' } });
  const stale = { uid: U.other, receipt: { run: R1, executionKey: 'k', finishedAt: 'x', outputs: {}, desired: {} } };
  const r = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, observed: { db: stale }, runs: [run(R2, doc)] }));
  assert.deepEqual(r.observed.get('db'), {
    uid: U.db,
    condition: { type: 'failed', retryable: true, reason: 'failed', run: R2, since: '2026-10-27T09:03:00Z' },
    lastRun: { run: R2, result: 'failed', at: '2026-10-27T09:03:00Z' },
  });
});

test('a failed checkpoint for another key changes nothing (no effects were recorded)', async () => {
  const ctx = await shop();
  const doc = unitDoc(ctx, 'db', U.db, { key: 'sha256:other', checkpoint: { result: 'failed', finishedAt: 'x', reason: 'boom' } });
  const r = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, runs: [run(R1, doc)] }));
  assert.deepEqual(r.imported, []);
  assert.deepEqual(r.recovered, []);
  assert.equal(r.observed.has('db'), false);
  assert.deepEqual(r.diagnostics, []);
  assert.deepEqual(
    r.consumed.map((x) => x.run),
    [R1],
  );
});

test("a 'not-started' checkpoint is ignored, and adopts nothing", async () => {
  const ctx = await shop();
  const doc = unitDoc(ctx, 'db', U.db, { checkpoint: { result: 'not-started', finishedAt: 'x' } });
  const r = importRuns(input(ctx, { runs: [run(R1, doc)] }));
  assert.deepEqual(r.imported, []);
  assert.deepEqual(r.recovered, []);
  assert.equal(r.desired.has('db'), false, 'the run did not create db');
  assert.equal(r.observed.has('db'), false);
  assert.deepEqual(
    r.consumed.map((x) => x.run),
    [R1],
  );
});

test("a unit the dead run created adopts the run's desired document and uid", async () => {
  const ctx = await shop();
  const withReceipt = unitDoc(ctx, 'db', U.db, { checkpoint: receipt({ url: 'postgres://new' }) });
  const withoutCheckpoint = unitDoc(ctx, 'cache', U.other);
  const r = importRuns(input(ctx, { runs: [run(R1, withReceipt, withoutCheckpoint)] }));
  assert.deepEqual(r.desired.get('db'), withReceipt.desired);
  assert.equal(r.desired.get('db').uid, U.db);
  assert.deepEqual(r.imported, ['db']);
  assert.equal(r.observed.get('db').uid, U.db);
  assert.deepEqual(r.desired.get('cache'), withoutCheckpoint.desired);
  assert.deepEqual(r.recovered, ['cache']);
  assert.equal(r.observed.get('cache').uid, U.other);
});

test('a unit whose incarnation --fresh ended adopts the run of the new generation', async () => {
  const ctx = await shop();
  const old = desiredDoc(ctx, 'db', U.other, {}, { generation: 1 });
  const doc = unitDoc(ctx, 'db', U.db, { checkpoint: receipt(), desired: desiredDoc(ctx, 'db', U.db, {}, { generation: 2 }) });
  const r = importRuns(input(ctx, { generation: 2, desired: { db: old }, runs: [run(R1, doc)] }));
  assert.equal(r.desired.get('db').uid, U.db);
  assert.equal(r.desired.get('db').generation, 2);
  assert.deepEqual(r.imported, ['db']);
});

test('two dead runs touching one unit: the newer receipt wins', async () => {
  const ctx = await shop();
  const older = unitDoc(ctx, 'db', U.db, { checkpoint: receipt({ url: 'v1' }, '2026-10-27T09:01:00Z') });
  const newer = unitDoc(ctx, 'db', U.db, { checkpoint: receipt({ url: 'v2' }, '2026-10-27T09:05:00Z') });
  const r = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, runs: [run(R1, older), run(R2, newer)] }));
  assert.deepEqual(r.imported, ['db']);
  assert.equal(r.observed.get('db').receipt.run, R2);
  assert.deepEqual(r.observed.get('db').receipt.outputs, { url: 'v2' });
  assert.deepEqual(
    r.consumed.map((x) => x.run),
    [R1, R2],
  );
});

test('two dead runs: a newer receipt clears the uncertainty an older run left', async () => {
  const ctx = await shop();
  const older = unitDoc(ctx, 'db', U.db);
  const newer = unitDoc(ctx, 'db', U.db, { checkpoint: receipt({ url: 'v2' }) });
  const r = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, runs: [run(R1, older), run(R2, newer)] }));
  assert.deepEqual(r.imported, ['db']);
  assert.deepEqual(r.recovered, []);
  assert.equal(r.evidence.has('db'), false);
  assert.equal(r.observed.get('db').condition, undefined);
  assert.equal(r.observed.get('db').receipt.run, R2);
});

test('two dead runs: a newer run without checkpoint leaves the unit uncertain from that run', async () => {
  const ctx = await shop();
  const older = unitDoc(ctx, 'db', U.db, { checkpoint: receipt({ url: 'v1' }) });
  const newer = unitDoc(ctx, 'db', U.db);
  const r = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, runs: [run(R1, older), run(R2, newer)] }));
  assert.ok(r.recovered.includes('db'));
  const o = r.observed.get('db');
  assert.equal(o.condition.type, 'uncertain');
  assert.equal(o.condition.run, R2);
  assert.equal(o.receipt.run, R1, "the older run's receipt is kept under the condition");
  assert.deepEqual(r.evidence.get('db'), new Set([R2]));
});

test('two dead runs: a unit that ends uncertain is listed only under recovered', async () => {
  const ctx = await shop();
  const older = unitDoc(ctx, 'db', U.db, { checkpoint: receipt({ url: 'v1' }) });
  const newer = unitDoc(ctx, 'db', U.db);
  const r = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, runs: [run(R1, older), run(R2, newer)] }));
  assert.deepEqual(r.recovered, ['db']);
  assert.deepEqual(r.imported, []);
});

test('a late checkpoint is not imported: NYL-RUN-LATE-CHECKPOINT, the run kept as evidence', async () => {
  const ctx = await shop();
  const condition = {
    type: 'uncertain',
    retryable: false,
    reason: `run ${R1} started db and ended without a checkpoint`,
    run: R1,
    since: '2026-10-27T09:30:00Z',
  };
  const observed = { db: { uid: U.db, condition } };
  const late = unitDoc(ctx, 'db', U.db, { checkpoint: receipt({ url: 'late' }, '2026-10-27T09:40:00Z') });
  const r = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, observed, runs: [run(R1, late)] }));
  assert.deepEqual(r.imported, []);
  assert.deepEqual(r.recovered, []);
  assert.deepEqual(r.observed.get('db'), { uid: U.db, condition }, 'unchanged: adopted only by recover --accept');
  assert.deepEqual(r.evidence.get('db'), new Set([R1]));
  assert.equal(r.diagnostics.length, 1);
  const d = r.diagnostics[0];
  assert.equal(d.code, 'NYL-RUN-LATE-CHECKPOINT');
  assert.equal(d.severity, 'warning');
  assert.deepEqual(d.units, ['db']);
  assert.deepEqual(d.data, { run: R1, result: 'receipt' });
  assert.deepEqual(
    r.consumed.map((x) => x.run),
    [R1],
  );
});

test('a late record without a checkpoint changes nothing and warns nothing', async () => {
  const ctx = await shop();
  const condition = { type: 'uncertain', retryable: false, reason: 'r', run: R1, since: 'x' };
  const r = importRuns(
    input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, observed: { db: { uid: U.db, condition } }, runs: [run(R1, unitDoc(ctx, 'db', U.db))] }),
  );
  assert.deepEqual(r.observed.get('db'), { uid: U.db, condition });
  assert.deepEqual(r.diagnostics, []);
  assert.deepEqual(r.recovered, []);
});

test('an uncertain condition from another run is not late: the checkpoint is imported', async () => {
  const ctx = await shop();
  const condition = { type: 'uncertain', retryable: false, reason: 'r', run: R1, since: 'x' };
  const doc = unitDoc(ctx, 'db', U.db, { checkpoint: receipt({ url: 'v' }) });
  const r = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, observed: { db: { uid: U.db, condition } }, runs: [run(R2, doc)] }));
  assert.deepEqual(r.imported, ['db']);
  assert.equal(r.observed.get('db').condition, undefined);
  assert.deepEqual(r.diagnostics, []);
});

test('a consumer whose dependency is imported in the same pass resolves from the imported outputs', async () => {
  const ctx = await shop();
  const dbDoc = unitDoc(ctx, 'db', U.db, { checkpoint: receipt({ url: 'postgres://fresh' }) });
  const appDoc = unitDoc(ctx, 'app', U.app, { outputs: { db: { url: 'postgres://fresh' } }, checkpoint: receipt({ endpoint: 'https://app' }) });
  const migrateDoc = unitDoc(ctx, 'migrate', U.migrate, { outputs: { db: { url: 'postgres://fresh' } }, checkpoint: receipt() });
  assert.deepEqual(appDoc.desired.rendering.run, ['deploy', 'postgres://fresh']);
  // Consumers first in the record: import still goes in dependency order.
  const r = importRuns(
    input(ctx, {
      desired: { db: desiredDoc(ctx, 'db', U.db), app: appDoc.desired, migrate: migrateDoc.desired },
      runs: [run(R1, appDoc, migrateDoc, dbDoc)],
    }),
  );
  assert.deepEqual(r.imported, ['db', 'app', 'migrate']);
  assert.deepEqual(r.recovered, []);
  assert.deepEqual(r.diagnostics, []);
  assert.equal(r.observed.get('app').receipt.run, R1);
});

test("a consumer's checkpoint for outputs its dependency no longer has is superseded", async () => {
  const ctx = await shop();
  // db's current receipt says url=v2; app ran against v1.
  const observed = {
    db: { uid: U.db, receipt: { run: R1, executionKey: keyOf(ctx, 'db', U.db).executionKey, finishedAt: 'x', outputs: { url: 'v2' }, desired: {} } },
  };
  const appDoc = unitDoc(ctx, 'app', U.app, { outputs: { db: { url: 'v1' } }, checkpoint: receipt() });
  const r = importRuns(
    input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db), app: desiredDoc(ctx, 'app', U.app, { db: { url: 'v2' } }) }, observed, runs: [run(R2, appDoc)] }),
  );
  assert.deepEqual(r.imported, []);
  assert.equal(r.observed.get('app').condition.code, 'NYL-RUN-SUPERSEDED');
});

test('a consumer whose dependency is left uncertain cannot resolve: its receipt is superseded', async () => {
  const ctx = await shop();
  const dbDoc = unitDoc(ctx, 'db', U.db);
  const appDoc = unitDoc(ctx, 'app', U.app, { outputs: { db: { url: 'v1' } }, checkpoint: receipt() });
  const r = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db), app: appDoc.desired }, runs: [run(R1, dbDoc, appDoc)] }));
  assert.deepEqual(r.recovered, ['db', 'app']);
  assert.equal(r.observed.get('db').condition.code, undefined);
  assert.equal(r.observed.get('app').condition.code, 'NYL-RUN-SUPERSEDED');
});

test('a unit outside the ownership set with a receipt checkpoint is uncertain (superseded), after the owned units', async () => {
  const ctx = await shop();
  const gone = {
    unit: 'gone',
    uid: U.other,
    kind: 'Command',
    executionKey: 'sha256:k',
    startedAt: 'x',
    desired: { uid: U.other, kind: 'Command', lifecycle: { state: 'active' } },
    checkpoint: receipt(),
  };
  const dbDoc = unitDoc(ctx, 'db', U.db, { checkpoint: receipt({ url: 'u' }) });
  const r = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, runs: [run(R1, gone, dbDoc)] }));
  assert.deepEqual(r.imported, ['db']);
  assert.deepEqual(r.recovered, ['gone']);
  assert.equal(r.observed.get('gone').condition.code, 'NYL-RUN-SUPERSEDED');
  assert.deepEqual(r.desired.get('gone'), gone.desired);
});

test('consumed lists every run, also those with nothing to import', async () => {
  const ctx = await shop();
  const runs = [
    run(R1),
    run(R2, unitDoc(ctx, 'db', U.db, { checkpoint: { result: 'not-started', finishedAt: 'x' } })),
    run(R3, unitDoc(ctx, 'cache', U.other, { checkpoint: receipt() })),
  ];
  const r = importRuns(input(ctx, { desired: { cache: desiredDoc(ctx, 'cache', U.other) }, runs }));
  assert.deepEqual(
    r.consumed.map((x) => x.run),
    [R1, R2, R3],
  );
  assert.deepEqual(r.consumed, runs);
  assert.notEqual(r.consumed, runs, 'a copy');
  assert.deepEqual(r.imported, ['cache']);
});

// --- damaged records (only `recover` imports them; reconcile refuses) --------------------------

const damage = (document, unit) => ({
  document,
  ref: `refs/nyl/dev/runs/${R1}`,
  object: 'a'.repeat(40),
  problem: 'invalid YAML: x',
  line: 2,
  ...(unit ? { unit, path: `units/${unit}.yaml` } : { path: 'run.yaml' }),
});

test('a damaged unit record makes its unit uncertain; the healthy records of the same run are imported', async () => {
  const ctx = await shop();
  const db = unitDoc(ctx, 'db', U.db, { checkpoint: receipt({ url: 'postgres://db' }) });
  const broken = { ...run(R1, db), damage: [damage('run-unit', 'cache')] };
  const r = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, runs: [broken] }));
  assert.deepEqual(r.imported, ['db']);
  assert.deepEqual(r.recovered, ['cache']);
  const c = r.observed.get('cache').condition;
  assert.equal(c.type, 'uncertain');
  assert.equal(c.code, 'NYL-STATE-CORRUPT');
  assert.match(c.reason, /units\/cache\.yaml: invalid YAML/);
  assert.deepEqual(r.evidence.get('cache'), new Set([R1]));
});

test('a damaged run.yaml makes every unit the run names uncertain, even one with a receipt; the incarnation it created is kept', async () => {
  const ctx = await shop();
  const db = unitDoc(ctx, 'db', U.db, { checkpoint: receipt({ url: 'postgres://db' }) });
  const r = importRuns(input(ctx, { runs: [{ ...run(R1, db), damage: [damage('run')] }] }));
  assert.deepEqual(r.imported, []);
  assert.deepEqual(r.recovered, ['db']);
  assert.equal(r.observed.get('db').condition.code, 'NYL-STATE-CORRUPT');
  assert.equal(r.observed.get('db').receipt, undefined, 'nothing a damaged run says is trusted');
  assert.equal(r.desired.get('db').uid, U.db, 'the uid the run created is adopted, so the unit does not start anew');
});

test("a damaged record of a run older than the unit's receipt changes nothing", async () => {
  const ctx = await shop();
  const observed = {
    db: {
      uid: U.db,
      receipt: { run: R2, executionKey: 'sha256:k', finishedAt: NOW, outputs: {}, desired: desiredDoc(ctx, 'db', U.db) },
      lastRun: { run: R2, result: 'executed', at: NOW },
    },
  };
  const r = importRuns(input(ctx, { desired: { db: desiredDoc(ctx, 'db', U.db) }, observed, runs: [{ ...run(R1), damage: [damage('run-unit', 'db')] }] }));
  assert.deepEqual(r.observed.get('db'), observed.db);
  assert.deepEqual(r.recovered, []);
});

const CACHE = '0192f0c0-0000-7000-8000-00000000000c';

/** A teardown's record of the unit's incarnation `uid`: its deleting document, with the checkpoint given. */
function teardownDoc(ctx, name, uid, checkpoint, outputs = {}) {
  const desired = desiredDoc(ctx, name, uid, outputs, { lifecycle: { state: 'deleting' }, deletion: { cause: 'source', policy: 'Teardown', since: NOW } });
  return { ...unitDoc(ctx, name, uid, { desired, key: 'none', outputs }), phase: 'teardown', ...(checkpoint ? { checkpoint } : {}) };
}

function withTeardowns(r, ...docs) {
  for (const d of docs) r.teardowns.set(d.unit, d);
  return r;
}

test('teardown records: removed drops the unit; without a checkpoint it is uncertain and deleting; failed keeps the failure; another incarnation changes nothing', async () => {
  const ctx = await shop();
  const removed = { result: 'removed', finishedAt: NOW };
  const failed = { result: 'failed', finishedAt: NOW, reason: 'boom', retryable: true };
  const desired = {
    db: desiredDoc(ctx, 'db', U.db),
    cache: desiredDoc(ctx, 'cache', CACHE),
    migrate: desiredDoc(ctx, 'migrate', U.migrate, { db: {} }),
    app: desiredDoc(ctx, 'app', U.app, { db: { url: 'x' } }),
  };
  const runs = [
    withTeardowns(
      run(R1),
      teardownDoc(ctx, 'db', U.db, removed),
      teardownDoc(ctx, 'cache', CACHE),
      teardownDoc(ctx, 'migrate', U.migrate, failed, { db: {} }),
      teardownDoc(ctx, 'app', U.other, removed, { db: { url: 'x' } }),
    ),
  ];
  const r = importRuns(input(ctx, { desired, observed: { db: { uid: U.db } }, runs }));
  assert.deepEqual(r.removed, ['db']);
  assert.equal(r.desired.has('db'), false);
  assert.equal(r.observed.has('db'), false);
  assert.equal(r.desired.get('cache').lifecycle.state, 'deleting');
  assert.equal(r.observed.get('cache').condition.type, 'uncertain');
  assert.deepEqual(r.recovered, ['cache']);
  assert.equal(r.desired.get('migrate').lifecycle.state, 'deleting');
  assert.equal(r.observed.get('migrate').condition.reason, 'boom');
  assert.deepEqual(r.desired.get('app'), desired.app, 'the teardown of an incarnation state no longer has changes nothing');
});

test("a kind change in one run: its teardown record is imported before the new incarnation's execution record", async () => {
  const ctx = await shop();
  const removed = { result: 'removed', finishedAt: NOW };
  const oldDoc = desiredDoc(ctx, 'cache', U.other, {}, { kind: 'OciImage' });
  const teardown = { ...teardownDoc(ctx, 'cache', U.other, removed), kind: 'OciImage' };
  const execution = unitDoc(ctx, 'cache', CACHE, { checkpoint: receipt({ v: 1 }) });
  const r = importRuns(input(ctx, { desired: { cache: oldDoc }, observed: { cache: { uid: U.other } }, runs: [withTeardowns(run(R1, execution), teardown)] }));
  assert.deepEqual(r.removed, ['cache']);
  assert.equal(r.desired.get('cache').uid, CACHE, 'the new incarnation is adopted');
  assert.deepEqual(r.observed.get('cache').receipt.outputs, { v: 1 });
  assert.deepEqual(r.recovered, []);
});
