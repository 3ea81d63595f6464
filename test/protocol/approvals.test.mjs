// Approvals and drift repair, in process: the planner's awaiting-approval and drifted decisions,
// --approve in its desired-bound and plan-bound forms, --approve-all and requireDigest, the
// refusals before anything runs, what a consumed approval records, drift repaired or waiting
// under each combination of recovery and driftRepair, --reapply, and --fail-fast at an approval
// wait. Drift is written into the observed document the way `nyl verify` records it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { toYaml } from '../../dist/state/documents.js';
import { commitBody } from '../support/commit-evidence.mjs';
import { World } from './world.mjs';

const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });
const approve = (items, extra = {}) => ({ approval: { approve: items, approveAll: false, approvedBy: [], ...extra } });

/** The body of the latest commit of a ref. */
function lastBody(world, ref) {
  return commitBody(world.repo.commitsOf(ref)[0].message);
}

/** Records a drift observation of the unit's receipt, as `nyl verify` would. */
function drift(world, name, status = 'drifted') {
  const doc = world.observedDoc(name);
  const observation = { status, observedAt: '2026-11-30T12:30:00Z', run: 'verify-run', receipt: doc.receipt.run, detail: 'a marker was removed' };
  world.edit(world.loc.observedRef, { [`units/${name}.yaml`]: toYaml({ ...doc, drift: observation }) });
  return observation;
}

async function initAndRun(world) {
  await world.process('init').run('state init');
  return world.process('first').run('reconcile');
}

describe('approval.required', () => {
  test('a unit waits (exit 2, dependents blocked, nothing written) until --approve; the approval is recorded and consumed', async () => {
    const world = await World.create({
      units: [unit('gate', { approval: { required: true } }), unit('after', { dependsOn: ['gate'] }), unit('free', { recovery: 'converge' })],
    });
    try {
      const first = await initAndRun(world);
      assert.equal(first.code, 2, JSON.stringify(first.report.units));
      assert.equal(first.report.units.gate.result, 'awaiting-approval');
      assert.equal(first.report.units.gate.approval.reason, 'approval-required');
      const key = first.report.units.gate.approval.digest;
      assert.match(key, /^sha256:[0-9a-f]{64}$/, 'a Command is approved by its execution key');
      assert.equal(first.report.units.after.result, 'blocked');
      assert.equal(first.report.units.free.result, 'executed', 'the rest of the run goes on');
      const warning = first.report.warnings.find((w) => w.code === 'NYL-UNIT-AWAITING-APPROVAL');
      assert.match(warning.fix, /`nyl reconcile -e dev --approve gate`/);
      assert.deepEqual(world.counts(), { gate: 0, after: 0, free: 1 });

      const before = world.stateRefs();
      const again = await world.process('again').run('reconcile');
      assert.equal(again.code, 2);
      assert.equal(again.report.run, undefined, 'only an approval wait: no lease taken, nothing written');
      assert.equal(again.report.units.gate.approval.digest, key, 'a unit without an incarnation has a key to approve that a later run still has');
      assert.deepEqual(world.stateRefs(), before);

      const approved = await world.process('approver').run('reconcile', approve(['gate']));
      assert.equal(approved.code, 0, JSON.stringify(approved.report.units));
      assert.deepEqual(world.counts(), { gate: 1, after: 1, free: 1 });
      const row = approved.report.units.gate;
      assert.deepEqual(row.approvedBy.by, ['Alice <alice@example.com>']);
      assert.equal(row.approvedBy.source, 'git');
      assert.equal(row.approvedBy.executionKey, row.executionKey);
      const body = lastBody(world, world.loc.observedRef);
      assert.equal(body.units.gate.result, 'executed');
      assert.deepEqual(body.units.gate.approval, row.approvedBy);
      assert.equal(body.units.after, 'executed');
      assert.deepEqual(world.desiredDoc('gate').approvals, [row.approvedBy]);

      assert.equal((await world.process('quiet').run('reconcile')).code, 0, 'current: no approval needed');
      await world.setUnits([
        unit('gate', { approval: { required: true }, version: 'v2' }),
        unit('after', { dependsOn: ['gate'] }),
        unit('free', { recovery: 'converge' }),
      ]);
      const changed = await world.process('changed').run('reconcile');
      assert.equal(changed.code, 2, 'a changed source needs a new approval: the last one was consumed');
      assert.equal(changed.report.units.gate.result, 'awaiting-approval');
    } finally {
      world.cleanup();
    }
  });

  test('who approves: --approved-by is recorded as asserted; else the CI user', async () => {
    const world = await World.create({ units: [unit('gate', { approval: { required: true } })], processEnv: { GITHUB_ACTOR: 'octocat' } });
    try {
      await world.process('init').run('state init');
      const ci = await world.process('ci').run('reconcile', approve(['gate']));
      assert.deepEqual({ by: ci.report.units.gate.approvedBy.by, source: ci.report.units.gate.approvedBy.source }, { by: ['octocat'], source: 'github' });
      await world.setUnits([unit('gate', { approval: { required: true }, version: 'v2' })]);
      const asserted = await world.process('cab').run('reconcile', approve(['gate'], { approvedBy: ['alice', 'bob'], approvalSource: 'change-board' }));
      const record = asserted.report.units.gate.approvedBy;
      assert.deepEqual({ by: record.by, source: record.source, asserted: record.asserted }, { by: ['alice', 'bob'], source: 'change-board', asserted: true });
    } finally {
      world.cleanup();
    }
  });
});

