// Damaged state, in process: a state document, run record, signal or lease that is not what Nyl
// wrote (invalid YAML, the wrong shape, not a commit) is NYL-STATE-CORRUPT naming the ref, the
// path and the line; nothing is decided on it and nothing runs. `nyl lease break` breaks a damaged
// lease, and `nyl recover -e dev --reason` sets every other damage aside in one transition commit:
// affected units become uncertain (a manual unit never runs again by itself), the damaged content
// stays in history, and the environment goes on.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newLeaseRecord, serializeLease } from '../../dist/lease/record.js';
import { unitFile } from '../../dist/state/run-record.js';
import { commitBody } from '../support/commit-evidence.mjs';
import { ENV, World } from './world.mjs';
import { Journal } from './invariants.mjs';

const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });
const DESIRED = `refs/heads/nyl/${ENV}/desired`;
const OBSERVED = `refs/heads/nyl/${ENV}/observed`;
const DAMAGED = `refs/nyl/${ENV}/damaged/`;
const REASON = { reason: 'a hand edit broke it' };

/** m (manual, the default) and c (converge), both executed once. */
async function reconciled(options = {}) {
  const world = await World.create({ units: [unit('m'), unit('c', { recovery: 'converge' })], ...options });
  await world.process('init').run('state init');
  const first = await world.process('first').run('reconcile');
  assert.equal(first.code, 0);
  return world;
}

/** The one NYL-STATE-CORRUPT refusal of an outcome. */
function corrupt(outcome) {
  assert.deepEqual(outcome.codes, ['NYL-STATE-CORRUPT'], JSON.stringify(outcome.report ?? outcome.error?.diagnostics));
  assert.equal(outcome.code, 1);
  return outcome.error.diagnostics[0];
}

/** Its line: a YAML syntax error is named by the line of the file it is on. */
function lineCount(text) {
  return text.split('\n').length;
}

