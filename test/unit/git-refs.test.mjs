import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Git } from '../../dist/git/git.js';
import { NodeProcessRunner } from '../../dist/exec/process.js';
import { classifyPushFailure, parseRefList } from '../../dist/git/refs.js';
import { buildFastImportStream, writeCommits } from '../../dist/git/object-writer.js';
import { BatchReader, parseTree } from '../../dist/git/batch-reader.js';
import { cleanupAll, commitTree, git, hermeticEnv, makeBareRepo } from '../support/git-fixtures.mjs';

after(() => cleanupAll());

const newGit = () => new Git(new NodeProcessRunner(), hermeticEnv());
const OID_A = 'ec9f053af56474ceeed20520fe4e09162f304f59';
const OID_B = '3b18e512dba79e4c8300dd08aeb37f8e728b8dad';

// --- classifyPushFailure: porcelain samples of `git push --atomic --porcelain` (git 2.39) ------

test('a stale lease rejects the whole atomic push: kind rejected, every rejected ref named', () => {
  const stdout = [
    'To /srv/state.git',
    `!\t${OID_A}:refs/heads/nyl/dev/desired\t[rejected] (atomic push failed)`,
    `!\t${OID_A}:refs/nyl/dev/lease\t[rejected] (stale info)`,
    'Done',
    '',
  ].join('\n');
  const stderr =
    "error: atomic push failed for ref refs/nyl/dev/lease. status: 7\n\nfatal: the remote end hung up unexpectedly\nerror: failed to push some refs to '/srv/state.git'\n";
  const r = classifyPushFailure(stdout, stderr);
  assert.equal(r.ok, false);
  assert.equal(r.kind, 'rejected');
  assert.deepEqual(r.refs, [
    { ref: 'refs/heads/nyl/dev/desired', reason: '[rejected] (atomic push failed)' },
    { ref: 'refs/nyl/dev/lease', reason: '[rejected] (stale info)' },
  ]);
  assert.match(r.message, /atomic push failed for ref refs\/nyl\/dev\/lease/, 'the message keeps the cause');
  assert.doesNotMatch(r.message, /failed to push some refs/, 'not the generic trailer');
});

test('a single stale lease line is enough', () => {
  const r = classifyPushFailure(`To file:///srv/state.git\n!\t${OID_A}:refs/nyl/dev/lease\t[rejected] (stale info)\nDone\n`, '');
  assert.equal(r.kind, 'rejected');
  assert.deepEqual(r.refs, [{ ref: 'refs/nyl/dev/lease', reason: '[rejected] (stale info)' }]);
  assert.equal(r.message, `To file:///srv/state.git; !\t${OID_A}:refs/nyl/dev/lease\t[rejected] (stale info); Done`, 'stdout stands in for an empty stderr');
});

test('a hook that declines: [remote rejected] (pre-receive hook declined)', () => {
  const stdout = [
    'To ../remote.git',
    `!\t${OID_A}:refs/heads/nyl/dev/desired\t[remote rejected] (pre-receive hook declined)`,
    `!\t${OID_A}:refs/nyl/dev/lease\t[remote rejected] (pre-receive hook declined)`,
    'Done',
  ].join('\n');
  const r = classifyPushFailure(
    stdout,
    "remote: nyl-protect: deletion of protected ref refs/heads/nyl/dev/desired refused\nerror: failed to push some refs to '../remote.git'\n",
  );
  assert.equal(r.kind, 'rejected');
  assert.deepEqual(
    r.refs.map((x) => x.reason),
    ['[remote rejected] (pre-receive hook declined)', '[remote rejected] (pre-receive hook declined)'],
  );
  assert.deepEqual(
    r.refs.map((x) => x.ref),
    ['refs/heads/nyl/dev/desired', 'refs/nyl/dev/lease'],
  );
  assert.match(r.message, /nyl-protect/);
});