describe('approvals that cannot mean anything are refused before anything runs', () => {
  const cases = [
    ['an unknown unit', approve(['nosuch']), 'NYL-UNIT-UNKNOWN'],
    ['a unit --unit excludes', { units: ['free'], ...approve(['gate']) }, 'NYL-APPROVAL-INVALID'],
    ['a unit that needs none', approve(['free']), 'NYL-APPROVAL-INVALID'],
    ['the desired-bound form for requireDigest', approve(['strict']), 'NYL-APPROVAL-INVALID'],
    ['a malformed digest', approve(['gate=sha256:zz']), 'NYL-USAGE'],
  ];
  for (const [what, options, code] of cases) {
    test(what, async () => {
      const world = await World.create({
        units: [
          unit('gate', { approval: { required: true } }),
          unit('strict', { approval: { required: true, requireDigest: true } }),
          unit('free', { recovery: 'converge' }),
        ],
      });
      try {
        await world.process('init').run('state init');
        const before = world.refs();
        const r = await world.process('bad').run('reconcile', options);
        assert.equal(r.code, 1);
        assert.deepEqual(r.codes, [code]);
        assert.deepEqual(world.refs(), before, 'nothing written');
        assert.deepEqual(world.counts(), { gate: 0, strict: 0, free: 0 });
      } finally {
        world.cleanup();
      }
    });
  }
});

describe('plan-bound approvals', () => {
  test('requireDigest: --approve-all leaves it waiting, a wrong digest applies nothing, the execution key applies it', async () => {
    const world = await World.create({
      units: [unit('strict', { approval: { required: true, requireDigest: true } }), unit('other', { approval: { required: true } })],
    });
    try {
      await world.process('init').run('state init');
      const all = await world.process('all').run('reconcile', { approval: { approve: [], approveAll: true, approvedBy: [] } });
      assert.equal(all.code, 2);
      assert.equal(all.report.units.strict.result, 'awaiting-approval');
      assert.equal(all.report.units.other.result, 'executed');
      assert.equal(all.report.units.other.approvedBy.executionKey, all.report.units.other.executionKey);
      const key = all.report.units.strict.approval.digest;
      assert.match(all.report.warnings.find((w) => w.code === 'NYL-UNIT-AWAITING-APPROVAL').fix, new RegExp(`--approve strict=${key}`));

      const wrong = await world.process('wrong').run('reconcile', approve([`strict=sha256:${'0'.repeat(64)}`]));
      assert.equal(wrong.code, 2);
      assert.equal(wrong.report.units.strict.approval.reason, 'digest-mismatch');
      assert.ok(wrong.report.warnings.some((w) => w.code === 'NYL-APPROVAL-DIGEST-MISMATCH'));
      assert.equal(world.counts().strict, 0);

      const right = await world.process('right').run('reconcile', approve([`strict=${key}`]));
      assert.equal(right.code, 0, JSON.stringify(right.report.units));
      assert.equal(right.report.units.strict.approvedBy.digest, key);
      assert.equal(lastBody(world, world.loc.observedRef).units.strict.approval.digest, key);
    } finally {
      world.cleanup();
    }
  });

  test('a planning kind: the run plans, applies only a plan with the approved digest, and names the digest it planned otherwise', async () => {
    const world = await World.create({ units: [unit('net', { approval: { required: true, requireDigest: true } })], driver: { plan: true } });
    try {
      await world.process('init').run('state init');
      const waiting = await world.process('look').run('reconcile');
      assert.equal(waiting.report.units.net.result, 'awaiting-approval');
      assert.equal(waiting.report.units.net.approval.digest, undefined, 'a planning kind has no digest before it plans');

      const wrong = await world.process('wrong').run('reconcile', approve([`net=sha256:${'1'.repeat(64)}`]));
      assert.equal(wrong.code, 2, JSON.stringify(wrong.report.units));
      assert.equal(world.driver.callsOf('net', 'plan').length, 1, 'it planned');
      assert.equal(world.counts().net, 0, 'and applied nothing');
      const planned = wrong.report.units.net.approval.digest;
      assert.match(planned, /^sha256:[0-9a-f]{64}$/);
      assert.notEqual(planned, world.driver.callsOf('net', 'plan')[0].outcome.plan.digest, "the digest binds more than the tool's changes");
      assert.ok(wrong.report.warnings.some((w) => w.code === 'NYL-APPROVAL-DIGEST-MISMATCH' && w.fix.includes(`--approve net=${planned}`)));

      const right = await world.process('right').run('reconcile', approve([`net=${planned}`]));
      assert.equal(right.code, 0, JSON.stringify(right.report.units));
      assert.equal(world.counts().net, 1);
      assert.equal(right.report.units.net.approvedBy.digest, planned);
    } finally {
      world.cleanup();
    }
  });
});

