// nyl state restore, in process: unit documents back to those of an earlier commit while state.yaml,
// holds and the lease stay as they are; forward commits only; incarnations it brings back or takes
// away listed; a restore to the current content writes nothing; commits outside this environment's
// state history (another repository's, another environment's on a shared ref) refused with nothing
// written; a held lease, a broken lease and unimported runs refused; --to and --reason required.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { commitBody } from '../support/commit-evidence.mjs';
import { memoryLocation } from '../fakes/memory-store.mjs';
import { ENV, World } from './world.mjs';

const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });
const REASON = 'undo a bad hand edit';

/** The parsed unit documents of a commit: file -> doc. */
function unitDocs(world, oid) {
  const files = world.repo.filesAt(oid, world.loc.statePath ? `${world.loc.statePath}/units` : 'units');
  return Object.fromEntries([...files].map(([f, text]) => [f.replace(/^.*\//, ''), YAML.parse(text)]));
}

/** The first parent of a commit of the world's repository. */
function parentOf(world, oid) {
  return /^parent ([0-9a-f]{40})$/m.exec(world.repo.object(oid).content.toString())?.[1];
}

const messageOf = (world, oid) => world.repo.object(oid).content.toString().split('\n\n').slice(1).join('\n\n');

/** a and b reconciled (C1), then a bad hand edit deleting a's files and a reconcile that starts a new incarnation of a. */
async function afterBadEdit() {
  const world = await World.create({ units: [unit('a'), unit('b')] });
  await world.process('init').run('state init');
  await world.process('first').run('reconcile');
  const c1 = world.stateRefs();
  const uid1 = world.desiredDoc('a').uid;
  world.edit(world.loc.desiredRef, { 'units/a.yaml': null });
  world.edit(world.loc.observedRef, { 'units/a.yaml': null });
  await world.process('second').run('reconcile');
  return { world, c1, uid1, uid2: world.desiredDoc('a').uid };
}

describe('state restore', () => {
  test('restores the unit documents of an older commit: forward commits, state.yaml and holds kept, incarnations listed, the next reconcile trusts the restored receipt', async () => {
    const { world, c1, uid1, uid2 } = await afterBadEdit();
    try {
      assert.notEqual(uid1, uid2);
      const op = world.process('op');
      assert.equal((await op.run('hold', { unit: 'b', reason: 'investigating' })).code, 0);
      const before = world.stateRefs();
      const stateYaml = world.text(world.loc.desiredRef, 'state.yaml');
      const holdB = world.desiredDoc('b').hold;
      const r = await op.run('state restore', { to: c1.desired, reason: REASON });
      assert.equal(r.code, 0, JSON.stringify(r.report?.errors ?? r.codes));
      assert.equal(r.report.result, 'done');
      assert.equal(r.report.operation, 'state-restore');
      const after = world.stateRefs();
      assert.equal(parentOf(world, after.desired), before.desired, 'desired: a child of the tip');
      assert.equal(parentOf(world, after.observed), before.observed, 'observed: a child of the tip');
      assert.equal(world.leaseDoc(), undefined, 'the lease is released');
      assert.equal(world.text(world.loc.desiredRef, 'state.yaml'), stateYaml, 'state.yaml is kept');
      assert.equal(world.text(world.loc.observedRef, 'state.yaml'), world.repo.filesAt(before.observed).get('state.yaml'));
      const [then, nowD] = [unitDocs(world, c1.desired), unitDocs(world, after.desired)];
      assert.deepEqual(nowD['a.yaml'], then['a.yaml'], 'a is restored');
      assert.deepEqual(unitDocs(world, after.observed), unitDocs(world, c1.observed), 'observed documents are those of C1');
      assert.equal(nowD['b.yaml'].lifecycle.state, 'held', 'b stays held');
      assert.deepEqual(nowD['b.yaml'].hold, holdB, 'with its current hold');
      assert.deepEqual({ ...nowD['b.yaml'], lifecycle: undefined, hold: undefined }, { ...then['b.yaml'], lifecycle: undefined, hold: undefined });
      assert.deepEqual([r.report.details.resurrected, r.report.details.dropped], [{ a: uid1 }, { a: uid2 }]);
      assert.deepEqual(r.report.details.restored, { a: 'restored' });
      assert.deepEqual(r.report.details.holdsKept, ['b']);
      assert.deepEqual(r.report.details.restoredFrom, { commit: c1.desired, desired: c1.desired, observed: c1.observed });
      assert.deepEqual(
        r.report.warnings.map((w) => [w.code, w.data.uid]),
        [
          ['NYL-RESTORE-INCARNATIONS', uid1],
          ['NYL-RESTORE-INCARNATIONS', uid2],
        ],
      );
      const message = messageOf(world, after.desired);
      assert.match(message, /^nyl: state-restore dev \(a\)\n/);
      assert.match(message, /^Nyl-Reason: undo a bad hand edit$/m);
      assert.deepEqual(commitBody(message).units, { a: 'restored' });
      assert.equal(commitBody(message).restoredFrom.commit, c1.desired);
      assert.equal(messageOf(world, after.observed), message, 'one message on both refs');

      // The next reconcile trusts a's restored receipt: nothing executes again.
      const counts = world.counts();
      const next = await world.process('next').run('reconcile');
      assert.equal(next.code, 2, 'b is held');
      assert.deepEqual(world.counts(), counts);
      assert.equal(world.desiredDoc('a').uid, uid1);
    } finally {
      world.cleanup();
    }
  });

  test('an incarnation brought back as a released record, or as a unit source no longer declares: each fix names a command that takes it, never reconcile --unit', async () => {
    const world = await World.create({ units: [unit('app'), unit('legacy', { policy: 'Release' }), unit('old')] });
    try {
      const op = world.process('op');
      await op.run('state init');
      assert.equal((await op.run('reconcile')).code, 0);
      const withOld = world.stateRefs();
      await world.setUnits([unit('app')]);
      // old (Retain) leaves too: drop its tombstone by hand, so that the restore brings it back.
      const left = await op.run('reconcile');
      assert.equal(left.report.units.legacy.result, 'released', JSON.stringify(left.report.units));
      const released = world.stateRefs();
      for (const ref of [world.loc.desiredRef, world.loc.observedRef]) world.edit(ref, { 'units/legacy.yaml': null, 'units/old.yaml': null });
      const r = await op.run('state restore', { to: released.desired, reason: REASON });
      assert.equal(r.code, 0, JSON.stringify(r.report?.errors ?? r.codes));
      const warning = (u) => r.report.warnings.find((w) => w.code === 'NYL-RESTORE-INCARNATIONS' && w.units[0] === u);
      assert.equal(warning('legacy').data.as, 'released');
      assert.match(warning('legacy').fix, /`nyl state forget -e dev --unit legacy --reason "<why>"`/);
      assert.doesNotMatch(warning('legacy').fix, /nyl reconcile/);
      assert.equal(warning('old').data.as, 'retained');
      assert.match(warning('old').fix, /`nyl teardown -e dev --unit old`/);
      // Back before anything left, once their records are gone again: active incarnations source no longer declares.
      for (const ref of [world.loc.desiredRef, world.loc.observedRef]) world.edit(ref, { 'units/legacy.yaml': null, 'units/old.yaml': null });
      const back = await op.run('state restore', { to: withOld.desired, reason: REASON });
      const again = back.report.warnings.filter((w) => w.code === 'NYL-RESTORE-INCARNATIONS');
      assert.deepEqual(
        again.map((w) => [w.units[0], w.data.as]),
        [
          ['legacy', 'left'],
          ['old', 'left'],
        ],
      );
      for (const w of again) {
        assert.match(w.fix, /`nyl plan -e dev`/);
        assert.doesNotMatch(w.fix, /nyl reconcile/);
      }
      const next = await op.run('reconcile');
      assert.equal(next.report.units.legacy.result, 'released', 'the next reconcile handles it as a unit that left');
    } finally {
      world.cleanup();
    }
  });

  test('holds are current admission: a hold of the restored commit that was lifted since is not restored', async () => {
    const world = await World.create({ units: [unit('a')] });
    await world.process('init').run('state init');
    await world.process('first').run('reconcile');
    try {
      const op = world.process('op');
      await op.run('hold', { unit: 'a', reason: 'then' });
      const heldAt = world.stateRefs().desired;
      await op.run('resume', { unit: 'a' });
      const r = await op.run('state restore', { to: heldAt, reason: REASON });
      assert.equal(r.report.result, 'unchanged', 'a resumed document of the held one is what state holds now');
      assert.equal(world.desiredDoc('a').lifecycle.state, 'active');
    } finally {
      world.cleanup();
    }
  });

  test('a restore to the current content writes nothing and takes no lease: unchanged, NYL-UNCHANGED', async () => {
    const world = await World.create({ units: [unit('a')] });
    await world.process('init').run('state init');
    await world.process('first').run('reconcile');
    try {
      const refs = world.refs();
      const writes = world.processes.length;
      const p = world.process('op');
      const r = await p.run('state restore', { to: world.stateRefs().desired, reason: REASON });
      assert.equal(r.code, 0);
      assert.equal(r.report.result, 'unchanged');
      assert.deepEqual(
        r.report.notes.map((n) => n.code),
        ['NYL-UNCHANGED'],
      );
      assert.deepEqual(world.refs(), refs);
      assert.equal(p.stats.writes, 0, `no write (${writes})`);
    } finally {
      world.cleanup();
    }
  });

  test('--to an abbreviated observed commit: observed documents from it, desired ones from the same operation', async () => {
    const world = await World.create({ units: [unit('a')] });
    await world.process('init').run('state init');
    const init = world.stateRefs();
    await world.process('first').run('reconcile');
    try {
      const r = await world.process('op').run('state restore', { to: init.observed.slice(0, 10), reason: REASON });
      assert.equal(r.code, 0, JSON.stringify(r.codes ?? r.report.errors));
      assert.deepEqual(r.report.details.restoredFrom, { commit: init.observed, desired: init.desired, observed: init.observed });
      assert.equal(world.desiredDoc('a'), undefined);
      assert.equal(world.observedDoc('a'), undefined);
      assert.deepEqual(Object.keys(r.report.details.dropped), ['a']);
    } finally {
      world.cleanup();
    }
  });

  test('a commit outside the state history, a name that is no commit id, and a missing --to or --reason are refused with nothing written', async () => {
    const world = await World.create({ units: [unit('a')] });
    await world.process('init').run('state init');
    await world.process('first').run('reconcile');
    try {
      const refs = world.refs();
      // The same files as the tip, in a commit no state ref reaches (another repository's copy).
      const [stranger] = world.repo.writeCommits([
        { changes: new Map([...world.repo.filesAt(world.stateRefs().desired)]), message: 'copy\n', author: { name: 'M', email: 'm@x' }, timeMs: 0 },
      ]);
      const op = world.process('op');
      const cases = [
        [{ to: stranger, reason: REASON }, 'NYL-RESTORE-FOREIGN-COMMIT'],
        [{ to: 'HEAD', reason: REASON }, 'NYL-USAGE'],
        [{ to: world.stateRefs().desired }, 'NYL-REASON-REQUIRED'],
        [{ reason: REASON }, 'NYL-USAGE'],
      ];
      for (const [options, code] of cases) {
        const r = await op.run('state restore', options);
        assert.deepEqual([r.code, r.codes], [1, [code]], JSON.stringify(options));
      }
      assert.deepEqual(world.refs(), refs);
    } finally {
      world.cleanup();
    }
  });

  test('a held lease exits 2 NYL-LEASE-HELD; an unimported run 1 NYL-RESTORE-RUNS-UNIMPORTED, with nothing written', async () => {
    const world = await World.create({ units: [unit('a'), unit('b')] });
    await world.process('init').run('state init');
    const c0 = world.stateRefs().desired;
    await world.process('first').run('reconcile');
    await world.setUnits([unit('a', { version: '2' }), unit('b')]);
    try {
      const op = world.process('op');
      const release = world.driver.hold('a');
      const holder = world.process('holder');
      const run = holder.start('reconcile');
      await world.driver.whenCalled('a');
      const held = await op.run('state restore', { to: c0, reason: REASON });
      assert.deepEqual([held.code, held.codes], [2, ['NYL-LEASE-HELD']]);
      holder.cancel();
      await run.done;
      release();
      assert.equal(world.runRefs().length, 1, 'the cancelled run waits for its import');
      const refs = world.refs();
      const unimported = await op.run('state restore', { to: c0, reason: REASON });
      assert.deepEqual([unimported.code, unimported.codes], [1, ['NYL-RESTORE-RUNS-UNIMPORTED']]);
      assert.deepEqual(world.stateRefs(), { desired: refs[world.loc.desiredRef], observed: refs[world.loc.observedRef] }, 'nothing written');
    } finally {
      world.cleanup();
    }
  });

  test('a broken lease exits 2 NYL-LEASE-BROKEN, with nothing written', async () => {
    const world = await World.create({ units: [unit('a')] });
    await world.process('init').run('state init');
    const c0 = world.stateRefs().desired;
    await world.process('first').run('reconcile');
    await world.setUnits([unit('a', { version: '2' })]);
    try {
      world.driver.reset();
      world.driver.hold('a');
      const dead = world.process('dead');
      dead.start('reconcile');
      await world.driver.whenCalled('a');
      dead.kill();
      assert.equal((await world.process('breaker').run('lease break')).code, 0);
      const refs = world.refs();
      const broken = await world.process('op').run('state restore', { to: c0, reason: REASON });
      assert.deepEqual([broken.code, broken.codes], [2, ['NYL-LEASE-BROKEN']]);
      assert.deepEqual(world.refs(), refs);
    } finally {
      world.cleanup();
    }
  });
});

describe('state restore on refs shared through path', () => {
  /** dev keeps its state under dev/ of refs another environment (qa) also commits to. */
  async function shared() {
    const world = await World.create({ units: [unit('a')] });
    world.loc = memoryLocation(ENV, { desiredRef: 'refs/heads/nyl/desired', observedRef: 'refs/heads/nyl/observed', statePath: 'dev' });
    await world.process('init').run('state init');
    await world.process('first').run('reconcile');
    return world;
  }

  test("a commit of another environment on the shared ref is refused; one of dev's own is restored, and only dev/ changes", async () => {
    const world = await shared();
    try {
      const own = world.stateRefs();
      const qa = world.edit(world.loc.desiredRef, { 'qa/state.yaml': 'environment: qa\n' }, { message: 'nyl: state-init qa\n' });
      world.edit(world.loc.desiredRef, { 'dev/units/a.yaml': null });
      world.edit(world.loc.observedRef, { 'dev/units/a.yaml': null });
      const op = world.process('op');
      const refs = world.refs();
      const foreign = await op.run('state restore', { to: qa, reason: REASON });
      assert.deepEqual([foreign.code, foreign.codes], [1, ['NYL-RESTORE-FOREIGN-COMMIT']]);
      assert.deepEqual(world.refs(), refs, 'nothing written');

      const r = await op.run('state restore', { to: own.desired, reason: REASON });
      assert.equal(r.code, 0, JSON.stringify(r.codes ?? r.report.errors));
      const tip = world.stateRefs().desired;
      assert.equal(world.repo.filesAt(tip).get('qa/state.yaml'), 'environment: qa\n', "qa's files stay");
      assert.deepEqual(unitDocs(world, tip), unitDocs(world, own.desired));
    } finally {
      world.cleanup();
    }
  });
});
