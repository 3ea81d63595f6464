// The state store port's contract (src/state/store.ts), one suite run against every
// implementation:
// - GitStateStore in each location kind: 'clone' (the checkout's own branches, update-ref
//   transactions), 'path' (a bare repository opened directly, atomic pushes to its file:// URL),
//   'remote' (a bare repository behind a file:// URL, read through the store's cache repository
//   under NYL_CACHE_DIR, atomic pushes);
// - MemoryStateStore (test/fakes/memory-store.mjs) with a location of kind 'remote' and of kind
//   'clone' (it follows the Git store's compare-and-swap rules of the location's kind).
// An update whose ref already holds its target is up to date: a push passes it whatever it
// expected, a local transaction still checks (the contract says so); both are pinned here, and so
// is the window where a push does not check such an update at all (a ref moved while the push is
// in flight), which is why every write of a lease holder moves its lease.
// Further parts: identical CommitSpecs give identical commit ids everywhere; what the comment
// leaves open is pinned to the Git store's behaviour, kind by kind, and the memory store must
// behave the same; the memory store's own test hooks and helpers.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Git } from '../../dist/git/git.js';
import { NodeProcessRunner } from '../../dist/exec/process.js';
import { BatchReader } from '../../dist/git/batch-reader.js';
import { writeCommits } from '../../dist/git/object-writer.js';
import { GitStateStore } from '../../dist/state/git-store.js';
import { openCheckout } from '../../dist/project/checkout.js';
import { coordinationNamespace, resolveLocation, signalsPrefix } from '../../dist/state/location.js';
import { JsonCache } from '../../dist/util/json-cache.js';
import { cleanupAll, git, gitResult, hermeticEnv, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { MemoryRepository, MemoryStateStore, memoryLocation } from '../fakes/memory-store.mjs';
import { projectWith } from '../support/project-doc.mjs';

after(() => cleanupAll());

const cacheDir = tempDir('nyl-store-cache-');
const env = hermeticEnv({ NYL_CACHE_DIR: cacheDir });
const newGit = () => new Git(new NodeProcessRunner(), env);

const AUTHOR = { name: 'Nyl Test', email: 'nyl@example.com' };
const T0 = 1767225600000;

/** A CommitSpec from an object of path -> content (null deletes). */
function spec(files, { parent, clearTree, message = 'test\n', timeMs = T0, author = AUTHOR } = {}) {
  const c = { changes: new Map(Object.entries(files)), message, author, timeMs };
  if (parent !== undefined) c.parent = parent;
  if (clearTree) c.clearTree = true;
  return c;
}

// --- implementations ------------------------------------------------------------------------

function parseRefs(out) {
  const refs = new Map();
  for (const line of out.split('\n')) {
    if (!line) continue;
    const [oid, ref] = line.split(' ');
    refs.set(ref, oid);
  }
  return refs;
}

/**
 * A fixture: one state repository and a way to open stores on it.
 * - open(envName, refs?) -> a store (refs: {desiredRef, observedRef, coordinationPrefix} overrides)
 * - setRef(ref, oid|null): moves a ref of the state repository behind the stores' back
 * - seed(specs): writes commits straight into the state repository
 * - allRefs(): every ref of the state repository (not the clone's own main branch)
 * - packRefs(): packs the refs (Git only)
 * - raceNextWrite(ref, oid): the next push moves ref to oid while it is in flight, after the
 *   remote advertised its refs and before it locks them (push kinds only)
 * - unreachable(bool): makes the state repository unreachable or reachable again
 */
function gitImpl(kind) {
  return {
    name: `git ${kind}`,
    kind,
    push: kind !== 'clone',
    memory: false,
    async make() {
      const g = newGit();
      const work = makeProject({ 'nyl.yaml': 'apiVersion: nyl.io/v1\n' });
      const checkout = await openCheckout(g, work);
      const bare = kind === 'clone' ? undefined : makeBareRepo();
      const stateDir = bare ?? work;
      const stores = [];
      const readers = [];
      const fx = {
        dir: stateDir,
        async open(envName = 'dev', refs = {}) {
          const state = {};
          if (bare) state.repository = { repoURL: `file://${bare}` };
          if (refs.desiredRef) state.desiredRef = refs.desiredRef;
          if (refs.observedRef) state.observedRef = refs.observedRef;
          if (refs.coordinationPrefix) state.coordinationRefPrefix = refs.coordinationPrefix;
          const { project, environment } = projectWith(envName, state);
          let loc = resolveLocation(project, environment, checkout);
          assert.equal(loc.kind, kind === 'remote' ? 'path' : kind);
          if (kind === 'remote') {
            // A file:// URL resolves to 'path'; the remote code path is the same for any URL.
            loc = { ...loc, kind: 'remote' };
            delete loc.localPath;
          }
          const reader = new BatchReader(g, checkout.workTree);
          readers.push(reader);
          const store = new GitStateStore(g, loc, checkout, env, reader, new JsonCache(path.join(cacheDir, 'parsed'), 'conformance'));
          stores.push(store);
          await store.ensureOpen();
          return store;
        },
        setRef(ref, oid) {
          if (oid === null) git(stateDir, 'update-ref', '-d', ref);
          else git(stateDir, 'update-ref', ref, oid);
        },
        seed(specs) {
          return writeCommits(g, stateDir, specs);
        },
        allRefs() {
          const refs = parseRefs(git(stateDir, 'for-each-ref', '--format=%(objectname) %(refname)'));
          if (kind === 'clone') refs.delete('refs/heads/main');
          return refs;
        },
        packRefs() {
          git(stateDir, 'pack-refs', '--all');
        },
        /** The next push moves ref to oid after the remote advertised its refs (a one-shot pre-receive hook). */
        raceNextWrite(ref, oid) {
          if (!bare) throw new Error('a clone is written by a local ref transaction: no push to race');
          const hook = path.join(bare, 'hooks', 'pre-receive');
          // Inside the hook, the pushed objects are quarantined and ref updates refused: the race
          // runs outside the quarantine, as another process would.
          fs.writeFileSync(hook, `#!/bin/sh\nrm -f "$0"\nexec env -u GIT_QUARANTINE_PATH git update-ref ${ref} ${oid}\n`, { mode: 0o755 });
        },
        unreachable(on) {
          if (!bare) throw new Error('a clone is always reachable');
          if (on) fs.renameSync(bare, `${bare}.away`);
          else fs.renameSync(`${bare}.away`, bare);
        },
        cleanup() {
          for (const s of stores) s.close();
          for (const r of readers) r.close();
        },
      };
      return fx;
    },
  };
}

function memoryImpl(kind) {
  return {
    name: `memory (kind ${kind})`,
    kind,
    push: kind !== 'clone',
    memory: true,
    async make() {
      const repo = new MemoryRepository('conformance');
      let down = false;
      let race;
      const beforeWrite = () => {
        if (race) repo.setRef(...race);
        race = undefined;
      };
      return {
        repo,
        async open(envName = 'dev', refs = {}) {
          const store = new MemoryStateStore(repo, memoryLocation(envName, { kind, ...refs }), { unreachable: () => down, beforeWrite });
          await store.ensureOpen();
          return store;
        },
        setRef: (ref, oid) => repo.setRef(ref, oid),
        seed: async (specs) => repo.writeCommits(specs),
        allRefs: () => repo.refs(),
        packRefs() {},
        raceNextWrite(ref, oid) {
          race = [ref, oid];
        },
        unreachable(on) {
          down = on;
        },
        cleanup() {},
      };
    },
  };
}

const IMPLS = [gitImpl('clone'), gitImpl('path'), gitImpl('remote'), memoryImpl('remote'), memoryImpl('clone')];

async function withFixture(impl, fn) {
  const fx = await impl.make();
  try {
    return await fn(fx);
  } finally {
    fx.cleanup();
  }
}

/** Every file of a commit through the store's reader: path -> text. */
async function filesOf(reader, commit) {
  const files = new Map();
  const walk = async (spec, prefix) => {
    const entries = await reader.readTree(spec);
    assert.ok(entries, `a tree at ${spec}`);
    for (const e of entries) {
      const p = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.type === 'tree') await walk(e.oid, p);
      else files.set(p, (await reader.read(e.oid)).content.toString());
    }
  };
  await walk(`${commit}^{tree}`, '');
  return Object.fromEntries([...files].sort(([a], [b]) => (a < b ? -1 : 1)));
}

