// --local runs, `lease break --local` and `state reset --local`: a run against the local state
// repository (the clone's own branches and refs when the state repository is its origin, a
// remote's cache repository otherwise), without fetching, pushing or taking the remote lease;
// online writers then refuse rather than overwrite or merge the unpublished local work.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanupAll, git, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { cacheRepositoryOf } from '../../dist/state/location.js';
import { cliEnv, codes, command, environment, nyl, nylYaml } from '../support/cli.mjs';

after(cleanupAll);

/**
 * A bare state repository and a second name for it (a symlink): a file:// repoURL with a
 * publishURL that names another path is a `remote` location (read through a cache repository,
 * or through the checkout when the repoURL is its origin), not a `path` one.
 */
function remoteState() {
  const bare = makeBareRepo();
  const alias = path.join(tempDir(), 'alias.git');
  fs.symlinkSync(bare, alias);
  return { bare, url: pathToFileURL(bare).href, aliasURL: pathToFileURL(alias).href };
}

const refsOf = (repo) => git(repo, 'for-each-ref', '--format=%(refname) %(objectname)');

// The way back from a --local run of the origin killed while a unit runs (its lease, run ref and
// evidence refused online; lease break, recover and reset --local as printed; publishing it with
// state move --from local) is a scenario group of test/e2e/fix-texts.test.mjs.

test('--local on a remote that is not origin works in its cache repository: refused before an online command created it, then local receipts there, refused online, reset --local --discard-all', () => {
  const { bare, url, aliasURL } = remoteState();
  const project = makeProject({
    'nyl.yaml': nylYaml(environment('dev', `state:\n  repository: {repoURL: "${aliasURL}", publishURL: "${url}"}`), command('a', 'script: "true"\nrecovery: converge')),
  });
  const missing = nyl(project, ['reconcile', '-e', 'dev', '--local', '-o', 'json']);
  assert.equal(missing.code, 1, missing.stdout + missing.stderr);
  assert.deepEqual(codes(missing), ['NYL-STATE-UNAVAILABLE']);
  assert.match(missing.json.errors[0].fix, /`nyl status -e dev`/);

  assert.equal(nyl(project, ['state', 'init', '-e', 'dev']).code, 0);
  const remoteBefore = refsOf(bare);
  const local = nyl(project, ['reconcile', '-e', 'dev', '--local', '-o', 'json']);
  assert.equal(local.code, 0, local.stdout + local.stderr);
  assert.equal(local.json.units.a.result, 'executed');
  const cache = cacheRepositoryOf(aliasURL, cliEnv().NYL_CACHE_DIR);
  assert.match(git(cache, 'for-each-ref', 'refs/heads/nyl/dev/'), /refs\/heads\/nyl\/dev\/observed/, "the receipts are on the cache's own branches");
  assert.equal(refsOf(bare), remoteBefore, 'nothing reached the remote');
  assert.equal(git(project, 'for-each-ref', 'refs/nyl/', 'refs/heads/nyl/dev/observed').includes(git(cache, 'rev-parse', 'refs/heads/nyl/dev/observed')), false, "the clone's branches are untouched");

  const online = nyl(project, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(online.code, 1, online.stdout);
  assert.deepEqual(codes(online), ['NYL-STATE-DIVERGED']);

  const plain = nyl(project, ['state', 'reset', '-e', 'dev', '--discard-all', '-o', 'json']);
  assert.deepEqual([plain.code, codes(plain)], [1, ['NYL-USAGE']], 'reset moves local refs only: --local is required');
  const reset = nyl(project, ['state', 'reset', '-e', 'dev', '--local', '--discard-all', '-o', 'json']);
  assert.equal(reset.code, 0, reset.stdout + reset.stderr);
  assert.deepEqual(reset.json.details.discarded, ['a']);
  assert.equal(git(cache, 'rev-parse', 'refs/heads/nyl/dev/observed'), git(bare, 'rev-parse', 'refs/heads/nyl/dev/observed'));
  assert.equal(nyl(project, ['state', 'reset', '-e', 'dev', '--local', '-o', 'json']).json.result, 'unchanged');
  const after = nyl(project, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(after.code, 0, after.stdout + after.stderr);
  assert.equal(after.json.units.a.result, 'executed');
});

test("adding an origin to a project whose state lives in the clone: every command names `nyl state move -e dev --from local` first, never a plain state init", () => {
  const project = makeProject({ 'nyl.yaml': nylYaml(environment('dev'), command('a', 'script: "true"')) });
  assert.equal(nyl(project, ['state', 'init', '-e', 'dev']).code, 0);
  assert.equal(nyl(project, ['reconcile', '-e', 'dev']).code, 0);
  const bare = makeBareRepo();
  git(project, 'remote', 'add', 'origin', pathToFileURL(bare).href);
  for (const args of [['status'], ['reconcile'], ['hold', '--unit', 'a', '--reason', 'x'], ['resume', '--unit', 'a', '--reason', 'x'], ['recover', '--unit', 'a', '--retry', '--reason', 'x']]) {
    const r = nyl(project, [...args, '-e', 'dev', '-o', 'json']);
    assert.equal(r.code, 1, `${args[0]}: ${r.stdout}${r.stderr}`);
    const missing = r.json.errors.find((e) => e.code === 'NYL-STATE-MISSING');
    assert.ok(missing, `${args[0]}: ${r.stdout}`);
    assert.match(missing.fix, /^move the state the clone's branches hold there with `nyl state move -e dev --from local`/, args[0]);
    assert.doesNotMatch(missing.fix, /`nyl state init -e dev`/, `${args[0]}: a plain init would refuse (the clone holds state)`);
    assert.ok(!missing.fix.includes('state init') || missing.fix.indexOf('state init') > missing.fix.indexOf('--from local'), `${args[0]}: the move comes first`);
  }
  const text = nyl(project, ['status', '-e', 'dev']);
  assert.match(text.stdout + text.stderr, /nyl state move -e dev --from local/);
  assert.equal(git(bare, 'for-each-ref'), '', 'nothing was written to the new remote');

  // Without state in the clone, both ways forward stay named.
  const fresh = makeProject({ 'nyl.yaml': nylYaml(environment('dev')) }, { origin: makeBareRepo() });
  const r = nyl(fresh, ['status', '-e', 'dev', '-o', 'json']);
  assert.equal(r.code, 1);
  assert.match(r.json.errors[0].fix, /nyl state init -e dev/);
});

test('lease break takes --wait-lease like every command: nothing held ends 0 unchanged; a bad duration is NYL-USAGE', () => {
  const project = makeProject({ 'nyl.yaml': nylYaml(environment('dev')) });
  assert.equal(nyl(project, ['state', 'init', '-e', 'dev']).code, 0);
  const r = nyl(project, ['lease', 'break', '-e', 'dev', '--wait-lease', '1s', '--reason', 'runner gone', '-o', 'json']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.json.result, 'unchanged');
  assert.deepEqual(r.json.notes.map((n) => n.code), ['NYL-UNCHANGED']);
  const bad = nyl(project, ['lease', 'break', '-e', 'dev', '--wait-lease', 'soon', '--reason', 'x', '-o', 'json']);
  assert.equal(bad.code, 1);
  assert.deepEqual(codes(bad), ['NYL-USAGE']);
});