describe('damaged state documents', () => {
  test('invalid YAML in a desired unit document: named by ref, path and line; recover marks the unit uncertain, and a manual unit never runs again by itself', async () => {
    const world = await reconciled();
    try {
      const uid = world.desiredDoc('m').uid;
      const good = world.text(DESIRED, 'units/m.yaml');
      // A duplicate key: Nyl never writes one, and a reader must not take either value.
      const damaged = world.edit(DESIRED, { 'units/m.yaml': `${good}kind: Command\n` });
      const refs = world.refs();

      const d = corrupt(await world.process('runner').run('reconcile'));
      assert.deepEqual({ ref: d.data.ref, path: d.data.path, line: d.data.line }, { ref: DESIRED, path: 'units/m.yaml', line: lineCount(good) });
      assert.match(d.message, new RegExp(`${DESIRED}:units/m\\.yaml line ${lineCount(good)}`));
      assert.match(d.fix, /nyl recover -e dev --reason/);
      assert.deepEqual(world.refs(), refs, 'nothing written');
      assert.deepEqual(world.counts(), { m: 1, c: 1 }, 'nothing ran');

      const status = await world.process('look').run('status');
      assert.equal(status.code, 1);
      assert.deepEqual(
        status.report.errors.map((e) => e.code),
        ['NYL-STATE-CORRUPT'],
      );
      assert.equal(status.report.units.m.state, 'blocked');
      assert.match(status.report.units.m.detail, /damaged/);
      assert.equal(status.report.units.c.state, 'current', 'the other units are shown as they are');

      const hold = await world.process('holder').run('hold', { unit: 'c', reason: 'x' });
      assert.deepEqual(hold.codes, ['NYL-STATE-CORRUPT'], 'every writer refuses');

      const noReason = await world.process('op').run('recover', {});
      assert.deepEqual(noReason.codes, ['NYL-REASON-REQUIRED']);
      const fixed = await world.process('op').run('recover', REASON);
      assert.equal(fixed.code, 0, JSON.stringify(fixed.codes ?? fixed.report.errors));
      assert.deepEqual(world.desiredDoc('m'), { uid, generation: 1, lifecycle: { state: 'active' } }, 'the incarnation is kept; nothing else is guessed');
      const observed = world.observedDoc('m');
      assert.equal(observed.condition.type, 'uncertain');
      assert.equal(observed.condition.code, 'NYL-STATE-CORRUPT');
      assert.ok(observed.receipt, 'the receipt is kept');
      const [repair, parent] = world.repo.commitsOf(DESIRED);
      assert.equal(parent.oid, damaged, 'the damaged document stays in history, as the parent of its repair');
      assert.match(repair.message, /^nyl: recover dev/);
      assert.match(repair.message, /^Nyl-Reason: a hand edit broke it$/m);
      assert.deepEqual(
        commitBody(repair.message).repaired.map((r) => [r.ref, r.path]),
        [[DESIRED, 'units/m.yaml']],
      );

      const after = await world.process('after').run('reconcile');
      assert.equal(after.code, 4, 'm is uncertain');
      assert.deepEqual(world.counts(), { m: 1, c: 1 }, 'the manual unit did not run again');
      assert.equal((await world.process('op').run('recover', { unit: 'm', retry: true, reason: 'checked' })).code, 0);
      assert.equal((await world.process('last').run('reconcile')).code, 0);
      assert.deepEqual(world.counts(), { m: 1, c: 1 }, 'its receipt is current again: no execution');
    } finally {
      world.cleanup();
    }
  });

  test('invalid YAML in observed unit documents: recover makes both units uncertain; the converging one runs again, the manual one waits', async () => {
    const world = await reconciled();
    try {
      const uids = { m: world.desiredDoc('m').uid, c: world.desiredDoc('c').uid };
      const damaged = world.edit(OBSERVED, { 'units/m.yaml': 'uid: [\n', 'units/c.yaml': 'receipt:\n\trun: x\n' });
      const r = await world.process('runner').run('reconcile');
      assert.equal(r.code, 1);
      assert.deepEqual(r.codes, ['NYL-STATE-CORRUPT', 'NYL-STATE-CORRUPT'], 'one diagnostic per damaged document');
      assert.deepEqual(r.error.diagnostics.map((d) => d.data.path).sort(), ['units/c.yaml', 'units/m.yaml']);
      assert.ok(r.error.diagnostics.every((d) => d.data.ref === OBSERVED && Number.isInteger(d.data.line)));
      assert.deepEqual(world.counts(), { m: 1, c: 1 });

      assert.equal((await world.process('op').run('recover', REASON)).code, 0);
      for (const name of ['m', 'c']) {
        const o = world.observedDoc(name);
        assert.equal(o.uid, uids[name], `${name} keeps its incarnation`);
        assert.equal(o.condition.type, 'uncertain');
      }
      assert.equal(world.repo.commitsOf(OBSERVED)[1].oid, damaged, 'the damaged documents stay in history');
      const after = await world.process('after').run('reconcile');
      assert.equal(after.code, 4);
      assert.deepEqual(world.counts(), { m: 1, c: 2 }, 'c converges; m waits for an operator');
      assert.equal(world.observedDoc('c').uid, uids.c);
    } finally {
      world.cleanup();
    }
  });

  // Each of these used to be read as something else: a missing uid (a new incarnation), no receipt
  // or no condition, so reconcile re-ran the manual unit m and overwrote its observed document.
  const SHAPES = [
    ['desired', 'a misspelt field', (t) => t.replace(/^uid: /m, 'uuid: '), '/uuid'],
    ['desired', 'lifecycle as a string', (t) => t.replace(/^lifecycle:\n {2}state: active$/m, 'lifecycle: active'), '/lifecycle'],
    ['desired', 'a generation that is no number', (t) => t.replace(/^generation: 1$/m, 'generation: one'), '/generation'],
    ['observed', 'a misspelt receipt', (t) => t.replace(/^receipt:/m, 'reciept:'), '/reciept'],
    ['observed', 'a uid that is a number', (t) => t.replace(/^uid: .*$/m, 'uid: 42'), '/uid'],
    ['observed', 'an execution key that is a list', (t) => t.replace(/^ {2}executionKey: .*$/m, '  executionKey: []'), '/receipt/executionKey'],
  ];
  for (const [side, what, edit, pointer] of SHAPES) {
    test(`a ${side} document with ${what} is NYL-STATE-CORRUPT at ${pointer}; the manual unit does not run again`, async () => {
      const world = await reconciled();
      try {
        const ref = side === 'desired' ? DESIRED : OBSERVED;
        const text = world.text(ref, 'units/m.yaml');
        const changed = edit(text);
        assert.notEqual(changed, text, 'the edit applies');
        world.edit(ref, { 'units/m.yaml': changed });
        const observedBefore = world.text(OBSERVED, 'units/m.yaml');
        const d = corrupt(await world.process('runner').run('reconcile'));
        assert.equal(d.data.ref, ref);
        assert.equal(d.data.path, 'units/m.yaml');
        assert.equal(d.data.pointer, pointer);
        assert.deepEqual(world.counts(), { m: 1, c: 1 }, 'm did not run again');
        assert.equal(world.text(OBSERVED, 'units/m.yaml'), observedBefore, 'its observed document is untouched');
        assert.equal((await world.process('op').run('recover', REASON)).code, 0);
        assert.equal((await world.process('after').run('reconcile')).code, 4);
        assert.deepEqual(world.counts(), { m: 1, c: 1 });
      } finally {
        world.cleanup();
      }
    });
  }

  test('invalid YAML in state.yaml: every command names it; recover restores it from the copy on the observed ref', async () => {
    const world = await reconciled();
    try {
      const good = world.text(DESIRED, 'state.yaml');
      const damaged = world.edit(DESIRED, { 'state.yaml': `${good}generation: 2\n` });
      const d = corrupt(await world.process('runner').run('reconcile'));
      assert.deepEqual({ ref: d.data.ref, path: d.data.path, line: d.data.line }, { ref: DESIRED, path: 'state.yaml', line: lineCount(good) });
      const status = await world.process('look').run('status');
      assert.equal(status.code, 1);
      assert.deepEqual(
        status.report.errors.map((e) => e.code),
        ['NYL-STATE-CORRUPT'],
      );
      assert.deepEqual(corrupt(await world.process('init').run('state init')).data.path, 'state.yaml');
      assert.equal((await world.process('op').run('recover', REASON)).code, 0);
      assert.equal(world.text(DESIRED, 'state.yaml'), good, 'restored as it was');
      assert.equal(world.repo.commitsOf(DESIRED)[1].oid, damaged);
      assert.equal((await world.process('after').run('reconcile')).code, 0);
      assert.deepEqual(world.counts(), { m: 1, c: 1 }, 'the same generation: nothing runs again');
    } finally {
      world.cleanup();
    }
  });

  test('state.yaml damaged on both refs: recover restores the newest readable one from the history of the desired ref', async () => {
    const world = await reconciled();
    try {
      const good = world.text(DESIRED, 'state.yaml');
      world.edit(OBSERVED, { 'state.yaml': 'kind: EnvironmentState\ngeneration: [\n' });
      world.edit(DESIRED, { 'state.yaml': good.replace(/^generation: 1$/m, 'generation: -3') });
      assert.equal(corrupt(await world.process('runner').run('reconcile')).data.pointer, '/generation');
      const fixed = await world.process('op').run('recover', REASON);
      assert.equal(fixed.code, 0);
      assert.equal(world.text(DESIRED, 'state.yaml'), good);
      assert.equal(world.text(OBSERVED, 'state.yaml'), good);
      assert.equal((await world.process('after').run('reconcile')).code, 0);
      assert.deepEqual(world.counts(), { m: 1, c: 1 });
    } finally {
      world.cleanup();
    }
  });
});