test('a push that lost a race: [remote rejected] (atomic transaction failed)', () => {
  const stdout = [
    'To http://127.0.0.1:8080/state.git',
    `!\t${OID_B}:refs/heads/nyl/dev/observed\t[remote rejected] (atomic transaction failed)`,
    `!\t${OID_B}:refs/nyl/dev/lease\t[remote rejected] (atomic transaction failed)`,
    'Done',
  ].join('\n');
  const r = classifyPushFailure(stdout, "error: failed to push some refs to 'http://127.0.0.1:8080/state.git'");
  assert.equal(r.kind, 'rejected');
  assert.deepEqual(r.refs, [
    { ref: 'refs/heads/nyl/dev/observed', reason: '[remote rejected] (atomic transaction failed)' },
    { ref: 'refs/nyl/dev/lease', reason: '[remote rejected] (atomic transaction failed)' },
  ]);
});

test('deletions (empty source) name the destination ref; accepted lines are not listed as rejected', () => {
  const stdout = [
    'To /srv/state.git',
    `*\t${OID_A}:refs/nyl/dev/runs/r1\t[new reference]`,
    `=\t${OID_A}:refs/heads/nyl/dev/desired\t[up to date]`,
    '!\t:refs/nyl/dev/lease\t[rejected] (stale info)',
    'Done',
  ].join('\n');
  const r = classifyPushFailure(stdout, '');
  assert.equal(r.kind, 'rejected');
  assert.deepEqual(r.refs, [{ ref: 'refs/nyl/dev/lease', reason: '[rejected] (stale info)' }]);
});

test('a reached remote without per-ref lines is still rejected (To <url> proves contact)', () => {
  const r = classifyPushFailure('To /srv/state.git\nDone\n', 'error: something odd\n');
  assert.equal(r.kind, 'rejected');
  assert.deepEqual(r.refs, []);
  assert.equal(r.message, 'error: something odd');
});

test('exit 128 with empty stdout and fatal on stderr is unreachable', () => {
  const https = classifyPushFailure(
    '',
    "fatal: unable to access 'https://127.0.0.1:1/nothing.git/': Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server\n",
  );
  assert.deepEqual(https, {
    ok: false,
    kind: 'unreachable',
    message: "fatal: unable to access 'https://127.0.0.1:1/nothing.git/': Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server",
  });
  const missing = classifyPushFailure(
    '',
    "fatal: '/nonexistent/repo.git' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n",
  );
  assert.equal(missing.kind, 'unreachable');
  assert.equal(missing.refs, undefined);
  const ssh = classifyPushFailure('', 'ssh: connect to host git.example.com port 22: Connection refused\r\nfatal: Could not read from remote repository.\n');
  assert.equal(ssh.kind, 'unreachable');
  assert.equal(classifyPushFailure('', '').kind, 'unreachable');
});

test('the unreachable message keeps the fatal line that names the cause', () => {
  const r = classifyPushFailure(
    '',
    "fatal: '/nonexistent/repo.git' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n",
  );
  assert.equal(r.kind, 'unreachable');
  assert.match(r.message, /does not appear to be a git repository/);
  assert.doesNotMatch(r.message, /^\n/);
});

test('a real stale-lease push against a bare repository is classified rejected', async () => {
  const remote = makeBareRepo();
  const a = commitTree(remote, { x: 'a' }, { message: 'a' });
  const b = commitTree(remote, { x: 'b' }, { parents: [a], message: 'b' });
  git(remote, 'update-ref', 'refs/nyl/dev/lease', a);
  git(remote, 'update-ref', 'refs/heads/nyl/dev/desired', a);
  const g = newGit();
  const result = await g.run(remote, [
    'push',
    '--atomic',
    '--porcelain',
    '--no-verify',
    '--quiet',
    `--force-with-lease=refs/heads/nyl/dev/desired:${a}`,
    `--force-with-lease=refs/nyl/dev/lease:${b}`,
    remote,
    `${b}:refs/heads/nyl/dev/desired`,
    `${b}:refs/nyl/dev/lease`,
  ]);
  assert.notEqual(result.code, 0);
  const r = classifyPushFailure(result.stdout.toString(), result.stderr.toString());
  assert.equal(r.kind, 'rejected');
  assert.deepEqual(
    r.refs.find((x) => x.ref === 'refs/nyl/dev/lease'),
    { ref: 'refs/nyl/dev/lease', reason: '[rejected] (stale info)' },
  );
  assert.equal(git(remote, 'rev-parse', 'refs/heads/nyl/dev/desired'), a, 'nothing moved');

  const gone = await g.run(remote, ['push', '--atomic', '--porcelain', `--force-with-lease=refs/x:`, '/nonexistent/nyl/repo.git', `${b}:refs/x`]);
  assert.equal(gone.code, 128);
  assert.equal(classifyPushFailure(gone.stdout.toString(), gone.stderr.toString()).kind, 'unreachable');
});

