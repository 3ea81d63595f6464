// The local state service (src/state/local-state.ts) and its port's contract
// (src/state/local-repositories.ts): one suite run against the port over Git (the Git store's
// layouts: a clone location, a remote that is the checkout's origin, a state repository of this
// machine, a remote read through its cache repository) and against the in-memory fake of the
// same layouts (test/fakes/memory-local.mjs). Then what only Git has: the read-only judge of nyl
// plan in a clone whose origin is the state repository, and the records of known branches when
// two repositories use the same ref names.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Git } from '../../dist/git/git.js';
import { NodeProcessRunner } from '../../dist/exec/process.js';
import { BatchReader } from '../../dist/git/batch-reader.js';
import { writeCommits } from '../../dist/git/object-writer.js';
import { GitStateStore } from '../../dist/state/git-store.js';
import { LocalState } from '../../dist/state/local-state.js';
import { openCheckout } from '../../dist/project/checkout.js';
import { coordinationNamespace, repositoryIdentity, resolveLocation } from '../../dist/state/location.js';
import { JsonCache } from '../../dist/util/json-cache.js';
import { recordRef, repositoryKey } from '../../dist/state/known-branches.js';
import { newStateDoc, toYaml } from '../../dist/state/documents.js';
import { cleanupAll, git, gitResult, hermeticEnv, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { memoryLayout } from '../fakes/memory-local.mjs';
import { memoryLocation } from '../fakes/memory-store.mjs';
import { projectWith } from '../support/project-doc.mjs';

after(() => cleanupAll());

const cacheDir = tempDir('nyl-local-cache-');
const env = hermeticEnv({ NYL_CACHE_DIR: cacheDir });
const newGit = () => new Git(new NodeProcessRunner(), env);

const AUTHOR = { name: 'Nyl Test', email: 'nyl@example.com' };
const T0 = 1767225600000;

/** A CommitSpec from an object of path -> content (null deletes). */
function spec(files, { parent, message = 'test\n', timeMs = T0 } = {}) {
  const c = { changes: new Map(Object.entries(files)), message, author: AUTHOR, timeMs };
  if (parent !== undefined) c.parent = parent;
  return c;
}

const plain = (map) => Object.fromEntries(map);

/** A state.yaml of an environment. */
const stateYaml = (environment) => toYaml(newStateDoc(environment, { type: 'initialized', at: '2026-01-01T00:00:00Z', by: 'Nyl Test <nyl@example.com>' }));

// --- implementations ------------------------------------------------------------------------

/**
 * A fixture of one layout: the service (`local`), its location, and
 * - publish(files, parent?): a state commit that the desired ref of the state repository moves
 *   to; state(): the state's refs as the store reads them (its objects in the work repository);
 * - commitIn(where, files, parent?): a commit in 'checkout' or 'work'; setRef/tip(where, ref[, oid]);
 * - readable(oid): the work repository has the object.
 */
async function gitFixture(layout) {
  const g = newGit();
  const bare = layout === 'clone' ? undefined : makeBareRepo();
  const work = makeProject({ 'nyl.yaml': 'apiVersion: nyl.io/v1\n' }, layout === 'origin' ? { origin: `file://${bare}` } : {});
  const checkout = await openCheckout(g, work);
  const { project, environment } = projectWith('dev', bare ? { repository: { repoURL: `file://${bare}` } } : undefined);
  const loc = { ...resolveLocation(project, environment, checkout) };
  if (layout === 'origin' || layout === 'cache') {
    loc.kind = 'remote';
    delete loc.localPath;
  }
  const reader = new BatchReader(g, checkout.workTree);
  const store = new GitStateStore(g, loc, checkout, env, reader, new JsonCache(path.join(cacheDir, 'parsed'), 'conformance'));
  await store.ensureOpen();
  const stateDir = bare ?? work;
  const dirOf = (where) => (where === 'checkout' ? work : store.workDir);
  return {
    loc,
    local: new LocalState(store.repositories),
    async publish(files, parent) {
      const [oid] = await writeCommits(g, stateDir, [spec(files, parent ? { parent } : {})]);
      git(stateDir, 'update-ref', loc.desiredRef, oid);
      return oid;
    },
    state: () => store.snapshot(),
    async commitIn(where, files, parent) {
      return (await writeCommits(g, dirOf(where), [spec(files, parent ? { parent } : {})]))[0];
    },
    setRef(where, ref, oid) {
      if (oid === null) git(dirOf(where), 'update-ref', '-d', ref);
      else git(dirOf(where), 'update-ref', ref, oid);
    },
    tip: (where, ref) => git(dirOf(where), 'for-each-ref', '--format=%(objectname)', ref) || undefined,
    readable: async (oid) => (await store.reader.read(oid)) !== undefined,
    close() {
      store.close();
      reader.close();
    },
  };
}

async function memoryFixture(layout) {
  const loc = memoryLocation('dev', { kind: layout === 'origin' || layout === 'cache' ? 'remote' : layout });
  const repos = memoryLayout(layout, loc);
  const checkout = repos.repo(repos.checkout);
  const work = repos.repo(repos.work);
  const state = new Map();
  const repoOf = (where) => (where === 'checkout' ? checkout : work);
  return {
    loc,
    local: new LocalState(repos),
    async publish(files, parent) {
      // The objects as the store's read brings them into the work repository.
      const [oid] = work.writeCommits([spec(files, parent ? { parent } : {})]);
      state.set(loc.desiredRef, oid);
      if (layout === 'clone') work.setRef(loc.desiredRef, oid);
      return oid;
    },
    state: async () => new Map(state),
    async commitIn(where, files, parent) {
      return repoOf(where).writeCommits([spec(files, parent ? { parent } : {})])[0];
    },
    setRef: (where, ref, oid) => repoOf(where).setRef(ref, oid),
    tip: (where, ref) => repoOf(where).refMap.get(ref),
    readable: async (oid) => work.has(oid),
    close() {},
  };
}

const LAYOUTS = ['clone', 'origin', 'path', 'cache'];
const IMPLS = [
  ...LAYOUTS.map((layout) => ({ name: `git ${layout}`, layout, make: () => gitFixture(layout) })),
  ...LAYOUTS.map((layout) => ({ name: `memory ${layout}`, layout, make: () => memoryFixture(layout) })),
];

async function withFixture(impl, fn) {
  const fx = await impl.make();
  try {
    return await fn(fx);
  } finally {
    fx.close();
  }
}

const diverged = (e) => e.code === 'NYL-STATE-DIVERGED';

// --- the contract, per implementation and layout --------------------------------------------

describe('LocalState over its port', { concurrency: true }, () => {
  for (const impl of IMPLS) {
    const keeps = impl.layout !== 'clone';
    describe(impl.name, () => {
      test(
        keeps
          ? 'syncKnownBranches creates, fast-forwards and records the known branches; a diverged one is reported, left alone and refused'
          : 'a clone location keeps no known branches: nothing to sync or refuse',
        async () => {
          await withFixture(impl, async (fx) => {
            const ref = fx.loc.desiredRef;
            const s1 = await fx.publish({ 'state.yaml': stateYaml('dev') });
            assert.deepEqual(await fx.local.syncKnownBranches(await fx.state()), []);
            await fx.local.requireNoUnpublishedWork(await fx.state());
            if (!keeps) return;
            const record = recordRef(fx.local.repos.key, ref);
            assert.deepEqual([fx.tip('checkout', ref), fx.tip('checkout', record)], [s1, s1], 'created, and recorded');
            const s2 = await fx.publish({ 'state.yaml': stateYaml('dev'), b: '2' }, s1);
            const state = await fx.state();
            await fx.local.requireNoUnpublishedWork(state, { readOnly: true });
            assert.equal(fx.tip('checkout', ref), s1, 'a read-only judge moves nothing');
            assert.deepEqual(await fx.local.syncKnownBranches(state), []);
            assert.deepEqual([fx.tip('checkout', ref), fx.tip('checkout', record)], [s2, s2], 'fast-forwarded');
            const mine = await fx.commitIn('checkout', { mine: 'm' }, s2);
            fx.setRef('checkout', ref, mine);
            assert.deepEqual(await fx.local.syncKnownBranches(state), [ref]);
            assert.equal(fx.tip('checkout', ref), mine, 'never rewritten');
            await assert.rejects(fx.local.requireNoUnpublishedWork(state), diverged);
            await assert.rejects(fx.local.requireNoUnpublishedWork(state, { readOnly: true }), diverged);
            assert.equal(fx.tip('checkout', ref), mine);
          });
        },
      );

      if (keeps)
        test('localWork names a diverged known branch and adopts its commits; moveLocalBranches resets it, keeping its tip; a branch behind fast-forwards', async () => {
          await withFixture(impl, async (fx) => {
            const ref = fx.loc.desiredRef;
            const s1 = await fx.publish({ 'state.yaml': stateYaml('dev') });
            const state = await fx.state();
            assert.deepEqual(await fx.local.syncKnownBranches(state), []);
            const mine = await fx.commitIn('checkout', { mine: 'm' }, s1);
            fx.setRef('checkout', ref, mine);
            const work = await fx.local.localWork(state);
            assert.deepEqual(plain(work.refs), {});
            assert.deepEqual(
              work.branches.map((b) => [b.repository, b.ref, b.tip, b.state, b.behind]),
              [[fx.local.repos.checkout, ref, mine, s1, false]],
            );
            assert.equal(await fx.readable(mine), true, "the branch's commits are readable in the work repository");
            assert.deepEqual(await fx.local.moveLocalBranches(work.branches, 'refs/nyl-discarded/dev/t/'), { ok: true });
            assert.deepEqual([fx.tip('checkout', ref), fx.tip('checkout', 'refs/nyl-discarded/dev/t/heads/nyl/dev/desired')], [s1, mine]);
            assert.equal(fx.tip('checkout', recordRef(fx.local.repos.key, ref)), s1, 'recorded again');
            const s2 = await fx.publish({ 'state.yaml': stateYaml('dev'), b: '2' }, s1);
            const ahead = await fx.local.localWork(await fx.state());
            assert.deepEqual(
              ahead.branches.map((b) => [b.ref, b.behind]),
              [[ref, true]],
            );
            assert.deepEqual(await fx.local.moveLocalBranches(ahead.branches), { ok: true });
            assert.equal(fx.tip('checkout', ref), s2);
            assert.deepEqual(await fx.local.moveLocalBranches([]), { ok: true });
          });
        });

      test(
        impl.layout === 'origin' || impl.layout === 'cache'
          ? "localRunRefs lists a --local run's refs (not damaged ones, not published copies), and online writers refuse them"
          : 'localRunRefs: --local opens this location as online commands do, so no run ref is local work',
        async () => {
          await withFixture(impl, async (fx) => {
            const s1 = await fx.publish({ 'state.yaml': stateYaml('dev') });
            await fx.state();
            const ns = coordinationNamespace(fx.loc);
            assert.deepEqual(plain(await fx.local.localRunRefs(new Map())), {});
            fx.setRef('work', `${ns}damaged/lease/x`, s1);
            assert.deepEqual(plain(await fx.local.localRunRefs(new Map())), {}, 'damaged refs are set aside, not work');
            fx.setRef('work', `${ns}evidence/a/r1`, s1);
            if (impl.layout !== 'origin' && impl.layout !== 'cache') {
              assert.deepEqual(plain(await fx.local.localRunRefs(new Map())), {});
              return;
            }
            assert.deepEqual(plain(await fx.local.localRunRefs(new Map())), { [`${ns}evidence/a/r1`]: s1 });
            assert.deepEqual(plain(await fx.local.localRunRefs(new Map([[`${ns}evidence/a/r1`, s1]]))), {}, 'a published copy is not work');
            await assert.rejects(fx.local.requireNoUnpublishedWork(await fx.state()), (e) => e.code === 'NYL-STATE-LOCAL-WORK');
            await fx.local.requireNoUnpublishedWork(await fx.state(), { readOnly: true });
            assert.deepEqual(plain((await fx.local.localWork(await fx.state())).refs), { [`${ns}evidence/a/r1`]: s1 });
          });
        },
      );

      test(
        keeps
          ? "knownStateBeyond: known branches holding this environment's state.yaml that the state lacks; adoptKnownBranches makes them readable"
          : 'knownStateBeyond: a clone location has no known branches beyond its state',
        async () => {
          await withFixture(impl, async (fx) => {
            const ref = fx.loc.desiredRef;
            const known = await fx.commitIn('checkout', { 'state.yaml': stateYaml('dev') });
            fx.setRef('checkout', ref, known);
            if (!keeps) {
              assert.deepEqual(plain(await fx.local.knownStateBeyond(new Map())), {});
              return;
            }
            assert.deepEqual(plain(await fx.local.knownStateBeyond(new Map())), { [ref]: known });
            assert.deepEqual(plain(await fx.local.knownStateBeyond(new Map([[ref, known]]))), {}, 'the state holds the ref');
            await fx.local.adoptKnownBranches(new Map([[ref, known]]));
            assert.equal(await fx.readable(known), true);
            await fx.local.adoptKnownBranches(new Map());
            const other = await fx.commitIn('checkout', { 'state.yaml': stateYaml('stg') });
            fx.setRef('checkout', ref, other);
            assert.deepEqual(plain(await fx.local.knownStateBeyond(new Map())), {}, "another environment's state.yaml is not this one's");
          });
        },
      );

      if (impl.layout === 'cache')
        test("the cache repository's own branches: --local work there is refused and reset; one behind passes", async () => {
          await withFixture(impl, async (fx) => {
            const ref = fx.loc.desiredRef;
            const s1 = await fx.publish({ 'state.yaml': stateYaml('dev') });
            const state = await fx.state();
            const mine = await fx.commitIn('work', { mine: 'm' }, s1);
            fx.setRef('work', ref, mine);
            await assert.rejects(fx.local.requireNoUnpublishedWork(state), (e) => diverged(e) && /cache repository/.test(e.message));
            const work = await fx.local.localWork(state);
            assert.deepEqual(
              work.branches.filter((b) => b.repository === fx.local.repos.work).map((b) => [b.ref, b.tip, b.behind]),
              [[ref, mine, false]],
            );
            assert.deepEqual(await fx.local.moveLocalBranches(work.branches.filter((b) => b.repository === fx.local.repos.work)), { ok: true });
            assert.equal(fx.tip('work', ref), s1);
            const s2 = await fx.publish({ 'state.yaml': stateYaml('dev'), b: '2' }, s1);
            await fx.local.requireNoUnpublishedWork(await fx.state());
            assert.equal(fx.tip('work', ref), s1, 'behind: no refusal, and not moved by the check');
            assert.equal(fx.tip('checkout', ref), s2);
          });
        });
    });
  }
});

/** A clone whose origin is the state repository, and a remote store on it. */
async function originFixture() {
  const g = newGit();
  const bare = makeBareRepo();
  const work = makeProject({ 'nyl.yaml': 'apiVersion: nyl.io/v1\n' }, { origin: `file://${bare}` });
  const checkout = await openCheckout(g, work);
  const { project, environment } = projectWith('dev', { repository: { repoURL: `file://${bare}` } });
  const loc = { ...resolveLocation(project, environment, checkout), kind: 'remote' };
  delete loc.localPath;
  const reader = new BatchReader(g, checkout.workTree);
  const store = new GitStateStore(g, loc, checkout, env, reader, new JsonCache(path.join(cacheDir, 'parsed'), 'conformance'));
  await store.ensureOpen();
  assert.equal(store.workDir, checkout.workTree, 'the clone is the work repository');
  const cloneRefs = () => git(work, 'for-each-ref');
  const local = new LocalState(store.repositories);
  return {
    g,
    bare,
    work,
    store,
    local,
    cloneRefs,
    close: () => {
      store.close();
      reader.close();
    },
  };
}

// --- read-only reads: nyl plan ---------------------------------------------------------------

describe("read-only reads of a remote whose repository is the clone's origin (mirrors would live in the clone)", () => {
  test('snapshot({readOnly}) and requireNoUnpublishedWork({readOnly}) leave every ref of the clone as it was (a plain snapshot mirrors into it); a diverged known branch is refused all the same', async () => {
    const fx = await originFixture();
    try {
      const [c1, c2] = await writeCommits(fx.g, fx.bare, [spec({ one: '1' }), spec({ two: '2' }, { parent: { index: 0 } })]);
      git(fx.bare, 'update-ref', fx.store.loc.desiredRef, c2);
      const before = fx.cloneRefs();
      const read = await fx.store.snapshot({ readOnly: true });
      assert.deepEqual(plain(read), { [fx.store.loc.desiredRef]: c2 });
      assert.equal((await fx.store.reader.read(`${c2}:two`)).content.toString(), '2');
      await fx.local.requireNoUnpublishedWork(read, { readOnly: true });
      assert.equal(fx.cloneRefs(), before, 'no mirror ref, no known branch');

      // A known branch behind the state passes, and stays where it is.
      git(fx.work, 'update-ref', fx.store.loc.desiredRef, c1);
      const behind = fx.cloneRefs();
      await fx.local.requireNoUnpublishedWork(read, { readOnly: true });
      assert.equal(fx.cloneRefs(), behind);
      // One with work the state lacks is refused, as the plain check refuses it, and stays too.
      const [local] = await writeCommits(fx.g, fx.work, [spec({ mine: 'm' }, { parent: c2 })]);
      git(fx.work, 'update-ref', fx.store.loc.desiredRef, local);
      const diverged = fx.cloneRefs();
      await assert.rejects(fx.local.requireNoUnpublishedWork(read, { readOnly: true }), (e) => e.code === 'NYL-STATE-DIVERGED');
      assert.equal(fx.cloneRefs(), diverged);

      await assert.rejects(fx.local.requireNoUnpublishedWork(await fx.store.snapshot()), (e) => e.code === 'NYL-STATE-DIVERGED');
      assert.match(fx.cloneRefs(), /refs\/nyl-mirror\//, 'a plain snapshot mirrors into the clone');
    } finally {
      fx.close();
    }
  });
});

describe("a --local run's work in the clone of a remote that is its origin", () => {
  test('localRunRefs lists its lease, run and evidence refs (not damaged ones) and online writers refuse them; localWork and moveLocalBranches reset a diverged known branch, keeping its tip', async () => {
    const { g, bare, work, store, local: localState, close } = await originFixture();
    const { loc } = store;
    try {
      const [c1, c2] = await writeCommits(g, bare, [spec({ one: '1' }), spec({ two: '2' }, { parent: { index: 0 } })]);
      git(bare, 'update-ref', loc.observedRef, c1);
      await store.snapshot({ readOnly: true }); // the objects, into the clone
      assert.deepEqual(plain(await localState.localRunRefs(new Map())), {});
      const ns = coordinationNamespace(loc);
      git(work, 'update-ref', `${ns}damaged/lease/x`, c1);
      assert.deepEqual(plain(await localState.localRunRefs(new Map())), {}, 'damaged refs are set aside, not work');
      git(work, 'update-ref', `${ns}evidence/a/r1`, c1);
      assert.deepEqual(plain(await localState.localRunRefs(new Map())), { [`${ns}evidence/a/r1`]: c1 });
      assert.deepEqual(
        plain(await localState.localRunRefs(new Map([[`${ns}evidence/a/r1`, c1]]))),
        {},
        'a copy the state repository holds under the same name and id is published, not work',
      );
      await assert.rejects(localState.requireNoUnpublishedWork(await store.snapshot()), (e) => e.code === 'NYL-STATE-LOCAL-WORK');
      git(work, 'update-ref', '-d', `${ns}evidence/a/r1`);

      // A known branch with a local commit: localWork names it, moveLocalBranches resets it.
      const refs = await store.snapshot();
      const [mine] = await writeCommits(g, work, [spec({ mine: 'm' }, { parent: c1 })]);
      git(work, 'update-ref', loc.observedRef, mine);
      const local = await localState.localWork(refs);
      assert.deepEqual(
        local.branches.map((b) => [b.ref, b.tip, b.state, b.behind]),
        [[loc.observedRef, mine, c1, false]],
      );
      assert.deepEqual(await localState.moveLocalBranches(local.branches, 'refs/nyl-discarded/dev/t/'), { ok: true });
      assert.equal(git(work, 'rev-parse', loc.observedRef), c1);
      assert.equal(git(work, 'rev-parse', 'refs/nyl-discarded/dev/t/heads/nyl/dev/observed'), mine);
      // Behind: a fast-forward, nothing kept.
      git(work, 'update-ref', '-d', 'refs/nyl-discarded/dev/t/heads/nyl/dev/observed');
      git(bare, 'update-ref', loc.observedRef, c2);
      const ahead = await localState.localWork(await store.snapshot({ readOnly: true }));
      assert.deepEqual(
        ahead.branches.map((b) => b.behind),
        [true],
      );
      assert.deepEqual(await localState.moveLocalBranches(ahead.branches), { ok: true });
      assert.equal(git(work, 'rev-parse', loc.observedRef), c2);
    } finally {
      close();
    }
  });
});

// --- known branches of two repositories with the same ref names ------------------------------------

/**
 * A clone and two state repositories of this machine, dev's (a) and stg's (b), whose state refs
 * have the same names: what source refuses (crossed-refs.ts), but what a clone meets across
 * source revisions. A store per repository; the clone keeps one branch per name.
 */
async function twoRepositories(kind) {
  const g = newGit();
  const work = makeProject({ 'nyl.yaml': 'apiVersion: nyl.io/v1\n' });
  const checkout = await openCheckout(g, work);
  const reader = new BatchReader(g, checkout.workTree);
  const names = { desiredRef: 'nyl/shared/desired', observedRef: 'nyl/shared/observed' };
  const open = async (envName) => {
    const bare = makeBareRepo();
    const url = `file://${bare}`;
    const { project, environment } = projectWith(envName, { repository: { repoURL: url }, ...names });
    const loc = resolveLocation(project, environment, checkout);
    if (kind === 'remote') {
      // Read through the cache repository and its mirror refs, as any URL would be.
      loc.kind = 'remote';
      delete loc.localPath;
    }
    const store = new GitStateStore(g, loc, checkout, env, reader, new JsonCache(path.join(cacheDir, 'parsed'), 'conformance'));
    await store.ensureOpen();
    const record = recordRef(repositoryKey(repositoryIdentity(url, checkout.workTree)), store.loc.desiredRef);
    return { bare, store, local: new LocalState(store.repositories), record };
  };
  const [dev, stg] = [await open('dev'), await open('stg')];
  /** A state commit of an environment in its repository, moving the ref there. */
  const commit = async (side, parent) => {
    const doc = toYaml(newStateDoc(side.store.loc.environment, { type: 'initialized', at: '2026-01-01T00:00:00Z', by: 'Nyl Test <nyl@example.com>' }));
    const [oid] = await writeCommits(g, side.bare, [spec({ 'state.yaml': doc, [`n-${Math.random()}`]: 'x' }, parent ? { parent } : {})]);
    git(side.bare, 'update-ref', side.store.loc.desiredRef, oid);
    return oid;
  };
  const tip = (ref) => git(work, 'for-each-ref', '--format=%(objectname)', ref) || undefined;
  return {
    g,
    work,
    dev,
    stg,
    commit,
    tip,
    close: () => {
      dev.store.close();
      stg.store.close();
      reader.close();
    },
  };
}

for (const kind of ['path', 'remote'])
  describe(`the clone's known branches of two repositories with the same ref names (${kind})`, () => {
    test('a branch copies the repository its record names: the other repository neither syncs, judges, resets nor continues it; a fast-forward takes it over', async () => {
      const fx = await twoRepositories(kind);
      const { dev, stg, tip } = fx;
      const ref = dev.store.loc.desiredRef;
      try {
        const d1 = await fx.commit(dev);
        assert.deepEqual(await dev.local.syncKnownBranches(await dev.store.snapshot()), []);
        assert.deepEqual([tip(ref), tip(dev.record)], [d1, d1], "the clone's branch copies dev's repository, and says so");

        // stg's repository holds no state yet: the branch holds dev's state, not stg's.
        assert.deepEqual(plain(await stg.local.knownStateBeyond(new Map())), {});
        await fx.commit(stg);
        const stgRefs = await stg.store.snapshot();
        await stg.local.requireNoUnpublishedWork(stgRefs);
        assert.deepEqual(await stg.local.syncKnownBranches(stgRefs), [], "dev's branch is no work of stg's");
        await stg.local.requireNoUnpublishedWork(stgRefs, { readOnly: true });
        assert.deepEqual((await stg.local.localWork(stgRefs)).branches, [], 'nothing for a reset of stg to move');
        assert.deepEqual([tip(ref), tip(dev.record), tip(stg.record)], [d1, d1, undefined], "dev's branch is left as it was");
        assert.equal(gitResult(stg.bare, 'cat-file', '-e', `${d1}^{commit}`).status, 128, "dev's commits never reach stg's repository");

        // dev moves on: its branch follows.
        const d2 = await fx.commit(dev, d1);
        assert.deepEqual(await dev.local.syncKnownBranches(await dev.store.snapshot()), []);
        assert.deepEqual([tip(ref), tip(dev.record)], [d2, d2]);

        // Work on the branch after dev's tip is dev's local work (a --local run): dev refuses, stg does not care.
        const [local] = await writeCommits(fx.g, fx.work, [spec({ mine: 'm' }, { parent: d2 })]);
        git(fx.work, 'update-ref', ref, local);
        await assert.rejects(dev.local.requireNoUnpublishedWork(await dev.store.snapshot()), (e) => e.code === 'NYL-STATE-DIVERGED');
        assert.deepEqual(await stg.local.syncKnownBranches(await stg.store.snapshot()), []);
        git(fx.work, 'update-ref', ref, d2);

        // stg's history continues dev's (a move from dev's repository): the branch fast-forwards and copies stg's now.
        git(stg.bare, 'fetch', '-q', dev.bare, d2); // the move brings dev's commits along
        const s2 = await fx.commit(stg, d2);
        assert.deepEqual(await stg.local.syncKnownBranches(await stg.store.snapshot()), []);
        assert.deepEqual([tip(ref), tip(stg.record), tip(dev.record)], [s2, s2, undefined], 'one record per branch');
        assert.deepEqual(await dev.local.syncKnownBranches(await dev.store.snapshot()), [], "stg's branch is not dev's to judge");
        assert.equal(tip(ref), s2);
      } finally {
        fx.close();
      }
    });

    test('an unrecorded branch (an older clone) is taken over by a fast-forward, and is not work of an environment whose state.yaml it does not hold', async () => {
      const fx = await twoRepositories(kind);
      const { dev, stg, tip } = fx;
      const ref = dev.store.loc.desiredRef;
      try {
        const d1 = await fx.commit(dev);
        git(fx.work, 'fetch', '-q', dev.bare, d1);
        git(fx.work, 'update-ref', ref, d1); // made before records: a branch and no record
        await fx.commit(stg);
        const stgRefs = await stg.store.snapshot();
        assert.deepEqual(await stg.local.syncKnownBranches(stgRefs), [], "it holds dev's state.yaml: not stg's work");
        assert.deepEqual([tip(ref), tip(stg.record)], [d1, undefined]);
        const d2 = await fx.commit(dev, d1);
        assert.deepEqual(await dev.local.syncKnownBranches(await dev.store.snapshot()), []);
        assert.deepEqual([tip(ref), tip(dev.record)], [d2, d2], "a fast-forward proves it dev's: recorded");
      } finally {
        fx.close();
      }
    });
  });
