// `nyl state move`, end to end against real repositories whose state branches refuse
// non-fast-forward updates and deletions (a host's protected branches): between two file://
// repositories with a dead run's ref carried along; from a git daemon to smart HTTP with renamed
// refs and a new coordination prefix (refs/heads/nyl-run/ and back); the example project from the
// clone's own branches to a remote added later; a move killed at each of its steps, then run
// again; onto refs another environment shares through path; refused while the old location is
// held or its lease broken.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanupAll, git, gitResult, installProtectHook, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { networkRemotes } from '../support/network-remotes.mjs';
import { codes, command, environment, nyl, nylAsync, nylYaml, waitForFile } from '../support/cli.mjs';

after(cleanupAll);
const remotes = networkRemotes('nyl-move-');

const PROTECTED = ['refs/heads/nyl/', 'refs/heads/renamed/'];

function protectedBare(dir) {
  const bare = makeBareRepo(dir);
  installProtectHook(bare, PROTECTED);
  return bare;
}

/** nyl.yaml with dev's state at `state` (YAML lines under spec.state) and two units that count their runs. */
function projectFiles(state, runs, extra = '') {
  return nylYaml(
    environment(
      'dev',
      `lease: {duration: 2s}\nstate:\n${state
        .split('\n')
        .map((l) => `  ${l}`)
        .join('\n')}`,
    ),
    command('a', `script: echo a >> "${path.join(runs, 'a')}"`),
    command('b', `dependsOn: [a]\nscript: echo b >> "${path.join(runs, 'b')}"${extra}`),
  );
}

/** Rewrites nyl.yaml and commits it: the Environment now points elsewhere. */
function reconfigure(project, files) {
  fs.writeFileSync(path.join(project, 'nyl.yaml'), files);
  git(project, 'commit', '-q', '-am', 'move the state');
}

const runsOf = (dir, unit) => (fs.existsSync(path.join(dir, unit)) ? fs.readFileSync(path.join(dir, unit), 'utf8').split('\n').filter(Boolean).length : 0);
const isAncestor = (repo, a, b) => gitResult(repo, 'merge-base', '--is-ancestor', a, b).status === 0;
const tip = (repo, ref) => git(repo, 'rev-parse', '--verify', '-q', ref);

