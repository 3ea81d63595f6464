// `nyl state delete --teardown` around its seam (TeardownAll), in process, with fake teardowns on
// an in-memory state repository: what the deletion decides from the teardown's report and from
// the state the teardown left (moved here from test/e2e/state-delete.test.mjs, which keeps the
// real teardowns through the CLI).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NylError, diagnostic } from '../../dist/errors/diagnostic.js';
import { exitCodeOf } from '../../dist/report/exit-code.js';
import { stateDeleteOpened } from '../../dist/commands/state/state-delete.js';
import { renderStateDelete } from '../../dist/commands/state/render-delete.js';
import { toYaml } from '../../dist/state/documents.js';
import { ENV, World } from './world.mjs';

const unit = (name) => ({ name, dependsOn: [] });

/** A teardown's report with one row per unit: {name: result} or {name: [result, {more}]}. */
function teardownReport(rows) {
  const row = ([result, more]) => ({ kind: 'Command', result, detail: '', dispatched: result === 'removed', ...more });
  const units = Object.fromEntries(Object.entries(rows).map(([n, r]) => [n, row(Array.isArray(r) ? r : [r, {}])]));
  return {
    apiVersion: 'nyl.io/v1',
    formatVersion: 1,
    kind: 'ReconcileReport',
    operation: 'teardown',
    environment: ENV,
    run: '0192f0c0-0000-7000-8000-0000000000aa',
    source: 'a'.repeat(40),
    sourceOverride: false,
    committed: true,
    units,
    unitOrder: Object.keys(rows),
    details: {},
    errors: [],
    warnings: [],
    notes: [],
  };
}

/** An environment with two reconciled units: a and b (driver: the fake driver's options). */
async function reconciled(driver = {}) {
  const world = await World.create({ units: [unit('a'), unit('b')], driver });
  const setup = world.process('setup');
  await setup.run('state init');
  assert.equal((await setup.run('reconcile')).code, 0);
  return world;
}

/** Runs state delete --teardown in a new process with `teardown` as its TeardownAll: {report, exit, calls} or {error, exit, calls}. */
async function deleteWith(world, teardown, options = {}) {
  const p = world.process();
  const calls = [];
  try {
    const report = await stateDeleteOpened(
      p.rt,
      p.opened(),
      { teardown: true, allowDependents: false, allowIncomplete: false, reason: 'decommission', ...options },
      async (...args) => {
        calls.push(args[2]);
        return teardown(...args);
      },
    );
    return { report, exit: exitCodeOf(report, report.errors, 'state delete'), calls };
  } catch (error) {
    if (!(error instanceof NylError)) throw error;
    return { error, exit: exitCodeOf(undefined, error.diagnostics ?? [], 'state delete'), calls };
  }
}

/** Deletes the unit files of `units` on both state refs, as a teardown or `state forget` would. */
function dropUnits(world, units) {
  for (const ref of [world.loc.desiredRef, world.loc.observedRef])
    world.edit(ref, Object.fromEntries(units.map((u) => [`units/${u}.yaml`, null])), { message: `test: drop ${units.join(', ')}\n` });
}

const stateStatus = (world) => world.doc(world.loc.desiredRef, 'state.yaml').status;

/** Runs state delete (without --teardown) in a new process: {report, exit} or {error, codes, exit}. */
async function plainDelete(world) {
  const p = world.process();
  try {
    const report = await stateDeleteOpened(
      p.rt,
      p.opened(),
      { teardown: false, allowDependents: false, allowIncomplete: false, reason: 'decommission' },
      async () => assert.fail('no teardown without --teardown'),
    );
    return { report, exit: exitCodeOf(report, report.errors, 'state delete') };
  } catch (error) {
    if (!(error instanceof NylError)) throw error;
    return { error, exit: exitCodeOf(undefined, error.diagnostics ?? [], 'state delete') };
  }
}

const filesOf = (world, ref) => [...world.repo.filesAt(world.refs()[ref]).keys()].sort();

