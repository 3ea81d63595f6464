// The long-lived local ref writer (src/git/ref-transactions.ts) against real git: one process for
// many transactions, a stale expectation rejects the whole transaction and leaves every ref as it
// was (and the next transaction still lands), and a writer that dies surfaces as an error, never
// as a transaction that waits for ever.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { Git } from '../../dist/git/git.js';
import { NodeProcessRunner } from '../../dist/exec/process.js';
import { RefTransactionSession } from '../../dist/git/ref-transactions.js';
import { cleanupAll, commitTree, git, hermeticEnv, makeBareRepo } from '../support/git-fixtures.mjs';
import { refsUnder } from '../support/reconcile-helpers.mjs';

after(() => cleanupAll());

function fixture() {
  const repo = makeBareRepo();
  const a = commitTree(repo, { 'a.txt': 'a' }, { message: 'a' });
  const b = commitTree(repo, { 'b.txt': 'b' }, { message: 'b' });
  const g = new Git(new NodeProcessRunner(), hermeticEnv());
  return { repo, a, b, g, session: new RefTransactionSession(g, repo) };
}

/** Fails the test instead of hanging it when a promise never settles. */
function within(ms, promise) {
  let timer;
  const limit = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

test('many transactions, one git process: creates, updates and deletes land in order', async () => {
  const { repo, a, b, g, session } = fixture();
  try {
    for (let i = 0; i < 10; i++) {
      const r = await session.apply([{ ref: `refs/nyl/dev/runs/r${i}`, expect: null, to: a }]);
      assert.deepEqual(r, { ok: true });
    }
    assert.deepEqual(await session.apply([{ ref: 'refs/nyl/dev/runs/r0', expect: a, to: b }]), { ok: true });
    assert.deepEqual(await session.apply([{ ref: 'refs/nyl/dev/runs/r1', expect: a, to: null }]), { ok: true });
    assert.equal(g.stats.byCommand['update-ref'], 1, 'one update-ref process for every transaction');
    assert.equal(git(repo, 'rev-parse', 'refs/nyl/dev/runs/r0'), b);
    assert.equal(git(repo, 'for-each-ref', 'refs/nyl/dev/runs/r1'), '', 'deleted');
  } finally {
    session.close();
  }
});

test('a stale expectation rejects the whole transaction, every ref stays as it was, and the next transaction lands', async () => {
  const { repo, a, b, session } = fixture();
  try {
    await session.apply([
      { ref: 'refs/nyl/dev/lease', expect: null, to: a },
      { ref: 'refs/nyl/dev/runs/r', expect: null, to: a },
    ]);
    const before = refsUnder(repo);
    const stale = await session.apply([
      { ref: 'refs/nyl/dev/runs/r', expect: a, to: b },
      { ref: 'refs/nyl/dev/runs/new', expect: null, to: b },
      { ref: 'refs/nyl/dev/lease', expect: b, to: b },
    ]);
    assert.equal(stale.ok, false);
    assert.equal(stale.kind, 'rejected');
    assert.match(stale.message, /refs\/nyl\/dev\/lease/);
    assert.deepEqual(refsUnder(repo), before, 'nothing moved');
    const created = await session.apply([{ ref: 'refs/nyl/dev/runs/r', expect: null, to: b }]);
    assert.equal(created.kind, 'rejected', 'creating a ref that exists is rejected too');
    assert.deepEqual(refsUnder(repo), before);
    assert.deepEqual(await session.apply([{ ref: 'refs/nyl/dev/runs/r', expect: a, to: b }]), { ok: true }, 'a new writer takes the next one');
    assert.equal(git(repo, 'rev-parse', 'refs/nyl/dev/runs/r'), b);
  } finally {
    session.close();
  }
});

test('a writer killed while idle, or in the middle of a transaction, is an error (not a hang); the next transaction starts a new one', async () => {
  const { repo, a, b, g, session } = fixture();
  try {
    await session.apply([{ ref: 'refs/nyl/dev/lease', expect: null, to: a }]);
    session.child.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Killed between transactions: the next one notices and starts a writer of its own.
    assert.deepEqual(await within(10_000, session.apply([{ ref: 'refs/nyl/dev/lease', expect: a, to: b }])), { ok: true });
    assert.equal(g.stats.byCommand['update-ref'], 2);
    // Killed while a transaction waits for its answer: stop its input so that it cannot finish.
    const child = session.ensure();
    child.stdin.write = () => true;
    const pending = session.apply([{ ref: 'refs/nyl/dev/lease', expect: b, to: a }]);
    setTimeout(() => child.kill('SIGKILL'), 50);
    await assert.rejects(within(10_000, pending), /update-ref --stdin ended \(killed by SIGKILL\)/);
    assert.equal(git(repo, 'rev-parse', 'refs/nyl/dev/lease'), b, 'nothing moved');
    assert.deepEqual(await within(10_000, session.apply([{ ref: 'refs/nyl/dev/lease', expect: b, to: a }])), { ok: true });
  } finally {
    session.close();
  }
});

test('an object that does not exist is an error, not a rejection; nothing moves', async () => {
  const { repo, a, session } = fixture();
  try {
    const missing = '1'.repeat(40);
    await assert.rejects(within(10_000, session.apply([{ ref: 'refs/nyl/dev/lease', expect: null, to: missing }])), /update-ref --stdin ended/);
    assert.deepEqual(refsUnder(repo), {});
    assert.deepEqual(await session.apply([{ ref: 'refs/nyl/dev/lease', expect: null, to: a }]), { ok: true });
  } finally {
    session.close();
  }
});
