// nyl ui's reads of one environment (src/ui/environment-reads.ts) through the real view source:
// the overview and the version read each environment through the guard, so that an environment
// whose state repository cannot be reached is read once and then answered from memory, while
// the others are read as usual. Real Git, in process; the unreachable repository is a closed
// local port, so nothing waits.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { createRuntime } from '../../dist/cli/runtime.js';
import { stateRefsSource } from '../../dist/ui/source.js';
import { EnvironmentReads } from '../../dist/ui/environment-reads.js';
import { cleanupAll, hermeticEnv, makeBareRepo, makeProject } from '../support/git-fixtures.mjs';
import { command, environment, nyl, nylYaml } from '../support/cli.mjs';

after(cleanupAll);

test('the overview and the version read each environment through the guard: an unreachable one once, then from memory', async () => {
  const bare = makeBareRepo();
  const dir = makeProject({
    'nyl.yaml': nylYaml(
      environment('dev', `state: {repository: {repoURL: "${pathToFileURL(bare).href}"}}`),
      environment('far', 'state: {repository: {repoURL: "http://127.0.0.1:9/state.git"}}'),
      command('app', "script: 'true'"),
    ),
  });
  assert.equal(nyl(dir, ['state', 'init', '-e', 'dev']).code, 0);
  const rt = createRuntime(hermeticEnv(), new AbortController().signal);
  const source = stateRefsSource(rt, dir, false);
  const reads = new EnvironmentReads();
  const invoked = [];
  const guard = (env, read) =>
    reads.read(env, () => {
      invoked.push(env);
      return read();
    });

  const before = await source.version(undefined, guard);
  assert.deepEqual(invoked, ['dev', 'far'], 'the version reads each declared environment through the guard');
  assert.equal(reads.failure('far').error.diagnostics[0].code, 'NYL-STATE-UNAVAILABLE');
  assert.equal(reads.failure('dev'), undefined);

  const overview = await source.overview(guard);
  assert.deepEqual(invoked, ['dev', 'far', 'dev'], 'far is answered from memory');
  const far = overview.environments.find((e) => e.name === 'far');
  assert.deepEqual(
    far.errors.map((d) => d.code),
    ['NYL-STATE-UNAVAILABLE'],
  );
  assert.equal(overview.environments.find((e) => e.name === 'dev').status.unitOrder.length, 1);
  assert.equal(await source.version(undefined, guard), before, 'a remembered failure keeps the version as it was: no page reloads for it');
  assert.deepEqual(invoked, ['dev', 'far', 'dev', 'dev']);
});
