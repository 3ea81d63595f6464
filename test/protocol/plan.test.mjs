// `nyl plan` in process: per unit the action and reason the next reconcile would act on, the
// leaving section first, reconcile's exit categories, the digest a plan-bound approval names (the
// execution key for a kind that does not plan, approvalDigest of the driver's plan for one that
// does) and that a run accepts it (--approve U=DIGEST), a driver plan that fails or throws
// reported on its row, preparation as a run prepares, --unit, and nothing written: every ref of
// the state repository is the same after a plan, and no driver applied anything.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { exitCodeOf } from '../../dist/report/exit-code.js';
import { renderPlan } from '../../dist/commands/plan/render.js';
import { NylError } from '../../dist/errors/diagnostic.js';
import { planOpened } from '../../dist/commands/plan/plan.js';
import { approvalDigest } from '../../dist/plan/digest.js';
import { failed, uncertain } from '../fakes/driver.mjs';
import { World } from './world.mjs';

const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });
const S2 = 'c0ffee0000000000000000000000000000000002';

/** Runs `nyl plan` in a new process of the world: {report, code}, and checks that it wrote nothing. */
async function plan(world, options = {}) {
  const before = world.refs();
  const proc = world.process();
  const report = await planOpened(proc.rt, proc.opened(), options);
  assert.deepEqual(world.refs(), before, 'a plan moves no ref of the state repository');
  assert.equal(proc.stats.writes, 0, 'a plan writes nothing');
  return { report, code: exitCodeOf(report, report.errors, 'plan') };
}

/** unit -> [result, action, reason] of a plan's rows, in table order. */
function rows(report) {
  return Object.fromEntries(report.unitOrder.map((n) => [n, [report.units[n].result, report.units[n].action, report.units[n].reason]]));
}

async function reconciled(options) {
  const world = await World.create(options);
  await world.process('init').run('state init');
  const first = await world.process('first').run('reconcile');
  assert.equal(first.code, 0, JSON.stringify(first.report?.units ?? first.codes));
  return world;
}

async function commitSource(world, units) {
  await world.setUnits(units);
  world.sourceCommit = S2;
}