async function parentsOf(reader, commit) {
  const obj = await reader.read(commit);
  assert.equal(obj?.type, 'commit');
  const head = obj.content.toString().split('\n\n')[0];
  return head
    .split('\n')
    .filter((l) => l.startsWith('parent '))
    .map((l) => l.slice(7));
}

const plain = (map) => Object.fromEntries(map);

/**
 * Two distinct commits to point refs at, written through the store and straight into the state
 * repository (a remote store writes objects into its cache repository; refs set behind its back
 * need them in the state repository). The ids must agree.
 */
async function twoCommits(fx, store, tag = '') {
  const specs = [spec({ [`one${tag}`]: '1' }, { message: `one${tag}\n` }), spec({ [`two${tag}`]: '2' }, { message: `two${tag}\n` })];
  const ids = await store.writeCommits(specs);
  assert.deepEqual(await fx.seed(specs), ids);
  return ids;
}

// --- the contract, per implementation -------------------------------------------------------

describe('StateStore contract', { concurrency: true }, () => {
  for (const impl of IMPLS) {
    describe(`StateStore contract: ${impl.name}`, () => {
      test('snapshot of an empty location is empty; nothing under the coordination prefix', async () => {
        await withFixture(impl, async (fx) => {
          const store = await fx.open('dev');
          assert.equal(typeof store.localRepository, 'string');
          assert.ok(store.localRepository.length > 0);
          assert.deepEqual(plain(await store.snapshot()), {});
          assert.deepEqual(plain(await store.snapshotPrefix(coordinationNamespace(store.loc))), {});
          const may = store.mayHaveRefsUnder(coordinationNamespace(store.loc));
          if (impl.kind === 'remote' && !impl.memory) assert.ok(may === undefined || may === false);
          else assert.equal(may, false);
          assert.deepEqual(plain(fx.allRefs()), {});
        });
      });

      test('snapshot({cached}) of a network store is what it last read or wrote, without reading; elsewhere a read', async () => {
        await withFixture(impl, async (fx) => {
          const store = await fx.open('dev');
          const [c1, c2] = await twoCommits(fx, store);
          const lease = `${coordinationNamespace(store.loc)}lease`;
          const network = impl.kind === 'remote';
          if (network) assert.deepEqual(plain(await store.snapshot({ cached: true })), {}, 'nothing read yet');
          fx.setRef(store.loc.desiredRef, c1);
          assert.deepEqual(plain(await store.snapshot()), { [store.loc.desiredRef]: c1 });
          assert.equal((await store.write([{ ref: lease, expect: null, to: c2 }])).ok, true);
          // Moved behind the store's back since: a network store's cached refs do not see it.
          fx.setRef(store.loc.desiredRef, c2);
          const cached = plain(await store.snapshot({ cached: true }));
          assert.deepEqual(cached, { [store.loc.desiredRef]: network ? c1 : c2, [lease]: c2 });
        });
      });

      test('snapshot({readOnly}) reads what snapshot() reads and moves no ref, not even in the work repository; the tips are readable', async () => {
        await withFixture(impl, async (fx) => {
          // Written and set behind the store's back: a remote store's work repository has neither
          // the objects nor a mirror of the refs, so the read must fetch the objects.
          const [c1, c2] = await fx.seed([spec({ one: '1' }, { message: 'one\n' }), spec({ two: '2' }, { message: 'two\n' })]);
          const store = await fx.open('dev');
          fx.setRef(store.loc.desiredRef, c1);
          fx.setRef(`${coordinationNamespace(store.loc)}lease`, c2);
          const workRefs = () => (impl.memory ? '' : git(store.workDir, 'for-each-ref'));
          const before = { state: plain(fx.allRefs()), work: workRefs() };
          const read = await store.snapshot({ readOnly: true });
          assert.deepEqual(plain(read), { [store.loc.desiredRef]: c1, [`${coordinationNamespace(store.loc)}lease`]: c2 });
          assert.equal((await store.reader.read(`${c1}:one`)).content.toString(), '1', 'the tips are readable');
          assert.equal((await store.reader.read(`${c2}:two`)).content.toString(), '2');
          assert.deepEqual({ state: plain(fx.allRefs()), work: workRefs() }, before, 'no ref moved anywhere');
          assert.deepEqual(plain(await store.snapshot()), plain(read), 'the same as a plain snapshot');
        });
      });

      test('writeCommits: read blobs and trees by commit:path and by id; nested paths; no ref moves', async () => {
        await withFixture(impl, async (fx) => {
          const store = await fx.open('dev');
          const binary = Buffer.from([0, 1, 2, 10, 255]);
          const [c] = await store.writeCommits([
            spec({ 'state.yaml': 'generation: 1\n', 'envs/dev/units/b.yaml': 'uid: b\n', 'envs/dev/units/a.yaml': 'uid: a\n', bin: binary, empty: '' }),
          ]);
          assert.match(c, /^[0-9a-f]{40}$/);
          const { reader } = store;
          const state = await reader.read(`${c}:state.yaml`);
          assert.equal(state.type, 'blob');
          assert.equal(state.content.toString(), 'generation: 1\n');
          assert.deepEqual(await reader.read(state.oid), state, 'the same blob by its id');
          assert.equal((await reader.read(`${c}:envs/dev/units/a.yaml`)).content.toString(), 'uid: a\n');
          assert.deepEqual((await reader.read(`${c}:bin`)).content, binary);
          assert.equal((await reader.read(`${c}:empty`)).content.length, 0);

          const units = await reader.readTree(`${c}:envs/dev/units`);
          assert.deepEqual(
            units.map((e) => [e.mode, e.name, e.type]),
            [
              ['100644', 'a.yaml', 'blob'],
              ['100644', 'b.yaml', 'blob'],
            ],
          );
          assert.equal((await reader.read(units[1].oid)).content.toString(), 'uid: b\n');
          const envs = await reader.readTree(`${c}:envs`);
          assert.deepEqual(
            envs.map((e) => [e.mode, e.name, e.type]),
            [['40000', 'dev', 'tree']],
          );
          const unitsObject = await reader.read(`${c}:envs/dev/units`);
          assert.equal(unitsObject.type, 'tree');
          assert.deepEqual(await reader.readTree(unitsObject.oid), units, 'a tree by its id');
          const root = await reader.read(`${c}^{tree}`);
          assert.equal(root.type, 'tree');
          assert.deepEqual(
            (await reader.readTree(`${c}^{tree}`)).map((e) => e.name),
            ['bin', 'empty', 'envs', 'state.yaml'],
          );

          const commitObject = await reader.read(c);
          assert.equal(commitObject.type, 'commit');
          assert.equal(commitObject.oid, c);
          assert.match(
            commitObject.content.toString(),
            new RegExp(
              `^tree ${root.oid}\nauthor Nyl Test <nyl@example.com> 1767225600 \\+0000\ncommitter Nyl Test <nyl@example.com> 1767225600 \\+0000\n\ntest\n$`,
            ),
          );

          assert.equal(await reader.read(`${c}:missing.yaml`), undefined);
          assert.equal(await reader.read(`${c}:envs/dev/units/a.yaml/deeper`), undefined);
          assert.equal(await reader.read('0123456789abcdef0123456789abcdef01234567'), undefined);
          assert.equal(await reader.readTree(`${c}:state.yaml`), undefined, 'a blob is no tree');
          assert.equal(await reader.readTree(c), undefined, 'a commit is no tree');
          assert.equal(await reader.readTree(`${c}:nothing`), undefined);
          const many = await reader.readMany([`${c}:envs/dev/units/b.yaml`, `${c}:nope`, state.oid, 'f'.repeat(40), `${c}:envs/dev/units/a.yaml`]);
          assert.deepEqual(
            many.map((o) => o?.content.toString()),
            ['uid: b\n', undefined, 'generation: 1\n', undefined, 'uid: a\n'],
          );
          assert.deepEqual(await reader.readMany([]), []);

          assert.deepEqual(plain(await store.snapshot()), {}, 'writeCommits moves no ref');
          assert.deepEqual(plain(fx.allRefs()), {});
          assert.deepEqual(await store.writeCommits([]), []);
        });
      });

      test('writeCommits: parents by index and by id, deletions, clearTree, emptied directories go', async () => {
        await withFixture(impl, async (fx) => {
          const store = await fx.open('dev');
          const { reader } = store;
          const ids = await store.writeCommits([
            spec({ 'a.yaml': 'a\n', 'd/x.yaml': 'x\n', 'd/y.yaml': 'y\n' }, { message: 'zero\n' }),
            spec({ 'd/x.yaml': null, 'e/f/g.yaml': 'g\n', 'not-there': null }, { parent: { index: 0 }, message: 'one\n' }),
            spec({ 'd/y.yaml': null, 'a.yaml': 'a2\n' }, { parent: { index: 1 }, message: 'two\n' }),
            spec({ 'only.yaml': 'o\n' }, { parent: { index: 1 }, clearTree: true, message: 'three\n' }),
          ]);
          assert.equal(ids.length, 4);
          assert.equal(new Set(ids).size, 4);
          const [c0, c1, c2, c3] = ids;
          assert.deepEqual(await parentsOf(reader, c0), []);
          assert.deepEqual(await parentsOf(reader, c1), [c0]);
          assert.deepEqual(await parentsOf(reader, c2), [c1]);
          assert.deepEqual(await parentsOf(reader, c3), [c1], 'clearTree keeps the parent');
          assert.deepEqual(await filesOf(reader, c0), { 'a.yaml': 'a\n', 'd/x.yaml': 'x\n', 'd/y.yaml': 'y\n' });
          assert.deepEqual(await filesOf(reader, c1), { 'a.yaml': 'a\n', 'd/y.yaml': 'y\n', 'e/f/g.yaml': 'g\n' });
          assert.deepEqual(await filesOf(reader, c2), { 'a.yaml': 'a2\n', 'e/f/g.yaml': 'g\n' });
          assert.equal(await reader.read(`${c2}:d`), undefined, 'a directory emptied by deletions is gone');
          assert.deepEqual(await filesOf(reader, c3), { 'only.yaml': 'o\n' });

          const [c4, c5] = await store.writeCommits([
            spec({ 'e/f/g.yaml': null }, { parent: c2, message: 'four\n' }),
            spec({}, { parent: c3, clearTree: true, message: 'empty\n' }),
          ]);
          assert.deepEqual(await parentsOf(reader, c4), [c2], 'a parent by commit id of an earlier batch');
          assert.deepEqual(await filesOf(reader, c4), { 'a.yaml': 'a2\n' });
          assert.equal(await reader.read(`${c4}:e`), undefined, 'nested emptied directories are gone');
          assert.deepEqual(await reader.readTree(`${c5}^{tree}`), [], 'an empty tree');
          assert.equal((await reader.read(`${c5}^{tree}`)).oid, '4b825dc642cb6eb9a060e54bf8d69288fbee4904');
          const [again] = await store.writeCommits([spec({ 'e/f/g.yaml': null }, { parent: c2, message: 'four\n' })]);
          assert.equal(again, c4, 'the same spec gives the same id');
        });
      });

      test('write: create (expect null), update (expect old), delete (expect current)', async () => {
        await withFixture(impl, async (fx) => {
          const store = await fx.open('dev');
          const [c1, c2] = await twoCommits(fx, store);
          const lease = `${coordinationNamespace(store.loc)}lease`;
          assert.deepEqual(
            await store.write([
              { ref: lease, expect: null, to: c1 },
              { ref: store.loc.desiredRef, expect: null, to: c1 },
            ]),
            { ok: true },
          );
          assert.deepEqual(plain(await store.snapshot()), { [store.loc.desiredRef]: c1, [lease]: c1 });
          assert.deepEqual(await store.write([{ ref: lease, expect: c1, to: c2 }]), { ok: true });
          assert.equal((await store.snapshot()).get(lease), c2);
          assert.deepEqual(
            await store.write([
              { ref: lease, expect: c2, to: null },
              { ref: store.loc.desiredRef, expect: c1, to: c2 },
            ]),
            { ok: true },
          );
          assert.deepEqual(plain(await store.snapshot()), { [store.loc.desiredRef]: c2 });
          assert.deepEqual(plain(fx.allRefs()), { [store.loc.desiredRef]: c2 });
          assert.deepEqual(await store.write([]), { ok: true }, 'an empty write');
        });
      });

      test('write: one stale expectation rejects all updates; nothing moves', async () => {
        await withFixture(impl, async (fx) => {
          const store = await fx.open('dev');
          const [c1, c2] = await twoCommits(fx, store);
          const ns = coordinationNamespace(store.loc);
          const [a, b, c, d] = [`${ns}lease`, `${ns}runs/r1`, `${ns}runs/r2`, store.loc.desiredRef];
          assert.deepEqual(
            await store.write([
              { ref: a, expect: null, to: c1 },
              { ref: b, expect: null, to: c1 },
              { ref: d, expect: null, to: c1 },
            ]),
            { ok: true },
          );
          const before = plain(await store.snapshot());
          const result = await store.write([
            { ref: a, expect: c1, to: c2 },
            { ref: b, expect: c2, to: c2 }, // stale: b is at c1
            { ref: c, expect: null, to: c2 },
            { ref: d, expect: c1, to: null },
          ]);
          assert.equal(result.ok, false);
          assert.equal(result.kind, 'rejected');
          assert.equal(typeof result.message, 'string');
          assert.ok(
            result.refs.some((r) => r.ref === b),
            `the stale ref is named: ${JSON.stringify(result.refs)}`,
          );
          assert.deepEqual(plain(await store.snapshot()), before);
          assert.deepEqual(plain(fx.allRefs()), before);
        });
      });

      test('write: a stale expectation on a ref that does not exist rejects the write', async () => {
        await withFixture(impl, async (fx) => {
          const store = await fx.open('dev');
          const [c1, c2] = await twoCommits(fx, store);
          const ns = coordinationNamespace(store.loc);
          const result = await store.write([
            { ref: `${ns}runs/r1`, expect: null, to: c1 },
            { ref: `${ns}lease`, expect: c1, to: c2 },
          ]);
          assert.equal(result.ok, false);
          assert.equal(result.kind, 'rejected');
          assert.deepEqual(plain(await store.snapshot()), {});
          const del = await store.write([{ ref: `${ns}lease`, expect: c1, to: null }]);
          assert.equal(del.kind, 'rejected', 'deleting an absent ref that is expected to exist');
          assert.deepEqual(plain(fx.allRefs()), {});
        });
      });

      test('write: creating a ref that already exists (with another value) is rejected', async () => {
        await withFixture(impl, async (fx) => {
          const store = await fx.open('dev');
          const [c1, c2] = await twoCommits(fx, store);
          const lease = `${coordinationNamespace(store.loc)}lease`;
          assert.deepEqual(await store.write([{ ref: lease, expect: null, to: c1 }]), { ok: true });
          const result = await store.write([
            { ref: lease, expect: null, to: c2 },
            { ref: store.loc.observedRef, expect: null, to: c2 },
          ]);
          assert.equal(result.kind, 'rejected');
          assert.deepEqual(plain(await store.snapshot()), { [lease]: c1 });
        });
      });

      test('write: a ref that already holds its target is up to date: a push passes it, a local transaction checks it', async () => {
        await withFixture(impl, async (fx) => {
          const store = await fx.open('dev');
          const [c1, c2] = await twoCommits(fx, store);
          const lease = `${coordinationNamespace(store.loc)}lease`;
          assert.deepEqual(await store.write([{ ref: lease, expect: null, to: c2 }]), { ok: true });
          // The caller believes the lease is at c1 and "moves" it to c2, where it already is.
          const result = await store.write([
            { ref: lease, expect: c1, to: c2 },
            { ref: store.loc.desiredRef, expect: null, to: c1 },
          ]);
          if (impl.push) {
            assert.deepEqual(result, { ok: true });
            assert.deepEqual(plain(await store.snapshot()), { [lease]: c2, [store.loc.desiredRef]: c1 });
          } else {
            assert.equal(result.kind, 'rejected');
            assert.deepEqual(plain(await store.snapshot()), { [lease]: c2 });
          }
        });
      });

      test('a write that pushes a ref to its own value: lands while the ref holds it, leaves it there; a moved ref rejects the whole write', async () => {
        await withFixture(impl, async (fx) => {
          const store = await fx.open('dev');
          const [c1, c2] = await twoCommits(fx, store);
          const lease = `${coordinationNamespace(store.loc)}lease`;
          const toItself = (value) => ({ ref: lease, expect: value, to: value });
          assert.deepEqual(await store.write([{ ref: lease, expect: null, to: c1 }]), { ok: true });
          assert.deepEqual(await store.write([{ ref: store.loc.desiredRef, expect: null, to: c2 }, toItself(c1)]), { ok: true });
          assert.deepEqual(plain(await store.snapshot()), { [lease]: c1, [store.loc.desiredRef]: c2 }, 'the ref pushed to itself does not move');
          assert.deepEqual(await store.write([toItself(c1)]), { ok: true }, 'alone: the ref is still there');
          assert.deepEqual(await store.write([{ ref: lease, expect: c1, to: c2 }]), { ok: true }, 'someone else moves the lease');
          const stale = await store.write([{ ref: store.loc.desiredRef, expect: c2, to: c1 }, toItself(c1)]);
          assert.equal(stale.kind, 'rejected', 'the ref moved before the write began: nothing moves');
          assert.equal((await store.write([toItself(c1)])).kind, 'rejected', 'alone, it is checked too');
          assert.deepEqual(plain(await store.snapshot()), { [lease]: c2, [store.loc.desiredRef]: c2 });
        });
      });

      test('a ref moved while a push is in flight: the refs it moves are checked under the lock, a ref it pushes to itself only as the push began', {
        skip: !impl.push && 'a clone writes by a local ref transaction, which checks every ref under its lock',
      }, async () => {
        await withFixture(impl, async (fx) => {
          const store = await fx.open('dev');
          const [c1, c2] = await twoCommits(fx, store);
          const [c3] = await twoCommits(fx, store, '-3');
          const lease = `${coordinationNamespace(store.loc)}lease`;
          const desired = store.loc.desiredRef;
          assert.deepEqual(
            await store.write([
              { ref: lease, expect: null, to: c1 },
              { ref: desired, expect: null, to: c1 },
            ]),
            { ok: true },
          );
          // Another writer takes the lease after the push read the remote's refs, before it locks them.
          fx.raceNextWrite(lease, c2);
          const toItself = await store.write([
            { ref: desired, expect: c1, to: c2 },
            { ref: lease, expect: c1, to: c1 },
          ]);
          assert.deepEqual(toItself, { ok: true }, 'git sends no update for a ref already at its target: the moved lease is not seen');
          assert.deepEqual(plain(fx.allRefs()), { [lease]: c2, [desired]: c2 });
          fx.setRef(lease, c1);
          fx.raceNextWrite(lease, c2);
          const moving = await store.write([
            { ref: desired, expect: c2, to: c1 },
            { ref: lease, expect: c1, to: c3 },
          ]);
          assert.equal(moving.kind, 'rejected', 'a ref the push moves is checked under the lock: the moved lease rejects it all');
          assert.deepEqual(plain(fx.allRefs()), { [lease]: c2, [desired]: c2 });
        });
      });

      test('write: creating a ref where a ref is a directory of it is rejected; nothing moves', async () => {
        await withFixture(impl, async (fx) => {
          const store = await fx.open('dev');
          const [c1] = await twoCommits(fx, store);
          const ns = coordinationNamespace(store.loc);
          assert.deepEqual(await store.write([{ ref: `${ns}runs`, expect: null, to: c1 }]), { ok: true });
          const result = await store.write([
            { ref: `${ns}lease`, expect: null, to: c1 },
            { ref: `${ns}runs/r1`, expect: null, to: c1 },
          ]);
          assert.equal(result.kind, 'rejected');
          assert.deepEqual(plain(await store.snapshot()), { [`${ns}runs`]: c1 });
        });
      });

      test('snapshot sees exactly the watched refs: desired, observed, the coordination namespace', async () => {
        await withFixture(impl, async (fx) => {
          const store = await fx.open('dev');
          const other = await fx.open('devx');
          const [c1, c2] = await twoCommits(fx, store);
          const watched = {
            'refs/heads/nyl/dev/desired': c1,
            'refs/heads/nyl/dev/observed': c2,
            'refs/nyl/dev/lease': c1,
            'refs/nyl/dev/runs/0190a1b2-run': c2,
            'refs/nyl/dev/signals/hold/db/deep': c1,
            'refs/nyl/dev/evidence/x': c2,
          };
          assert.deepEqual(await store.write(Object.entries(watched).map(([ref, to]) => ({ ref, expect: null, to }))), { ok: true });
          // Another environment's store writes its own refs; more refs appear behind the back.
          assert.deepEqual(
            await other.write([
              { ref: other.loc.desiredRef, expect: null, to: c1 },
              { ref: `${coordinationNamespace(other.loc)}lease`, expect: null, to: c2 },
            ]),
            { ok: true },
          );
          for (const ref of [
            'refs/nyl/dev-2/lease',
            'refs/nyl/de/lease',
            'refs/heads/nyl/dev/desired2',
            'refs/heads/nyl/dev/other',
            'refs/heads/nyl/devx/observed',
            'refs/tags/dev',
            'refs/nyl-other/dev/lease',
            'refs/heads/main2',
          ]) {
            fx.setRef(ref, c1);
          }
          assert.deepEqual(plain(await store.snapshot()), watched);
          assert.deepEqual(plain(await other.snapshot()), {
            'refs/heads/nyl/devx/desired': c1,
            'refs/heads/nyl/devx/observed': c1,
            'refs/nyl/devx/lease': c2,
          });
          // Custom ref names and coordination prefix (desired and observed on one ref).
          const custom = await fx.open('dev', { desiredRef: 'refs/heads/state/dev', observedRef: 'refs/heads/state/dev', coordinationPrefix: 'refs/coord/' });
          fx.setRef('refs/heads/state/dev', c2);
          fx.setRef('refs/coord/dev/lease', c1);
          fx.setRef('refs/coord/devx/lease', c1);
          assert.deepEqual(plain(await custom.snapshot()), { 'refs/coord/dev/lease': c1, 'refs/heads/state/dev': c2 });
        });
      });

      test('snapshotPrefix: the refs under one prefix, as they are now', async () => {
        await withFixture(impl, async (fx) => {
          const store = await fx.open('dev');
          const [c1, c2] = await twoCommits(fx, store);
          const signals = signalsPrefix(store.loc);
          assert.deepEqual(plain(await store.snapshotPrefix(signals)), {});
          assert.deepEqual(
            await store.write([
              { ref: `${signals}hold/a`, expect: null, to: c1 },
              { ref: `${signals}hold/b/deep`, expect: null, to: c2 },
              { ref: `${coordinationNamespace(store.loc)}lease`, expect: null, to: c1 },
            ]),
            { ok: true },
          );
          fx.setRef('refs/nyl/dev/signalsx/c', c1);
          fx.setRef('refs/nyl/devx/signals/hold/a', c1);
          assert.deepEqual(plain(await store.snapshotPrefix(signals)), { [`${signals}hold/a`]: c1, [`${signals}hold/b/deep`]: c2 });
          fx.setRef(`${signals}hold/a`, null);
          fx.setRef(`${signals}cancel`, c2);
          assert.deepEqual(
            plain(await store.snapshotPrefix(signals)),
            { [`${signals}cancel`]: c2, [`${signals}hold/b/deep`]: c2 },
            'a ref deleted behind the back is gone',
          );
        });
      });

      test('mayHaveRefsUnder: exact, except that the Git store cannot know for a remote (undefined: only a read can tell)', async () => {
        await withFixture(impl, async (fx) => {
          const store = await fx.open('dev');
          const [c1] = await twoCommits(fx, store);
          const signals = signalsPrefix(store.loc);
          const check = (expected, why) => {
            const got = store.mayHaveRefsUnder(signals);
            if (impl.kind === 'remote' && !impl.memory) assert.equal(got, undefined, `${why}: a remote's refs are not on this machine`);
            else assert.equal(got, expected, why);
          };
          check(false, 'nothing yet');
          fx.setRef('refs/nyl/dev/signalsx/a', c1);
          fx.setRef('refs/nyl/devx/signals/a', c1);
          check(false, 'only refs beside the prefix');
          assert.deepEqual(await store.write([{ ref: `${signals}hold/a`, expect: null, to: c1 }]), { ok: true });
          check(true, 'a loose ref under the prefix');
          assert.deepEqual(await store.write([{ ref: `${signals}hold/a`, expect: c1, to: null }]), { ok: true });
          check(false, 'deleted again');
          fx.setRef(`${signals}hold/b`, c1);
          fx.packRefs();
          check(true, 'a packed ref under the prefix');
          assert.deepEqual(await store.write([{ ref: `${signals}hold/b`, expect: c1, to: null }]), { ok: true });
          check(false, 'the packed ref deleted');
        });
      });

      test('two concurrent writes with the same expectation: exactly one wins, whole (20 rounds)', async () => {
        await withFixture(impl, async (fx) => {
          const one = await fx.open('dev');
          const two = await fx.open('dev');
          const lease = `${coordinationNamespace(one.loc)}lease`;
          const runs = `${coordinationNamespace(one.loc)}runs/`;
          const ids = await one.writeCommits(Array.from({ length: 40 }, (_, i) => spec({ 'lease.yaml': `n: ${i}\n` }, { message: `c${i}\n` })));
          let current = null;
          for (let round = 0; round < 20; round++) {
            const [x, y] = [ids[2 * round], ids[2 * round + 1]];
            const results = await Promise.all([
              one.write([
                { ref: lease, expect: current, to: x },
                { ref: `${runs}one-${round}`, expect: null, to: x },
              ]),
              two.write([
                { ref: lease, expect: current, to: y },
                { ref: `${runs}two-${round}`, expect: null, to: y },
              ]),
            ]);
            const won = results.filter((r) => r.ok);
            assert.equal(won.length, 1, `round ${round}: exactly one wins: ${JSON.stringify(results)}`);
            const loser = results.find((r) => !r.ok);
            assert.equal(loser.kind, 'rejected', `round ${round}: the loser is rejected: ${JSON.stringify(loser)}`);
            const winner = results[0].ok ? 'one' : 'two';
            current = results[0].ok ? x : y;
            const snap = await (round % 2 ? one : two).snapshot();
            assert.equal(snap.get(lease), current, `round ${round}`);
            assert.ok(snap.has(`${runs}${winner}-${round}`), `round ${round}: the winner's second ref moved`);
            assert.ok(!snap.has(`${runs}${winner === 'one' ? 'two' : 'one'}-${round}`), `round ${round}: the loser's second ref did not`);
          }
        });
      });

      test('read-your-writes, and another store of the same repository sees the write after a snapshot', async () => {
        await withFixture(impl, async (fx) => {
          const store = await fx.open('dev');
          const [c1, c2] = await twoCommits(fx, store);
          const lease = `${coordinationNamespace(store.loc)}lease`;
          const signal = `${signalsPrefix(store.loc)}hold/a`;
          const second = await fx.open('dev');
          assert.deepEqual(plain(await second.snapshot()), {}, 'the second store looked before the write');
          assert.deepEqual(
            await store.write([
              { ref: lease, expect: null, to: c1 },
              { ref: signal, expect: null, to: c2 },
            ]),
            { ok: true },
          );
          assert.equal((await store.snapshot()).get(lease), c1);
          assert.deepEqual(plain(await store.snapshotPrefix(signalsPrefix(store.loc))), { [signal]: c2 });
          assert.equal((await store.reader.read(`${c1}:one`)).content.toString(), '1');
          assert.equal((await second.snapshot()).get(lease), c1);
          assert.equal(
            (await second.reader.read(`${(await second.snapshot()).get(lease)}:one`)).content.toString(),
            '1',
            'objects of a ref read through another store',
          );
          // The second store writes on top of what it read; the first sees that too.
          assert.deepEqual(
            await second.write([
              { ref: lease, expect: c1, to: c2 },
              { ref: signal, expect: c2, to: null },
            ]),
            { ok: true },
          );
          assert.deepEqual(plain(await store.snapshot()), { [lease]: c2 });
          assert.deepEqual(plain(await store.snapshotPrefix(signalsPrefix(store.loc))), {});
          // A change behind the back is seen by the next snapshot, a deletion too.
          const [c3] = await fx.seed([spec({ three: '3' }, { message: 'three\n' })]);
          fx.setRef(lease, c3);
          fx.setRef(store.loc.observedRef, c3);
          assert.deepEqual(plain(await store.snapshot()), { [store.loc.observedRef]: c3, [lease]: c3 });
          assert.equal((await store.reader.read(`${c3}:three`)).content.toString(), '3');
          fx.setRef(lease, null);
          assert.deepEqual(plain(await store.snapshot()), { [store.loc.observedRef]: c3 });
          assert.deepEqual(await store.write([{ ref: store.loc.observedRef, expect: c3, to: c1 }]), { ok: true });
          assert.deepEqual(plain(await store.snapshot()), { [store.loc.observedRef]: c1 });
        });
      });

      test("importObjects brings another store's commits with their history, moving no ref; isAncestor; a merge commit keeps both parents", async () => {
        await withFixture(impl, async (fxA) => {
          await withFixture(impl, async (fxB) => {
            const a = await fxA.open('dev');
            const b = await fxB.open('dev');
            const [c1] = await a.writeCommits([spec({ 'units/x.yaml': 'uid: x\n' }, { message: 'one\n' })]);
            const [c2] = await a.writeCommits([spec({ 'units/y.yaml': 'uid: y\n' }, { parent: c1, message: 'two\n' })]);
            assert.equal(await b.reader.read(c2), undefined, 'not in the other repository yet');
            const refsBefore = plain(fxB.allRefs());
            await b.importObjects(a, [c2]);
            assert.deepEqual(plain(fxB.allRefs()), refsBefore, 'no ref moved');
            assert.equal((await b.reader.read(`${c2}:units/x.yaml`)).content.toString(), 'uid: x\n', 'with the history it reaches');
            assert.equal(await b.isAncestor(c1, c2), true);
            assert.equal(await b.isAncestor(c2, c2), true, 'a commit is in its own history');
            assert.equal(await b.isAncestor(c2, c1), false);
            const [own] = await b.writeCommits([spec({ 'state.yaml': 'other\n' }, { message: 'own\n' })]);
            const [merge] = await b.writeCommits([{ ...spec({ 'units/z.yaml': 'uid: z\n' }, { parent: own, message: 'merge\n' }), merges: [c2] }]);
            assert.deepEqual(await parentsOf(b.reader, merge), [own, c2], 'first parent, then the merged one');
            assert.deepEqual(Object.keys(await filesOf(b.reader, merge)), ['state.yaml', 'units/z.yaml'], "the tree is the first parent's with the changes");
            assert.equal(await b.isAncestor(c1, merge), true);
            await a.importObjects(a, [c2]);
          });
        });
      });

      if (impl.kind !== 'clone') {
        test('an unreachable repository: write is unreachable, snapshots throw NYL-STATE-UNAVAILABLE, nothing moves', async () => {
          await withFixture(impl, async (fx) => {
            const store = await fx.open('dev');
            const [c1, c2] = await twoCommits(fx, store);
            const lease = `${coordinationNamespace(store.loc)}lease`;
            assert.deepEqual(await store.write([{ ref: lease, expect: null, to: c1 }]), { ok: true });
            fx.unreachable(true);
            try {
              const result = await store.write([{ ref: lease, expect: c1, to: c2 }]);
              assert.equal(result.ok, false);
              assert.equal(result.kind, 'unreachable', JSON.stringify(result));
              assert.equal(typeof result.message, 'string');
              const unavailable = (e) => e.name === 'NylError' && e.code === 'NYL-STATE-UNAVAILABLE';
              await assert.rejects(store.snapshot(), unavailable);
              await assert.rejects(store.snapshotPrefix(signalsPrefix(store.loc)), unavailable);
            } finally {
              fx.unreachable(false);
            }
            assert.deepEqual(plain(await store.snapshot()), { [lease]: c1 });
          });
        });
      }
    });
  }
});