describe('what state delete refuses', () => {
  test('incarnations, teardowns in progress and teardown requests refuse with NYL-STATE-DELETE-INCARNATIONS; held markers and released records do not', async () => {
    const AT = '2026-11-30T12:00:00Z';
    const BY = 'Alice <alice@example.com>';
    const units = ['active', 'held', 'tomb', 'deleting', 'pending', 'requested', 'marker', 'released'];
    const world = await World.create({ units: units.map(unit) });
    try {
      const op = world.process('op');
      await op.run('state init');
      assert.equal((await op.run('hold', { unit: 'marker', reason: 'never ran' })).code, 0);
      assert.equal((await op.run('reconcile')).code, 2, 'marker is held');
      assert.equal((await op.run('hold', { unit: 'held', reason: 'keep it' })).code, 0);
      const deletion = { cause: 'source', policy: 'Teardown', since: AT };
      const D = world.loc.desiredRef;
      const O = world.loc.observedRef;
      const desired = (n) => world.doc(D, `units/${n}.yaml`);
      world.edit(D, {
        'units/tomb.yaml': toYaml({ ...desired('tomb'), lifecycle: { state: 'retained' } }),
        'units/deleting.yaml': toYaml({ ...desired('deleting'), lifecycle: { state: 'deleting' }, deletion }),
        'units/pending.yaml': toYaml({ ...desired('pending'), lifecycle: { state: 'pending-teardown' }, deletion }),
        'units/requested.yaml': toYaml({ ...desired('requested'), teardownRequest: { by: BY, at: AT } }),
        'units/released.yaml': null, // released: dropped from the desired ref
      });
      const released = world.doc(O, 'units/released.yaml');
      world.edit(O, { 'units/released.yaml': toYaml({ ...released, released: { at: AT, run: released.receipt.run, by: BY } }) });
      const before = world.refs();

      const r = await plainDelete(world);
      assert.equal(r.exit, 1);
      const errors = r.report?.errors ?? r.error.diagnostics;
      assert.deepEqual(
        errors.map((d) => d.code),
        ['NYL-STATE-DELETE-INCARNATIONS'],
      );
      const [d] = errors;
      assert.deepEqual(d.units, ['active', 'deleting', 'held', 'pending', 'requested', 'tomb']);
      for (const listed of [
        'active (active)',
        'deleting (deleting)',
        'held (held)',
        'pending (pending-teardown)',
        'requested (teardown requested)',
        'tomb (retained)',
      ])
        assert.ok(d.message.includes(listed), d.message);
      assert.match(d.fix, /--teardown/);
      // Every command of the fix runs as printed: no <unit> left in it, forget only where it applies.
      assert.match(d.fix, /`nyl teardown -e dev --unit active,deleting,held,pending,requested,tomb`/);
      assert.match(
        d.fix,
        /`nyl state forget -e dev --unit pending --reason "<why>"`, `nyl state forget -e dev --unit requested --reason "<why>"`, `nyl state forget -e dev --unit tomb --reason "<why>"`$/,
      );
      assert.doesNotMatch(d.fix, /<unit>/);
      assert.deepEqual(world.refs(), before, 'nothing changed, no lease left');

      // Once only the held marker and the released record are left, the deletion removes them.
      dropUnits(world, ['active', 'deleting', 'held', 'pending', 'requested', 'tomb']);
      assert.deepEqual(filesOf(world, D), ['state.yaml', 'units/marker.yaml']);
      assert.deepEqual(filesOf(world, O), ['state.yaml', 'units/released.yaml']);
      const done = await plainDelete(world);
      assert.equal(done.exit, 0, JSON.stringify(done.report?.errors ?? done.error?.message));
      assert.deepEqual(done.report.details.removed, ['marker', 'released']);
      assert.deepEqual(filesOf(world, D), ['state.yaml']);
      assert.deepEqual(filesOf(world, O), ['state.yaml']);
    } finally {
      world.cleanup();
    }
  });
});

