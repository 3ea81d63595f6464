// Proves the test harness's Git remotes (file://, git daemon, smart HTTP) behave the way Nyl's ref
// protocol relies on:
// - the five host-check pushes pass with both coordination prefixes;
// - the protect hook refuses non-fast-forward and deletion of protected state branches only;
// - two racing pushes creating the same ref under an "absent" lease: exactly one wins, whole.
// It also pins the porcelain output shapes that the push-result parser is written against.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { cleanupAll, commitTree, git, gitResult, hermeticEnv, installProtectHook, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { freePort, startGitDaemon } from '../support/git-daemon.mjs';
import { startGitHttp } from '../support/git-http.mjs';

const OID = /^[0-9a-f]{40}$/;

const TRANSPORTS = [
  {
    name: 'file://',
    start: async (base) => ({ url: (repo) => pathToFileURL(path.join(base, repo)).href, stop: async () => {} }),
  },
  { name: 'git daemon', start: (base) => startGitDaemon(base) },
  { name: 'smart HTTP', start: (base) => startGitHttp(base) },
];

/** Parses `git push --porcelain` stdout into { url, done, refs: { dst: {flag, src, summary, reason} } }. */
function parsePorcelain(stdout) {
  const out = { url: null, done: false, refs: {} };
  for (const line of stdout.split('\n')) {
    if (line.startsWith('To ')) out.url = line.slice(3);
    else if (line === 'Done') out.done = true;
    else if (line.includes('\t')) {
      const [flag, spec, rest] = line.split('\t');
      const colon = spec.lastIndexOf(':');
      const m = /^(.*?)(?: \((.*)\))?$/.exec(rest);
      out.refs[spec.slice(colon + 1)] = { flag, src: spec.slice(0, colon), summary: m[1], reason: m[2] ?? null };
    }
  }
  return out;
}

function explain(r) {
  return `exit ${r.status}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`;
}

function pushArgs(url, leases, refspecs) {
  return ['push', '--atomic', '--porcelain', ...leases.map(([ref, expect]) => `--force-with-lease=${ref}:${expect}`), url, ...refspecs];
}

/** Synchronous atomic push with per-ref leases (safe: the HTTP server runs in another process). */
function push(cwd, url, leases, refspecs) {
  const r = gitResult(cwd, ...pushArgs(url, leases, refspecs));
  return { ...r, porcelain: parsePorcelain(r.stdout) };
}

/** Asynchronous variant, for racing two pushes. */
function pushAsync(cwd, url, leases, refspecs) {
  return new Promise((resolve) => {
    execFile('git', pushArgs(url, leases, refspecs), { cwd, env: hermeticEnv() }, (err, stdout, stderr) => {
      const status = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ status, stdout, stderr, porcelain: parsePorcelain(stdout) });
    });
  });
}

/** Remote refs whose names start with prefix (ls-remote patterns are tail matches, so filter here). */
function remoteRefs(cwd, url, prefix = 'refs/') {
  const refs = {};
  const out = git(cwd, 'ls-remote', url);
  for (const line of out ? out.split('\n') : []) {
    const [oid, ref] = line.split('\t');
    if (ref.startsWith(prefix)) refs[ref] = oid;
  }
  return refs;
}

after(() => cleanupAll());