/**
 * A run that died while m ran: c's receipt is checkpointed, m has a started marker only. Its lease
 * has expired by the time the test goes on.
 */
async function deadRun(world) {
  const journal = new Journal(world);
  world.driver.hold('m');
  const victim = world.process('victim');
  const run = victim.start('reconcile');
  await world.driver.whenCalled('m');
  const [dead] = journal.noteDeadRuns();
  await world.until(() => world.receiptsIn(dead).includes('c'), 'c is checkpointed');
  victim.kill();
  assert.ok((await run.outcome).died);
  await world.clock.advance(6 * 60_000);
  return dead;
}

describe('damaged run records', () => {
  test('invalid run.yaml: reconcile refuses NYL-STATE-CORRUPT; recover sets the run ref aside and makes its units uncertain', async () => {
    const world = await World.create({ units: [unit('m'), unit('c', { recovery: 'converge' })] });
    await world.process('init').run('state init');
    try {
      const dead = await deadRun(world);
      const runRef = `refs/nyl/${ENV}/runs/${dead}`;
      const damaged = world.edit(runRef, { 'run.yaml': 'kind: Run\nrun: [\n' });
      const d = corrupt(await world.process('runner').run('reconcile'));
      assert.deepEqual({ ref: d.data.ref, path: d.data.path, line: d.data.line }, { ref: runRef, path: 'run.yaml', line: 3 });
      assert.deepEqual(world.counts(), { m: 1, c: 1 }, 'nothing ran');
      const status = await world.process('look').run('status');
      assert.ok(
        status.report.errors.some((e) => e.code === 'NYL-STATE-CORRUPT' && e.data.ref === runRef),
        JSON.stringify(status.report.errors),
      );

      const fixed = await world.process('op').run('recover', REASON);
      assert.equal(fixed.code, 0, JSON.stringify(fixed.codes ?? fixed.report.errors));
      assert.equal(world.refs()[runRef], undefined, 'the run ref is consumed');
      assert.equal(world.refs()[`${DAMAGED}runs/${dead}`], damaged, 'and kept, damaged, for inspection');
      for (const name of ['m', 'c']) assert.equal(world.observedDoc(name).condition?.type, 'uncertain', `${name}: the damaged run's units are uncertain`);
      const after = await world.process('after').run('reconcile');
      assert.equal(after.code, 4);
      assert.deepEqual(world.counts(), { m: 1, c: 2 }, 'c converges; m waits for an operator');
      const quiet = await world.process('look').run('status');
      assert.deepEqual(quiet.report.errors, []);
    } finally {
      world.cleanup();
    }
  });

  test("invalid YAML in a run's unit record: its unit becomes uncertain, the healthy records of the run are imported", async () => {
    const world = await World.create({ units: [unit('m'), unit('c')] });
    await world.process('init').run('state init');
    try {
      const dead = await deadRun(world);
      const runRef = `refs/nyl/${ENV}/runs/${dead}`;
      world.edit(runRef, { [unitFile('m')]: 'unit: m\nuid: [\n' });
      const d = corrupt(await world.process('runner').run('reconcile'));
      assert.deepEqual({ ref: d.data.ref, path: d.data.path }, { ref: runRef, path: unitFile('m') });
      const fixed = await world.process('op').run('recover', REASON);
      assert.equal(fixed.code, 0, JSON.stringify(fixed.codes ?? fixed.report.errors));
      assert.equal(world.observedDoc('m').condition?.type, 'uncertain');
      assert.equal(world.observedDoc('c').receipt?.run, dead, "c's receipt is imported");
      assert.equal(world.refs()[runRef], undefined);
      assert.ok(world.refs()[`${DAMAGED}runs/${dead}`]);
      assert.equal((await world.process('after').run('reconcile')).code, 4);
      assert.deepEqual(world.counts(), { m: 1, c: 1 });
    } finally {
      world.cleanup();
    }
  });
});