// --- parseRefList ----------------------------------------------------------------------------

test('parseRefList reads for-each-ref lines (space) and ls-remote lines (tab)', () => {
  const forEachRef = `${OID_A} refs/heads/nyl/dev/desired\n${OID_B} refs/nyl/dev/lease\n`;
  assert.deepEqual(
    [...parseRefList(forEachRef)],
    [
      ['refs/heads/nyl/dev/desired', OID_A],
      ['refs/nyl/dev/lease', OID_B],
    ],
  );
  const lsRemote = `${OID_A}\tHEAD\n${OID_A}\trefs/heads/main\n${OID_B}\trefs/nyl/dev/runs/0192f0c4-8d0a-7c3e-9a51-3c1f0e7d2b90\n`;
  assert.deepEqual(
    [...parseRefList(lsRemote)],
    [
      ['HEAD', OID_A],
      ['refs/heads/main', OID_A],
      ['refs/nyl/dev/runs/0192f0c4-8d0a-7c3e-9a51-3c1f0e7d2b90', OID_B],
    ],
  );
});

test('parseRefList skips empty lines and returns an empty map for no output', () => {
  assert.equal(parseRefList('').size, 0);
  assert.equal(parseRefList('\n\n').size, 0);
  assert.deepEqual(
    [...parseRefList(`\n${OID_A} refs/a\n\n${OID_B}\trefs/b\n`)],
    [
      ['refs/a', OID_A],
      ['refs/b', OID_B],
    ],
  );
});

test('parseRefList of real git output', () => {
  const remote = makeBareRepo();
  const a = commitTree(remote, { f: '1' }, { message: 'a' });
  git(remote, 'update-ref', 'refs/nyl/dev/lease', a);
  git(remote, 'update-ref', 'refs/heads/nyl/dev/desired', a);
  const fer = parseRefList(git(remote, 'for-each-ref', '--format=%(objectname) %(refname)'));
  assert.deepEqual(Object.fromEntries(fer), { 'refs/heads/nyl/dev/desired': a, 'refs/nyl/dev/lease': a });
  const ls = parseRefList(git(remote, 'ls-remote', remote));
  assert.equal(ls.get('refs/nyl/dev/lease'), a);
  assert.equal(ls.get('refs/heads/nyl/dev/desired'), a);
});

// --- buildFastImportStream -------------------------------------------------------------------

const alice = { name: 'Alice', email: 'alice@example.com' };

test('buildFastImportStream: one commit with marks, identities, sorted M/D lines, get-mark and scratch reset', () => {
  const stream = buildFastImportStream([
    {
      changes: new Map([
        ['b.yaml', 'b: 1\n'],
        ['a.yaml', 'a\n'],
        ['gone.yaml', null],
      ]),
      message: 'nyl: test dev\n',
      author: alice,
      timeMs: 1767225600999,
    },
  ]).toString();
  assert.equal(
    stream,
    [
      'feature done',
      'reset refs/nyl-scratch/write',
      'commit refs/nyl-scratch/write',
      'mark :1',
      'author Alice <alice@example.com> 1767225600 +0000',
      'committer Alice <alice@example.com> 1767225600 +0000',
      'data 14',
      'nyl: test dev\n',
      'M 100644 inline a.yaml',
      'data 2',
      'a\n',
      'M 100644 inline b.yaml',
      'data 5',
      'b: 1\n',
      'D gone.yaml',
      '',
      'get-mark :1',
      'reset refs/nyl-scratch/write',
      `from ${'0'.repeat(40)}`,
      '',
      'done',
      '',
    ].join('\n'),
  );
});