for (const transport of TRANSPORTS) {
  describe(`remote over ${transport.name}`, () => {
    let base;
    let server;
    let work;
    let s1;
    let l1;
    let s2;
    let l2;

    before(async () => {
      base = tempDir('nyl-remotes-');
      server = await transport.start(base);
      work = makeProject({ 'README.md': 'scratch\n' });
      s1 = commitTree(work, { 'state.yaml': 'generation: 1\n' }, { message: 's1' });
      l1 = commitTree(work, { 'lease.yaml': 'run: r1\n' }, { message: 'l1' });
      s2 = commitTree(work, { 'state.yaml': 'generation: 2\n' }, { parents: [s1], message: 's2' });
      l2 = commitTree(work, { 'lease.yaml': 'run: r2\n' }, { parents: [l1], message: 'l2' });
    });

    after(async () => {
      await server?.stop();
    });

    for (const prefix of ['refs/nyl/', 'refs/heads/nyl-run/']) {
      it(`passes the five host-check pushes with lease prefix ${prefix}`, () => {
        const repo = `check-${prefix.replace(/\W+/g, '-')}git`;
        makeBareRepo(path.join(base, repo));
        const url = server.url(repo);
        const B = 'refs/heads/nyl-check/desired';
        const L = `${prefix}nyl-check/lease`;

        // 1. Create both refs under "absent" leases.
        let r = push(
          work,
          url,
          [
            [B, ''],
            [L, ''],
          ],
          [`${s1}:${B}`, `${l1}:${L}`],
        );
        assert.equal(r.status, 0, explain(r));
        assert.equal(r.porcelain.done, true);
        assert.deepEqual(r.porcelain.refs[B], { flag: '*', src: s1, summary: '[new branch]', reason: null });
        assert.equal(r.porcelain.refs[L].flag, '*');
        assert.deepEqual(remoteRefs(work, url), { [B]: s1, [L]: l1 });

        // 2. A stale lease (L is at l1, not s1) rejects the whole push; nothing moves.
        r = push(
          work,
          url,
          [
            [B, s1],
            [L, s1],
          ],
          [`${s2}:${B}`, `${l2}:${L}`],
        );
        assert.equal(r.status, 1, explain(r));
        assert.equal(r.porcelain.done, true);
        assert.deepEqual(r.porcelain.refs[L], { flag: '!', src: l2, summary: '[rejected]', reason: 'stale info' });
        assert.deepEqual(r.porcelain.refs[B], { flag: '!', src: s2, summary: '[rejected]', reason: 'atomic push failed' });
        assert.deepEqual(remoteRefs(work, url), { [B]: s1, [L]: l1 });

        // 3. Matching leases move both refs.
        r = push(
          work,
          url,
          [
            [B, s1],
            [L, l1],
          ],
          [`${s2}:${B}`, `${l2}:${L}`],
        );
        assert.equal(r.status, 0, explain(r));
        assert.equal(r.porcelain.refs[B].flag, ' ');
        assert.equal(r.porcelain.refs[B].summary, `${s1.slice(0, 7)}..${s2.slice(0, 7)}`);
        assert.equal(r.porcelain.refs[L].flag, ' ');
        assert.deepEqual(remoteRefs(work, url), { [B]: s2, [L]: l2 });

        // 4. The lease ref is listed by pattern.
        const listed = git(work, 'ls-remote', url, `${prefix}nyl-check/*`);
        assert.equal(listed, `${l2}\t${L}`);

        // 5. Both refs are deleted together, each under its lease.
        r = push(
          work,
          url,
          [
            [L, l2],
            [B, s2],
          ],
          [`:${L}`, `:${B}`],
        );
        assert.equal(r.status, 0, explain(r));
        assert.deepEqual(r.porcelain.refs[L], { flag: '-', src: '', summary: '[deleted]', reason: null });
        assert.deepEqual(r.porcelain.refs[B], { flag: '-', src: '', summary: '[deleted]', reason: null });
        assert.deepEqual(remoteRefs(work, url), {});
      });
    }

    it('protect hook refuses non-fast-forward and deletion of refs/heads/nyl/ only', () => {
      const repo = 'protected.git';
      installProtectHook(makeBareRepo(path.join(base, repo)));
      const url = server.url(repo);
      const D = 'refs/heads/nyl/dev/desired';
      const L = 'refs/nyl/dev/lease';
      const R = 'refs/heads/nyl-run/dev/lease';

      let r = push(
        work,
        url,
        [
          [D, ''],
          [L, ''],
          [R, ''],
        ],
        [`${s1}:${D}`, `${l1}:${L}`, `${l1}:${R}`],
      );
      assert.equal(r.status, 0, explain(r));

      // Fast-forward of the protected branch is allowed.
      r = push(
        work,
        url,
        [
          [D, s1],
          [L, l1],
        ],
        [`${s2}:${D}`, `${l2}:${L}`],
      );
      assert.equal(r.status, 0, explain(r));
      assert.deepEqual(remoteRefs(work, url), { [D]: s2, [L]: l2, [R]: l1 });

      // Non-fast-forward (s2 -> s1, client-side allowed by the matching lease) is declined by the hook,
      // and the atomic push takes the lease update down with it.
      r = push(
        work,
        url,
        [
          [D, s2],
          [L, l2],
        ],
        [`${s1}:${D}`, `${l1}:${L}`],
      );
      assert.equal(r.status, 1, explain(r));
      assert.deepEqual(r.porcelain.refs[D], { flag: '!', src: s1, summary: '[remote rejected]', reason: 'pre-receive hook declined' });
      assert.deepEqual(r.porcelain.refs[L], { flag: '!', src: l1, summary: '[remote rejected]', reason: 'pre-receive hook declined' });
      assert.match(r.stderr, /remote: nyl-protect: non-fast-forward update of protected ref refs\/heads\/nyl\/dev\/desired refused/);
      assert.deepEqual(remoteRefs(work, url), { [D]: s2, [L]: l2, [R]: l1 });

      // Deletion is declined too.
      r = push(work, url, [[D, s2]], [`:${D}`]);
      assert.equal(r.status, 1, explain(r));
      assert.deepEqual(r.porcelain.refs[D], { flag: '!', src: '', summary: '[remote rejected]', reason: 'pre-receive hook declined' });
      assert.match(r.stderr, /remote: nyl-protect: deletion of protected ref refs\/heads\/nyl\/dev\/desired refused/);
      assert.deepEqual(remoteRefs(work, url), { [D]: s2, [L]: l2, [R]: l1 });

      // Unprotected refs: refs/nyl/ and refs/heads/nyl-run/ may move backwards and be deleted.
      r = push(
        work,
        url,
        [
          [L, l2],
          [R, l1],
        ],
        [`${l1}:${L}`, `${l2}:${R}`],
      );
      assert.equal(r.status, 0, explain(r));
      r = push(work, url, [[R, l2]], [`${l1}:${R}`]);
      assert.equal(r.status, 0, explain(r));
      r = push(
        work,
        url,
        [
          [L, l1],
          [R, l1],
        ],
        [`:${L}`, `:${R}`],
      );
      assert.equal(r.status, 0, explain(r));
      assert.deepEqual(remoteRefs(work, url), { [D]: s2 });
    });

    it('two racing pushes creating the same ref under an absent lease: exactly one wins, whole (10 rounds)', async (t) => {
      const repo = 'race.git';
      makeBareRepo(path.join(base, repo));
      const url = server.url(repo);
      const racers = ['a', 'b'].map((name) => ({ name, dir: makeProject({ [`${name}.txt`]: `${name}\n` }) }));
      const loserShapes = new Set();
      for (let round = 0; round < 10; round++) {
        const L = `refs/nyl/race/${round}/lease`;
        const runRef = (name) => `refs/nyl/race/${round}/runs/${name}`;
        const commits = racers.map(({ name, dir }) => commitTree(dir, { 'lease.yaml': `run: ${name}-${round}\n` }, { message: `${name} ${round}` }));
        const results = await Promise.all(
          racers.map(({ name, dir }, i) =>
            pushAsync(
              dir,
              url,
              [
                [L, ''],
                [runRef(name), ''],
              ],
              [`${commits[i]}:${L}`, `${commits[i]}:${runRef(name)}`],
            ),
          ),
        );
        const winners = results.map((r, i) => (r.status === 0 ? i : -1)).filter((i) => i >= 0);
        assert.equal(winners.length, 1, `round ${round}: ${results.map(explain).join('\n')}`);
        const w = winners[0];
        const loser = results[1 - w];
        assert.equal(loser.status, 1, explain(loser));
        const shape = Object.values(loser.porcelain.refs)
          .map((x) => `${x.flag} ${x.summary} (${x.reason})`)
          .sort()
          .join(' + ');
        assert.ok(
          Object.values(loser.porcelain.refs).every((x) => x.flag === '!'),
          explain(loser),
        );
        loserShapes.add(shape);
        assert.deepEqual(remoteRefs(work, url, `refs/nyl/race/${round}/`), {
          [L]: commits[w],
          [runRef(racers[w].name)]: commits[w],
        });
      }
      t.diagnostic(`loser outcomes seen: ${[...loserShapes].join(' | ')}`);
      for (const shape of loserShapes) {
        assert.ok(
          [
            '! [remote rejected] (atomic transaction failed) + ! [remote rejected] (atomic transaction failed)',
            '! [rejected] (atomic push failed) + ! [rejected] (stale info)',
          ].includes(shape),
          shape,
        );
      }
    });

    it('carries a multi-megabyte push and a fetch that negotiates many haves', () => {
      // Over HTTP this exercises a chunked request body (pack > http.postBuffer, no Content-Length)
      // and gzip-encoded upload-pack requests (more than 1 KB of "have" lines).
      const repo = 'bulk.git';
      makeBareRepo(path.join(base, repo));
      const url = server.url(repo);
      const big = makeProject({ 'blob.bin': crypto.randomBytes(1600 * 1024).toString('base64') });
      let r = push(big, url, [['refs/heads/main', '']], ['refs/heads/main:refs/heads/main']);
      assert.equal(r.status, 0, explain(r));
      let tip = null;
      for (let i = 0; i < 40; i++) tip = commitTree(work, { n: `${i}\n` }, { parents: tip ? [tip] : [], message: `have ${i}` });
      git(work, 'update-ref', 'refs/heads/haves', tip);
      r = gitResult(work, 'fetch', '--no-tags', url, 'refs/heads/main:refs/remotes/bulk/main');
      assert.equal(r.status, 0, explain(r));
      assert.equal(git(work, 'rev-parse', 'refs/remotes/bulk/main'), git(big, 'rev-parse', 'HEAD'));
    });

    it('a missing repository fails with exit 128 and no porcelain lines', () => {
      const r = push(work, server.url('missing.git'), [['refs/nyl/x', '']], [`${l1}:refs/nyl/x`]);
      assert.equal(r.status, 128, explain(r));
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^fatal: /m);
    });
  });
}

