// State never crosses environments: two environments whose state refs have the same names in
// different repositories (an EnvironmentGroup's shared desiredRef and observedRef, each member
// with its own repository) would share the clone's one branch of each name.
// - In one source, such a project is refused up front (NYL-SOURCE-INVALID at the shared field),
//   by every command of either environment, and nothing is written anywhere.
// - With that check out of the way (one source branch declares dev on repository A, another stg
//   on repository B, both with the group's ref names), the clone's branches of the two
//   repositories never mix: `state init -e stg` does not take dev's branches for stg's state,
//   `state move -e stg --from local` refuses them (they hold dev's state), dev's branches never
//   get a stg commit, and `reconcile -e dev` still runs. The same holds for a clone made before
//   the clone recorded which repository its branches copy (no refs/nyl-known/ records).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanupAll, git, gitResult, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { codes, command, environment, nyl, nylYaml } from '../support/cli.mjs';

after(cleanupAll);

const SHARED = ['refs/heads/nyl/shared/desired', 'refs/heads/nyl/shared/observed'];

/** The group lends both members the same ref names; each member names its own repository. */
function group(members) {
  return `apiVersion: nyl.io/v1
kind: EnvironmentGroup
metadata: {name: shared}
spec:
  environments: [${members.join(', ')}]
  shared:
    state:
      desiredRef: nyl/shared/desired
      observedRef: nyl/shared/observed`;
}

const member = (name, bare, statePath) =>
  environment(name, `state:\n  repository: {repoURL: "${pathToFileURL(bare).href}"}${statePath ? `\n  path: ${statePath}` : ''}`);

/** refname -> oid of a repository's refs under a prefix. */
function refs(repo, prefix = 'refs/') {
  const out = git(repo, 'for-each-ref', '--format=%(refname) %(objectname)', prefix);
  return Object.fromEntries(
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' ')),
  );
}

const isAncestor = (repo, a, b) => gitResult(repo, 'merge-base', '--is-ancestor', a, b).status === 0;
const hasObject = (repo, oid) => gitResult(repo, 'cat-file', '-e', `${oid}^{commit}`).status === 0;

test("two members with the group's ref names in two repositories: every command of either refuses NYL-SOURCE-INVALID at the shared field, nothing written", () => {
  const base = tempDir('nyl-isolation-refused-');
  const a = makeBareRepo(path.join(base, 'a.git'));
  const bPath = path.join(base, 'b.git');
  const project = makeProject({
    'nyl.yaml': nylYaml(
      group(['dev', 'stg']),
      member('dev', a),
      environment('stg', `state:\n  repository: {repoURL: "${pathToFileURL(bPath).href}"}`),
      command('a', 'script: "true"'),
    ),
  });
  const line = fs.readFileSync(path.join(project, 'nyl.yaml'), 'utf8').split('\n').indexOf('      desiredRef: nyl/shared/desired') + 1;
  for (const args of [
    ['state', 'init', '-e', 'stg'],
    ['state', 'init', '-e', 'dev'],
    ['reconcile', '-e', 'dev'],
    ['status', '-e', 'stg'],
    ['state', 'move', '-e', 'stg', '--from', 'local'],
  ]) {
    const r = nyl(project, [...args, '-o', 'json']);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.deepEqual(codes(r), ['NYL-SOURCE-INVALID'], args.join(' '));
    const [d] = r.json.errors;
    assert.deepEqual([d.location.file, d.location.line, d.location.pointer], ['nyl.yaml', line, '/spec/shared/state/desiredRef'], args.join(' '));
    assert.match(d.message, /refs\/heads\/nyl\/shared\/desired/);
    assert.match(d.message, /\bdev\b/);
    assert.match(d.message, /\bstg\b/);
    assert.match(d.message, /another repository|different repositor/);
    assert.match(d.fix, /EnvironmentGroup shared/);
    assert.match(d.fix, /nyl\/<env>\/desired|nyl\/(dev|stg)\/desired/);
  }
  const text = nyl(project, ['state', 'init', '-e', 'stg']);
  assert.match(text.stdout + text.stderr, /nyl\.yaml:\d+/, 'the text names file and line');
  assert.equal(fs.existsSync(bPath), false, 'no repository created');
  assert.deepEqual(refs(a), {}, "nothing written to dev's repository");
  assert.deepEqual(refs(project, 'refs/heads/nyl/'), {}, 'no branch of the clone');
});