describe('nyl plan: what the next reconcile would do, per unit and why', () => {
  test('a new environment: a unit executes, its dependent waits; no digest before the run mints the uid; exit 2 and nothing applied', async () => {
    const world = await World.create({ units: [unit('a'), unit('b', { dependsOn: ['a'] })] });
    try {
      await world.process('init').run('state init');
      const { report, code } = await plan(world);
      assert.equal(report.kind, 'ReconcileReport');
      assert.equal(report.operation, 'plan');
      assert.equal(report.run, undefined);
      assert.equal(report.committed, false);
      assert.deepEqual(rows(report), { a: ['execute', 'execute', 'no-incarnation'], b: ['wait', 'wait', 'dependency-pending'] });
      assert.equal(code, 2);
      assert.equal(report.units.a.digest, undefined);
      assert.equal(report.units.a.detail, 'new unit: will execute');
      assert.match(report.units.b.detail, /\/dependsOn\/0 waits for a .*its digest is decided after its dependencies run/);
      assert.deepEqual(world.counts(), { a: 0, b: 0 }, 'nothing executed');
    } finally {
      world.cleanup();
    }
  });

  test('after a reconcile everything is current: exit 0, no digest; a changed unit executes with the execution key as its digest and a diff of its rendering, its dependent waits for it', async () => {
    const world = await reconciled({ units: [unit('a'), unit('b', { dependsOn: ['a'] })] });
    try {
      const quiet = await plan(world);
      assert.deepEqual(rows(quiet.report), { a: ['current', 'current', 'receipt-current'], b: ['current', 'current', 'receipt-current'] });
      assert.equal(quiet.code, 0);
      assert.equal(quiet.report.units.a.digest, undefined);

      await commitSource(world, [unit('a', { version: 'v2' }), unit('b', { dependsOn: ['a'] })]);
      const { report, code } = await plan(world);
      assert.deepEqual(rows(report), { a: ['execute', 'execute', 'key-changed'], b: ['wait', 'wait', 'upstream-pending'] });
      assert.equal(code, 2);
      assert.match(report.units.a.executionKey, /^sha256:/);
      assert.equal(report.units.a.digest, report.units.a.executionKey, 'a kind without a plan phase: the digest is the execution key');
      assert.notEqual(report.units.a.executionKey, world.observedDoc('a').receipt.executionKey);
      assert.equal(report.units.a.changes, undefined);
      assert.deepEqual(report.units.a.diff, ['@@ -1,2 +1,3 @@', ' run:', '   - a', '+  - v2']);
      assert.equal(report.units.b.digest, undefined);
      assert.equal(report.units.b.diff, undefined);
      const text = renderPlan(report);
      assert.match(text, /^UNIT +KIND +ACTION +DETAIL$/m);
      assert.match(text, /^a +Command +execute +spec field run changed$/m);
      assert.match(
        text,
        new RegExp(
          `^a \\(execute\\):\\n  digest:  ${report.units.a.executionKey}\\n  rendering \\(recorded -> new\\):\\n    @@ -1,2 \\+1,3 @@\\n     run:\\n       - a\\n    \\+  - v2$`,
          'm',
        ),
      );
      assert.deepEqual(world.counts(), { a: 1, b: 1 }, 'the plan executed nothing');
    } finally {
      world.cleanup();
    }
  });

  test('the leaving section comes first: a retained unit and a teardown that waits for --allow-teardown, with the warnings a quiet reconcile gives', async () => {
    const world = await reconciled({ units: [unit('keep'), unit('old', { policy: 'Retain' }), unit('gone', { policy: 'Teardown' })] });
    try {
      await commitSource(world, [unit('keep', { version: 'v2' })]);
      const { report, code } = await plan(world);
      assert.deepEqual(report.unitOrder, ['gone', 'old', 'keep']);
      assert.deepEqual(rows(report), {
        gone: ['pending-teardown', 'pending-teardown', 'needs-allow-teardown'],
        old: ['retain', 'retain', 'left-ownership-set'],
        keep: ['execute', 'execute', 'key-changed'],
      });
      assert.equal(report.units.gone.leaving, true);
      assert.equal(report.units.old.leaving, true);
      assert.equal(code, 2);
      const codes = report.warnings.map((w) => w.code);
      assert.ok(codes.includes('NYL-PLAN-UNITS-LEAVING'), codes.join());
      assert.ok(codes.includes('NYL-TEARDOWN-PENDING'), codes.join());
      assert.match(renderPlan(report), /^leaving:\nUNIT +KIND +ACTION +DETAIL\ngone +Command +pending-teardown /m);
    } finally {
      world.cleanup();
    }
  });

  test('a unit that waits for a changing producer shows its own diff, with what the producer outputs next as (known after apply)', async () => {
    const consumer = (mode) => unit('b', { env: { URL: '${{ units.a.outputs.unit }}', MODE: mode } });
    const world = await reconciled({ units: [unit('a'), consumer('x')] });
    try {
      await commitSource(world, [unit('a', { version: 'v2' }), consumer('y')]);
      const { report } = await plan(world);
      assert.deepEqual(rows(report).b, ['wait', 'wait', 'dependency-pending']);
      assert.deepEqual(report.units.b.diff, [
        '@@ -1,5 +1,5 @@',
        ' env:',
        '-  MODE: x',
        '-  URL: a',
        '+  MODE: "y"',
        '+  URL: "(known after apply)"',
        ' run:',
        '   - b',
      ]);
      assert.match(renderPlan(report), /^b \(wait\):\n  rendering \(recorded -> new\):\n    @@/m);
    } finally {
      world.cleanup();
    }
  });

  test('a unit that waits for a new producer: a change of its own executes it, without "its receipt may stay current"', async () => {
    const world = await reconciled({ units: [unit('a'), unit('b', { env: { MODE: 'x' } })] });
    try {
      await commitSource(world, [unit('a'), unit('c'), unit('b', { env: { MODE: 'y', URL: '${{ units.c.outputs.unit }}' } })]);
      const { report } = await plan(world);
      assert.deepEqual(rows(report).b, ['wait', 'wait', 'dependency-pending']);
      assert.match(report.units.b.detail, /^\/env\/URL waits for c \(no-current-receipt\); /);
      assert.doesNotMatch(report.units.b.detail, /may stay current/);
      assert.deepEqual(report.units.b.diff, ['@@ -1,4 +1,5 @@', ' env:', '-  MODE: x', '+  MODE: "y"', '+  URL: "(known after apply)"', ' run:', '   - b']);
    } finally {
      world.cleanup();
    }
  });

  test('before state init: a preview in which every unit executes, with a warning that names state init (a reconcile refuses)', async () => {
    const world = await World.create({ units: [unit('a'), unit('b', { dependsOn: ['a'] })] });
    try {
      const { report, code } = await plan(world);
      assert.deepEqual(rows(report), { a: ['execute', 'execute', 'no-incarnation'], b: ['wait', 'wait', 'dependency-pending'] });
      assert.equal(report.units.a.detail, 'new unit: will execute');
      assert.equal(code, 2);
      assert.deepEqual(report.errors, []);
      const missing = report.warnings.find((w) => w.code === 'NYL-STATE-MISSING');
      assert.match(missing?.message ?? '', /^state missing: every unit would execute/);
      assert.match(missing.fix, /nyl state init -e dev/);
      const refused = await world.process('run').run('reconcile');
      assert.deepEqual(refused.codes, ['NYL-STATE-MISSING'], 'a reconcile still refuses');
    } finally {
      world.cleanup();
    }
  });

  test('exit categories: a failure that needs an operator is 3, an uncertain unit under manual recovery 4', async () => {
    const world = await World.create({
      units: [unit('ok'), unit('broken'), unit('unsure')],
      apply: { broken: failed('disk full', { retryable: false }), unsure: uncertain('killed mid-run') },
    });
    try {
      await world.process('init').run('state init');
      await world.process('run').run('reconcile');
      const failing = await plan(world, { units: ['ok', 'broken'] });
      assert.deepEqual(rows(failing.report), { ok: ['current', 'current', 'receipt-current'], broken: ['failed', 'failed', 'needs-acknowledgement'] });
      assert.match(failing.report.units.broken.detail, /disk full \(needs nyl recover --retry\)/);
      assert.equal(failing.code, 3);
      const all = await plan(world);
      assert.deepEqual(all.report.units.unsure.action, 'uncertain');
      assert.equal(all.code, 4);
      assert.ok(all.report.warnings.some((w) => w.code === 'NYL-UNIT-UNCERTAIN'));
    } finally {
      world.cleanup();
    }
  });

  test('--unit: only the named units are listed and count; other changes do not; an unknown name is refused', async () => {
    const world = await reconciled({ units: [unit('a'), unit('b')] });
    try {
      await commitSource(world, [unit('a'), unit('b', { version: 'v2' })]);
      const onlyA = await plan(world, { units: ['a'] });
      assert.deepEqual(rows(onlyA.report), { a: ['current', 'current', 'receipt-current'] });
      assert.deepEqual(onlyA.report.selected, ['a']);
      assert.equal(onlyA.code, 0);
      const onlyB = await plan(world, { units: ['b'] });
      assert.deepEqual(rows(onlyB.report), { b: ['execute', 'execute', 'key-changed'] });
      assert.equal(onlyB.code, 2);
      const proc = world.process();
      await assert.rejects(planOpened(proc.rt, proc.opened(), { units: ['nope'] }), (e) => e instanceof NylError && e.code === 'NYL-UNIT-UNKNOWN');
      await assert.rejects(
        planOpened(proc.rt, proc.opened(), { units: ['aa'] }),
        (e) => e instanceof NylError && /^did you mean a\? pick units of/.test(e.diagnostics[0].fix),
      );
    } finally {
      world.cleanup();
    }
  });
});

