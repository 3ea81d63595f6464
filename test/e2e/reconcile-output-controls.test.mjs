// Execution output controls: --quiet-unit-output hides tool output, and
// --unit-log-dir DIR appends each unit's output with its start and end lines to DIR/ENV/UNIT.log.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
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
