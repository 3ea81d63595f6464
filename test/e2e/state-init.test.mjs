// End-to-end: `nyl state init` and the state location rules, through the built CLI.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanupAll, git, gitResult, installProtectHook, makeBareRepo, makeProject, tempDir, ZERO_OID } from '../support/git-fixtures.mjs';
import { codes, environment, nyl, nylAsync, nylYaml, waitForFile } from '../support/cli.mjs';

after(cleanupAll);

function refs(repo, pattern = 'refs/') {
  const out = git(repo, 'for-each-ref', '--format=%(refname) %(objectname)', pattern);
  return Object.fromEntries(
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' ')),
  );
}

function stateProject(url, extra = '') {
  return makeProject({
    'nyl.yaml': nylYaml(environment('dev', `state:\n  repository: {repoURL: "${url}"}${extra ? `\n  ${extra}` : ''}`)),
  });
}

describe('state init in a clone without remote', () => {
  test('creates state.yaml on both local branches, and a second run changes nothing', () => {
    const project = makeProject({ 'nyl.yaml': nylYaml(environment('dev')) });
    const first = nyl(project, ['state', 'init', '-e', 'dev', '-o', 'json']);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.json.kind, 'StateOperationReport');
    assert.equal(first.json.result, 'done');
    assert.equal(first.json.details.location.desiredRef, 'refs/heads/nyl/dev/desired');
    assert.equal(first.json.details.location.coordinationRefPrefix, 'refs/nyl/');
    const r = refs(project, 'refs/heads/nyl/');
    assert.equal(r['refs/heads/nyl/dev/desired'], first.json.desired);
    assert.equal(r['refs/heads/nyl/dev/observed'], first.json.observed);
    const state = git(project, 'show', 'nyl/dev/desired:state.yaml');
    assert.match(state, /kind: EnvironmentState/);
    assert.match(state, /status: active/);
    assert.match(state, /generation: 1/);
    assert.match(git(project, 'log', '-1', '--format=%B', 'nyl/dev/desired'), /^nyl: state-init dev\n[\s\S]*Nyl-Operation: state-init/);
    assert.deepEqual(Object.keys(refs(project, 'refs/nyl/')), [], 'the lease is released');

    const again = nyl(project, ['state', 'init', '-e', 'dev', '-o', 'json']);
    assert.equal(again.code, 0);
    assert.equal(again.json.result, 'unchanged');
    assert.equal(again.json.desired, first.json.desired);
    assert.deepEqual(refs(project, 'refs/heads/nyl/'), r);
    assert.equal(again.json.details.location.desiredRef, 'refs/heads/nyl/dev/desired');
  });

  test('the text report names repository, refs and coordination prefix, also when state exists', () => {
    const project = makeProject({ 'nyl.yaml': nylYaml(environment('dev', 'state:\n  path: envs/dev')) });
    for (const expected of ['done', 'unchanged']) {
      const r = nyl(project, ['state', 'init', '-e', 'dev']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^state-init dev: ${expected}`));
      assert.match(r.stdout, /repository: +\S+/);
      assert.match(r.stdout, /desired ref: +refs\/heads\/nyl\/dev\/desired/);
      assert.match(r.stdout, /observed ref: +refs\/heads\/nyl\/dev\/observed/);
      assert.match(r.stdout, /state path: +envs\/dev/);
      assert.match(r.stdout, /coordination prefix: +refs\/nyl\//);
    }
    assert.match(git(project, 'show', 'nyl/dev/desired:envs/dev/state.yaml'), /environment: dev/);
  });

  test('--fresh raises the generation each time, recording the reason when given', () => {
    const project = makeProject({ 'nyl.yaml': nylYaml(environment('dev')) });
    assert.equal(nyl(project, ['state', 'init', '-e', 'dev']).code, 0);
    const noReason = nyl(project, ['state', 'init', '-e', 'dev', '--fresh', '-o', 'json']);
    assert.equal(noReason.code, 0, noReason.stderr);
    assert.equal(noReason.json.result, 'done');
    const fresh = nyl(project, ['state', 'init', '-e', 'dev', '--fresh', '--reason', 'start over', '-o', 'json']);
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.equal(fresh.json.result, 'done');
    const state = git(project, 'show', 'nyl/dev/desired:state.yaml');
    assert.match(state, /generation: 3/);
    assert.match(state, /type: fresh/);
    assert.match(git(project, 'log', '-1', '--format=%B', 'nyl/dev/desired'), /Nyl-Reason: start over/);
  });
});

describe('identity', () => {
  test('without --author and without user.name/email: NYL-COMMIT-IDENTITY-MISSING before anything changes', () => {
    const project = makeProject({ 'nyl.yaml': nylYaml(environment('dev')) });
    const emptyConfig = path.join(tempDir(), 'gitconfig');
    fs.writeFileSync(emptyConfig, '');
    const env = { GIT_CONFIG_GLOBAL: emptyConfig, HOME: tempDir(), EMAIL: undefined };
    const r = nyl(project, ['state', 'init', '-e', 'dev'], { env });
    assert.equal(r.code, 1);
    assert.deepEqual(codes(r), ['NYL-COMMIT-IDENTITY-MISSING']);
    assert.deepEqual(refs(project, 'refs/heads/nyl/'), {});
    const withAuthor = nyl(project, ['state', 'init', '-e', 'dev', '--author', 'Release Bot <bot@example.com>'], { env });
    assert.equal(withAuthor.code, 0, withAuthor.stderr);
    assert.equal(git(project, 'log', '-1', '--format=%an <%ae>|%cn <%ce>', 'nyl/dev/desired'), 'Release Bot <bot@example.com>|Release Bot <bot@example.com>');
  });

  test('commit times come from the injected clock', () => {
    const project = makeProject({ 'nyl.yaml': nylYaml(environment('dev')) });
    const r = nyl(project, ['state', 'init', '-e', 'dev'], { env: { NYL_TEST_NOW: '2030-01-02T03:04:05Z' } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(git(project, 'log', '-1', '--format=%aI', 'nyl/dev/desired'), '2030-01-02T03:04:05Z'.replace('Z', '+00:00'));
    assert.match(git(project, 'show', 'nyl/dev/desired:state.yaml'), /at: 2030-01-02T03:04:05Z/);
  });
});

describe('local state repositories', () => {
  test('a missing file:// repository is created with its parents; the clone keeps known branches without upstream', () => {
    const root = tempDir();
    const statePath = path.join(root, 'deep', 'er', 'state.git');
    const project = stateProject(pathToFileURL(statePath).href);
    const r = nyl(project, ['state', 'init', '-e', 'dev', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(git(statePath, 'rev-parse', '--is-bare-repository'), 'true');
    const remote = refs(statePath, 'refs/heads/nyl/');
    assert.equal(remote['refs/heads/nyl/dev/desired'], r.json.desired);
    const local = refs(project, 'refs/heads/nyl/');
    assert.deepEqual(local, remote, 'known branches follow the state repository');
    assert.equal(gitResult(project, 'config', '--get', 'branch.nyl/dev/desired.remote').status, 1, 'no upstream');
    assert.equal(r.json.details.location.repository, pathToFileURL(statePath).href);
  });

  test('four concurrent inits against a missing file:// repository: each ends done, unchanged or NYL-LEASE-HELD', async () => {
    // Rounds, because the race (one process sees the directory another is still creating) is short.
    for (let round = 0; round < 3; round++) {
      const statePath = path.join(tempDir(), 'nested', 'state.git');
      const project = stateProject(pathToFileURL(statePath).href);
      const runs = await Promise.all([0, 1, 2, 3].map(() => nylAsync(project, ['state', 'init', '-e', 'dev', '-o', 'json']).done));
      for (const r of runs) {
        assert.ok(r.code === 0 || (r.code === 2 && codes(r).includes('NYL-LEASE-HELD')), `round ${round}: exit ${r.code}: ${r.stdout}${r.stderr}`);
      }
      assert.ok(
        runs.some((r) => r.json?.result === 'done'),
        'one of them initialised the state',
      );
      assert.equal(git(statePath, 'rev-parse', '--is-bare-repository'), 'true');
      assert.ok(refs(statePath)['refs/heads/nyl/dev/desired']);
      assert.deepEqual(fs.readdirSync(path.dirname(statePath)), ['state.git'], 'no scratch directory left beside it');
    }
  });

  test('an absolute path works like file://', () => {
    const statePath = path.join(tempDir(), 'state.git');
    const project = stateProject(statePath);
    assert.equal(nyl(project, ['state', 'init', '-e', 'dev']).code, 0);
    assert.ok(refs(statePath)['refs/heads/nyl/dev/observed']);
  });

  test('an existing path that is not a repository fails NYL-STATE-UNAVAILABLE and stays untouched', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'hello');
    const project = stateProject(pathToFileURL(dir).href);
    const r = nyl(project, ['state', 'init', '-e', 'dev']);
    assert.equal(r.code, 1);
    assert.deepEqual(codes(r), ['NYL-STATE-UNAVAILABLE']);
    assert.deepEqual(fs.readdirSync(dir), ['notes.txt']);
  });

  test('a diverged known branch is never rewritten', () => {
    const statePath = path.join(tempDir(), 'state.git');
    const project = stateProject(statePath);
    const stray = git(project, 'commit-tree', git(project, 'rev-parse', 'HEAD^{tree}'), '-m', 'stray');
    git(project, 'update-ref', 'refs/heads/nyl/dev/desired', stray);
    const r = nyl(project, ['state', 'init', '-e', 'dev', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(git(project, 'rev-parse', 'refs/heads/nyl/dev/desired'), stray);
    assert.ok(r.json.warnings.some((w) => w.code === 'NYL-STATE-DIVERGED'));
  });
});

describe('remote state', () => {
  test('an unreachable remote fails NYL-STATE-UNAVAILABLE', () => {
    const project = stateProject('git://127.0.0.1:9/state.git');
    const r = nyl(project, ['state', 'init', '-e', 'dev']);
    assert.equal(r.code, 1);
    assert.deepEqual(codes(r), ['NYL-STATE-UNAVAILABLE']);
  });

  test("the checkout's origin is the state repository when nothing names one", () => {
    const bare = makeBareRepo();
    const project = makeProject({ 'nyl.yaml': nylYaml(environment('dev')) }, { origin: bare });
    const r = nyl(project, ['state', 'init', '-e', 'dev', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.json.details.location.chosenBy, "the checkout's origin");
    assert.ok(refs(bare)['refs/heads/nyl/dev/desired']);
  });

  test('the branch coordination prefix and a protected remote work unchanged', () => {
    const bare = makeBareRepo();
    installProtectHook(bare);
    const project = stateProject(pathToFileURL(bare).href, 'coordinationRefPrefix: refs/heads/nyl-run/');
    const r = nyl(project, ['state', 'init', '-e', 'dev', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.json.details.location.coordinationRefPrefix, 'refs/heads/nyl-run/');
    const remote = refs(bare);
    assert.ok(remote['refs/heads/nyl/dev/desired']);
    assert.equal(Object.keys(remote).filter((k) => k.startsWith('refs/heads/nyl-run/')).length, 0, 'lease released');
  });

  test('GitRepository with publishURL: reads from url, pushes to publishURL', () => {
    const bare = makeBareRepo();
    const project = makeProject({
      'nyl.yaml': nylYaml(
        `apiVersion: nyl.io/v1\nkind: GitRepository\nmetadata: {name: state}\nspec: {url: "${pathToFileURL(bare).href}", publishURL: "${bare}"}`,
        environment('dev', 'state:\n  repositoryRef: state'),
      ),
    });
    const r = nyl(project, ['state', 'init', '-e', 'dev', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(refs(bare)['refs/heads/nyl/dev/desired']);
  });

  test('an EnvironmentGroup with shared state selects the repository', () => {
    const bare = makeBareRepo();
    const project = makeProject({
      'nyl.yaml': nylYaml(
        `apiVersion: nyl.io/v1\nkind: EnvironmentGroup\nmetadata: {name: previews}\nspec:\n  selector: {matchLabels: {stage: preview}}\n  shared:\n    state:\n      repository: {repoURL: "${pathToFileURL(bare).href}"}`,
        `apiVersion: nyl.io/v1\nkind: Environment\nmetadata: {name: pr-1, labels: {stage: preview}}\nspec: {}`,
      ),
    });
    const r = nyl(project, ['state', 'init', '-e', 'pr-1', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.json.details.location.chosenBy, 'EnvironmentGroup previews');
    assert.ok(refs(bare)['refs/heads/nyl/pr-1/desired']);
  });
});

describe('commands against missing state', () => {
  test('status exits 1 NYL-STATE-MISSING naming both ways forward', () => {
    const project = makeProject({ 'nyl.yaml': nylYaml(environment('dev')) });
    const r = nyl(project, ['status', '-e', 'dev']);
    assert.equal(r.code, 1);
    assert.deepEqual(codes(r), ['NYL-STATE-MISSING']);
    assert.match(r.stdout + r.stderr, /nyl state init -e dev/);
    assert.match(r.stdout + r.stderr, /nyl state move -e dev/);
  });
});

describe('the lease during state init', () => {
  test('another holder makes state init exit 2 NYL-LEASE-HELD; --wait-lease waits; a signal while waiting cancels', async () => {
    const statePath = path.join(tempDir(), 'state.git');
    const project = stateProject(statePath);
    const marker = path.join(tempDir(), 'paused');
    const holder = nylAsync(project, ['state', 'init', '-e', 'dev'], {
      env: { NYL_FAULT_AT: 'lease-acquired', NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: marker },
    });
    await waitForFile(marker);
    const lease = refs(statePath, 'refs/nyl/')['refs/nyl/dev/lease'];
    assert.ok(lease, 'the holder pushed the lease');
    assert.match(git(statePath, 'show', `${lease}:lease.yaml`), /operation: state-init/);

    const held = nyl(project, ['state', 'init', '-e', 'dev', '-o', 'json']);
    assert.equal(held.code, 2);
    assert.deepEqual(
      held.json.errors.map((e) => e.code),
      ['NYL-LEASE-HELD'],
    );
    assert.equal(held.json.errors[0].data.operation, 'state-init');

    const waiter = nylAsync(project, ['state', 'init', '-e', 'dev', '--wait-lease', '1m']);
    await new Promise((r) => setTimeout(r, 600));
    waiter.child.kill('SIGTERM');
    const cancelled = await waiter.done;
    assert.equal(cancelled.code, 1, cancelled.stderr);
    assert.deepEqual(codes(cancelled), ['NYL-RUN-CANCELLED']);
    assert.deepEqual(Object.keys(refs(statePath, 'refs/heads/')), [], 'nothing written while waiting');

    const patient = nylAsync(project, ['state', 'init', '-e', 'dev', '--wait-lease', '1m', '-o', 'json']);
    await new Promise((r) => setTimeout(r, 300));
    fs.rmSync(marker);
    const first = await holder.done;
    assert.equal(first.code, 0, first.stderr);
    const second = await patient.done;
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.json.result, 'unchanged');
    assert.deepEqual(Object.keys(refs(statePath, 'refs/nyl/')), []);
  });
});

describe('a state repository re-created empty while the clone knows its state', () => {
  test('state init refuses (NYL-STATE-DIVERGED naming state move and --fresh) and writes nothing; --fresh starts over on top of the known history', () => {
    const statePath = path.join(tempDir(), 'state.git');
    const project = stateProject(statePath);
    const first = nyl(project, ['state', 'init', '-e', 'dev', '-o', 'json']);
    assert.equal(first.code, 0, first.stderr);
    const known = refs(project, 'refs/heads/nyl/');
    assert.equal(known['refs/heads/nyl/dev/desired'], first.json.desired);

    // The state repository is lost and re-created empty; a missing one behaves the same.
    fs.rmSync(statePath, { recursive: true, force: true });
    for (const recreate of [false, true]) {
      if (recreate) makeBareRepo(statePath);
      const r = nyl(project, ['state', 'init', '-e', 'dev', '-o', 'json']);
      assert.equal(r.code, 1, r.stderr);
      assert.deepEqual(
        r.json.errors.map((e) => e.code),
        ['NYL-STATE-DIVERGED'],
      );
      assert.match(r.json.errors[0].message, /refs\/heads\/nyl\/dev\/desired/);
      assert.match(r.json.errors[0].fix, /nyl state move -e dev --from local/);
      assert.match(r.json.errors[0].fix, /nyl state init -e dev --fresh/);
      assert.equal(fs.existsSync(statePath), recreate, 'a refusal creates no repository');
      if (recreate) assert.deepEqual(refs(statePath), {}, 'nothing was written');
      assert.deepEqual(refs(project, 'refs/heads/nyl/'), known, 'the known branches are untouched');
    }

    const fresh = nyl(project, ['state', 'init', '-e', 'dev', '--fresh', '--reason', 'state repository re-created', '-o', 'json']);
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.deepEqual(fresh.json.warnings, [], 'the known branches follow: nothing diverged');
    const remote = refs(statePath, 'refs/heads/nyl/');
    assert.equal(remote['refs/heads/nyl/dev/desired'], fresh.json.desired);
    assert.equal(git(statePath, 'rev-parse', `${fresh.json.desired}^`), known['refs/heads/nyl/dev/desired'], 'built on the known history');
    const state = git(statePath, 'show', `${fresh.json.desired}:state.yaml`);
    assert.match(state, /generation: 2/);
    assert.match(state, /type: fresh/);
    assert.deepEqual(refs(project, 'refs/heads/nyl/'), remote, 'the known branches fast-forwarded');

    const status = nyl(project, ['status', '-e', 'dev', '-o', 'json']);
    assert.equal(status.code, 0, status.stderr);
    assert.deepEqual(status.json.warnings, []);
  });
});