test('buildFastImportStream: from with a commit id or a mark of the batch, deleteall for clearTree', () => {
  const stream = buildFastImportStream([
    { parent: OID_A, changes: new Map(), message: 'one', author: alice, timeMs: 0 },
    { parent: { index: 0 }, clearTree: true, changes: new Map([['x', 'y']]), message: 'two', author: alice, timeMs: 1000 },
    { parent: { index: 1 }, changes: new Map(), message: 'three', author: alice, timeMs: 2000 },
  ]).toString();
  const lines = stream.split('\n');
  assert.deepEqual(
    lines.filter((l) => /^(mark|from|deleteall|get-mark)/.test(l)),
    [
      'mark :1',
      `from ${OID_A}`,
      'mark :2',
      'from :1',
      'deleteall',
      'mark :3',
      'from :2',
      'get-mark :1',
      'get-mark :2',
      'get-mark :3',
      `from ${'0'.repeat(40)}`,
    ],
  );
  // deleteall comes after from and before the file commands.
  const second = stream.slice(stream.indexOf('mark :2'), stream.indexOf('mark :3'));
  assert.ok(second.indexOf('from :1') < second.indexOf('deleteall'));
  assert.ok(second.indexOf('deleteall') < second.indexOf('M 100644 inline x'));
  assert.match(stream, /author Alice <alice@example.com> 0 \+0000/);
  assert.match(stream, /committer Alice <alice@example.com> 2 \+0000/);
});

test('buildFastImportStream: a commit without parent has no from line', () => {
  const stream = buildFastImportStream([{ changes: new Map([['f', 'x']]), message: 'm', author: alice, timeMs: 0 }]).toString();
  assert.equal(stream.split('\n').filter((l) => l.startsWith('from ')).length, 1, 'only the final scratch reset');
  assert.doesNotMatch(stream, /deleteall/);
});

test('buildFastImportStream: data lengths count bytes, Buffers pass through unchanged', () => {
  const bin = Buffer.from([0, 1, 2, 10, 255]);
  const stream = buildFastImportStream([
    {
      changes: new Map([
        ['bin', bin],
        ['u.txt', 'é€\n'],
      ]),
      message: 'héllo',
      author: alice,
      timeMs: 0,
    },
  ]);
  const text = stream.toString('latin1');
  assert.match(text, /data 6\nh/, 'message length in bytes');
  assert.match(text, /M 100644 inline u.txt\ndata 6\n/, 'é€\\n is 6 bytes');
  const at = stream.indexOf(Buffer.from('M 100644 inline bin\ndata 5\n'));
  assert.ok(at >= 0);
  const start = at + 'M 100644 inline bin\ndata 5\n'.length;
  assert.deepEqual(stream.subarray(start, start + 5), bin);
});