describe('nyl plan: a kind whose driver plans', () => {
  const sha = (value) => `sha256:${createHash('sha256').update(JSON.stringify(value)).digest('hex')}`;

  test("the digest is approvalDigest of the execution key, the driver plan and the receipt it starts from; the summary is the row's changes; the driver only planned", async () => {
    const world = await reconciled({ units: [unit('net')], driver: { plan: true } });
    try {
      await commitSource(world, [unit('net', { version: 'v2' })]);
      world.driver.reset();
      const { report, code } = await plan(world);
      const row = report.units.net;
      assert.deepEqual([row.result, row.action, row.reason], ['execute', 'execute', 'key-changed']);
      assert.equal(row.changes, '+1 ~0 -0');
      const receipt = world.observedDoc('net').receipt;
      const expected = approvalDigest({
        executionKey: row.executionKey,
        changes: sha({ run: ['net', 'v2'] }),
        prior: { run: receipt.run, executionKey: receipt.executionKey },
      });
      assert.equal(row.digest, expected);
      assert.notEqual(row.digest, row.executionKey);
      assert.equal(code, 2);
      assert.deepEqual(
        world.driver.calls.map((c) => c.phase),
        ['plan'],
        'planned once, never applied',
      );
      assert.equal(world.driver.calls[0].uid, receipt.desired.uid, 'planned for its incarnation');
      assert.match(renderPlan(report), /^net \(execute\):\n  digest:  sha256:[0-9a-f]{64}\n  changes: \+1 ~0 -0$/m);
    } finally {
      world.cleanup();
    }
  });

  test('a driver plan that fails or throws is reported on its row and as a warning; no digest; the plan goes on and exits by its rows', async () => {
    // Their plans go wrong only for v2: the first reconcile applies v1.
    const planned = (ctx) => ({ result: 'planned', plan: { digest: sha(ctx.rendering), summary: '+0 ~1 -0', changes: 'some' } });
    const v2 = (ctx) => ctx.rendering.run[1] === 'v2';
    const world = await reconciled({
      units: [unit('bad'), unit('bug'), unit('fine')],
      driver: {
        plan: {
          bad: (ctx) => (v2(ctx) ? failed('the backend is locked') : planned(ctx)),
          bug: (ctx) => {
            if (v2(ctx)) throw new Error('driver bug');
            return planned(ctx);
          },
          default: planned,
        },
      },
    });
    try {
      await commitSource(world, [unit('bad', { version: 'v2' }), unit('bug', { version: 'v2' }), unit('fine', { version: 'v2' })]);
      const { report, code } = await plan(world);
      assert.equal(report.units.bad.digest, undefined);
      assert.match(report.units.bad.detail, /its Command plan failed: the backend is locked/);
      assert.equal(report.units.bug.digest, undefined);
      assert.match(report.units.bug.detail, /the Command driver failed to plan: driver bug/);
      assert.match(report.units.fine.digest, /^sha256:/);
      const warned = report.warnings.filter((w) => w.code === 'NYL-UNIT-FAILED').map((w) => w.units[0]);
      assert.deepEqual(warned, ['bad', 'bug']);
      assert.deepEqual(report.errors, []);
      assert.equal(code, 2, 'the rows decide: they would execute');
    } finally {
      world.cleanup();
    }
  });
});