// --- the same commit ids everywhere ---------------------------------------------------------

test('identical CommitSpecs give identical commit and tree ids in every implementation', async () => {
  const batches = (first) => [
    [
      spec(
        { 'state.yaml': 'generation: 1\n', 'envs/dev/units/db.yaml': 'uid: u1\n', 'envs/dev/units/app.yaml': 'uid: u2\n' },
        { message: 'nyl: state-init dev\n' },
      ),
      spec(
        { 'envs/dev/units/db.yaml': null, 'envs/dev/units/web.yaml': 'uid: u3\n', 'gone.yaml': null },
        { parent: { index: 0 }, message: 'second\n', timeMs: T0 + 61_500 },
      ),
      spec(
        { 'lease.yaml': 'holder: x\n' },
        { parent: { index: 1 }, clearTree: true, message: 'no trailing newline', author: { name: 'Bob Q. Public', email: 'bob@example.com' } },
      ),
      spec({}, { message: 'empty\n' }),
      // Git's tree order: a directory sorts as if its name ended in '/'.
      spec({ 'a.b': '1', 'a/c': '2', 'a-b': '3', a0: '4', A: '5', a: null, 'b/a/b': '6', 'b.c/d': '7' }, { message: 'order\n\nwith a body\n' }),
      spec(
        { 'with space.yaml': 's', 'ünïcode.yaml': 'u', 'quote"d.yaml': 'q', bin: Buffer.from([0, 255, 10]) },
        { parent: { index: 4 }, message: 'odd names\n' },
      ),
      // A file replaced by a directory and a directory by a file; a deletion below a file.
      spec({ 'a.b/x': 'dir now', a: 'file now', 'a0/deeper': null }, { parent: { index: 5 }, message: 'replace\n' }),
      spec({ 'b/a/b': null, 'b.c/d': null }, { parent: { index: 6 }, message: 'prune\n' }),
    ],
    [spec({ 'next.yaml': 'n\n' }, { parent: first[2], message: 'later batch\n', timeMs: T0 + 999 })],
  ];
  const results = [];
  for (const impl of IMPLS) {
    await withFixture(impl, async (fx) => {
      const store = await fx.open('dev');
      const first = await store.writeCommits(batches([])[0]);
      const second = await store.writeCommits(batches(first)[1]);
      const ids = [...first, ...second];
      const trees = [];
      for (const id of ids) trees.push((await store.reader.read(`${id}^{tree}`)).oid);
      const files = await filesOf(store.reader, ids[7]);
      results.push({ name: impl.name, ids, trees, files });
    });
  }
  const reference = results.find((r) => r.name === 'git path');
  assert.deepEqual(reference.files, {
    A: '5',
    a: 'file now',
    'a-b': '3',
    'a.b/x': 'dir now',
    a0: '4',
    bin: Buffer.from([0, 255, 10]).toString(),
    'quote"d.yaml': 'q',
    'with space.yaml': 's',
    'ünïcode.yaml': 'u',
  });
  for (const r of results) {
    assert.deepEqual(r.trees, reference.trees, `${r.name}: tree ids`);
    assert.deepEqual(r.ids, reference.ids, `${r.name}: commit ids`);
    assert.deepEqual(r.files, reference.files, `${r.name}: files`);
  }
});