test('buildFastImportStream quotes paths that are not plain', () => {
  const stream = buildFastImportStream([
    {
      changes: new Map([
        ['plain/a-b_c.d', 'x'],
        ['with space.yaml', 'x'],
        ['quote"d', 'x'],
        ['back\\slash', null],
        ['"leading', 'x'],
      ]),
      message: 'm',
      author: alice,
      timeMs: 0,
    },
  ]).toString();
  assert.match(stream, /^M 100644 inline plain\/a-b_c\.d$/m);
  assert.match(stream, /^M 100644 inline "with space\.yaml"$/m);
  assert.match(stream, /^M 100644 inline "quote\\"d"$/m);
  assert.match(stream, /^D "back\\\\slash"$/m);
  assert.match(stream, /^M 100644 inline "\\"leading"$/m);
});

// --- writeCommits against a real repository --------------------------------------------------

async function treeFiles(repo, commit) {
  const out = git(repo, 'ls-tree', '-r', '-z', '--name-only', commit);
  return out.split('\0').filter(Boolean).sort();
}

test('writeCommits: ids in order, parents chained by index, no ref left behind', async () => {
  const repo = makeBareRepo();
  const g = newGit();
  const ids = await writeCommits(g, repo, [
    {
      clearTree: true,
      changes: new Map([
        ['state.yaml', 'generation: 1\n'],
        ['units/db.yaml', 'uid: u1\n'],
      ]),
      message: 'nyl: state-init dev\n',
      author: alice,
      timeMs: 1767225600000,
    },
    {
      parent: { index: 0 },
      changes: new Map([
        ['units/db.yaml', null],
        ['units/app.yaml', 'uid: u2\n'],
      ]),
      message: 'second\n',
      author: alice,
      timeMs: 1767225661500,
    },
    {
      parent: { index: 1 },
      changes: new Map([['units/app.yaml', 'uid: u3\n']]),
      message: 'third\n',
      author: { name: 'Bob', email: 'bob@example.com' },
      timeMs: 1767225700000,
    },
  ]);
  assert.equal(ids.length, 3);
  for (const id of ids) assert.match(id, /^[0-9a-f]{40}$/);
  assert.equal(new Set(ids).size, 3);
  assert.equal(git(repo, 'rev-list', '--parents', '-n', '1', ids[0]), ids[0], 'the first is a root commit');
  assert.equal(git(repo, 'rev-parse', `${ids[1]}^`), ids[0]);
  assert.equal(git(repo, 'rev-parse', `${ids[2]}^`), ids[1]);
  assert.deepEqual(await treeFiles(repo, ids[0]), ['state.yaml', 'units/db.yaml']);
  assert.deepEqual(await treeFiles(repo, ids[1]), ['state.yaml', 'units/app.yaml']);
  assert.equal(git(repo, 'show', `${ids[2]}:units/app.yaml`), 'uid: u3');
  assert.equal(git(repo, 'log', '-1', '--format=%B', ids[0]), 'nyl: state-init dev');
  assert.equal(git(repo, 'for-each-ref'), '', 'no ref is left behind');
  // author and committer time from timeMs (seconds, floored), both from the author identity
  assert.equal(
    git(repo, 'log', '-1', '--format=%an <%ae> %at|%cn <%ce> %ct', ids[1]),
    'Alice <alice@example.com> 1767225661|Alice <alice@example.com> 1767225661',
  );
  assert.equal(git(repo, 'log', '-1', '--format=%an %at %cn %ct %ad', '--date=iso-strict', ids[2]), 'Bob 1767225700 Bob 1767225700 2026-01-01T00:01:40+00:00');
});

test('writeCommits: identical content gives identical trees; identical commits give identical ids', async () => {
  const repo = makeBareRepo();
  const g = newGit();
  const spec = {
    changes: new Map([
      ['a', 'same\n'],
      ['d/b', 'also\n'],
    ]),
    message: 'm\n',
    author: alice,
    timeMs: 5000,
  };
  const [one, two] = await writeCommits(g, repo, [spec, { ...spec, message: 'other\n' }]);
  assert.notEqual(one, two);
  assert.equal(git(repo, 'rev-parse', `${one}^{tree}`), git(repo, 'rev-parse', `${two}^{tree}`));
  const [again] = await writeCommits(g, repo, [spec]);
  assert.equal(again, one, 'same tree, message, identity and time: same commit');
});

test('writeCommits: a parent by commit id keeps its tree unless clearTree', async () => {
  const repo = makeBareRepo();
  const base = commitTree(repo, { 'keep.yaml': 'k', 'drop.yaml': 'd' }, { message: 'base' });
  const g = newGit();
  const [kept, cleared] = await writeCommits(g, repo, [
    {
      parent: base,
      changes: new Map([
        ['drop.yaml', null],
        ['new.yaml', 'n'],
      ]),
      message: 'child',
      author: alice,
      timeMs: 0,
    },
    { parent: base, clearTree: true, changes: new Map([['only.yaml', 'o']]), message: 'fresh', author: alice, timeMs: 0 },
  ]);
  assert.equal(git(repo, 'rev-parse', `${kept}^`), base);
  assert.deepEqual(await treeFiles(repo, kept), ['keep.yaml', 'new.yaml']);
  assert.equal(git(repo, 'rev-parse', `${cleared}^`), base);
  assert.deepEqual(await treeFiles(repo, cleared), ['only.yaml']);
  assert.equal(git(repo, 'for-each-ref'), '');
});

test('writeCommits: odd paths round-trip through quoting', async () => {
  const repo = makeBareRepo();
  const g = newGit();
  const names = ['with space.yaml', 'quote"d.yaml', 'back\\slash.yaml', 'ünïcode.yaml', 'tab\tname.yaml'];
  const [id] = await writeCommits(g, repo, [{ changes: new Map(names.map((n) => [n, n])), message: 'odd', author: alice, timeMs: 0 }]);
  assert.deepEqual(await treeFiles(repo, id), [...names].sort());
  const reader = new BatchReader(g, repo);
  try {
    for (const n of names) assert.equal((await reader.read(`${id}:${n}`))?.content.toString(), n, n);
  } finally {
    reader.close();
  }
});

test('writeCommits: a path with a control character round-trips', async () => {
  const repo = makeBareRepo();
  const name = 'ctl\x01x.yaml';
  const [id] = await writeCommits(newGit(), repo, [{ changes: new Map([[name, 'x']]), message: 'ctl', author: alice, timeMs: 0 }]);
  assert.deepEqual(await treeFiles(repo, id), [name]);
});

test('writeCommits: an empty batch starts no process; a bad parent throws GitError', async () => {
  const repo = makeBareRepo();
  const g = newGit();
  assert.deepEqual(await writeCommits(g, repo, []), []);
  assert.equal(g.stats.processes, 0);
  await assert.rejects(writeCommits(g, repo, [{ parent: OID_A, changes: new Map(), message: 'm', author: alice, timeMs: 0 }]), (e) => e.name === 'GitError');
  assert.equal(git(repo, 'for-each-ref'), '');
});

// --- parseTree and BatchReader ---------------------------------------------------------------

test('parseTree reads modes, names and binary ids; trees, submodules and the rest are blobs', () => {
  const entry = (mode, name, hex) => Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(hex, 'hex')]);
  const content = Buffer.concat([
    entry('100644', 'a file.yaml', OID_A),
    entry('100755', 'run.sh', OID_B),
    entry('120000', 'link', OID_A),
    entry('40000', 'units', OID_B),
    entry('160000', 'sub', OID_A),
    entry('100644', 'ünï', OID_B),
  ]);
  assert.deepEqual(parseTree(content), [
    { mode: '100644', name: 'a file.yaml', oid: OID_A, type: 'blob' },
    { mode: '100755', name: 'run.sh', oid: OID_B, type: 'blob' },
    { mode: '120000', name: 'link', oid: OID_A, type: 'blob' },
    { mode: '40000', name: 'units', oid: OID_B, type: 'tree' },
    { mode: '160000', name: 'sub', oid: OID_A, type: 'commit' },
    { mode: '100644', name: 'ünï', oid: OID_B, type: 'blob' },
  ]);
  assert.deepEqual(parseTree(Buffer.alloc(0)), []);
});