describe('damaged signals', () => {
  test('invalid YAML in a signal: reconcile refuses before it starts anything; recover sets it aside and warns', async () => {
    const world = await reconciled();
    try {
      await world.setUnits([unit('m', { version: 'v2' }), unit('c', { recovery: 'converge' })]);
      const signalRef = `refs/nyl/${ENV}/signals/0190a000-0000-7000-8000-000000000000/0190a000-0000-7000-8000-000000000001`;
      const damaged = world.edit(signalRef, { 'signal.yaml': 'kind: Signal\ntype: hold\nunit: [m\n' });
      const d = corrupt(await world.process('runner').run('reconcile'));
      assert.deepEqual({ ref: d.data.ref, path: d.data.path }, { ref: signalRef, path: 'signal.yaml' });
      assert.deepEqual(world.counts(), { m: 1, c: 1 }, 'm did not start: the signal may have held it');
      const fixed = await world.process('op').run('recover', REASON);
      assert.equal(fixed.code, 0, JSON.stringify(fixed.codes ?? fixed.report.errors));
      assert.ok(
        fixed.report.warnings.some((w) => w.code === 'NYL-STATE-CORRUPT' && w.data.ref === signalRef),
        JSON.stringify(fixed.report.warnings),
      );
      assert.equal(world.refs()[signalRef], undefined);
      assert.equal(world.refs()[`${DAMAGED}signals/0190a000-0000-7000-8000-000000000000/0190a000-0000-7000-8000-000000000001`], damaged);
      assert.equal((await world.process('after').run('reconcile')).code, 0);
      assert.deepEqual(world.counts(), { m: 2, c: 1 });
    } finally {
      world.cleanup();
    }
  });
});

