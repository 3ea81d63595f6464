// --local runs and `lease break --local`: a run against the clone's own
// state branches and lease, without fetching, pushing or taking the remote lease; online writers
// then refuse rather than overwrite or merge the unpublished local work.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanupAll, git, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { codes, command, environment, nyl, nylAsync, nylYaml, waitForFile } from '../support/cli.mjs';

after(cleanupAll);

test('reconcile --local, a killed local run, lease break --local and takeover; online writers refuse the unpublished work', async () => {
  const bare = makeBareRepo();
  const dir = tempDir();
  const project = makeProject({
    'nyl.yaml': nylYaml(
      environment('dev', `state:\n  repository: {repoURL: "${pathToFileURL(bare).href}"}`),
      // Safe to run again: a --local run executes a unit under recovery: manual only with an approval.
      command('a', `script: touch "${path.join(dir, 'a-ran')}"\nrecovery: converge`),
      command('b', `dependsOn: [a]\nscript: sleep 0.2\nrecovery: converge`),
    ),
  });
  assert.equal(nyl(project, ['state', 'init', '-e', 'dev']).code, 0);
  const remoteBefore = git(bare, 'for-each-ref', '--format=%(refname) %(objectname)');

  // A local run that dies holding the clone's own lease.
  const marker = path.join(dir, 'paused');
  const run = nylAsync(project, ['reconcile', '-e', 'dev', '--local'], { env: { NYL_FAULT_AT: 'lease-acquired', NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: marker } });
  await waitForFile(marker);
  run.child.kill('SIGKILL');
  await run.done;
  assert.ok(git(project, 'for-each-ref', 'refs/nyl/dev/lease'), 'the local lease is a ref of the clone');
  assert.equal(git(bare, 'for-each-ref', '--format=%(refname) %(objectname)'), remoteBefore, 'nothing reached the remote');

  const held = nyl(project, ['reconcile', '-e', 'dev', '--local', '-o', 'json']);
  assert.equal(held.code, 2, held.stdout);
  assert.deepEqual(codes(held), ['NYL-LEASE-HELD']);

  const broke = nyl(project, ['lease', 'break', '-e', 'dev', '--local', '--reason', 'local run killed', '-o', 'json']);
  assert.equal(broke.code, 0, broke.stdout + broke.stderr);
  assert.equal(broke.json.result, 'done');

  const takeover = nyl(project, ['reconcile', '-e', 'dev', '--local', '-o', 'json']);
  assert.equal(takeover.code, 0, takeover.stdout + takeover.stderr);
  assert.equal(takeover.json.units.a.result, 'executed');
  assert.equal(takeover.json.details.leaseBroken.reason, 'local run killed');
  assert.match(git(project, 'log', '-1', '--format=%B', 'refs/heads/nyl/dev/desired'), /leaseBroken:/);
  assert.equal(git(bare, 'for-each-ref', '--format=%(refname) %(objectname)'), remoteBefore, 'still nothing on the remote');
  assert.equal(git(project, 'for-each-ref', 'refs/nyl/'), '', 'the local lease and run refs are gone');

  // The clone's branches now hold receipts the remote lacks: online writers refuse.
  const online = nyl(project, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(online.code, 1, online.stdout);
  assert.deepEqual(codes(online), ['NYL-STATE-DIVERGED']);
  assert.equal(git(bare, 'for-each-ref', '--format=%(refname) %(objectname)'), remoteBefore, 'the refusal wrote nothing');
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
