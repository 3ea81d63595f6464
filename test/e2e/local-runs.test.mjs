// Local state: a project whose state lived in the clone gets a remote, and `lease break` takes
// --wait-lease. The --local runs themselves (against the clone's own branches and refs when the
// state repository is its origin, a remote's cache repository otherwise) and the way back from
// them are scenario groups of test/e2e/fix-texts.test.mjs, which runs their printed fixes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { cleanupAll, git, makeBareRepo, makeProject } from '../support/git-fixtures.mjs';
import { codes, command, environment, nyl, nylYaml } from '../support/cli.mjs';

after(cleanupAll);

test('adding an origin to a project whose state lives in the clone: every command names `nyl state move -e dev --from local` first, never a plain state init', () => {
  const project = makeProject({ 'nyl.yaml': nylYaml(environment('dev'), command('a', 'script: "true"')) });
  assert.equal(nyl(project, ['state', 'init', '-e', 'dev']).code, 0);
  assert.equal(nyl(project, ['reconcile', '-e', 'dev']).code, 0);
  const bare = makeBareRepo();
  git(project, 'remote', 'add', 'origin', pathToFileURL(bare).href);
  for (const args of [
    ['status'],
    ['reconcile'],
    ['hold', '--unit', 'a', '--reason', 'x'],
    ['resume', '--unit', 'a', '--reason', 'x'],
    ['recover', '--unit', 'a', '--retry', '--reason', 'x'],
  ]) {
    const r = nyl(project, [...args, '-e', 'dev', '-o', 'json']);
    assert.equal(r.code, 1, `${args[0]}: ${r.stdout}${r.stderr}`);
    const missing = r.json.errors.find((e) => e.code === 'NYL-STATE-MISSING');
    assert.ok(missing, `${args[0]}: ${r.stdout}`);
    assert.match(missing.fix, /^move the state the clone's branches hold there with `nyl state move -e dev --from local`/, args[0]);
    assert.doesNotMatch(missing.fix, /`nyl state init -e dev`/, `${args[0]}: a plain init would refuse (the clone holds state)`);
    assert.ok(
      !missing.fix.includes('state init') || missing.fix.indexOf('state init') > missing.fix.indexOf('--from local'),
      `${args[0]}: the move comes first`,
    );
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
  assert.deepEqual(
    r.json.notes.map((n) => n.code),
    ['NYL-UNCHANGED'],
  );
  const bad = nyl(project, ['lease', 'break', '-e', 'dev', '--wait-lease', 'soon', '--reason', 'x', '-o', 'json']);
  assert.equal(bad.code, 1);
  assert.deepEqual(codes(bad), ['NYL-USAGE']);
});