describe('drift repair', () => {
  test('recovery converge under driftRepair converge: the next reconcile repairs it (driftRepaired) and the observation joins the history', async () => {
    const world = await World.create({ units: [unit('u', { recovery: 'converge' }), unit('v', { recovery: 'converge' })] });
    try {
      await initAndRun(world);
      const observation = drift(world, 'u');
      const status = await world.process('look').run('status');
      assert.equal(status.report.units.u.state, 'drifted');
      assert.equal(status.report.units.u.drift.status, 'drifted');
      const r = await world.process('repair').run('reconcile');
      assert.equal(r.code, 0, JSON.stringify(r.report.units));
      assert.deepEqual(world.counts(), { u: 2, v: 1 });
      assert.deepEqual(r.report.details.driftRepaired, ['u']);
      assert.deepEqual(lastBody(world, world.loc.observedRef).driftRepaired, ['u']);
      const doc = world.observedDoc('u');
      assert.equal(doc.drift, undefined, 'the new receipt has no observation yet');
      assert.deepEqual(doc.driftHistory, [observation]);
    } finally {
      world.cleanup();
    }
  });

  test('recovery manual under driftRepair converge: awaiting-approval while the rest runs; --approve repairs it', async () => {
    const world = await World.create({ units: [unit('db', { recovery: 'manual' }), unit('app', { recovery: 'converge' })] });
    try {
      await initAndRun(world);
      drift(world, 'db');
      await world.setUnits([unit('db', { recovery: 'manual' }), unit('app', { recovery: 'converge', version: 'v2' })]);
      const r = await world.process('run').run('reconcile');
      assert.equal(r.code, 2);
      assert.equal(r.report.units.db.result, 'awaiting-approval');
      assert.equal(r.report.units.db.approval.reason, 'manual-drift-repair');
      assert.equal(r.report.units.app.result, 'executed');
      const status = await world.process('look').run('status');
      assert.equal(status.report.units.db.state, 'awaiting-approval');
      assert.equal(status.report.units.db.receipt, 'current');
      const repaired = await world.process('ok').run('reconcile', approve(['db']));
      assert.equal(repaired.code, 0);
      assert.deepEqual(repaired.report.details.driftRepaired, ['db']);
      assert.equal(world.counts().db, 2);
    } finally {
      world.cleanup();
    }
  });

  test('driftRepair manual: the unit stays drifted (exit 2) until --reapply --unit names it', async () => {
    const world = await World.create({ units: [unit('u', { recovery: 'converge' })], driftRepair: 'manual' });
    try {
      await initAndRun(world);
      drift(world, 'u');
      const r = await world.process('run').run('reconcile');
      assert.equal(r.code, 2);
      assert.equal(r.report.units.u.result, 'drifted');
      assert.ok(r.report.warnings.some((w) => w.code === 'NYL-UNIT-DRIFTED'));
      assert.equal(world.counts().u, 1);
      const again = await world.process('re').run('reconcile', { units: ['u'], reapply: true, reason: 'repair drift' });
      assert.equal(again.code, 0, JSON.stringify(again.report.units));
      assert.deepEqual(again.report.details.reapplied, ['u']);
      assert.deepEqual(lastBody(world, world.loc.observedRef).reapplied, ['u']);
      assert.equal(world.counts().u, 2);
    } finally {
      world.cleanup();
    }
  });

  test('driftRepair manual and recovery manual: drifted until --reapply, which then awaits approval too', async () => {
    const world = await World.create({ units: [unit('db', { recovery: 'manual' })], driftRepair: 'manual' });
    try {
      await initAndRun(world);
      drift(world, 'db');
      const r = await world.process('run').run('reconcile');
      assert.equal(r.code, 2);
      assert.equal(r.report.units.db.result, 'drifted');
      const reapply = { units: ['db'], reapply: true, reason: 'repair drift' };
      const waiting = await world.process('re').run('reconcile', reapply);
      assert.equal(waiting.code, 2);
      assert.equal(waiting.report.units.db.approval.reason, 'manual-reapply');
      const done = await world.process('ok').run('reconcile', { ...reapply, ...approve(['db']) });
      assert.equal(done.code, 0);
      assert.deepEqual(done.report.details.reapplied, ['db']);
      assert.equal(world.counts().db, 2);
    } finally {
      world.cleanup();
    }
  });

  test('an observation of an earlier receipt says nothing about the current one', async () => {
    const world = await World.create({ units: [unit('u', { recovery: 'converge' })] });
    try {
      await initAndRun(world);
      const doc = world.observedDoc('u');
      world.edit(world.loc.observedRef, {
        'units/u.yaml': toYaml({ ...doc, drift: { status: 'drifted', observedAt: '2026-11-30T12:30:00Z', run: 'verify-run', receipt: 'an-older-run' } }),
      });
      assert.equal((await world.process('run').run('reconcile')).code, 0);
      assert.equal(world.counts().u, 1);
    } finally {
      world.cleanup();
    }
  });
});

