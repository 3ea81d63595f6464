// `nyl verify` in process: the drift check of every unit with a receipt, run against what the
// receipt was produced for, recorded as one observed commit (operation verify) in the push that
// releases the lease; what it skips and why; the history of observations; --unit; the lease
// (broken, held, waited for); cancellation; sensitive values a checked rendering references.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { exitCodeOf } from '../../dist/report/exit-code.js';
import { NylError } from '../../dist/errors/diagnostic.js';
import { verifyOpened } from '../../dist/commands/verify/verify.js';
import { receipt, secret } from '../fakes/driver.mjs';
import { commitBody, trailer } from '../support/commit-evidence.mjs';
import { World } from './world.mjs';

const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });
const checked = (drift, detail) => ({ result: 'checked', drift, ...(detail ? { detail } : {}) });

/** Starts verify in a process of the world: {done} settles like World's operations ({report, code} or {error, codes, code}). */
function startVerify(proc, options = {}) {
  const done = verifyOpened(proc.rt, proc.opened(), options).then(
    (report) => ({ report, code: exitCodeOf(report, report.errors, 'verify') }),
    (error) => {
      if (!(error instanceof NylError)) throw error;
      return { error, codes: error.diagnostics.map((d) => d.code), code: exitCodeOf(undefined, error.diagnostics, 'verify') };
    },
  );
  return { done };
}

const verify = (world, options, name = 'verifier') => startVerify(world.process(name), options).done;

/** A world whose units all have receipts (one reconcile ran). */
async function reconciledWorld(options) {
  const world = await World.create(options);
  await world.process('init').run('state init');
  const r = await world.process('reconciler').run('reconcile');
  assert.equal(r.code, 0, JSON.stringify(r.report?.units ?? r.codes));
  return world;
}

const drifts = (report) => Object.fromEntries(Object.entries(report.details.units).map(([n, u]) => [n, u.drift]));
const codesOf = (list) => list.map((d) => `${d.code}:${d.units?.join(',') ?? ''}`);