describe('nyl plan: a kind whose execution key needs its driver (prepare)', () => {
  test('prepared as a run prepares it: a current unit is current (exit 0), a changed one executes; a failed preparation is on its row with its own code', async () => {
    const image = { tag: 'v1' };
    const prepare = (ctx) =>
      image.tag === 'missing'
        ? { ...failed('the image is not present on this machine'), code: 'NYL-IMAGE-UNRESOLVED' }
        : { result: 'prepared', rendering: { ...ctx.rendering, image: `sha256:${image.tag}` } };
    const world = await reconciled({ units: [unit('job')], driver: { prepare } });
    try {
      const quiet = await plan(world);
      assert.deepEqual(rows(quiet.report), { job: ['current', 'current', 'receipt-current'] });
      assert.equal(quiet.code, 0, 'status would say pending; the plan prepares as the run does');

      image.tag = 'v2';
      const moved = await plan(world);
      assert.deepEqual(rows(moved.report), { job: ['execute', 'execute', 'key-changed'] });
      assert.equal(moved.report.units.job.digest, moved.report.units.job.executionKey);
      assert.deepEqual(moved.report.units.job.diff, ['@@ -1,3 +1,3 @@', '-image: sha256:v1', '+image: sha256:v2', ' run:', '   - job']);

      image.tag = 'missing';
      const { report, code } = await plan(world);
      assert.deepEqual(rows(report), { job: ['execute', 'prepare', 'driver-input'] });
      assert.match(report.units.job.detail, /could not resolve what its execution key needs: the image is not present/);
      assert.deepEqual(
        report.warnings.map((w) => w.code),
        ['NYL-IMAGE-UNRESOLVED'],
      );
      assert.equal(code, 2);
      assert.deepEqual(world.counts(), { job: 1 }, 'only the first reconcile applied');
    } finally {
      world.cleanup();
    }
  });
});

