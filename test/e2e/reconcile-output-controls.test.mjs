// Execution output controls: --quiet-unit-output hides tool output, and
// --unit-log-dir DIR appends each unit's output with its start and end lines to DIR/ENV/UNIT.log.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { git } from '../support/git-fixtures.mjs';
import { cleanupAll, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { command, environment, nyl, nylYaml } from '../support/cli.mjs';

after(cleanupAll);

test('--quiet-unit-output hides tool lines; --unit-log-dir keeps them per unit, also across runs', () => {
  const bare = makeBareRepo();
  const project = makeProject({
    'nyl.yaml': nylYaml(
      environment('dev', `state:\n  repository: {repoURL: "${pathToFileURL(bare).href}"}`),
      command('talk', `script: |\n  echo "first line"\n  echo "second line" >&2`),
      command('fail', `script: |\n  echo "about to fail"\n  exit 3`),
    ),
  });
  assert.equal(nyl(project, ['state', 'init', '-e', 'dev']).code, 0);
  const logs = tempDir();
  const r = nyl(project, ['reconcile', '-e', 'dev', '--quiet-unit-output', '--unit-log-dir', logs]);
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stderr, /^\[dev\/talk\] starting Command \(reconcile\): no receipt$/m);
  assert.match(r.stderr, /^\[dev\/talk\] executed in \d+\.\ds$/m);
  assert.match(r.stderr, /^\[dev\/fail\] failed in \d+\.\ds: command exited with code 3$/m);
  assert.doesNotMatch(r.stderr, /first line|second line|about to fail/, 'tool output hidden');

  const talk = fs.readFileSync(path.join(logs, 'dev', 'talk.log'), 'utf8');
  assert.match(talk, /^\[dev\/talk\] starting Command \(reconcile\): no receipt\nfirst line\n|second line/m);
  assert.match(talk, /first line/);
  assert.match(talk, /second line/);
  assert.match(talk, /\[dev\/talk\] executed in/);
  const fail = fs.readFileSync(path.join(logs, 'dev', 'fail.log'), 'utf8');
  assert.match(fail, /about to fail\n\[dev\/fail\] failed in \d+\.\ds: command exited with code 3\n$/);

  // The next run retries the failure and appends to the same file.
  const again = nyl(project, ['reconcile', '-e', 'dev', '--unit-log-dir', logs]);
  assert.equal(again.code, 3);
  assert.match(again.stderr, /^ {2}\[dev\/fail\] about to fail$/m, 'without --quiet-unit-output the tool line is on stderr, indented and prefixed');
  assert.equal(fs.readFileSync(path.join(logs, 'dev', 'fail.log'), 'utf8').match(/about to fail/g).length, 2);
});

test("a failed Command's condition keeps its last lines, with the sensitive value it was given masked; the run's commit says it failed", () => {
  const bare = makeBareRepo();
  const secretValue = `s3cr3t-${process.pid}-never-in-git`;
  const project = makeProject({
    'nyl.yaml': nylYaml(
      environment('dev', `state:\n  repository: {repoURL: "${pathToFileURL(bare).href}"}`),
      command('vault', `script: |\n  printf '{"token": {"value": "%s", "sensitive": true}}' "$VAULT_TOKEN" > "$NYL_OUTPUTS"`),
      command(
        'deploy',
        `dependsOn: [vault]\nenv: {TOKEN: "\${{ units.vault.outputs.token }}"}\nscript: |\n  echo "connecting"\n  echo "token is $TOKEN"\n  printf 'done\\n\\033[31mError:\\033[0m boom\\n'\n  exit 4`,
      ),
    ),
  });
  // The value comes from outside, as a vault would hand it over: the source never holds it.
  const env = { NYL_SECRETS_KEY: Buffer.alloc(32, 5).toString('base64'), VAULT_TOKEN: secretValue };
  const init = nyl(project, ['state', 'init', '-e', 'dev'], { env });
  assert.equal(init.code, 0, init.stderr);
  const r = nyl(project, ['reconcile', '-e', 'dev'], { env });
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stderr, /^ {2}\[dev\/deploy\] token is \*\*\*$/m);
  const observed = parseYaml(git(bare, 'show', 'refs/heads/nyl/dev/observed:units/deploy.yaml'));
  assert.equal(observed.condition.reason, 'command exited with code 4');
  assert.deepEqual(observed.condition.output, ['connecting', 'token is ***', 'done', 'Error: boom']);
  assert.equal(git(bare, 'log', '-1', '--format=%s', 'refs/heads/nyl/dev/observed'), 'nyl: reconcile dev: 1 executed (vault), 1 failed (deploy)');
  const objects = git(bare, 'cat-file', '--batch-all-objects', '--batch');
  assert.ok(!objects.includes(secretValue), 'no object of the state repository holds the value');
  assert.ok(!r.stderr.includes(secretValue));
});

test('a long-running unit says so every interval on stderr, also with --quiet-unit-output; stdout stays one JSON document', () => {
  const bare = makeBareRepo();
  const project = makeProject({
    'nyl.yaml': nylYaml(
      environment('dev', `state:\n  repository: {repoURL: "${pathToFileURL(bare).href}"}`),
      command('slow', `script: |\n  echo "hidden tool line"\n  sleep 1.3`),
    ),
  });
  assert.equal(nyl(project, ['state', 'init', '-e', 'dev']).code, 0);
  const r = nyl(project, ['reconcile', '-e', 'dev', '--quiet-unit-output', '-o', 'json'], { env: { NYL_TEST_PROGRESS_INTERVAL_MS: '500' } });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.units.slow.result, 'executed', 'stdout is the report alone');
  const lines = r.stderr.split('\n').filter((l) => l.includes('still running'));
  assert.ok(lines.length >= 2 && lines.length <= 3, r.stderr);
  for (const l of lines) assert.match(l, /^\[dev\/slow\] still running \(\ds\)$/);
  assert.doesNotMatch(r.stderr, /hidden tool line/);
  assert.doesNotMatch(r.stderr, /\x1b|\r/, 'stderr is no terminal here: no status line');
});
