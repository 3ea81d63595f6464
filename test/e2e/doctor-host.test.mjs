// End-to-end: `nyl doctor host` against real hosts: plain Git over file://, a git daemon and smart
// HTTP (both prefixes work, nothing is left), a host whose hook refuses refs outside refs/heads/
// (only the branch prefix works: exit 0, the warning names state.coordinationRefPrefix), a host
// with receive.advertiseAtomic false (exit 1, naming atomic pushes), and a run killed midway whose
// leftovers the next run deletes, never touching a ref outside its scratch namespace.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanupAll, git, makeBareRepo, tempDir } from '../support/git-fixtures.mjs';
import { startGitDaemon } from '../support/git-daemon.mjs';
import { startGitHttp } from '../support/git-http.mjs';
import { nyl, nylAsync, waitForFile } from '../support/cli.mjs';

after(cleanupAll);

const here = () => tempDir('nyl-doctor-cwd-');
const refsOf = (bare) => git(bare, 'for-each-ref', '--format=%(refname)').split('\n').filter(Boolean).sort();

function check(url, args = [], exit = 0) {
  const r = nyl(here(), ['doctor', 'host', url, ...args, '-o', 'json']);
  assert.equal(r.code, exit, `${r.stdout}\n${r.stderr}`);
  return r.json;
}

test('plain Git over file://, a git daemon and smart HTTP hold state with both prefixes; nothing is left behind', async () => {
  const base = tempDir('nyl-doctor-hosts-');
  for (const name of ['file.git', 'daemon.git', 'http.git']) makeBareRepo(path.join(base, name));
  const daemon = await startGitDaemon(base);
  const http = await startGitHttp(base);
  try {
    for (const [name, url] of [
      ['file.git', pathToFileURL(path.join(base, 'file.git')).href],
      ['daemon.git', daemon.url('daemon.git')],
      ['http.git', http.url('http.git')],
    ]) {
      const json = check(url);
      assert.deepEqual(
        json.prefixes.map((p) => [p.prefix, p.works]),
        [
          ['refs/nyl/', true],
          ['refs/heads/nyl-run/', true],
        ],
        `${name}: ${JSON.stringify(json.prefixes)}`,
      );
      assert.equal(json.recommended, 'refs/nyl/');
      assert.deepEqual(json.leftovers, []);
      assert.deepEqual(refsOf(path.join(base, name)), [], `${name}: nothing left`);
    }
  } finally {
    await daemon.stop();
    await http.stop();
  }
  const text = nyl(here(), ['doctor', 'host', pathToFileURL(path.join(base, 'file.git')).href]);
  assert.match(text.stdout, /^ {2}2\. a stale lease rejects the whole push, both refs unchanged: passed/m);
  assert.match(text.stdout, /^verdict: this host can hold orchestration state with the default coordination prefix refs\/nyl\/$/m);
});