// legacy: a clone without records of the repositories its branches copy (made before them), where
// only dev's state.yaml on the branches tells them apart; paths: each environment in a directory of
// its own, where the branches hold no state.yaml of stg at all and only the records tell.
for (const { legacy, paths } of [
  { legacy: false, paths: false },
  { legacy: true, paths: false },
  { legacy: false, paths: true },
]) {
  const variant = legacy ? ' (a clone without records)' : paths ? ' (each in a directory of its own)' : '';
  test(`the same names in two repositories across source branches: the clone's branches of dev and stg never mix${variant}`, () => {
    const base = tempDir('nyl-isolation-');
    const a = makeBareRepo(path.join(base, 'a.git'));
    const b = makeBareRepo(path.join(base, 'b.git'));
    const unit = command('a', 'script: "true"');
    const project = makeProject({ 'nyl.yaml': nylYaml(group(['dev']), member('dev', a, paths && 'envs/dev'), unit) });
    for (const args of [
      ['state', 'init', '-e', 'dev'],
      ['reconcile', '-e', 'dev'],
    ]) {
      const r = nyl(project, [...args, '-o', 'json']);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    }
    const devTips = refs(a, 'refs/heads/nyl/');
    assert.deepEqual(refs(project, 'refs/heads/nyl/'), devTips, "the clone's branches copy dev's repository");
    if (legacy) for (const ref of Object.keys(refs(project, 'refs/nyl-known/'))) git(project, 'update-ref', '-d', ref);

    // Another source branch: the environment is stg now, in repository b, with the group's names.
    git(project, 'switch', '-q', '-c', 'stg');
    fs.writeFileSync(path.join(project, 'nyl.yaml'), nylYaml(group(['stg']), member('stg', b, paths && 'envs/stg'), unit));
    git(project, 'commit', '-q', '-am', 'stg in b');

    const init = nyl(project, ['state', 'init', '-e', 'stg', '-o', 'json']);
    assert.equal(init.code, 0, init.stdout + init.stderr);
    assert.equal(init.json.result, 'done', "dev's branches are not stg's state");
    assert.deepEqual(init.json.warnings, []);
    const stgTips = refs(b, 'refs/heads/nyl/');
    assert.deepEqual(Object.keys(stgTips).sort(), SHARED);
    assert.match(git(b, 'show', `${stgTips[SHARED[0]]}:${paths ? 'envs/stg/' : ''}state.yaml`), /environment: stg/);
    for (const ref of SHARED) {
      assert.equal(git(b, 'rev-list', '--count', ref), '1', `stg's ${ref} starts its own history`);
      assert.equal(hasObject(b, devTips[ref]), false, "none of dev's commits reached stg's repository");
    }
    assert.deepEqual(refs(project, 'refs/heads/nyl/'), devTips, "the clone's branches still hold dev's state");

    const move = nyl(project, ['state', 'move', '-e', 'stg', '--from', 'local', '-o', 'json']);
    assert.equal(move.code, 1, move.stdout + move.stderr);
    assert.deepEqual(codes(move), ['NYL-STATE-MISSING']);
    assert.match(move.json.errors[0].message, paths ? /holds no state of stg/ : /its state\.yaml is the state of environment dev/);
    assert.deepEqual(refs(b, 'refs/heads/nyl/'), stgTips, "dev's history was not copied to stg's repository");
    assert.deepEqual(refs(project, 'refs/heads/nyl/'), devTips, "dev's branches got no stg commit");

    for (const args of [
      ['reconcile', '-e', 'stg'],
      ['status', '-e', 'stg'],
      ['plan', '-e', 'stg'],
    ]) {
      const r = nyl(project, [...args, '-o', 'json']);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.deepEqual(r.json.warnings, [], args.join(' '));
    }
    const reset = nyl(project, ['state', 'reset', '-e', 'stg', '--local', '--discard-all', '-o', 'json']);
    assert.deepEqual([reset.code, reset.json.result], [0, 'unchanged'], `dev's branches are no local work of stg: ${reset.stdout}`);
    assert.deepEqual(refs(project, 'refs/heads/nyl/'), devTips, "stg's commands leave dev's branches alone");

    // Back on dev's source branch: dev is not blocked, and its branches follow its repository.
    git(project, 'switch', '-q', 'main');
    for (const args of [
      ['reconcile', '-e', 'dev'],
      ['status', '-e', 'dev'],
    ]) {
      const r = nyl(project, [...args, '-o', 'json']);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.deepEqual(r.json.warnings, [], args.join(' '));
    }
    assert.deepEqual(refs(project, 'refs/heads/nyl/'), refs(a, 'refs/heads/nyl/'));
    for (const ref of SHARED) {
      assert.ok(isAncestor(a, devTips[ref], git(a, 'rev-parse', ref)), "dev's history goes on");
      assert.doesNotMatch(git(project, 'log', '--format=%s', ref), /stg/, `no stg commit on the clone's ${ref}`);
      assert.doesNotMatch(git(a, 'log', '--format=%s', ref), /stg/, `no stg commit in dev's repository's ${ref}`);
    }
  });
}