describe('verify records what the checks observed', () => {
  test('in sync, drifted (converge and manual), failed and throwing checks: one observed commit, only the observed ref moves, exit 1', async () => {
    const units = [unit('a'), unit('b', { recovery: 'converge' }), unit('c', { recovery: 'manual' }), unit('d'), unit('e')];
    const check = {
      a: checked('in-sync'),
      b: checked('drifted', 'the file changed'),
      c: checked('drifted'),
      d: () => {
        throw new Error('driver bug');
      },
      e: { result: 'failed', reason: 'cannot reach the API', retryable: true },
    };
    const world = await reconciledWorld({ units, driver: { check } });
    try {
      const before = world.stateRefs();
      const observedCommits = world.repo.commitsOf(world.loc.observedRef).length;
      const r = await verify(world);
      assert.equal(r.code, 1, 'a failed check outranks drift');
      const report = r.report;
      assert.equal(report.kind, 'StateOperationReport');
      assert.equal(report.operation, 'verify');
      assert.equal(report.result, 'done');
      assert.deepEqual(drifts(report), { a: 'in-sync', b: 'drifted', c: 'drifted', d: 'unknown', e: 'unknown' });
      assert.equal(report.details.units.a.kind, 'Command');
      assert.match(report.details.units.d.detail, /driver bug/);
      assert.match(report.details.units.e.detail, /cannot reach the API/);
      assert.deepEqual(report.details.skipped, {});
      assert.deepEqual(codesOf(report.errors), ['NYL-DRIFT-CHECK-FAILED:d', 'NYL-DRIFT-CHECK-FAILED:e']);
      const warnings = report.warnings.filter((w) => w.code === 'NYL-UNIT-DRIFTED');
      assert.deepEqual(
        warnings.map((w) => w.message.split(' ')[0]),
        ['b', 'c'],
      );
      assert.match(warnings[0].fix, /the next `nyl reconcile -e dev` repairs it/);
      assert.match(warnings[1].fix, /nyl reconcile -e dev --approve c/);

      const after = world.stateRefs();
      assert.equal(after.desired, before.desired, 'the desired ref never moves');
      assert.notEqual(after.observed, before.observed);
      assert.equal(report.observed, after.observed);
      assert.equal(world.refs()[world.leaseRef], undefined, 'the lease is released in the same push');
      const commits = world.repo.commitsOf(world.loc.observedRef);
      assert.equal(commits.length, observedCommits + 1, 'one observed commit');
      const body = commitBody(commits[0].message);
      assert.equal(body.operation, 'verify');
      assert.deepEqual(body.units, { a: 'in-sync', b: 'drifted', c: 'drifted', d: 'unknown', e: 'unknown' });
      assert.equal(trailer(commits[0].message, 'Nyl-Operation'), 'verify');
      assert.equal(trailer(commits[0].message, 'Nyl-Requested-By'), 'Alice <alice@example.com>');
      assert.equal(commits[0].message.split('\n')[0], 'nyl: verify dev');

      const run = report.details.run;
      const b = world.observedDoc('b');
      assert.deepEqual(b.drift, { status: 'drifted', observedAt: b.drift.observedAt, run, receipt: b.receipt.run, detail: 'the file changed' });
      assert.match(b.drift.observedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.equal(world.observedDoc('a').drift.status, 'in-sync');
      assert.equal(world.observedDoc('d').drift.status, 'unknown');
      assert.match(world.observedDoc('d').drift.detail, /driver bug/);
      assert.equal(world.observedDoc('a').receipt.run, b.receipt.run, 'receipts are kept as they were');
      for (const n of ['a', 'b', 'c', 'd', 'e']) assert.equal(world.driver.callsOf(n, 'check')[0].run, run, 'the tools see the lease run id');
    } finally {
      world.cleanup();
    }
  });

  test('a kind without a check is recorded unknown with why; nothing drifted is exit 0', async () => {
    const world = await reconciledWorld({ units: [unit('a'), unit('b')] });
    try {
      const r = await verify(world);
      assert.equal(r.code, 0);
      assert.deepEqual(drifts(r.report), { a: 'unknown', b: 'unknown' });
      assert.match(r.report.details.units.a.detail, /has no drift check/);
      assert.deepEqual(r.report.errors, []);
      assert.equal(world.observedDoc('a').drift.status, 'unknown');
      assert.match(world.observedDoc('a').drift.detail, /has no drift check/);
    } finally {
      world.cleanup();
    }
  });

  test('a drifted unit alone is exit 2; under driftRepair: manual its fix names the reapply', async () => {
    const world = await reconciledWorld({ units: [unit('a', { recovery: 'converge' }), unit('b')], driver: { check: { a: checked('drifted') } } });
    try {
      const r = await verify(world);
      assert.equal(r.code, 2);
      assert.deepEqual(drifts(r.report), { a: 'drifted', b: 'in-sync' });
      assert.deepEqual(codesOf(r.report.warnings), ['NYL-UNIT-DRIFTED:a']);
      world.env = { ...world.env, spec: { ...world.env.spec, driftRepair: 'manual' } };
      const manual = await verify(world);
      assert.equal(manual.code, 2);
      assert.equal(manual.report.warnings[0].fix, 'repair it with `nyl reconcile -e dev --unit a --reapply --reason "<why>"`');
    } finally {
      world.cleanup();
    }
  });

  test("the check gets the receipt's rendering, not today's source; units without a receipt, held units and tombstones are skipped with why", async () => {
    const world = await reconciledWorld({ units: [unit('a'), unit('held'), unit('gone', { policy: 'Retain' }), unit('leaving')], driver: { check: true } });
    try {
      const op = world.process('op');
      assert.equal((await op.run('hold', { unit: 'held', reason: 'incident' })).code, 0);
      await world.setUnits([unit('a'), unit('held'), unit('leaving')]);
      assert.equal((await world.process('r2').run('reconcile')).code, 2, 'gone becomes a tombstone; held waits');
      await world.setUnits([unit('a', { version: 'v2' }), unit('held'), unit('new')]);
      assert.equal(world.desiredDoc('gone').lifecycle.state, 'retained');
      const r = await verify(world);
      assert.equal(r.code, 0, JSON.stringify(r.report));
      assert.deepEqual(Object.keys(r.report.details.units), ['a']);
      const skipped = r.report.details.skipped;
      assert.deepEqual(Object.keys(skipped).sort(), ['gone', 'held', 'leaving', 'new']);
      assert.match(skipped.held, /held by Alice/);
      assert.match(skipped.gone, /retained tombstone/);
      assert.match(skipped.leaving, /left the ownership set/);
      assert.match(skipped.new, /no receipt/);
      const [call] = world.driver.callsOf('a', 'check');
      assert.deepEqual(call.rendering, world.observedDoc('a').receipt.desired.rendering, 'the rendering the receipt was produced for');
      assert.deepEqual(call.rendering.run, ['a'], 'not the pending v2');
      for (const n of ['held', 'gone', 'leaving', 'new']) assert.equal(world.observedDoc(n)?.drift, undefined);
    } finally {
      world.cleanup();
    }
  });

  test('with no unit to check it writes nothing and releases the lease: unchanged', async () => {
    const world = await World.create({ units: [unit('a')], driver: { check: true } });
    await world.process('init').run('state init');
    try {
      const refs = world.refs();
      const r = await verify(world);
      assert.equal(r.code, 0);
      assert.equal(r.report.result, 'unchanged');
      assert.deepEqual(codesOf(r.report.notes), ['NYL-UNCHANGED:']);
      assert.match(r.report.details.skipped.a, /no receipt/);
      assert.deepEqual(world.refs(), refs, 'nothing written, the lease released');
    } finally {
      world.cleanup();
    }
  });
});

describe('verify --unit', () => {
  test('checks only the named units; an unknown name is refused before anything (NYL-UNIT-UNKNOWN, exit 1)', async () => {
    const world = await reconciledWorld({ units: [unit('a'), unit('b'), unit('c')], driver: { check: true } });
    try {
      const r = await verify(world, { units: ['b', 'c', 'b'] });
      assert.equal(r.code, 0);
      assert.deepEqual(drifts(r.report), { b: 'in-sync', c: 'in-sync' });
      assert.deepEqual(r.report.details.skipped, {});
      assert.equal(world.observedDoc('a').drift, undefined);
      assert.equal(world.driver.callsOf('a', 'check').length, 0);
      assert.equal(world.repo.commitsOf(world.loc.observedRef)[0].message.split('\n')[0], 'nyl: verify dev (b, c)');

      const refs = world.refs();
      const unknown = await verify(world, { units: ['b', 'nope'] });
      assert.equal(unknown.code, 1);
      assert.deepEqual(unknown.codes, ['NYL-UNIT-UNKNOWN']);
      assert.deepEqual(unknown.error.diagnostics[0].units, ['nope']);
      assert.deepEqual(world.refs(), refs, 'nothing written, no lease taken');
      assert.equal(world.driver.callsOf('b', 'check').length, 1);
    } finally {
      world.cleanup();
    }
  });
});

describe('the drift history', () => {
  test('every verify adds an observation; the latest is drift, the earlier ones driftHistory newest first, 10 in all', async () => {
    const answers = Array.from({ length: 12 }, (_, i) => checked(i % 3 === 0 ? 'drifted' : 'in-sync', `check ${i + 1}`));
    const world = await reconciledWorld({ units: [unit('a')], driver: { check: { a: answers } } });
    try {
      for (let i = 0; i < 12; i++) {
        assert.equal((await verify(world, {}, `v${i}`)).report.result, 'done');
        await world.clock.advance(60_000);
      }
      const doc = world.observedDoc('a');
      assert.equal(doc.drift.detail, 'check 12');
      assert.equal(doc.driftHistory.length, 9);
      assert.deepEqual(
        doc.driftHistory.map((d) => d.detail),
        [11, 10, 9, 8, 7, 6, 5, 4, 3].map((n) => `check ${n}`),
      );
      const times = [doc.drift, ...doc.driftHistory].map((d) => Date.parse(d.observedAt));
      assert.deepEqual(
        [...times].sort((x, y) => y - x),
        times,
        'newest first',
      );
      assert.equal(new Set([doc.drift, ...doc.driftHistory].map((d) => d.run)).size, 10, 'each observation names its verify');
    } finally {
      world.cleanup();
    }
  });
});

describe('verify and the lease', () => {
  test('a broken lease refuses it with NYL-LEASE-BROKEN and nothing is written; a held one with NYL-LEASE-HELD (exit 2) unless --wait-lease outlasts the holder', async () => {
    const world = await reconciledWorld({ units: [unit('a'), unit('b', { version: 'v1' })], driver: { check: true } });
    try {
      await world.setUnits([unit('a'), unit('b', { version: 'v2' })]);
      const releaseB = world.driver.hold('b');
      const run = world.process('holder').start('reconcile');
      await world.until(() => world.driver.callsOf('b').length === 2, 'the second execution of b');

      const held = await verify(world);
      assert.equal(held.code, 2);
      assert.deepEqual(held.codes, ['NYL-LEASE-HELD']);

      const waiting = verify(world, { waitMs: 10 * 60_000 }, 'waiter');
      releaseB();
      assert.equal((await run.outcome).code, 0);
      const waited = await waiting;
      assert.equal(waited.code, 0, JSON.stringify(waited.codes ?? waited.report.errors));
      assert.deepEqual(drifts(waited.report), { a: 'in-sync', b: 'in-sync' });

      await world.setUnits([unit('a'), unit('b', { version: 'v3' })]);
      const releaseAgain = world.driver.hold('b');
      const doomed = world.process('doomed').start('reconcile');
      await world.until(() => world.driver.callsOf('b').length === 3, 'the third execution of b');
      assert.equal((await world.process('operator').run('lease break', { reason: 'runner lost' })).code, 0);
      const refs = world.refs();
      const checks = world.driver.calls.filter((c) => c.phase === 'check').length;
      const broken = await verify(world);
      assert.equal(broken.code, 2);
      assert.deepEqual(broken.codes, ['NYL-LEASE-BROKEN']);
      assert.deepEqual(world.refs(), refs, 'nothing written');
      assert.equal(world.driver.calls.filter((c) => c.phase === 'check').length, checks, 'no check ran');
      releaseAgain();
      await doomed.outcome;
    } finally {
      world.cleanup();
    }
  });

  test('a signal stops starting checks: NYL-RUN-CANCELLED (exit 1), nothing written, the lease released', async () => {
    const world = await reconciledWorld({ units: [unit('a'), unit('b'), unit('c'), unit('d'), unit('e')], driver: { check: true } });
    try {
      const refs = world.refs();
      const releases = ['a', 'b', 'c', 'd'].map((n) => world.driver.hold(n, 'check'));
      const proc = world.process('verifier');
      const running = startVerify(proc).done;
      await world.until(() => world.driver.calls.filter((c) => c.phase === 'check').length === 4, 'four checks running');
      proc.cancel('SIGINT');
      for (const release of releases) release();
      const r = await running;
      assert.equal(r.code, 1);
      assert.deepEqual(r.codes, ['NYL-RUN-CANCELLED']);
      assert.deepEqual(world.refs(), refs, 'nothing written, the lease released');
      assert.equal(world.driver.callsOf('e', 'check').length, 0, 'the fifth check never started');
    } finally {
      world.cleanup();
    }
  });
});

describe('sensitive values', () => {
  test("a rendering that references another unit's sensitive output is checked with the value, masked in the detail and in state", async () => {
    const SECRET = 'hunter2-s3cr3t-value';
    const seen = [];
    const check = {
      c: (ctx) => {
        seen.push(ctx.rendering.env.TOKEN, ctx.secretPointers);
        return checked('drifted', `token ${ctx.rendering.env.TOKEN} was rotated`);
      },
    };
    const world = await reconciledWorld({
      units: [unit('s'), unit('c', { dependsOn: ['s'], env: { TOKEN: '${{ units.s.outputs.token }}' } })],
      apply: { s: receipt({ token: secret(SECRET) }) },
      driver: { check },
    });
    try {
      const r = await verify(world);
      assert.equal(r.code, 2, JSON.stringify(r.report.errors));
      assert.deepEqual(seen, [SECRET, ['/env/TOKEN']]);
      assert.equal(r.report.details.units.c.detail, 'token *** was rotated');
      assert.equal(world.observedDoc('c').drift.detail, 'token *** was rotated');
      for (const [oid, obj] of world.repo.objects) assert.ok(!obj.content.includes(SECRET), `object ${oid} holds the secret`);
    } finally {
      world.cleanup();
    }
  });

  test('a sensitive value that cannot be opened fails the check: unknown, NYL-DRIFT-CHECK-FAILED', async () => {
    const world = await reconciledWorld({
      units: [unit('s'), unit('c', { dependsOn: ['s'], env: { TOKEN: '${{ units.s.outputs.token }}' } })],
      apply: { s: receipt({ token: secret('hunter2-s3cr3t-value') }) },
      driver: { check: true },
    });
    try {
      const proc = world.process('keyless');
      delete proc.rt.env.NYL_SECRETS_KEY;
      const r = await startVerify(proc).done;
      assert.equal(r.code, 1);
      assert.deepEqual(drifts(r.report), { c: 'unknown', s: 'in-sync' });
      assert.deepEqual(codesOf(r.report.errors), ['NYL-DRIFT-CHECK-FAILED:c']);
      assert.equal(world.driver.callsOf('c', 'check').length, 0, 'the check did not run without its value');
    } finally {
      world.cleanup();
    }
  });
});