describe('a deleted state', () => {
  test('every later command that reads the state refuses NYL-STATE-DELETED and writes nothing; lease break still works; state init --fresh starts over', async () => {
    const world = await World.create({ units: [unit('migrate')] });
    try {
      const op = world.process('op');
      await op.run('state init');
      assert.equal((await op.run('hold', { unit: 'migrate', reason: 'not yet' })).code, 0, 'a held marker: no incarnation');
      const deleted = await plainDelete(world);
      assert.equal(deleted.exit, 0, JSON.stringify(deleted.report?.errors ?? deleted.error?.message));
      assert.deepEqual(deleted.report.details.removed, ['migrate']);
      const refs = world.refs();

      const again = await plainDelete(world);
      assert.equal(again.exit, 1);
      assert.deepEqual(
        (again.report?.errors ?? again.error.diagnostics).map((d) => d.code),
        ['NYL-STATE-DELETED'],
      );
      const later = [
        ['reconcile', {}],
        ['hold', { unit: 'migrate', reason: 'r' }],
        ['resume', { unit: 'migrate', reason: 'r' }],
        ['recover', { unit: 'migrate', retry: true, reason: 'r' }],
        ['state init', {}],
      ];
      for (const [operation, options] of later) {
        const r = await world.process(operation).run(operation, options);
        assert.equal(r.code, 1, operation);
        assert.deepEqual(r.codes ?? r.report.errors.map((d) => d.code), ['NYL-STATE-DELETED'], operation);
      }
      assert.deepEqual(world.refs(), refs, 'nothing written');

      // lease break still works there (recover -e can then clear a dead holder), here with nothing to break.
      const breakIt = await op.run('lease break', { reason: 'r' });
      assert.equal(breakIt.code, 0);
      assert.equal(breakIt.report.result, 'unchanged');
      assert.deepEqual(world.refs(), refs);

      const fresh = await op.run('state init', { fresh: true, reason: 'again' });
      assert.equal(fresh.code, 0, JSON.stringify(fresh.codes ?? fresh.report.errors));
      assert.deepEqual(fresh.report.details.state, { generation: 2, status: 'active', fresh: true });
      const rec = await op.run('reconcile');
      assert.equal(rec.code, 0, JSON.stringify(rec.codes ?? rec.report.units));
      assert.equal(rec.report.units.migrate.result, 'executed', 'the held marker went with the deletion');
    } finally {
      world.cleanup();
    }
  });
});

/** state delete in `proc`: settles like Proc.start's outcome ({died: true} when the process died first). */
function deleteIn(proc) {
  const done = stateDeleteOpened(proc.rt, proc.opened(), { teardown: false, allowDependents: false, allowIncomplete: false, reason: 'x' }, async () =>
    assert.fail('no teardown'),
  );
  return Promise.race([done, proc.died.then(() => ({ died: true }))]);
}

const allCodes = (r) => (r.report ? [...r.report.errors, ...r.report.warnings, ...r.report.notes] : r.error.diagnostics).map((d) => d.code);

describe('leases', () => {
  test('a state delete killed after taking the lease: the lease is waited for, once broken it is NYL-LEASE-BROKEN until recover records the break', async () => {
    const world = await World.create({ units: [unit('migrate')] });
    try {
      await world.process('init').run('state init');
      const victim = world.process('victim').crashAt('lease-acquired');
      assert.ok((await deleteIn(victim)).died, 'killed with the lease taken');
      const held = await plainDelete(world);
      assert.equal(held.exit, 2);
      assert.deepEqual(allCodes(held), ['NYL-LEASE-HELD']);
      const op = world.process('op');
      assert.equal((await op.run('lease break', { reason: 'killed' })).code, 0);
      const broken = await plainDelete(world);
      assert.equal(broken.exit, 2);
      assert.deepEqual(allCodes(broken), ['NYL-LEASE-BROKEN']);
      const recovered = await op.run('recover', { reason: 'killed' });
      assert.equal(recovered.code, 0);
      assert.equal(recovered.report.details.leaseBroken.operation, 'state-delete');
      const done = await plainDelete(world);
      assert.equal(done.exit, 0, JSON.stringify(allCodes(done)));
      assert.equal(done.report.result, 'done');
      assert.equal(world.refs()[world.leaseRef], undefined);
    } finally {
      world.cleanup();
    }
  });

  test('a deleted location with a broken lease: recover records the break and releases the lease, so state init --fresh runs', async () => {
    const world = await World.create({ units: [unit('migrate')] });
    try {
      await world.process('init').run('state init');
      assert.equal((await plainDelete(world)).exit, 0);
      const victim = world.process('victim').crashAt('lease-acquired');
      assert.ok((await victim.start('state init', { fresh: true }).outcome).died, 'killed with the lease taken');
      const op = world.process('op');
      assert.equal((await op.run('lease break', { reason: 'killed' })).code, 0);
      const refused = await world.process('fresh1').run('state init', { fresh: true });
      assert.equal(refused.code, 2);
      assert.deepEqual(refused.codes ?? allCodes(refused), ['NYL-LEASE-BROKEN']);
      const D = world.loc.desiredRef;
      const [deleted] = world.repo.commitsOf(D);
      const r = await op.run('recover', { reason: 'killed' });
      assert.equal(r.code, 0);
      assert.deepEqual(allCodes(r), ['NYL-STATE-DELETED']);
      assert.equal(r.report.errors.length, 0, 'a warning');
      const [top] = world.repo.commitsOf(D);
      assert.deepEqual(top.parents, [deleted.oid]);
      assert.equal(top.tree, deleted.tree, 'an unchanged commit records the break');
      assert.equal(world.refs()[world.leaseRef], undefined);
      const fresh = await world.process('fresh2').run('state init', { fresh: true });
      assert.equal(fresh.code, 0, JSON.stringify(fresh.codes ?? allCodes(fresh)));
      assert.equal(fresh.report.details.state.status, 'active');
    } finally {
      world.cleanup();
    }
  });
});