test('a host that refuses refs outside refs/heads/: only the branch prefix works, and the warning says what to set', () => {
  const bare = makeBareRepo();
  fs.writeFileSync(
    path.join(bare, 'hooks', 'pre-receive'),
    '#!/bin/sh\nwhile read -r old new ref; do case "$ref" in refs/heads/*) ;; *) echo "only branches here: $ref" >&2; exit 1 ;; esac; done\n',
    { mode: 0o755 },
  );
  const json = check(pathToFileURL(bare).href);
  assert.deepEqual(
    json.prefixes.map((p) => [p.prefix, p.works]),
    [
      ['refs/nyl/', false],
      ['refs/heads/nyl-run/', true],
    ],
  );
  assert.equal(json.prefixes[0].steps[0].verdict, 'failed');
  assert.match(json.prefixes[0].steps[0].detail, /only branches here/);
  assert.deepEqual(
    json.prefixes[0].steps.slice(1).map((s) => s.verdict),
    ['not-run', 'not-run', 'not-run', 'not-run'],
  );
  assert.equal(json.recommended, 'refs/heads/nyl-run/');
  assert.deepEqual(
    json.warnings.map((d) => d.code),
    ['NYL-HOST-BRANCH-PREFIX'],
  );
  assert.match(json.warnings[0].fix, /state\.coordinationRefPrefix: refs\/heads\/nyl-run\//);
  assert.deepEqual(refsOf(bare), []);
});

test('a host without atomic pushes cannot hold state: exit 1 naming atomic pushes; --prefix checks one prefix', () => {
  const bare = makeBareRepo();
  git(bare, 'config', 'receive.advertiseAtomic', 'false');
  const json = check(pathToFileURL(bare).href, ['--prefix', 'refs/heads/nyl-run/'], 1);
  assert.deepEqual(
    json.prefixes.map((p) => p.prefix),
    ['refs/heads/nyl-run/'],
  );
  assert.match(json.prefixes[0].steps[0].detail, /does not support atomic pushes/);
  assert.deepEqual(
    json.errors.map((d) => d.code),
    ['NYL-HOST-INCOMPATIBLE'],
  );
  assert.match(json.errors[0].fix, /accepts atomic pushes \(git push --atomic\)/);
  assert.deepEqual(refsOf(bare), []);
});

test('a hook whose refusal mentions atomic pushes is a refusal, not a host without atomic pushes', () => {
  const bare = makeBareRepo();
  fs.writeFileSync(path.join(bare, 'hooks', 'pre-receive'), '#!/bin/sh\necho "policy: atomic pushes are not allowed by this hook" >&2\nexit 1\n', {
    mode: 0o755,
  });
  const json = check(pathToFileURL(bare).href, [], 1);
  assert.deepEqual(
    json.prefixes.map((p) => [p.prefix, p.works]),
    [
      ['refs/nyl/', false],
      ['refs/heads/nyl-run/', false],
    ],
  );
  assert.match(json.prefixes[0].steps[0].detail, /^the host refused the push: policy: atomic pushes are not allowed by this hook/);
  assert.deepEqual(
    json.errors.map((d) => d.code),
    ['NYL-HOST-INCOMPATIBLE'],
  );
  assert.match(json.errors[0].message, /cannot hold orchestration state: a step failed under refs\/nyl\/ and under refs\/heads\/nyl-run\/$/);
  assert.doesNotMatch(json.errors[0].fix, /use a Git host, or a version of it, that accepts atomic pushes/);
  assert.deepEqual(refsOf(bare), []);
});

test('a run killed midway leaves refs of its namespace only, and the next run deletes them', async () => {
  const bare = makeBareRepo();
  git(bare, 'update-ref', 'refs/heads/main', git(bare, 'commit-tree', '4b825dc642cb6eb9a060e54bf8d69288fbee4904', '-m', 'someone else'));
  git(bare, 'update-ref', 'refs/nyl/dev/lease', 'refs/heads/main');
  const dir = tempDir('nyl-doctor-kill-');
  const marker = path.join(dir, 'moving');
  // Step 3 (an update of refs that exist) waits in the hook, where the run is killed.
  fs.writeFileSync(
    path.join(bare, 'hooks', 'pre-receive'),
    `#!/bin/sh\nwhile read -r old new ref; do case "$old" in 0000000000000000000000000000000000000000) ;; *) touch ${marker}; sleep 1 ;; esac; done\nexit 0\n`,
    { mode: 0o755 },
  );
  const run = nylAsync(here(), ['doctor', 'host', pathToFileURL(bare).href, '--prefix', 'refs/nyl/']);
  await waitForFile(marker);
  run.child.kill('SIGKILL');
  await run.done;
  // Its push dies with it (Nyl's tools do); let the hook's second pass before looking.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const left = refsOf(bare).filter((r) => r.includes('nyl-doctor/'));
  assert.equal(left.length, 2, `the killed run left its two refs: ${refsOf(bare).join(', ')}`);
  fs.rmSync(path.join(bare, 'hooks', 'pre-receive'));
  check(pathToFileURL(bare).href);
  assert.deepEqual(refsOf(bare), ['refs/heads/main', 'refs/nyl/dev/lease'], 'leftovers deleted; refs outside the namespace untouched');
});

test('usage: the URL is required, a prefix is a ref namespace', () => {
  assert.match(nyl(here(), ['doctor', 'host']).stderr, /NYL-USAGE[\s\S]*needs the URL/);
  assert.match(nyl(here(), ['doctor', 'host', 'file:///nowhere', '--prefix', 'nyl']).stderr, /--prefix nyl is not a ref namespace/);
});