describe('git facts the ref protocol depends on (file://)', () => {
  let base;
  let work;
  before(() => {
    base = tempDir('nyl-facts-');
    work = makeProject({ 'README.md': 'facts\n' });
  });

  it('an "absent" lease does not fail when the ref already holds the very commit pushed', () => {
    // Why it matters: two acquirers writing byte-identical lease commits (same tree, message and
    // pinned dates) would both "win"; a lease commit must carry something unique to its holder.
    const repo = makeBareRepo(path.join(base, 'same.git'));
    const url = pathToFileURL(repo).href;
    const c = commitTree(work, { 'lease.yaml': 'run: same\n' });
    const L = 'refs/nyl/dev/lease';
    assert.equal(push(work, url, [[L, '']], [`${c}:${L}`]).status, 0);
    const r = push(work, url, [[L, '']], [`${c}:${L}`]);
    assert.equal(r.status, 0, explain(r));
    assert.deepEqual(r.porcelain.refs[L], { flag: '=', src: c, summary: '[up to date]', reason: null });
  });

  it('ls-remote patterns match the tail of a ref name and * crosses /', () => {
    const repo = makeBareRepo(path.join(base, 'patterns.git'));
    const url = pathToFileURL(repo).href;
    const c = commitTree(work, { x: 'x\n' });
    const refs = ['refs/nyl/dev/lease', 'refs/nyl/dev/runs/r1', 'refs/heads/mirror/refs/nyl/dev/z', 'refs/nyl/prod/lease'];
    assert.equal(
      push(
        work,
        url,
        [],
        refs.map((ref) => `${c}:${ref}`),
      ).status,
      0,
    );
    const listed = git(work, 'ls-remote', url, 'refs/nyl/dev/*')
      .split('\n')
      .map((l) => l.split('\t')[1])
      .sort();
    assert.deepEqual(listed, ['refs/heads/mirror/refs/nyl/dev/z', 'refs/nyl/dev/lease', 'refs/nyl/dev/runs/r1']);
    assert.deepEqual(Object.keys(remoteRefs(work, url, 'refs/nyl/dev/')).sort(), ['refs/nyl/dev/lease', 'refs/nyl/dev/runs/r1']);
  });

  it('receive.denyDeletes/denyNonFastForwards guard refs/heads/ only, not refs/nyl/', () => {
    const repo = makeBareRepo(path.join(base, 'deny.git'));
    git(repo, 'config', 'receive.denyDeletes', 'true');
    git(repo, 'config', 'receive.denyNonFastForwards', 'true');
    const url = pathToFileURL(repo).href;
    const c1 = commitTree(work, { n: '1\n' });
    const c2 = commitTree(work, { n: '2\n' }, { parents: [c1] });
    const N = 'refs/nyl/dev/lease';
    const H = 'refs/heads/nyl-run/dev/lease';
    assert.equal(
      push(
        work,
        url,
        [
          [N, ''],
          [H, ''],
        ],
        [`${c2}:${N}`, `${c2}:${H}`],
      ).status,
      0,
    );
    let r = push(work, url, [[H, c2]], [`${c1}:${H}`]);
    assert.deepEqual(r.porcelain.refs[H], { flag: '!', src: c1, summary: '[remote rejected]', reason: 'non-fast-forward' });
    r = push(work, url, [[H, c2]], [`:${H}`]);
    assert.deepEqual(r.porcelain.refs[H], { flag: '!', src: '', summary: '[remote rejected]', reason: 'deletion prohibited' });
    r = push(work, url, [[N, c2]], [`${c1}:${N}`]);
    assert.equal(r.status, 0, explain(r));
    assert.equal(r.porcelain.refs[N].flag, '+');
    r = push(work, url, [[N, c1]], [`:${N}`]);
    assert.equal(r.status, 0, explain(r));
  });

  it('an unreachable remote fails with exit 128 and no porcelain lines', async () => {
    const port = await freePort(); // nothing listens there
    const c = commitTree(work, { x: 'unreachable\n' });
    for (const url of [`git://127.0.0.1:${port}/state.git`, `http://127.0.0.1:${port}/state.git`]) {
      const r = push(work, url, [['refs/nyl/x', '']], [`${c}:refs/nyl/x`]);
      assert.equal(r.status, 128, explain(r));
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^fatal: unable to (connect|access)/m);
    }
  });

  it('fixtures are hermetic: fixed identity, dates and default branch', () => {
    const p = makeProject({ 'a/b.txt': 'b\n' });
    assert.equal(git(p, 'symbolic-ref', 'HEAD'), 'refs/heads/main');
    assert.equal(
      git(p, 'log', '-1', '--format=%an <%ae> %at %cn <%ce> %ct'),
      'Test User <test@example.com> 1767225600 Test User <test@example.com> 1767225600',
    );
    assert.equal(git(p, 'show', 'HEAD:a/b.txt'), 'b');
    assert.match(git(p, 'rev-parse', 'HEAD'), OID);
    // commitTree writes nested trees without touching refs or the index.
    const c = commitTree(p, { 'units/db.yaml': 'kind: x\n', 'state.yaml': 's\n' }, { parents: [git(p, 'rev-parse', 'HEAD')] });
    assert.equal(git(p, 'show', `${c}:units/db.yaml`), 'kind: x');
    assert.equal(git(p, 'ls-tree', '-r', '--name-only', c), 'state.yaml\nunits/db.yaml');
    assert.equal(git(p, 'rev-parse', 'HEAD'), git(p, 'rev-parse', `${c}^`));
    // Identical content gives identical ids across repositories.
    assert.equal(git(makeProject({ 'a/b.txt': 'b\n' }), 'rev-parse', 'HEAD'), git(p, 'rev-parse', 'HEAD'));
  });
});