describe('state delete --teardown around its seam (in process, fake teardowns)', () => {
  test('every remaining unit waits: exit 2, nothing deleted, the teardown report under details.teardown; running it again resumes', async () => {
    const world = await reconciled();
    try {
      const before = world.refs();
      const waiting = await deleteWith(world, async () => teardownReport({ a: 'removed', b: ['held', { uid: '0192f0c0-0000-7000-8000-0000000000bb' }] }), {
        waitMs: 1000,
        allowDependents: true,
      });
      assert.equal(waiting.exit, 2);
      assert.equal(waiting.report.result, 'refused');
      assert.deepEqual(
        waiting.report.errors.map((d) => d.code),
        ['NYL-STATE-DELETE-WAITING'],
      );
      assert.deepEqual(waiting.report.errors[0].units, ['b']);
      assert.equal(waiting.report.details.teardown.operation, 'teardown');
      assert.deepEqual(waiting.calls, [{ allowDependents: true, allowIncomplete: false, reason: 'decommission', waitMs: 1000 }]);
      assert.deepEqual(world.refs(), before, 'nothing deleted');

      // The next run's teardown finishes the job (here by hand, as a teardown would): the deletion follows in the same command.
      const done = await deleteWith(world, async () => {
        dropUnits(world, ['a', 'b']);
        return teardownReport({ a: 'removed', b: 'removed' });
      });
      assert.equal(done.exit, 0, JSON.stringify(done.report?.errors ?? done.error?.message));
      assert.equal(done.report.result, 'done');
      assert.deepEqual(done.report.details.removed, ['a', 'b'], 'what the teardown removed counts as removed');
      assert.deepEqual(Object.keys(done.report.details.teardown.units), ['a', 'b']);
      assert.equal(stateStatus(world), 'deleted');
    } finally {
      world.cleanup();
    }
  });

  test('a teardown that failed or is uncertain: exit 1, its findings kept; a retained unit the report calls done is refused by the state', async () => {
    const world = await reconciled();
    try {
      let findings;
      const failed = await deleteWith(world, async () => {
        findings = world.edit(world.loc.observedRef, {}, { message: 'test: the teardown records its findings\n' });
        return teardownReport({ a: 'removed', b: 'failed' });
      });
      assert.equal(failed.exit, 1);
      assert.deepEqual(
        failed.report.errors.map((d) => d.code),
        ['NYL-STATE-DELETE-INCARNATIONS'],
      );
      assert.deepEqual(failed.report.errors[0].units, ['b']);
      assert.match(failed.report.errors[0].fix, /`nyl recover -e dev --unit b --retry --reason "<why>"`/);
      assert.equal(world.refs()[world.loc.observedRef], findings, "the teardown's commit stays");
      assert.equal(stateStatus(world), 'active');

      world.edit(world.loc.desiredRef, { 'units/a.yaml': toYaml({ ...world.doc(world.loc.desiredRef, 'units/a.yaml'), lifecycle: { state: 'retained' } }) });
      dropUnits(world, ['b']);
      const retained = await deleteWith(world, async () => teardownReport({ a: 'retained' }));
      assert.equal(retained.exit, 1);
      assert.equal(retained.report.result, 'refused');
      assert.deepEqual(
        retained.report.errors.map((d) => d.code),
        ['NYL-STATE-DELETE-INCARNATIONS'],
      );
      assert.deepEqual(retained.report.errors[0].units, ['a']);
      assert.deepEqual(Object.keys(retained.report.details.teardown.units), ['a'], "the refusal keeps the teardown's report");
    } finally {
      world.cleanup();
    }
  });

  test('a teardown that refuses propagates its refusal; a broken lease is refused before the teardown runs', async () => {
    const world = await reconciled();
    try {
      const held = await deleteWith(world, async () => {
        throw new NylError(diagnostic('NYL-LEASE-HELD', 'error', 'held', { env: ENV }));
      });
      assert.equal(held.exit, 2);
      assert.deepEqual(
        held.error.diagnostics.map((d) => d.code),
        ['NYL-LEASE-HELD'],
      );

      // A hold killed with the lease taken, its lease broken: the lease is broken, not yet imported.
      const killed = world.process('killed').crashAt('lease-acquired');
      assert.ok((await killed.start('hold', { unit: 'a', reason: 'x' }).outcome).died);
      assert.equal((await world.process('operator').run('lease break', { reason: 'killed' })).code, 0);
      const broken = await deleteWith(world, async () => teardownReport({ a: 'removed', b: 'removed' }));
      assert.equal(broken.exit, 2);
      assert.deepEqual(
        broken.error.diagnostics.map((d) => d.code),
        ['NYL-LEASE-BROKEN'],
      );
      assert.deepEqual(broken.calls, [], 'the teardown never ran');
    } finally {
      world.cleanup();
    }
  });
});