function sampleRepo() {
  const repo = makeBareRepo();
  const big = 'x'.repeat(300_000) + '\n';
  const commit = commitTree(
    repo,
    { 'state.yaml': 'generation: 1\n', 'units/db.yaml': 'uid: u1\n', 'units/app.yaml': 'uid: u2\n', empty: '', 'big.txt': big },
    { message: 'sample' },
  );
  return { repo, commit, big };
}

test('BatchReader.read: blobs by id and by rev:path, commits and trees typed; missing resolves undefined', async () => {
  const { repo, commit } = sampleRepo();
  const reader = new BatchReader(newGit(), repo);
  try {
    const blob = await reader.read(`${commit}:state.yaml`);
    assert.equal(blob.type, 'blob');
    assert.equal(blob.content.toString(), 'generation: 1\n');
    assert.equal(blob.oid, git(repo, 'rev-parse', `${commit}:state.yaml`));
    const byId = await reader.read(blob.oid);
    assert.deepEqual(byId, blob);
    const c = await reader.read(commit);
    assert.equal(c.type, 'commit');
    assert.match(c.content.toString(), /\n\nsample\n$/);
    const t = await reader.read(`${commit}^{tree}`);
    assert.equal(t.type, 'tree');
    const empty = await reader.read(`${commit}:empty`);
    assert.equal(empty.content.length, 0);
    assert.equal(await reader.read(`${commit}:nope.yaml`), undefined);
    assert.equal(await reader.read('0123456789012345678901234567890123456789'), undefined);
    assert.equal(await reader.read('refs/heads/missing'), undefined);
    assert.equal(await reader.read(`${commit}:units/db.yaml`).then((o) => o.content.toString()), 'uid: u1\n', 'still in sync after misses');
  } finally {
    reader.close();
  }
});