describe('a damaged lease', () => {
  const leaseText = serializeLease(
    newLeaseRecord({
      environment: ENV,
      run: '0190a000-0000-7000-8000-0000000000aa',
      operation: 'reconcile',
      holder: { name: 'Bob <bob@example.com>', host: 'ci-7', pid: 42 },
      acquiredAt: '2026-11-30T12:00:00Z',
      deadline: '2026-11-30T12:05:00.000Z',
    }),
  );
  const DAMAGES = [
    [
      'a blob',
      (world) => {
        const oid = world.repo.putObject('blob', 'not a lease\n');
        world.repo.setRef(world.leaseRef, oid);
        return oid;
      },
    ],
    ['a commit without lease.yaml', (world) => world.edit(world.leaseRef, { 'notes.txt': 'x\n' })],
    ['invalid YAML', (world) => world.edit(world.leaseRef, { 'lease.yaml': 'kind: Lease\nrun: [\n' })],
    ['a deadline that is no time', (world) => world.edit(world.leaseRef, { 'lease.yaml': leaseText.replace(/^deadline: .*$/m, 'deadline: soon') })],
  ];
  for (const [what, damage] of DAMAGES) {
    test(`a lease ref holding ${what} is reported, not live for ever; lease break breaks it and the next importer goes on`, async () => {
      const world = await reconciled();
      try {
        await world.setUnits([unit('m', { version: 'v2' }), unit('c', { recovery: 'converge' })]);
        const oid = damage(world);
        const d = corrupt(await world.process('runner').run('reconcile'));
        assert.equal(d.data.ref, world.leaseRef);
        assert.match(d.fix, /nyl lease break -e dev --reason/);
        const status = await world.process('look').run('status');
        assert.equal(status.code, 1);
        assert.ok(
          status.report.errors.some((e) => e.code === 'NYL-STATE-CORRUPT'),
          JSON.stringify(status.report),
        );

        const broken = await world.process('operator').run('lease break', { reason: 'the lease ref was damaged' });
        assert.equal(broken.code, 0, JSON.stringify(broken.codes ?? broken.report));
        assert.equal(broken.report.result, 'done');
        assert.equal(world.refs()[`${DAMAGED}lease/${oid}`], oid, 'the damaged lease is kept for inspection');
        assert.equal(world.leaseDoc().broken.reason, 'the lease ref was damaged');

        const next = await world.process('next').run('reconcile');
        assert.equal(next.code, 0, JSON.stringify(next.codes ?? next.report.errors));
        assert.equal(next.report.details.leaseBroken?.reason, 'the lease ref was damaged', 'the break is recorded');
        assert.deepEqual(world.counts(), { m: 2, c: 1 });
        assert.equal(world.refs()[world.leaseRef], undefined);
      } finally {
        world.cleanup();
      }
    });
  }
});