describe('state delete --teardown of units whose driver cannot claim their removal', () => {
  const unclaimed = { removalUnclaimed: () => 'declares no teardown: action' };

  test('refused before anything is torn down, with one error naming the units and a fix that adds --allow-incomplete', async () => {
    const world = await reconciled(unclaimed);
    try {
      const before = world.refs();
      const r = await deleteWith(world, async () => assert.fail('nothing is torn down'), { allowDependents: true });
      assert.equal(r.exit, 1, JSON.stringify(r.error?.diagnostics ?? r.report?.errors));
      assert.deepEqual(
        r.error.diagnostics.map((d) => d.code),
        ['NYL-STATE-DELETE-INCOMPLETE'],
      );
      assert.deepEqual(r.error.diagnostics[0].units, ['a', 'b']);
      assert.match(r.error.diagnostics[0].message, /a, b/);
      assert.match(r.error.diagnostics[0].fix, /`nyl state delete -e dev --teardown --allow-dependents --allow-incomplete --reason "<why>"`/);
      assert.doesNotMatch(r.error.diagnostics[0].fix, /<unit>/);
      assert.deepEqual(r.calls, []);
      assert.deepEqual(world.refs(), before, 'nothing written');
    } finally {
      world.cleanup();
    }
  });

  test('a held unit is not refused up front: the deletion waits for it (spec: exit 2), whatever its driver can claim', async () => {
    const world = await reconciled(unclaimed);
    try {
      for (const u of ['a', 'b']) assert.equal((await world.process('op').run('hold', { unit: u, reason: 'incident' })).code, 0);
      const r = await deleteWith(world, async () => teardownReport({ a: 'held', b: 'held' }));
      assert.notDeepEqual(
        (r.error?.diagnostics ?? r.report?.errors ?? []).map((d) => d.code),
        ['NYL-STATE-DELETE-INCOMPLETE'],
      );
      assert.equal(r.calls.length, 1, 'the teardown ran (it waits for the held units)');
    } finally {
      world.cleanup();
    }
  });

  test('with --allow-incomplete: one summary warning naming the units instead of one per unit, and what the teardown removed counted', async () => {
    const world = await reconciled(unclaimed);
    try {
      const perUnit = (u) =>
        diagnostic('NYL-TEARDOWN-INCOMPLETE', 'warning', `${u} was removed from state without a claim of removal`, {
          env: ENV,
          unit: u,
          units: [u],
          removed: true,
        });
      const done = await deleteWith(
        world,
        async () => {
          dropUnits(world, ['a', 'b']);
          const report = teardownReport({ a: ['removed', { incomplete: true }], b: ['removed', { incomplete: true }] });
          report.warnings.push(perUnit('a'), perUnit('b'));
          return report;
        },
        { allowIncomplete: true },
      );
      assert.equal(done.exit, 0, JSON.stringify(done.report?.errors ?? done.error?.message));
      assert.deepEqual(done.report.details.removed, ['a', 'b']);
      const incomplete = done.report.warnings.filter((w) => w.code === 'NYL-TEARDOWN-INCOMPLETE');
      assert.equal(incomplete.length, 1, JSON.stringify(incomplete));
      assert.deepEqual(
        done.report.details.teardown.warnings.filter((w) => w.code === 'NYL-TEARDOWN-INCOMPLETE').flatMap((w) => w.units),
        ['a', 'b'],
        "the teardown's own report stays as the teardown wrote it",
      );
      const text = renderStateDelete(done.report);
      assert.equal(text.match(/NYL-TEARDOWN-INCOMPLETE/g)?.length, 1, text);
      assert.deepEqual(incomplete[0].units, ['a', 'b']);
      assert.doesNotMatch(incomplete[0].fix, /<unit>/);
      assert.match(incomplete[0].fix, /a, b/);
    } finally {
      world.cleanup();
    }
  });
});