test('BatchReader.readMany keeps order across misses and large objects, through one process', async () => {
  const { repo, commit, big } = sampleRepo();
  const g = newGit();
  const reader = new BatchReader(g, repo);
  try {
    const specs = [
      `${commit}:big.txt`,
      `${commit}:missing`,
      `${commit}:units/app.yaml`,
      `${commit}:empty`,
      'f'.repeat(40),
      `${commit}:big.txt`,
      `${commit}:state.yaml`,
    ];
    const got = await reader.readMany(specs);
    assert.equal(got.length, specs.length);
    assert.equal(got[0].content.toString(), big);
    assert.equal(got[1], undefined);
    assert.equal(got[2].content.toString(), 'uid: u2\n');
    assert.equal(got[3].content.length, 0);
    assert.equal(got[4], undefined);
    assert.equal(got[5].content.length, big.length);
    assert.equal(got[6].content.toString(), 'generation: 1\n');
    assert.deepEqual(await reader.readMany([]), []);
    assert.equal(g.stats.byCommand['cat-file'], 1, 'one long-lived cat-file process');
  } finally {
    reader.close();
  }
});

test('BatchReader.readTree: entries of a tree; undefined for a blob, a commit or a missing path', async () => {
  const { repo, commit } = sampleRepo();
  const reader = new BatchReader(newGit(), repo);
  try {
    const units = await reader.readTree(`${commit}:units`);
    assert.deepEqual(
      units.map((e) => [e.mode, e.name, e.type]),
      [
        ['100644', 'app.yaml', 'blob'],
        ['100644', 'db.yaml', 'blob'],
      ],
    );
    assert.equal(units[1].oid, git(repo, 'rev-parse', `${commit}:units/db.yaml`));
    const root = await reader.readTree(`${commit}^{tree}`);
    assert.deepEqual(
      root.map((e) => `${e.type}:${e.name}`),
      ['blob:big.txt', 'blob:empty', 'blob:state.yaml', 'tree:units'],
    );
    assert.equal(await reader.readTree(`${commit}:state.yaml`), undefined);
    assert.equal(await reader.readTree(commit), undefined);
    assert.equal(await reader.readTree(`${commit}:nothing`), undefined);
  } finally {
    reader.close();
  }
});

test('BatchReader reads again after close (a new process)', async () => {
  const { repo, commit } = sampleRepo();
  const g = newGit();
  const reader = new BatchReader(g, repo);
  try {
    assert.equal((await reader.read(`${commit}:state.yaml`)).content.toString(), 'generation: 1\n');
    reader.close();
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await reader.read(`${commit}:units/db.yaml`)).content.toString(), 'uid: u1\n');
    assert.equal(g.stats.byCommand['cat-file'], 2);
  } finally {
    reader.close();
  }
});

test('BatchReader reads right after close without losing the new request', async () => {
  const { repo, commit } = sampleRepo();
  // Keep every started process, so that one the reader lost track of is still ended.
  const g = newGit();
  const started = [];
  const start = g.start.bind(g);
  g.start = (...args) => {
    const child = start(...args);
    started.push(child);
    return child;
  };
  const reader = new BatchReader(g, repo);
  try {
    await reader.read(`${commit}:state.yaml`);
    reader.close();
    const results = [];
    for (let i = 0; i < 20; i++) {
      results.push(await reader.read(`${commit}:units/db.yaml`).then((o) => o?.content.toString()));
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.deepEqual(results, Array(20).fill('uid: u1\n'));
  } finally {
    reader.close();
    for (const child of started) {
      child.stdin.end();
      child.kill();
    }
  }
});