// --- what the contract comment leaves open, as the Git store does it, kind by kind ----------

describe('behaviour the contract comment leaves open: the memory store does what the Git store does', () => {
  const lease = (store) => `${coordinationNamespace(store.loc)}lease`;
  /**
   * name -> scenario(store, c1, c2) returning a write's promise, and the outcome per family; an
   * outcome 'throws' names the message the write throws with (`error`), as Git words it.
   * `coordinationOnly`: the write moves only coordination refs, which a repository of this machine
   * (kind path) takes as a local transaction, like a clone.
   */
  const SCENARIOS = {
    'deleting an absent ref with expect null: a push succeeds and changes nothing, update-ref throws': {
      coordinationOnly: true,
      run: (store) => store.write([{ ref: lease(store), expect: null, to: null }]),
      push: { result: 'ok', refs: {} },
      'update-ref': { result: 'throws', error: /delete refs\/nyl\/\w+\/lease: zero <oldvalue>/, refs: {} },
    },
    'expect undefined: unchecked by update-ref, refused (thrown) by a push': {
      coordinationOnly: true,
      async run(store, c1, c2) {
        assert.equal((await store.write([{ ref: lease(store), expect: null, to: c1 }])).ok, true);
        return store.write([{ ref: lease(store), expect: undefined, to: c2 }]);
      },
      push: { result: 'throws', error: /a push of refs\/nyl\/\w+\/lease needs the value it expects/, refs: { 'refs/nyl/ENV/lease': 'c1' } },
      'update-ref': { result: 'ok', refs: { 'refs/nyl/ENV/lease': 'c2' } },
    },
    'a stale expectation of a ref already at its target: a push succeeds (moving the other refs), update-ref rejects': {
      async run(store, c1, c2) {
        assert.equal((await store.write([{ ref: lease(store), expect: null, to: c2 }])).ok, true);
        return store.write([
          { ref: lease(store), expect: c1, to: c2 },
          { ref: store.loc.desiredRef, expect: null, to: c1 },
        ]);
      },
      push: { result: 'ok', refs: { 'refs/heads/nyl/ENV/desired': 'c1', 'refs/nyl/ENV/lease': 'c2' } },
      'update-ref': { result: 'rejected', refs: { 'refs/nyl/ENV/lease': 'c2' } },
    },
    'creating a ref that exists with the same value: a push succeeds, update-ref rejects': {
      coordinationOnly: true,
      async run(store, c1) {
        assert.equal((await store.write([{ ref: lease(store), expect: null, to: c1 }])).ok, true);
        return store.write([{ ref: lease(store), expect: null, to: c1 }]);
      },
      push: { result: 'ok', refs: { 'refs/nyl/ENV/lease': 'c1' } },
      'update-ref': { result: 'rejected', refs: { 'refs/nyl/ENV/lease': 'c1' } },
    },
  };

  /** implementation name -> scenario name -> {result, refs}; one fixture per implementation. */
  const outcomes = new Map();
  before(async () => {
    await Promise.all(
      IMPLS.map((impl) =>
        withFixture(impl, async (fx) => {
          const byScenario = new Map();
          let n = 0;
          for (const [name, scenario] of Object.entries(SCENARIOS)) {
            const envName = `p${n++}`;
            const store = await fx.open(envName);
            const [c1, c2] = await twoCommits(fx, store);
            let result;
            let error;
            try {
              const r = await scenario.run(store, c1, c2);
              result = r.ok ? 'ok' : r.kind;
            } catch (thrown) {
              // A failed assertion of the scenario's own setup is no outcome of the write.
              if (thrown instanceof assert.AssertionError) throw thrown;
              result = 'throws';
              error = thrown;
            }
            const refs = {};
            for (const [ref, oid] of await store.snapshot()) refs[ref.replace(`/${envName}/`, '/ENV/')] = oid === c1 ? 'c1' : oid === c2 ? 'c2' : oid;
            byScenario.set(name, { result, refs, error });
          }
          outcomes.set(impl.name, byScenario);
        }),
      ),
    );
  });

  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    test(name, () => {
      for (const impl of IMPLS) {
        const local = !impl.push || (impl.kind === 'path' && scenario.coordinationOnly);
        const family = local ? 'update-ref' : 'push';
        const { error, ...outcome } = outcomes.get(impl.name).get(name);
        const { error: thrownWith, ...expected } = scenario[family];
        assert.deepEqual(outcome, expected, `${impl.name} (${family}): ${error?.stack ?? 'no exception'}`);
        // Any exception would do for 'throws' otherwise: a TypeError of a bug in the store, too.
        if (expected.result === 'throws') assert.match(error.message, thrownWith, `${impl.name} (${family})`);
      }
    });
  }
});

