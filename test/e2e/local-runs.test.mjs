// Local state: a project whose state lived in the clone gets a remote, and `lease break` takes
// --wait-lease. The --local runs themselves (against the clone's own branches and refs when the
// state repository is its origin, a remote's cache repository otherwise) and the way back from
// them are scenario groups of test/e2e/fix-texts.test.mjs, which runs their printed fixes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanupAll, git, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
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

/** A state repository the checkout does not name as origin: a --local run works in its cache repository. */
function notOriginRemote() {
  const bare = makeBareRepo();
  // The same repository under a second path: a URL that is not origin's, and not a `path`
  // location (its fetch and publish URLs differ), so it is read through a cache repository.
  const alias = path.join(tempDir('nyl-alias-'), 'alias.git');
  fs.symlinkSync(bare, alias);
  return { bare, url: pathToFileURL(alias).href, publishURL: pathToFileURL(bare).href };
}

test("--local on a remote that is not origin: status warns of the cache repository's receipts, `state move --from local` publishes them, and every fix says so", () => {
  const remote = notOriginRemote();
  const log = path.join(tempDir('nyl-local-'), 'log');
  const project = makeProject({
    'nyl.yaml': nylYaml(
      environment('dev', `state:\n  repository: {repoURL: "${remote.url}", publishURL: "${remote.publishURL}"}`),
      command('a', `script: 'echo a >> ${log}'\nrecovery: converge`),
    ),
  });
  assert.equal(nyl(project, ['state', 'init', '-e', 'dev']).code, 0);
  const local = nyl(project, ['reconcile', '-e', 'dev', '--local', '-o', 'json']);
  assert.equal(local.code, 0, local.stdout + local.stderr);
  assert.equal(local.json.units.a.result, 'executed');
  const remoteBefore = git(remote.bare, 'rev-parse', 'refs/heads/nyl/dev/observed');

  // 1. The guide says status warns of unpublished local receipts; it must, wherever they are.
  const status = nyl(project, ['status', '-e', 'dev', '-o', 'json']);
  const warned = status.json.warnings.find((w) => w.code === 'NYL-STATE-DIVERGED');
  assert.ok(warned, `status warns: ${JSON.stringify(status.json.warnings)}`);
  assert.match(warned.fix, /nyl state move -e dev --from local/, 'its fix publishes');

  // 3. The online refusal and the reset both offer the publication, and the reset refuses to lose a's receipt.
  const refused = nyl(project, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(refused.code, 1);
  const diverged = refused.json.errors.find((e) => e.code === 'NYL-STATE-DIVERGED');
  assert.match(diverged.fix, /nyl state move -e dev --from local/, 'reconcile names the publication the reset names');
  const reset = nyl(project, ['state', 'reset', '-e', 'dev', '--local', '-o', 'json']);
  assert.equal(reset.code, 1);
  assert.match(reset.json.errors.find((e) => e.code === 'NYL-STATE-RESET-DISCARD').fix, /nyl state move -e dev --from local/);

  // 2. The publication publishes: a's receipt reaches the state repository, and a is current online.
  const moved = nyl(project, ['state', 'move', '-e', 'dev', '--from', 'local', '-o', 'json']);
  assert.equal(moved.code, 0, moved.stdout + moved.stderr);
  assert.equal(moved.json.result, 'done', 'not unchanged: the receipts were in the cache repository');
  assert.notEqual(git(remote.bare, 'rev-parse', 'refs/heads/nyl/dev/observed'), remoteBefore, 'the state repository moved on');
  const online = nyl(project, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(online.code, 0, online.stdout + online.stderr);
  assert.equal(online.json.units.a.result, 'current', "the --local run's receipt was published");
  assert.deepEqual(fs.readFileSync(log, 'utf8').trim().split('\n'), ['a'], 'a ran once');
  assert.equal(nyl(project, ['status', '-e', 'dev', '-o', 'json']).json.warnings.filter((w) => w.code === 'NYL-STATE-DIVERGED').length, 0);
  // A second --local run goes on from the published state.
  assert.equal(nyl(project, ['reconcile', '-e', 'dev', '--local', '-o', 'json']).json.units.a.result, 'current');
});
