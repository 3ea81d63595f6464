// Damaged state through the built CLI and real Git: a hand-broken state document is reported as
// NYL-STATE-CORRUPT with its ref, path and line (not NYL-INTERNAL), and `nyl recover` repairs it
// in a commit; a lease ref that points at a blob is reported and broken by `nyl lease break`
// (which used to crash on it).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cleanupAll, commitTree, git, tempDir } from '../support/git-fixtures.mjs';
import { startGitDaemon } from '../support/git-daemon.mjs';
import { DESIRED, ENV, LEASE, Scenario, describeResult, errorCodes } from '../support/crash-harness.mjs';

after(cleanupAll);

const UNITS = [
  { name: 'once', dependsOn: [], wave: 1 },
  { name: 'again', recovery: 'converge', dependsOn: [], wave: 1 },
];

/** Every file of a commit of the bare repository: path -> text. */
function filesOf(bare, rev) {
  const names = git(bare, 'ls-tree', '-r', '--name-only', rev).split('\n').filter(Boolean);
  return Object.fromEntries(names.map((n) => [n, `${git(bare, 'cat-file', 'blob', `${rev}:${n}`)}\n`]));
}

test('invalid YAML in a desired unit document: exit 1 NYL-STATE-CORRUPT at its ref, path and line; recover repairs it; the manual unit does not run again', async () => {
  const sc = new Scenario({ units: UNITS });
  try {
    await sc.ok(['state', 'init', '-e', ENV]);
    await sc.ok(['reconcile', '-e', ENV]);
    const tip = sc.refs()[DESIRED];
    const files = filesOf(sc.bare, tip);
    const good = files['units/once.yaml'];
    const line = good.split('\n').length;
    const damaged = commitTree(sc.bare, { ...files, 'units/once.yaml': `${good}uid: again\n` }, { parents: [tip], message: 'hand edit' });
    git(sc.bare, 'update-ref', DESIRED, damaged, tip);

    const refused = await sc.nyl(['reconcile', '-e', ENV]);
    assert.equal(refused.code, 1, describeResult(refused));
    assert.match(refused.stderr, /^error NYL-STATE-CORRUPT \(once\)$/m, describeResult(refused));
    assert.match(refused.stderr, new RegExp(`at: ${DESIRED}:units/once\\.yaml:${line}`), describeResult(refused));
    assert.match(refused.stderr, /fix: .*nyl recover -e dev --reason/, describeResult(refused));
    const status = await sc.nyl(['status', '-e', ENV, '-o', 'json']);
    assert.equal(status.code, 1, describeResult(status));
    assert.deepEqual(errorCodes(status), ['NYL-STATE-CORRUPT']);

    const fixed = await sc.ok(['recover', '-e', ENV, '--reason', 'a hand edit broke it', '-o', 'json']);
    assert.equal(fixed.json.result, 'done');
    assert.equal(git(sc.bare, 'rev-parse', `${DESIRED}~1`), damaged, 'the damaged commit is the parent of the repair');
    const after = await sc.nyl(['reconcile', '-e', ENV, '-o', 'json']);
    assert.equal(after.code, 4, describeResult(after));
    assert.deepEqual(sc.executionCounts(), { once: 1, again: 1 }, 'nothing ran again');
  } finally {
    await sc.cleanup();
  }
});

for (const transport of ['file', 'daemon']) {
  test(`a lease ref pointing at a blob (${transport}): reconcile and status report it, lease break breaks it, the next reconcile records the break`, async () => {
    await leaseOnBlob(transport);
  });
}

/** Over a daemon, every read fetches the coordination refs, the blob too, into the cache repository. */
async function leaseOnBlob(transport) {
  const base = transport === 'daemon' ? tempDir('nyl-damaged-') : undefined;
  const daemon = base ? await startGitDaemon(base) : undefined;
  const sc = new Scenario({ units: UNITS, ...(daemon ? { transport, daemon: { base, url: daemon.url } } : {}) });
  try {
    await sc.ok(['state', 'init', '-e', ENV]);
    const blob = git(sc.bare, 'hash-object', '-w', '--stdin', { input: 'not a lease\n' });
    git(sc.bare, 'update-ref', LEASE, blob);

    const refused = await sc.nyl(['reconcile', '-e', ENV, '-o', 'json']);
    assert.equal(refused.code, 1, describeResult(refused));
    assert.deepEqual(errorCodes(refused), ['NYL-STATE-CORRUPT']);
    const status = await sc.nyl(['status', '-e', ENV, '-o', 'json']);
    assert.equal(status.code, 1, describeResult(status));
    assert.ok(errorCodes(status).includes('NYL-STATE-CORRUPT'), describeResult(status));

    const broken = await sc.nyl(['lease', 'break', '-e', ENV, '--reason', 'the lease ref was damaged', '-o', 'json']);
    assert.equal(broken.code, 0, describeResult(broken));
    assert.equal(broken.json.result, 'done');
    assert.equal(sc.refs()[`refs/nyl/${ENV}/damaged/lease/${blob}`], blob, 'the damaged object is kept');

    const next = await sc.ok(['reconcile', '-e', ENV, '-o', 'json']);
    assert.equal(next.json.details.leaseBroken.reason, 'the lease ref was damaged');
    assert.equal(sc.refs()[LEASE], undefined);
    assert.deepEqual(sc.executionCounts(), { once: 1, again: 1 });
  } finally {
    await sc.cleanup();
    await daemon?.stop();
  }
}
