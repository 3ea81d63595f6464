// An importer that takes a broken lease over and then ends without its transition commit
// (cancelled, failed) puts the broken lease back, so that the break is still recorded by the next
// importer and nobody waits for the dead run. A run whose start push was rejected leaves no start
// records behind. A held failed unit keeps its incarnation and its condition.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanupAll, git, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { codes, command, environment, nyl, nylAsync, nylYaml, waitForFile } from '../support/cli.mjs';

after(cleanupAll);

function project(dir, units) {
  const bare = makeBareRepo();
  const repo = makeProject({ 'nyl.yaml': nylYaml(environment('dev', `state:\n  repository: {repoURL: "${pathToFileURL(bare).href}"}`), ...units) });
  assert.equal(nyl(repo, ['state', 'init', '-e', 'dev']).code, 0);
  return { bare, repo };
}

test('a cancelled takeover puts the broken lease back; the next importer records the break', async () => {
  const dir = tempDir();
  const started = path.join(dir, 'started');
  const { bare, repo } = project(dir, [command('slow', `recovery: converge\nscript: |\n  touch "${started}"\n  sleep 3`)]);
  const first = nylAsync(repo, ['reconcile', '-e', 'dev']);
  await waitForFile(started);
  first.child.kill('SIGKILL');
  await first.done;
  fs.rmSync(started);
  assert.equal(nyl(repo, ['lease', 'break', '-e', 'dev', '--reason', 'runner killed']).code, 0);

  const takeover = nylAsync(repo, ['reconcile', '-e', 'dev', '-o', 'json'], { env: { NYL_TEST_KILL_GRACE_MS: '500' } });
  await waitForFile(started);
  takeover.child.kill('SIGTERM');
  const cancelled = await takeover.done;
  assert.equal(cancelled.code, 4, cancelled.stderr);
  assert.deepEqual(
    cancelled.json.errors.map((e) => e.code),
    ['NYL-RUN-CANCELLED'],
  );
  const lease = git(bare, 'show', 'refs/nyl/dev/lease:lease.yaml');
  assert.match(lease, /reason: "?runner killed"?/, 'the broken lease is back');

  const final = nyl(repo, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.notEqual(final.code, 2, `not blocked by the dead run: ${final.stdout}`);
  assert.equal(final.json.details.leaseBroken.reason, 'runner killed');
  assert.match(git(bare, 'log', '-1', '--format=%B', 'refs/heads/nyl/dev/desired'), /reason: "?runner killed"?/);
  assert.equal(git(bare, 'for-each-ref', 'refs/nyl/dev/lease', 'refs/nyl/dev/runs/'), '');
});

test('a held failed unit keeps its uid and condition; resume does not skip recover --retry --reason', async () => {
  const dir = tempDir();
  const log = path.join(dir, 'uids');
  const { bare, repo } = project(dir, [command('t', `timeout: 1s\nscript: |\n  echo "$NYL_UID" >> "${log}"\n  sleep 5`)]);
  const failed = nyl(repo, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(failed.code, 3, failed.stdout);
  const uid = failed.json.units.t.uid;
  assert.equal(nyl(repo, ['hold', '-e', 'dev', '--unit', 't', '--reason', 'look']).code, 0);
  const held = git(bare, 'show', 'refs/heads/nyl/dev/desired:units/t.yaml');
  assert.match(held, new RegExp(`uid: ${uid}`), 'not a marker: the incarnation stays');
  assert.equal(nyl(repo, ['resume', '-e', 'dev', '--unit', 't']).code, 0);
  const again = nyl(repo, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(again.code, 3);
  assert.equal(again.json.units.t.result, 'failed', 'still waits for recover --retry');
  assert.equal(fs.readFileSync(log, 'utf8').trim().split('\n').length, 1, 'not executed again');
  const retry = nyl(repo, ['recover', '-e', 'dev', '--unit', 't', '--retry', '-o', 'json']);
  assert.deepEqual(codes(retry), ['NYL-RECOVER-REASON-REQUIRED']);
});

test('within one wave, a unit delivered a hold before it starts does not start (local state)', async () => {
  const dir = tempDir();
  const gate = path.join(dir, 'gate');
  const ran = path.join(dir, 'ran');
  // k and l start first (concurrency 2) and wait for the gate; z starts only after one of them ends.
  const { bare, repo } = project(dir, [
    command('k', `script: |\n  while [ ! -f "${gate}" ]; do sleep 0.05; done`),
    command('l', `script: |\n  while [ ! -f "${gate}" ]; do sleep 0.05; done`),
    command('z', `script: touch "${ran}"`),
  ]);
  const run = nylAsync(repo, ['reconcile', '-e', 'dev', '--concurrency', '2', '-o', 'json']);
  let r;
  try {
    // Wait until k and l run: the wave's start records are in the run ref.
    const deadline = Date.now() + 15000;
    for (;;) {
      const runRef = git(bare, 'for-each-ref', '--format=%(objectname)', 'refs/nyl/dev/runs/');
      if (runRef && /(^|\n)units\/..\/l\.yaml$/m.test(git(bare, 'ls-tree', '-r', '--name-only', runRef))) break;
      if (Date.now() > deadline) throw new Error('the run did not start its wave');
      await new Promise((res) => setTimeout(res, 20));
    }
    const hold = nyl(repo, ['hold', '-e', 'dev', '--unit', 'z', '--reason', 'stop z', '-o', 'json']);
    assert.equal(hold.code, 0, hold.stdout);
    assert.equal(hold.json.result, 'delivered');
  } finally {
    fs.writeFileSync(gate, '');
    r = await run.done;
  }
  assert.equal(fs.existsSync(ran), false, 'z never started');
  assert.equal(r.json.units.z.result, 'held');
  assert.match(git(bare, 'show', 'refs/heads/nyl/dev/desired:units/z.yaml'), /state: held/);
});

test('a held marker whose unit left the ownership set: after resume, the next reconcile removes its file', async () => {
  const dir = tempDir();
  const { bare, repo } = project(dir, [command('keep', `run: ["true"]`), command('later', `run: ["true"]`)]);
  const hold = nyl(repo, ['hold', '-e', 'dev', '--unit', 'later', '--reason', 'not yet', '-o', 'json']);
  assert.equal(hold.code, 0, hold.stdout);
  assert.equal(hold.json.details.marker, true);
  // Remove `later` from source, commit.
  const file = path.join(repo, 'nyl.yaml');
  const text = fs
    .readFileSync(file, 'utf8')
    .split('\n---\n')
    .filter((d) => !/name: later/.test(d))
    .join('\n---\n');
  fs.writeFileSync(file, text);
  git(repo, 'commit', '-qam', 'drop later');
  const held = nyl(repo, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(held.json.units.later.result, 'held', 'reported held with a pending deletion');
  assert.match(git(bare, 'show', 'refs/heads/nyl/dev/desired:units/later.yaml'), /state: held/, 'not deleted while held');
  assert.equal(nyl(repo, ['resume', '-e', 'dev', '--unit', 'later']).code, 0);
  const after = nyl(repo, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(after.code, 0, after.stdout);
  assert.equal(git(bare, 'ls-tree', '--name-only', 'refs/heads/nyl/dev/desired:units/'), 'keep.yaml', 'the marker file is removed');
  assert.match(git(bare, 'log', '-1', '--format=%B', 'refs/heads/nyl/dev/desired'), /removed:\n {2}- later/);
});
