// End-to-end: preview environments from an EnvironmentTemplate through the built CLI, over a
// file:// state repository. `-e pr-7` names an instance of the template `pr-*`: its state path
// and its units' environment read ${{ instance.suffix }}; it lives from `state init` to
// `state delete --teardown`, beside a second instance pr-8 that it never touches.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanupAll, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { codes, command, environment, nylAsync, nylYaml } from '../support/cli.mjs';
import { docAt, filesAt } from '../support/state-surgery.mjs';

after(cleanupAll);

/** `nyl args...` in dir; asserts the exit code. */
async function run(dir, args, exit = 0) {
  const r = await nylAsync(dir, args).done;
  assert.equal(r.code, exit, `nyl ${args.join(' ')}: expected exit ${exit}, got ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r;
}

test('a pull request preview: init, reconcile and status of pr-7, then state delete --teardown; pr-8 stays', async () => {
  const bare = makeBareRepo();
  const url = pathToFileURL(bare).href;
  const template = [
    'apiVersion: nyl.io/v1',
    'kind: EnvironmentTemplate',
    'metadata: {name: preview, labels: {stage: preview}}',
    'spec:',
    '  namePattern: pr-*',
    '  environment:',
    `    state: {repository: {repoURL: "${url}"}, path: "previews/\${{ instance.suffix }}"}`,
    '    values: {pr: "${{ instance.suffix }}", host: "${{ instance.name }}.preview.example.com"}',
  ].join('\n');
  const log = path.join(tempDir('nyl-preview-log-'), 'log');
  const app = command(
    'app',
    [
      'env: {PR: "${{ env.values.pr }}", HOST: "${{ env.values.host }}"}',
      `script: 'echo "up $PR $HOST $NYL_ENVIRONMENT" >> ${log}'`,
      `teardown: {script: 'echo "down $PR" >> ${log}'}`,
    ].join('\n'),
  );
  const dir = makeProject({ 'nyl.yaml': nylYaml(environment('dev', `state:\n  repository: {repoURL: "${url}"}`), template, app) });
  const lines = () => fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);

  await run(dir, ['state', 'init', '-e', 'pr-7']);
  await run(dir, ['reconcile', '-e', 'pr-7']);
  assert.deepEqual(lines(), ['up 7 pr-7.preview.example.com pr-7']);
  const status = await run(dir, ['status', '-e', 'pr-7', '-o', 'json']);
  assert.equal(status.json.environment, 'pr-7');
  assert.equal(status.json.details.location.path, 'previews/7');
  assert.deepEqual(Object.keys(status.json.units), ['app']);
  assert.ok(filesAt(bare, 'refs/heads/nyl/pr-7/desired').includes('previews/7/units/app.yaml'), 'the default state refs, under the instance path');

  await run(dir, ['state', 'init', '-e', 'pr-8']);
  await run(dir, ['reconcile', '-e', 'pr-8']);
  assert.deepEqual(lines().slice(1), ['up 8 pr-8.preview.example.com pr-8']);

  const deleted = await run(dir, ['state', 'delete', '-e', 'pr-7', '--teardown', '--reason', 'pull request closed', '-o', 'json']);
  assert.equal(deleted.json.result, 'done');
  assert.deepEqual(lines().slice(2), ['down 7'], 'the teardown ran with the instance values');
  assert.equal(docAt(bare, 'refs/heads/nyl/pr-7/desired', 'previews/7/state.yaml').status, 'deleted');
  assert.equal(docAt(bare, 'refs/heads/nyl/pr-8/desired', 'previews/8/state.yaml').status, 'active', 'pr-8 is independent');
  assert.ok(filesAt(bare, 'refs/heads/nyl/pr-8/observed').includes('previews/8/units/app.yaml'));

  const unknown = await run(dir, ['status', '-e', 'review-1'], 1);
  assert.deepEqual(codes(unknown), ['NYL-ENVIRONMENT-UNKNOWN']);
  assert.match(unknown.stderr + unknown.stdout, /pick one of: dev; or a name matching an EnvironmentTemplate's namePattern: pr-\*/);
});
