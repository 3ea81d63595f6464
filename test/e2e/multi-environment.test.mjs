// End-to-end: commands over several environments through the built CLI. Three environments
// share one file:// state repository (each its own refs): network, and dev and staging that
// depend on it; a fourth, edge, has a state repository of its own. Selection by repeated -e, -l
// and -g; dependsOn order; one transaction per environment; a failing dependency blocks its
// dependents (NYL-ENVIRONMENT-BLOCKED); the JSON report (environments, environmentOrder,
// exitCodes); --environment-concurrency 2; --unit; plan, status and verify over a selection;
// teardown consumers first, a failed consumer keeping what it runs on.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanupAll, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { environment, nylAsync, nylYaml, waitForFile } from '../support/cli.mjs';
import { execFileSync } from 'node:child_process';

const git = (args) => execFileSync('git', args, { encoding: 'utf8' });

after(cleanupAll);

async function run(dir, args, exit = 0) {
  const r = await nylAsync(dir, args).done;
  assert.equal(r.code, exit, `nyl ${args.join(' ')}: expected exit ${exit}, got ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** An Environment with metadata labels. */
function env(name, labels, specLines) {
  return environment(name, specLines).replace(`metadata: {name: ${name}}`, `metadata: {name: ${name}, labels: ${labels}}`);
}

/** A Command whose teardown logs `teardown ENV/UNIT` and fails while fail-teardown-ENV exists, and whose drift check fails while drift-ENV exists. */
function unit(name, labels, script, dir) {
  const teardown = `echo "teardown $NYL_ENVIRONMENT/${name}" >> ${dir}/log; test ! -e ${dir}/fail-teardown-$NYL_ENVIRONMENT`;
  const check = `test ! -e ${dir}/drift-$NYL_ENVIRONMENT`;
  return `apiVersion: nyl.io/v1\nkind: Command\nmetadata: {name: ${name}, labels: {${labels}}}\nspec:\n  script: '${script}'\n  teardown: {script: '${teardown}'}\n  check: {script: '${check}'}`;
}

/**
 * A project of three environments on one state repository. Each unit appends `start ENV/UNIT`
 * and `end ENV/UNIT` to a log (dev and staging sleep between), prints a line, and fails while
 * the file fail-ENV exists in the log's directory.
 */
async function platform({ edge = false } = {}) {
  const bare = makeBareRepo();
  const edgeBare = edge ? makeBareRepo() : undefined;
  const state = `state:\n  repository: {repoURL: "${pathToFileURL(bare).href}"}`;
  const dir = tempDir('nyl-multi-log-');
  const log = path.join(dir, 'log');
  const script = (name) =>
    `echo "start $NYL_ENVIRONMENT/${name}" >> ${log}; echo "hello from ${name}"; if [ "$NYL_ENVIRONMENT" != network ]; then sleep 0.4; fi; if [ -e ${dir}/hang-$NYL_ENVIRONMENT ]; then touch ${dir}/running; i=0; while [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; fi; test ! -e ${dir}/fail-$NYL_ENVIRONMENT; echo "end $NYL_ENVIRONMENT/${name}" >> ${log}`;
  const project = makeProject({
    'nyl.yaml': nylYaml(
      env('network', '{tier: base}', `${state}\nunitSelector: {matchLabels: {net: "y"}}`),
      env('dev', '{tier: app, stage: dev}', `dependsOn: [network]\n${state}\nunitSelector: {matchLabels: {app: "y"}}`),
      env('staging', '{tier: app, stage: staging}', `dependsOn: [network]\n${state}\nunitSelector: {matchLabels: {staging: "y"}}`),
      `apiVersion: nyl.io/v1\nkind: EnvironmentGroup\nmetadata: {name: apps}\nspec:\n  environments: [staging, dev]`,
      unit('net', 'net: "y"', script('net'), dir),
      unit('app', 'app: "y", staging: "y"', script('app'), dir),
      unit('extra', 'app: "y"', script('extra'), dir),
      ...(edge
        ? [
            env(
              'edge',
              '{tier: edge}',
              `dependsOn: [network]\nstate:\n  repository: {repoURL: "${pathToFileURL(edgeBare).href}"}\nunitSelector: {matchLabels: {edge: "y"}}`,
            ),
            unit('cdn', 'edge: "y"', script('cdn'), dir),
          ]
        : []),
    ),
  });
  // One state init over every environment: repeated -e, as the other multi-environment commands take it.
  await run(project, ['state', 'init', ...['network', 'dev', 'staging', ...(edge ? ['edge'] : [])].flatMap((env) => ['-e', env])]);
  const lines = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);
  return { project, dir, lines, edgeBare };
}

test('-e three times: dependsOn order, one transaction each, the JSON report; -l and -g select dev and staging', async () => {
  const { project, lines } = await platform();
  const r = await run(project, ['reconcile', '-e', 'staging', '-e', 'dev', '-e', 'network', '-o', 'json']);
  assert.equal(r.json.kind, 'MultiEnvironmentReport');
  assert.deepEqual(r.json.environmentOrder, ['network', 'dev', 'staging']);
  assert.deepEqual(r.json.exitCodes, { network: 0, dev: 0, staging: 0 });
  const runs = r.json.environmentOrder.map((env) => r.json.environments[env].run);
  assert.equal(new Set(runs).size, 3, 'each environment its own run');
  for (const env of r.json.environmentOrder) {
    assert.equal(r.json.environments[env].environment, env);
    assert.equal(r.json.environments[env].committed, true);
  }
  assert.deepEqual(Object.keys(r.json.environments.dev.units).sort(), ['app', 'extra']);
  assert.deepEqual(Object.keys(r.json.environments.staging.units), ['app']);
  // Default --environment-concurrency 1: each environment ends before the next starts.
  const order = lines().map((l) => l.split(' ')[1].split('/')[0]);
  assert.deepEqual([...new Set(order)], ['network', 'dev', 'staging']);
  assert.ok(order.indexOf('staging') > order.lastIndexOf('dev'), lines().join('\n'));

  const byLabels = await run(project, ['reconcile', '-l', 'tier=app']);
  assert.match(byLabels.stdout, /^== environment dev \(exit 0\) ==$/m);
  assert.match(byLabels.stdout, /^== environment staging \(exit 0\) ==$/m);
  assert.doesNotMatch(byLabels.stdout, /environment network/, 'network is not selected, nor waited for');
  assert.ok(byLabels.stdout.indexOf('environment dev') < byLabels.stdout.indexOf('environment staging'));

  const byGroup = await run(project, ['reconcile', '-g', 'apps', '-o', 'json']);
  assert.deepEqual(byGroup.json.environmentOrder, ['dev', 'staging']);

  const single = await run(project, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(single.json.kind, 'ReconcileReport', 'one -e keeps the single-environment report');
});

test('state init over a selection: repeated -e, -l and -g, one section each; --fresh names one environment', async () => {
  const { project } = await platform();
  const r = await run(project, ['state', 'init', '-g', 'apps', '-o', 'json']);
  assert.equal(r.json.kind, 'MultiEnvironmentReport');
  assert.equal(r.json.operation, 'state-init');
  assert.deepEqual(r.json.environmentOrder, ['dev', 'staging']);
  for (const env of ['dev', 'staging']) {
    assert.equal(r.json.environments[env].kind, 'StateOperationReport');
    assert.equal(r.json.environments[env].environment, env);
    assert.deepEqual(
      r.json.environments[env].notes.map((n) => n.code),
      ['NYL-UNCHANGED'],
      'initialized by platform(): nothing changed',
    );
  }
  const text = await run(project, ['state', 'init', '-l', 'tier=base']);
  assert.match(text.stdout, /^== environment network \(exit 0\) ==$/m);
  const fresh = await run(project, ['state', 'init', '-g', 'apps', '--fresh', '--reason', 'x'], 1);
  assert.match(fresh.stderr, /NYL-USAGE/);
  assert.match(fresh.stderr, /--fresh/);
});

test('a failing dependency environment blocks its dependents: exit 3 overall, dev and staging blocked', async () => {
  const { project, dir, lines } = await platform();
  fs.writeFileSync(path.join(dir, 'fail-network'), '');
  const r = await run(project, ['reconcile', '-e', 'network', '-e', 'dev', '-e', 'staging', '-o', 'json'], 3);
  assert.deepEqual(r.json.exitCodes, { network: 3, dev: 2, staging: 2 });
  for (const env of ['dev', 'staging']) {
    const section = r.json.environments[env];
    assert.equal(section.result, 'refused');
    assert.deepEqual(
      section.errors.map((d) => d.code),
      ['NYL-ENVIRONMENT-BLOCKED'],
    );
    assert.deepEqual(section.details.blockedBy, ['network']);
  }
  assert.ok(
    lines().every((l) => l.includes('network/')),
    'dev and staging never started',
  );

  const text = await run(project, ['reconcile', '-g', 'apps', '-e', 'network'], 1);
  assert.match(text.stderr, /NYL-USAGE/, 'one form of selection only');
  const again = await run(project, ['reconcile', '-e', 'dev', '-e', 'network'], 3);
  assert.match(again.stdout, /^dev: blocked by network$/m);
  assert.match(again.stdout, /^error NYL-ENVIRONMENT-BLOCKED$/m);
  assert.ok(again.stdout.indexOf('== environment network') < again.stdout.indexOf('== environment dev'));
});

test('--environment-concurrency 2 runs dev and staging at once, every tool line prefixed', async () => {
  const { project, lines } = await platform();
  const r = await run(project, ['reconcile', '-l', 'tier=app', '--environment-concurrency', '2']);
  const log = lines();
  const firstEnd = log.findIndex((l) => l.startsWith('end '));
  const startedBefore = new Set(log.slice(0, firstEnd).map((l) => l.split(' ')[1].split('/')[0]));
  assert.deepEqual([...startedBefore].sort(), ['dev', 'staging'], log.join('\n'));
  const tool = r.stderr.split('\n').filter((l) => l.includes('hello from'));
  assert.equal(tool.length, 3, r.stderr);
  for (const line of tool) assert.match(line, /^ {2}\[(dev|staging)\/(app|extra)\] hello from (app|extra)$/);
});

test('--unit: ENV/UNIT runs one environment; an unqualified unit must exist in every selected environment', async () => {
  const { project } = await platform();
  const missing = await run(project, ['reconcile', '-g', 'apps', '--unit', 'extra', '-o', 'json'], 1);
  assert.deepEqual(
    missing.json.errors.map((d) => d.code),
    ['NYL-UNIT-UNKNOWN'],
  );
  assert.match(missing.json.errors[0].message, /extra \(not in staging\)/);
  const teardown = await run(project, ['teardown', '-g', 'apps', '--unit', 'extra', '-o', 'json'], 1);
  // Nothing was reconciled: neither state holds an incarnation of extra, which is what a teardown needs.
  assert.match(teardown.json.errors[0].message, /extra \(not in dev, staging\)/, 'checked for every environment before any tears down');
  const one = await run(project, ['reconcile', '-e', 'network', '-e', 'dev', '--unit', 'dev/extra', '-o', 'json']);
  assert.deepEqual(one.json.environmentOrder, ['dev'], 'network runs no unit: left out');
  assert.deepEqual(one.json.environments.dev.selected, ['extra']);
  const both = await run(project, ['reconcile', '-g', 'apps', '--unit', 'app', '-o', 'json']);
  assert.deepEqual(both.json.environmentOrder, ['dev', 'staging']);
});

test('teardown --unit over several environments refuses a unit one state holds no incarnation of, before any tears down', async () => {
  const { project, lines } = await platform();
  // dev has app in state; staging owns app too, but its state holds no incarnation of it yet.
  await run(project, ['reconcile', '-e', 'network', '-e', 'dev']);
  const before = lines().length;
  const refused = await run(project, ['teardown', '-g', 'apps', '--unit', 'app', '-o', 'json'], 1);
  assert.deepEqual(
    refused.json.errors.map((d) => d.code),
    ['NYL-UNIT-UNKNOWN'],
  );
  assert.match(refused.json.errors[0].message, /app \(not in staging\)/);
  assert.deepEqual(
    lines()
      .slice(before)
      .filter((l) => l.startsWith('teardown ')),
    [],
    'dev/app was not torn down',
  );
});

test('a signal cancels the running environment and starts no other', async () => {
  const { project, dir } = await platform();
  fs.writeFileSync(path.join(dir, 'hang-dev'), '');
  const h = nylAsync(project, ['reconcile', '-e', 'network', '-e', 'dev', '-e', 'staging', '--unit', 'dev/app', '--unit', 'staging/app', '-o', 'json']);
  await waitForFile(path.join(dir, 'running'), 30000);
  h.child.kill('SIGINT');
  const r = await h.done;
  assert.equal(r.code, 4, `${r.stdout}\n${r.stderr}`);
  assert.deepEqual(r.json.environmentOrder, ['dev', 'staging'], 'network: no unit option names it, left out');
  assert.equal(r.json.exitCodes.dev, 4);
  assert.ok(
    r.json.environments.dev.errors.some((d) => d.code === 'NYL-RUN-CANCELLED'),
    JSON.stringify(r.json.environments.dev.errors),
  );
  assert.equal(r.json.exitCodes.staging, 4);
  assert.equal(r.json.environments.staging.details.notStarted, true);
  assert.deepEqual(
    r.json.environments.staging.errors.map((d) => d.code),
    ['NYL-RUN-CANCELLED'],
  );
});

test('plan, status and verify over a selection; teardown consumers first, a failed consumer keeping network', async () => {
  const { project, dir, lines, edgeBare } = await platform({ edge: true });
  const plan = await run(project, ['plan', '-e', 'edge', '-e', 'dev', '-e', 'network', '-o', 'json'], 2);
  assert.equal(plan.json.kind, 'MultiEnvironmentReport');
  assert.equal(plan.json.operation, 'plan');
  assert.deepEqual(plan.json.environmentOrder, ['network', 'dev', 'edge']);
  assert.deepEqual(plan.json.exitCodes, { network: 2, dev: 2, edge: 2 }, 'every environment plans, though each has something to do');
  for (const env of plan.json.environmentOrder) assert.equal(plan.json.environments[env].operation, 'plan');
  assert.deepEqual(lines(), [], 'a plan runs nothing');

  await run(project, ['reconcile', '-e', 'network', '-e', 'dev', '-e', 'edge', '--environment-concurrency', '2']);
  const status = await run(project, ['status', '-l', 'tier=app'], 2);
  assert.match(status.stdout, /^== environment dev \(exit 0\) ==$/m);
  assert.match(status.stdout, /^== environment staging \(exit 2\) ==$/m, 'staging never ran: its unit is pending');

  fs.writeFileSync(path.join(dir, 'drift-edge'), '');
  const verify = await run(project, ['verify', '-e', 'dev', '-e', 'edge', '-o', 'json'], 2);
  assert.equal(verify.json.operation, 'verify');
  assert.deepEqual(verify.json.exitCodes, { dev: 0, edge: 2 });
  assert.equal(verify.json.environments.edge.kind, 'StateOperationReport');
  assert.equal(verify.json.environments.edge.details.units.cdn.drift, 'drifted');
  const edgeLog = git(['--git-dir', edgeBare, 'log', '--format=%B', '--all']);
  assert.match(edgeLog, /verify/, 'edge records its verify in its own state repository');

  fs.writeFileSync(path.join(dir, 'fail-teardown-dev'), '');
  const teardown = await run(project, ['teardown', '-e', 'network', '-e', 'dev', '-e', 'edge', '--all', '-o', 'json'], 3);
  assert.deepEqual(teardown.json.environmentOrder, ['dev', 'edge', 'network'], 'consumers first');
  assert.deepEqual(teardown.json.exitCodes, { dev: 3, edge: 0, network: 2 });
  assert.deepEqual(teardown.json.environments.network.details.blockedBy, ['dev']);
  assert.match(teardown.json.environments.network.errors[0].message, /was not torn down: an environment that depends on it, dev \(exit 3\)/);
  const torn = () => lines().filter((l) => l.startsWith('teardown '));
  assert.deepEqual(torn().sort(), ['teardown dev/app', 'teardown dev/extra', 'teardown edge/cdn'].sort());

  fs.rmSync(path.join(dir, 'fail-teardown-dev'));
  const again = await run(project, ['teardown', '-e', 'dev', '-e', 'network', '--all']);
  assert.ok(again.stdout.indexOf('== environment dev') < again.stdout.indexOf('== environment network'), again.stdout);
  assert.ok(torn().includes('teardown network/net'), torn().join('\n'));
});