describe('--reapply and --fail-fast', () => {
  test('--reapply of a unit that is not safe to re-run awaits approval, and runs with --approve', async () => {
    const world = await World.create({ units: [unit('db', { recovery: 'manual' })] });
    try {
      await initAndRun(world);
      const waiting = await world.process('re').run('reconcile', { units: ['db'], reapply: true, reason: 'rotate' });
      assert.equal(waiting.code, 2);
      assert.equal(waiting.report.units.db.approval.reason, 'manual-reapply');
      assert.match(waiting.report.warnings.find((w) => w.code === 'NYL-UNIT-AWAITING-APPROVAL').fix, /--unit db --reapply --reason "<why>" --approve db/);
      const done = await world.process('ok').run('reconcile', { units: ['db'], reapply: true, reason: 'rotate', ...approve(['db']) });
      assert.equal(done.code, 0);
      assert.equal(world.counts().db, 2);
    } finally {
      world.cleanup();
    }
  });

  test('--fail-fast stops at an approval wait: nothing else starts (NYL-RUN-STOPPED)', async () => {
    const world = await World.create({ units: [unit('gate', { approval: { required: true } }), unit('other', { recovery: 'converge' })] });
    try {
      await world.process('init').run('state init');
      const r = await world.process('ff').run('reconcile', { failFast: true });
      assert.equal(r.code, 2, JSON.stringify(r.report.units));
      assert.ok(r.report.warnings.some((w) => w.code === 'NYL-RUN-STOPPED'));
      assert.equal(r.report.units.other.result, 'blocked');
      assert.deepEqual(world.counts(), { gate: 0, other: 0 });
    } finally {
      world.cleanup();
    }
  });
});

describe('--local', () => {
  test('a unit that is not safe to run again executes in a --local run only with an approval; a converging one needs none', async () => {
    const { planEnvironment } = await import('../../dist/plan/planner.js');
    const world = await World.create({ units: [unit('db', { recovery: 'manual' }), unit('app', { recovery: 'converge' })] });
    try {
      const input = (run) => ({
        project: world.project,
        env: world.env,
        generation: 1,
        desired: new Map(),
        observed: new Map(),
        sourceCommit: world.sourceCommit,
        drivers: world.drivers,
        newUids: new Map([
          ['db', 'u-db'],
          ['app', 'u-app'],
        ]),
        run: { runId: 'r', ...run },
      });
      const local = planEnvironment(input({ local: true }));
      assert.deepEqual([local.units.get('db').action.type, local.units.get('db').action.reason], ['awaiting-approval', 'manual-local']);
      assert.equal(local.units.get('app').action.type, 'execute');
      assert.equal(planEnvironment(input({})).units.get('db').action.type, 'execute', 'online, the lease guards it');
      const approved = planEnvironment(input({ local: true, approvals: { units: new Map([['db', {}]]), all: false } }));
      assert.equal(approved.units.get('db').action.type, 'execute');
      assert.equal(approved.units.get('db').action.approval.form, 'desired');
    } finally {
      world.cleanup();
    }
  });
});