// --- the memory store's own helpers, for the tests that use it ------------------------------

describe('MemoryStateStore: hooks and helpers for tests', () => {
  const open = (repo, env = 'dev', options = {}) => new MemoryStateStore(repo, memoryLocation(env), options);

  test('every async member yields to the event loop before it resolves', async () => {
    const repo = new MemoryRepository('yields');
    const store = open(repo);
    const [c1] = await store.writeCommits([spec({ a: '1' })]);
    const calls = {
      ensureOpen: () => store.ensureOpen(),
      snapshot: () => store.snapshot(),
      snapshotPrefix: () => store.snapshotPrefix('refs/nyl/dev/'),
      write: () => store.write([{ ref: 'refs/nyl/dev/lease', expect: null, to: c1 }]),
      emptyWrite: () => store.write([]),
      writeCommits: () => store.writeCommits([spec({ b: '2' })]),
      read: () => store.reader.read(`${c1}:a`),
      readMany: () => store.reader.readMany([`${c1}:a`]),
      readTree: () => store.reader.readTree(`${c1}^{tree}`),
      importObjects: () => store.importObjects(store, [c1]),
      isAncestor: () => store.isAncestor(c1, c1),
    };
    for (const [name, call] of Object.entries(calls)) {
      let ran = false;
      setImmediate(() => (ran = true));
      await call();
      assert.ok(ran, `${name} yielded`);
    }
  });

  test('identity: localRepository, loc, a Map-backed cache with JSON semantics, close', async () => {
    const repo = new MemoryRepository('shop');
    const loc = memoryLocation('dev');
    assert.deepEqual(loc, {
      environment: 'dev',
      kind: 'remote',
      url: 'memory://dev',
      pushURL: 'memory://dev',
      desiredRef: 'refs/heads/nyl/dev/desired',
      observedRef: 'refs/heads/nyl/dev/observed',
      statePath: '',
      coordinationPrefix: 'refs/nyl/',
      chosenBy: 'memory store (test)',
    });
    const clone = memoryLocation('qa', { kind: 'clone', statePath: 'envs/qa' });
    assert.equal(clone.url, undefined);
    assert.equal(clone.statePath, 'envs/qa');
    const store = new MemoryStateStore(repo, loc);
    assert.equal(store.localRepository, 'memory:shop');
    assert.equal(store.loc, loc);
    assert.equal(store.cache.get('units', 'x'), undefined);
    const value = { a: [1, 2], m: new Map([['k', 1]]) };
    store.cache.set('units', 'x', value);
    assert.deepEqual(store.cache.get('units', 'x'), { a: [1, 2], m: {} }, 'stored as JSON, like JsonCache');
    assert.notEqual(store.cache.get('units', 'x'), store.cache.get('units', 'x'), 'a fresh copy per get');
    assert.equal(store.cache.get('other', 'x'), undefined, 'kinds are apart');
    const shared = new MemoryStateStore(repo, loc, { cache: store.cache });
    assert.deepEqual(shared.cache.get('units', 'x').a, [1, 2], 'a cache shared through options');
    assert.equal(store.closed, false);
    store.close();
    assert.equal(store.closed, true);
  });

  test('beforeWrite sees the updates first and can race the write', async () => {
    const repo = new MemoryRepository();
    const [c1, c2] = repo.writeCommits([spec({ a: '1' }), spec({ a: '2' })]);
    const seen = [];
    const racer = open(repo);
    const store = open(repo, 'dev', {
      async beforeWrite(updates) {
        seen.push(updates);
        // Another process takes the lease while this write is on its way.
        assert.deepEqual(await racer.write([{ ref: 'refs/nyl/dev/lease', expect: null, to: c2 }]), { ok: true });
      },
    });
    const result = await store.write([{ ref: 'refs/nyl/dev/lease', expect: null, to: c1 }]);
    assert.equal(result.kind, 'rejected');
    assert.deepEqual(result.refs, [{ ref: 'refs/nyl/dev/lease', reason: '[remote rejected] (atomic transaction failed)' }]);
    assert.deepEqual(seen, [[{ ref: 'refs/nyl/dev/lease', expect: null, to: c1 }]]);
    assert.equal(repo.refs().get('refs/nyl/dev/lease'), c2);
    assert.deepEqual(store.stats, { writes: 1, rejected: 1, unreachable: 0, snapshots: 0, commits: 0 });
    assert.equal(repo.writes, 1, 'one successful write in the repository');
    await store.write([]);
    assert.equal(seen.length, 1, 'an empty write pushes nothing and calls no hook');
  });

  test('unreachable: writes are unreachable and snapshots throw while it says so; objects stay readable', async () => {
    const repo = new MemoryRepository();
    let down = true;
    const store = open(repo, 'dev', { unreachable: () => down });
    const [c1] = await store.writeCommits([spec({ a: '1' })]);
    assert.equal((await store.reader.read(`${c1}:a`)).content.toString(), '1');
    const result = await store.write([{ ref: 'refs/nyl/dev/lease', expect: null, to: c1 }]);
    assert.equal(result.ok, false);
    assert.equal(result.kind, 'unreachable');
    assert.match(result.message, /memory:\/\/dev/);
    await assert.rejects(
      store.snapshot(),
      (e) => e.name === 'NylError' && e.code === 'NYL-STATE-UNAVAILABLE' && /memory:\/\/dev of dev cannot be read/.test(e.message),
    );
    await assert.rejects(store.snapshotPrefix('refs/nyl/dev/signals/'), (e) => e.code === 'NYL-STATE-UNAVAILABLE');
    assert.deepEqual(plain(repo.refs()), {});
    down = false;
    assert.deepEqual(await store.write([{ ref: 'refs/nyl/dev/lease', expect: null, to: c1 }]), { ok: true });
    assert.deepEqual(plain(await store.snapshot()), { 'refs/nyl/dev/lease': c1 });
  });

  test('repository helpers: refs (a copy), setRef, read by ref name, commitsOf, filesAt', async () => {
    const repo = new MemoryRepository();
    const store = open(repo);
    const [c0, c1, c2] = await store.writeCommits([
      spec({ 'state.yaml': 's\n', 'envs/dev/units/a.yaml': 'a\n' }, { message: 'init\n' }),
      spec({ 'envs/dev/units/b.yaml': 'b\n' }, { parent: { index: 0 }, message: 'add b\n' }),
      spec({ 'envs/dev/units/a.yaml': null }, { parent: { index: 1 }, message: 'drop a\n' }),
    ]);
    assert.deepEqual(await store.write([{ ref: 'refs/heads/nyl/dev/desired', expect: null, to: c2 }]), { ok: true });
    const refs = repo.refs();
    refs.set('refs/nyl/dev/lease', c0);
    assert.deepEqual(plain(repo.refs()), { 'refs/heads/nyl/dev/desired': c2 }, 'refs() is a copy');
    repo.setRef('refs/nyl/dev/lease', c1);
    assert.equal((await store.snapshot()).get('refs/nyl/dev/lease'), c1);
    repo.setRef('refs/nyl/dev/lease', null);
    assert.equal((await store.snapshot()).has('refs/nyl/dev/lease'), false);

    assert.equal(repo.read('refs/heads/nyl/dev/desired:envs/dev/units/b.yaml').content.toString(), 'b\n');
    assert.equal(repo.read('refs/heads/nyl/dev/desired').oid, c2);
    assert.equal(await store.reader.read('refs/heads/nyl/dev/desired'), undefined, "the store's reader reads by object id only");

    const history = repo.commitsOf('refs/heads/nyl/dev/desired');
    assert.deepEqual(
      history.map((c) => [c.oid, c.message, c.parents]),
      [
        [c2, 'drop a\n', [c1]],
        [c1, 'add b\n', [c0]],
        [c0, 'init\n', []],
      ],
    );
    assert.equal(history[0].tree, repo.read(`${c2}^{tree}`).oid);
    assert.deepEqual(
      repo.commitsOf(c1).map((c) => c.oid),
      [c1, c0],
    );
    assert.deepEqual(repo.commitsOf('refs/heads/missing'), []);

    assert.deepEqual(plain(repo.filesAt(c1)), { 'envs/dev/units/a.yaml': 'a\n', 'envs/dev/units/b.yaml': 'b\n', 'state.yaml': 's\n' });
    assert.deepEqual(plain(repo.filesAt('refs/heads/nyl/dev/desired', 'envs/dev/units')), { 'b.yaml': 'b\n' });
    assert.deepEqual(plain(repo.filesAt(c0, 'nope')), {});
  });

  test('programming errors throw instead of returning a result', async () => {
    const repo = new MemoryRepository();
    const store = open(repo);
    const [c1] = await store.writeCommits([spec({ a: '1' })]);
    await assert.rejects(
      store.write([
        { ref: 'refs/nyl/dev/lease', expect: null, to: c1 },
        { ref: 'refs/nyl/dev/lease', expect: null, to: c1 },
      ]),
      /two updates/,
    );
    await assert.rejects(store.write([{ ref: 'refs/nyl/dev/a..b', expect: null, to: c1 }]), /invalid ref name/);
    await assert.rejects(store.write([{ ref: 'refs/lease', expect: null, to: c1 }]), /invalid ref name/);
    await assert.rejects(store.write([{ ref: 'refs/nyl/dev/lease', expect: null, to: 'f'.repeat(40) }]), /not an object/);
    await assert.rejects(store.write([{ ref: 'refs/nyl/dev/lease', expect: 'nope', to: c1 }]), /not a 40-hex/);
    await assert.rejects(store.writeCommits([spec({ a: '1' }, { parent: { index: 0 } })]), /names no earlier commit/);
    await assert.rejects(store.writeCommits([spec({ a: '1' }, { parent: 'f'.repeat(40) })]), /is not a commit/);
    await assert.rejects(store.writeCommits([spec({ 'a//b': '1' })]), /invalid path/);
    assert.throws(() => store.mayHaveRefsUnder('refs/nyl/dev'), /ending with/);
    assert.deepEqual(plain(repo.refs()), {});
  });
});