test('between two file:// repositories: the old location refuses, units keep their receipts, a cancelled run is carried and imported, a second move changes nothing', async () => {
  const base = tempDir('nyl-move-file-');
  const oldBare = protectedBare(path.join(base, 'old.git'));
  const newBare = protectedBare(path.join(base, 'new.git'));
  const runs = tempDir('nyl-move-runs-');
  const at = (bare) => `repository: {repoURL: "${pathToFileURL(bare).href}"}`;
  const project = makeProject({ 'nyl.yaml': projectFiles(at(oldBare), runs) });
  assert.equal(nyl(project, ['state', 'init', '-e', 'dev']).code, 0);
  assert.equal(nyl(project, ['reconcile', '-e', 'dev']).code, 0);

  // A run cancelled while b runs leaves its run ref, ended, waiting for an import.
  reconfigure(project, projectFiles(at(oldBare), runs, '; sleep 20'));
  const marker = path.join(runs, 'started');
  const cancelled = nylAsync(project, ['reconcile', '-e', 'dev'], {
    env: { NYL_FAULT_AT: 'after-started-push@b', NYL_FAULT_ACTION: 'mark', NYL_FAULT_MARKER: marker },
  });
  await waitForFile(marker);
  cancelled.child.kill('SIGTERM');
  assert.equal((await cancelled.done).code, 4);
  const runRefs = git(oldBare, 'for-each-ref', '--format=%(refname)', 'refs/nyl/dev/runs/').split('\n').filter(Boolean);
  assert.equal(runRefs.length, 1, 'the cancelled run waits for its import');
  const oldTips = { desired: tip(oldBare, 'refs/heads/nyl/dev/desired'), observed: tip(oldBare, 'refs/heads/nyl/dev/observed') };
  const oldProject = makeProject({ 'nyl.yaml': fs.readFileSync(path.join(project, 'nyl.yaml'), 'utf8') });

  reconfigure(project, projectFiles(at(newBare), runs, '; sleep 20'));
  const missing = nyl(project, ['status', '-e', 'dev', '-o', 'json']);
  assert.ok(codes(missing).includes('NYL-STATE-MISSING'), missing.stdout);

  const moved = nyl(project, ['state', 'move', '-e', 'dev', '--from', pathToFileURL(oldBare).href, '--reason', 'new home', '-o', 'json']);
  assert.equal(moved.code, 0, moved.stdout + moved.stderr);
  assert.equal(moved.json.result, 'done');
  assert.deepEqual(moved.json.details.carried, runRefs);

  // The old location records the move, one commit per ref, and keeps its history and run ref.
  for (const side of ['desired', 'observed']) {
    const ref = `refs/heads/nyl/dev/${side}`;
    const marked = tip(oldBare, ref);
    assert.equal(git(oldBare, 'rev-parse', `${marked}^`), oldTips[side], `one commit on the old ${side} ref`);
    assert.match(git(oldBare, 'show', `${marked}:state.yaml`), /status: moved/);
    assert.ok(isAncestor(newBare, marked, tip(newBare, ref)), `every old ${side} commit is in the new history`);
    assert.equal(
      git(newBare, 'show', `${tip(newBare, ref)}:units/a.yaml`),
      git(oldBare, 'show', `${oldTips[side]}:units/a.yaml`),
      'the unit documents move as they are',
    );
  }
  assert.match(git(oldBare, 'show', 'refs/heads/nyl/dev/desired:state.yaml'), new RegExp(`movedTo: .*${path.basename(base)}/new\\.git`));
  assert.deepEqual(git(newBare, 'for-each-ref', '--format=%(refname)', 'refs/nyl/dev/runs/').split('\n'), runRefs);

  // Every command against the old location refuses, naming the new one.
  for (const args of [
    ['status', '-e', 'dev', '-o', 'json'],
    ['reconcile', '-e', 'dev', '-o', 'json'],
    ['hold', '-e', 'dev', '--unit', 'a', '-o', 'json'],
  ]) {
    const r = nyl(oldProject, args);
    assert.equal(r.code, 1, `${args[0]}: ${r.stdout}`);
    assert.ok(codes(r).includes('NYL-STATE-MOVED'), r.stdout);
    assert.match(JSON.stringify(r.json.errors), /new\.git/);
  }

  // A second move finds the work done.
  const again = nyl(project, ['state', 'move', '-e', 'dev', '--from', pathToFileURL(oldBare).href, '-o', 'json']);
  assert.equal(again.code, 0, again.stdout);
  assert.equal(again.json.result, 'unchanged');

  // The new location imports the carried run (b was cut short: uncertain) and a stays current.
  const first = nyl(project, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(first.json.units.a.result, 'current');
  assert.equal(first.json.units.b.result, 'recovered', first.stdout);
  assert.equal(git(newBare, 'for-each-ref', 'refs/nyl/dev/runs/'), '', 'the import consumed the carried run ref');
  assert.equal(runsOf(runs, 'a'), 1, 'a never ran again');
});

test('from a git daemon named by a GitRepository to smart HTTP: renamed refs, a new coordination prefix, refs/heads/nyl-run/ and back', () => {
  const runs = tempDir('nyl-move-net-runs-');
  protectedBare(path.join(remotes.base, 'one.git'));
  protectedBare(path.join(remotes.base, 'two.git'));
  const daemon = remotes.daemon.url('one.git');
  const http = remotes.http.url('two.git');
  const project = makeProject({ 'nyl.yaml': projectFiles(`repository: {repoURL: "${daemon}"}`, runs) });
  assert.equal(nyl(project, ['state', 'init', '-e', 'dev']).code, 0);
  assert.equal(nyl(project, ['reconcile', '-e', 'dev']).code, 0);

  const renamed = `repository: {repoURL: "${http}"}\ndesiredRef: renamed/dev/desired\nobservedRef: renamed/dev/observed\ncoordinationRefPrefix: refs/heads/nyl-run/`;
  // The old repository, named by a GitRepository the project keeps declaring.
  const oldRepository = `apiVersion: nyl.io/v1\nkind: GitRepository\nmetadata: {name: old-state}\nspec: {url: "${daemon}"}\n`;
  reconfigure(project, `${projectFiles(renamed, runs)}---\n${oldRepository}`);
  const moved = nyl(project, [
    'state',
    'move',
    '-e',
    'dev',
    '--from',
    'old-state',
    '--desired-ref',
    'nyl/dev/desired',
    '--observed-ref',
    'nyl/dev/observed',
    '--coordination-refs',
    'refs/nyl/',
    '-o',
    'json',
  ]);
  assert.equal(moved.code, 0, moved.stdout + moved.stderr);
  const two = path.join(remotes.base, 'two.git');
  assert.ok(tip(two, 'refs/heads/renamed/dev/desired'));
  assert.equal(nyl(project, ['reconcile', '-e', 'dev', '-o', 'json']).json.units.b.result, 'current');
  assert.equal(git(two, 'for-each-ref', 'refs/nyl/'), '', 'nothing under the old prefix at the new repository');

  // Back to the default prefix on the same refs: one state.yaml at both ends.
  const back = renamed.replace('coordinationRefPrefix: refs/heads/nyl-run/', 'coordinationRefPrefix: refs/nyl/');
  reconfigure(project, `${projectFiles(back, runs)}---\n${oldRepository}`);
  const inPlace = nyl(project, ['state', 'move', '-e', 'dev', '--coordination-refs', 'refs/heads/nyl-run/', '-o', 'json']);
  assert.equal(inPlace.code, 0, inPlace.stdout + inPlace.stderr);
  assert.match(git(two, 'show', 'refs/heads/renamed/dev/desired:state.yaml'), /coordinationRefPrefix: refs\/nyl\//);
  const r = nyl(project, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(r.code, 0, r.stdout);
  assert.equal(git(two, 'for-each-ref', 'refs/heads/nyl-run/'), '', 'runs use the new prefix');
  // A checkout still configured with the branch prefix refuses.
  const stale = makeProject({ 'nyl.yaml': projectFiles(renamed, runs) });
  const refused = nyl(stale, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(refused.code, 1, refused.stdout);
  assert.deepEqual(codes(refused), ['NYL-STATE-MOVED']);
  assert.equal(runsOf(runs, 'a'), 1);
});

test("the example project, whose state lived in the clone, gets a remote: every command names the move from local, which then publishes it; the clone's branches follow the remote", () => {
  const example = fs.readFileSync(new URL('../../examples/shop/nyl.yaml', import.meta.url), 'utf8');
  // No state repository and no origin: the clone's own branches are the state.
  const local = example.replace(/\n  state:\n    repository:\n(?:      .*\n)+/, '\n');
  assert.ok(!local.includes('STATE_REPO_URL'), 'the example names no state repository any more');
  const project = makeProject({ 'nyl.yaml': local });
  fs.cpSync(new URL('../../examples/shop/migrations', import.meta.url), path.join(project, 'migrations'), { recursive: true });
  git(project, 'add', '-A');
  git(project, 'commit', '-q', '-m', 'the migrations');
  assert.equal(nyl(project, ['state', 'init', '-e', 'dev']).code, 0);
  const first = nyl(project, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(first.code, 0, first.stdout + first.stderr);
  const units = Object.keys(first.json.units);
  assert.ok(units.length >= 5, 'the shop has its units');
  const bare = protectedBare();
  git(project, 'remote', 'add', 'origin', `${pathToFileURL(bare).href}`);

  for (const args of [
    ['reconcile', '-e', 'dev', '-o', 'json'],
    ['status', '-e', 'dev', '-o', 'json'],
    ['hold', '-e', 'dev', '--unit', units[0], '-o', 'json'],
  ]) {
    const refused = nyl(project, args);
    assert.equal(refused.code, 1, `${args[0]}: ${refused.stdout}`);
    assert.deepEqual(codes(refused), ['NYL-STATE-MISSING']);
    assert.match(refused.json.errors[0].fix, /^move the state the clone's branches hold there with `nyl state move -e dev --from local`/);
  }

  // Killed right after the remote got the state, before the clone's branches followed it.
  const killed = nyl(project, ['state', 'move', '-e', 'dev', '--from', 'local'], { env: { NYL_FAULT_AT: 'after-transition-push#2' } });
  assert.equal(killed.signal, 'SIGKILL', killed.stderr);
  const remoteTip = tip(bare, 'refs/heads/nyl/dev/desired');
  assert.match(git(project, 'show', 'refs/heads/nyl/dev/desired:state.yaml'), /status: moved/, "the clone's branch is marked");
  const again = nyl(project, ['state', 'move', '-e', 'dev', '--from', 'local', '-o', 'json']);
  assert.equal(again.json.result, 'unchanged', "the remote continues the clone's history: the move is done");
  assert.equal(tip(bare, 'refs/heads/nyl/dev/desired'), remoteTip);
  assert.equal(tip(project, 'refs/heads/nyl/dev/desired'), remoteTip, "the clone's branch follows the remote");
  const r = nyl(project, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(r.code, 0, r.stdout);
  assert.deepEqual(
    units.filter((u) => r.json.units[u].result !== 'current'),
    [],
    'every unit kept its receipt',
  );
});

// Each step of a move where a kill leaves something half done: before and after each lease
// and each transition push, at the old location (#1) and at the new one (#2).
const KILL_POINTS = [
  'before-lease-push#1',
  'lease-acquired#1',
  'before-transition-push#1',
  'after-transition-push#1',
  'before-lease-push#2',
  'lease-acquired#2',
  'before-transition-push#2',
  'after-transition-push#2',
];

test('a move killed at each step completes when run again, with nothing lost and nothing twice', async () => {
  const base = tempDir('nyl-move-kill-');
  const runs = path.join(base, 'runs');
  fs.mkdirSync(runs);
  const oldBare = protectedBare(path.join(base, 'old.git'));
  protectedBare(path.join(base, 'new.git'));
  const project = makeProject({ 'nyl.yaml': projectFiles(`repository: {repoURL: "${pathToFileURL(oldBare).href}"}`, runs) });
  git(project, 'config', 'user.name', 'Nyl Test');
  git(project, 'config', 'user.email', 'nyl@example.com');
  assert.equal(nyl(project, ['state', 'init', '-e', 'dev']).code, 0);
  assert.equal(nyl(project, ['reconcile', '-e', 'dev']).code, 0);
  fs.renameSync(project, path.join(base, 'project'));
  const files = projectFiles('repository: {repoURL: "file://STATE/new.git"}', runs);

  const scenarios = KILL_POINTS.map(async (point) => {
    const dir = tempDir('nyl-move-kill-case-');
    fs.cpSync(base, dir, { recursive: true });
    const proj = path.join(dir, 'project');
    fs.writeFileSync(path.join(proj, 'nyl.yaml'), files.replace('STATE', dir));
    git(proj, 'commit', '-q', '-am', 'move');
    const from = pathToFileURL(path.join(dir, 'old.git')).href;
    const killed = await nylAsync(proj, ['state', 'move', '-e', 'dev', '--from', from], { env: { NYL_FAULT_AT: point } }).done;
    assert.equal(killed.signal, 'SIGKILL', `${point}: ${killed.stderr}`);
    const done = await nylAsync(proj, ['state', 'move', '-e', 'dev', '--from', from, '--wait-lease', '20s', '-o', 'json']).done;
    assert.equal(done.code, 0, `${point}: ${done.stdout}${done.stderr}`);
    const oldRepo = path.join(dir, 'old.git');
    const newRepo = path.join(dir, 'new.git');
    for (const side of ['desired', 'observed']) {
      const ref = `refs/heads/nyl/dev/${side}`;
      const subjects = git(oldRepo, 'log', '--format=%s', ref).split('\n');
      assert.equal(subjects.filter((s) => s === 'nyl: state-move dev').length, 1, `${point}: the old ${side} ref records the move once`);
      const newSubjects = git(newRepo, 'log', '--format=%s', ref).split('\n');
      assert.equal(newSubjects.filter((s) => s === 'nyl: state-move dev').length, 2, `${point}: one move commit at each end`);
      assert.ok(isAncestor(newRepo, tip(oldRepo, ref), tip(newRepo, ref)), `${point}: the new ${side} ref continues the old one`);
    }
    // The units moved as they were: the documents at both ends are the same blobs.
    for (const unit of ['a', 'b']) {
      const at = (repo) => git(repo, 'rev-parse', `refs/heads/nyl/dev/observed:units/${unit}.yaml`);
      assert.equal(at(newRepo), at(oldRepo), `${point}: ${unit}'s receipt moved as it was`);
    }
  });
  // Every scenario ends before the test does (a failure of one must not cut the others short).
  const failed = (await Promise.allSettled(scenarios)).filter((s) => s.status === 'rejected');
  if (failed.length > 0) throw failed[0].reason;
  assert.equal(runsOf(runs, 'a'), 1, 'no unit ran again anywhere');
});

test('onto refs another environment shares through path: a merge of both histories, the other environment untouched', () => {
  const base = tempDir('nyl-move-shared-');
  const oldBare = protectedBare(path.join(base, 'old.git'));
  const shared = protectedBare(path.join(base, 'shared.git'));
  const runs = tempDir('nyl-move-shared-runs-');
  const state = (repo, env, refs = '') => `state:\n  repository: {repoURL: "${pathToFileURL(repo).href}"}\n  path: envs/${env}${refs}`;
  const onShared = '\n  desiredRef: nyl/shared/desired\n  observedRef: nyl/shared/observed';
  const files = (dev, staging) =>
    nylYaml(environment('dev', dev), environment('staging', staging), command('a', `script: echo a >> "${path.join(runs, 'a')}"`));
  const project = makeProject({ 'nyl.yaml': files(state(oldBare, 'dev'), state(shared, 'staging')) });
  for (const env of ['dev', 'staging']) {
    assert.equal(nyl(project, ['state', 'init', '-e', env]).code, 0);
    assert.equal(nyl(project, ['reconcile', '-e', env]).code, 0);
  }
  // Both environments now share one pair of branches of the shared repository, each in its directory.
  reconfigure(project, files(state(shared, 'dev', onShared), state(shared, 'staging', onShared)));
  const renamed = ['--desired-ref', 'nyl/staging/desired', '--observed-ref', 'nyl/staging/observed'];
  assert.equal(nyl(project, ['state', 'move', '-e', 'staging', ...renamed]).code, 0);
  const before = tip(shared, 'refs/heads/nyl/shared/desired');
  const moved = nyl(project, [
    'state',
    'move',
    '-e',
    'dev',
    '--from',
    pathToFileURL(oldBare).href,
    '--desired-ref',
    'nyl/dev/desired',
    '--observed-ref',
    'nyl/dev/observed',
    '-o',
    'json',
  ]);
  assert.equal(moved.code, 0, moved.stdout + moved.stderr);
  const after = tip(shared, 'refs/heads/nyl/shared/desired');
  assert.deepEqual(
    git(shared, 'rev-list', '--parents', '-n', '1', after).split(' ').slice(1),
    [before, tip(oldBare, 'refs/heads/nyl/dev/desired')],
    'the shared tip, then the old history',
  );
  assert.equal(git(shared, 'rev-parse', `${after}:envs/staging`), git(shared, 'rev-parse', `${before}:envs/staging`), "staging's directory is untouched");
  for (const env of ['dev', 'staging']) {
    const r = nyl(project, ['reconcile', '-e', env, '-o', 'json']);
    assert.equal(r.code, 0, `${env}: ${r.stdout}`);
    assert.equal(r.json.units.a.result, 'current', env);
  }
  assert.equal(runsOf(runs, 'a'), 2, 'a ran once per environment, never again');
});

test('a move refuses while the old location is held (NYL-LEASE-HELD, exit 2) or its lease is broken (NYL-LEASE-BROKEN, exit 2), and goes on once recover cleared it', async () => {
  const bare = protectedBare();
  const alias = path.join(tempDir('nyl-move-alias-'), 'alias.git');
  fs.symlinkSync(bare, alias);
  const project = makeProject({ 'nyl.yaml': nylYaml(environment('dev'), command('a', 'script: "true"')) });
  assert.equal(nyl(project, ['state', 'init', '-e', 'dev']).code, 0);
  assert.equal(nyl(project, ['reconcile', '-e', 'dev']).code, 0);
  // A hold holds the clone's own lease, paused; meanwhile the project gets its origin as state
  // repository (a publishURL by another name keeps it a remote, whose --local is the clone).
  const marker = path.join(tempDir('nyl-move-pause-'), 'paused');
  const holder = nylAsync(project, ['hold', '-e', 'dev', '--unit', 'a'], {
    env: { NYL_FAULT_AT: 'lease-acquired', NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: marker },
  });
  await waitForFile(marker);
  const url = pathToFileURL(bare).href;
  reconfigure(
    project,
    nylYaml(environment('dev', `state:\n  repository: {repoURL: "${url}", publishURL: "${pathToFileURL(alias).href}"}`), command('a', 'script: "true"')),
  );
  git(project, 'remote', 'add', 'origin', url);
  const move = () => nyl(project, ['state', 'move', '-e', 'dev', '--from', 'local', '-o', 'json']);

  const held = move();
  assert.deepEqual([held.code, codes(held)], [2, ['NYL-LEASE-HELD']], held.stdout);
  holder.child.kill('SIGKILL');
  await holder.done;
  assert.equal(nyl(project, ['lease', 'break', '-e', 'dev', '--local', '--reason', 'hold killed']).code, 0);
  const broken = move();
  assert.deepEqual([broken.code, codes(broken)], [2, ['NYL-LEASE-BROKEN']], broken.stdout);
  assert.equal(git(bare, 'for-each-ref'), '', 'neither refusal wrote anything at the new location');
  assert.equal(nyl(project, ['recover', '-e', 'dev', '--local']).code, 0);
  const moved = move();
  assert.equal(moved.code, 0, moved.stdout + moved.stderr);
  assert.equal(moved.json.result, 'done');
});