describe('nyl plan: an input absent on this machine', () => {
  test('a current unit shows current on its recorded preparation (input-absent, exit 0); a changed one would fail: prepare with NYL-IMAGE-UNRESOLVED', async () => {
    const image = { tag: 'v1' };
    const absent = { result: 'absent', failure: { ...failed('image app:1 is not present locally, and Nyl never pulls one'), code: 'NYL-IMAGE-UNRESOLVED' } };
    const prepare = (ctx) => (image.tag ? { result: 'prepared', rendering: { ...ctx.rendering, image: `sha256:${image.tag}` } } : absent);
    const world = await reconciled({ units: [unit('job')], driver: { prepare } });
    try {
      image.tag = undefined;
      const quiet = await plan(world);
      assert.deepEqual(rows(quiet.report), { job: ['current', 'current', 'input-absent'] });
      assert.match(quiet.report.units.job.detail, /^current on the preparation its desired document recorded \(image app:1 is not present locally/);
      assert.equal(quiet.report.units.job.diff, undefined, 'the recorded rendering: nothing changes');
      assert.deepEqual(quiet.report.warnings, []);
      assert.equal(quiet.code, 0);

      await commitSource(world, [unit('job', { version: 'v2' })]);
      const { report, code } = await plan(world);
      assert.deepEqual(rows(report), { job: ['execute', 'prepare', 'driver-input'] });
      assert.match(report.units.job.detail, /could not resolve what its execution key needs: image app:1 is not present locally/);
      assert.deepEqual(
        report.warnings.map((w) => w.code),
        ['NYL-IMAGE-UNRESOLVED'],
      );
      assert.equal(code, 2);
      assert.deepEqual(world.counts(), { job: 1 }, 'only the first reconcile applied');
    } finally {
      world.cleanup();
    }
  });
});

describe('nyl plan and approvals: the digest it shows is the one a plan-bound approval names', () => {
  const approve = (items) => ({ approval: { approve: items, approveAll: false, approvedBy: [] } });

  test('a unit awaiting approval: the plan shows its digest and the command; --approve U=<that digest> applies exactly that plan', async () => {
    const world = await World.create({ units: [unit('net')], driver: { plan: true } });
    try {
      await world.process('init').run('state init');
      const gated = [unit('net', { version: 'v2', approval: { required: true, requireDigest: true } })];
      await commitSource(world, gated);
      const first = await plan(world);
      assert.deepEqual(rows(first.report), { net: ['awaiting-approval', 'awaiting-approval', 'approval-required'] });
      assert.match(first.report.units.net.digest, /^sha256:[0-9a-f]{64}$/, 'a new incarnation has a digest too: its key with a placeholder uid');
      assert.equal(first.code, 2, JSON.stringify(first.report.errors));
      const created = await world.process('new').run('reconcile', approve([`net=${first.report.units.net.digest}`]));
      assert.equal(created.code, 0, JSON.stringify(created.report.units));
      assert.equal(created.report.units.net.approvedBy?.digest, first.report.units.net.digest, 'the run that mints the uid applies the reviewed plan');

      await world.setUnits([unit('net')]);
      assert.equal((await world.process('first').run('reconcile')).code, 0);
      await commitSource(world, gated);
      world.driver.reset();
      const { report, code } = await plan(world);
      const row = report.units.net;
      assert.deepEqual([row.result, row.reason, row.changes], ['awaiting-approval', 'approval-required', '+1 ~0 -0']);
      assert.match(row.digest, /^sha256:[0-9a-f]{64}$/);
      assert.equal(code, 2, JSON.stringify(report.errors));
      assert.match(renderPlan(report), new RegExp(`^  approve: nyl reconcile -e dev --approve net=${row.digest}$`, 'm'));
      assert.deepEqual(
        world.driver.calls.map((c) => c.phase),
        ['plan'],
      );

      const applied = await world.process('approved').run('reconcile', approve([`net=${row.digest}`]));
      assert.equal(applied.code, 0, JSON.stringify(applied.report.units));
      assert.equal(applied.report.units.net.approvedBy?.digest, row.digest);
      assert.equal(world.counts().net, 1, 'applied once since the reset before the plan');
      assert.equal((await plan(world)).code, 0);
    } finally {
      world.cleanup();
    }
  });
});
