// What the planner decides from a Terraform unit's state before any tool runs (issue 29): a backend
// that two environments, every instance of a template, or two units would share is refused
// (NYL-BACKEND-SHARED) unless sharedState says so; a drift observation that the tool state is lost
// keeps the unit drifted instead of re-running it; and the local modules a module calls enter its
// execution key. Pure: projects in memory, no tool.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadProject } from '../../dist/project/load.js';
import { planEnvironment, resolveUnit } from '../../dist/plan/planner.js';
import { sharedStates } from '../../dist/plan/shared-state.js';
import { statusDetail } from '../../dist/plan/reasons.js';
import { BUILTIN_KINDS } from '../../dist/drivers/kinds.js';
import { BUILTIN_DRIVERS } from '../../dist/drivers/registry.js';
import { documents, memoryTree, resource } from '../support/memory-tree.mjs';

const MODULE = JSON.stringify({ terraform: { backend: { local: {} } }, module: { net: { source: '../../modules/net' } } });

async function project(unitLines, { extraDocs = [], files = {} } = {}) {
  return loadProject(
    '/project',
    memoryTree({
      'nyl.yaml': documents(
        resource('Environment', 'dev', 'values: {bucket: b-dev}'),
        resource('Environment', 'prod', 'values: {bucket: b-prod}'),
        resource('Terraform', 'app', 'module: infra/app', ...unitLines),
        ...extraDocs,
      ),
      'infra/app/main.tf.json': MODULE,
      'modules/net/main.tf': 'module "sub" {\n  source = "../sub" # nested\n}\n',
      'modules/sub/main.tf': 'output "x" { value = 1 }\n',
      ...files,
    }),
  );
}

const conflicts = (p, env) => [...sharedStates(p, p.environments.get(env), BUILTIN_KINDS).entries()].map(([u, d]) => [u, d.code, d.message]);

test('a backend that renders alike for two environments is refused in both; the environment in it, or sharedState: true, makes it fine', async () => {
  const hard = await project(['backendConfig: {path: /srv/tfstate/app.tfstate}']);
  const [[unit, code, message]] = conflicts(hard, 'prod');
  assert.deepEqual([unit, code], ['app', 'NYL-BACKEND-SHARED']);
  assert.match(
    message,
    /the Terraform state of app in prod would be shared with environment dev: its backend renders alike for both \(backendConfig path=\/srv\/tfstate\/app.tfstate, module infra\/app\)/,
  );
  assert.equal(conflicts(hard, 'dev').length, 1, 'dev is refused too');
  assert.deepEqual(conflicts(await project(['backendConfig: {path: "/srv/tfstate/app-${{ env.name }}.tfstate"}']), 'prod'), []);
  assert.deepEqual(
    conflicts(await project(['backendConfig: {bucket: "${{ env.values.bucket }}", key: app}']), 'prod'),
    [],
    'a value that differs per environment',
  );
  assert.deepEqual(
    conflicts(await project(['backendConfig: {path: /srv/app.tfstate}', 'workspace: "${{ env.name }}"']), 'prod'),
    [],
    'a workspace per environment',
  );
  assert.deepEqual(conflicts(await project(['backendConfig: {path: /srv/app.tfstate}', 'sharedState: true']), 'prod'), []);
  assert.equal(conflicts(await project([]), 'prod').length, 1, 'a backend the module hard-codes, with no backendConfig, is the same everywhere');
});

// Pins: the message printed every backendConfig value, credentials included, and two environments
// reading one bucket and key with different access keys were judged to keep apart states.
test('credentials say nothing of where a state is and never reach the message: one bucket and key read with two access keys is shared', async () => {
  const p = await project([
    'backendConfig: {bucket: shared, key: app.tfstate, access_key: "AKIA-${{ env.name }}", address: "https://user:s3cr3t@state.example/app"}',
  ]);
  const [[unit, code, message]] = conflicts(p, 'prod');
  assert.deepEqual([unit, code], ['app', 'NYL-BACKEND-SHARED']);
  assert.match(message, /address=https:\/\/state.example\/app/);
  assert.doesNotMatch(message, /AKIA|s3cr3t|access_key/);
});

test("an environment outside the unit's ownership set, and a location that reads another unit's output, are not compared", async () => {
  const p = await project(['backendConfig: {path: /srv/app.tfstate}'], { extraDocs: [] });
  p.environments.get('dev').spec.unitSelector = { matchLabels: { team: 'nobody' } };
  assert.deepEqual(conflicts(p, 'prod'), []);
  const ref = await project(['backendConfig: {path: "${{ units.naming.outputs.path }}"}'], { extraDocs: [resource('Command', 'naming', 'run: [name]')] });
  assert.deepEqual(conflicts(ref, 'prod'), [], 'the driver decides at run time');
});

test('every instance of an EnvironmentTemplate shares a backend that does not depend on the instance', async () => {
  const template = (path) =>
    resource('EnvironmentTemplate', 'previews', 'namePattern: "pr-*"', 'environment:', '  values: {bucket: b}', `  state: {path: "${path}"}`);
  const p = await project(['backendConfig: {path: "/srv/tf/${{ env.name }}.tfstate"}'], { extraDocs: [template('envs/${{ instance.name }}')] });
  assert.deepEqual(conflicts(p, 'dev'), []);
  const fixed = await project(['backendConfig: {path: "/srv/tf/${{ env.values.bucket }}.tfstate"}'], { extraDocs: [template('envs/${{ instance.name }}')] });
  const instance = (await import('../../dist/project/instances.js')).resolveEnvironment(fixed, 'pr-7');
  const found = [...sharedStates(fixed, instance, BUILTIN_KINDS).values()];
  assert.equal(found.length, 1);
  assert.match(found[0].message, /shared with every instance of its EnvironmentTemplate \(such as pr-nyl-probe-a\)/);
});

test('two units of one environment with the same module and backend share it', async () => {
  const p = await project(['backendConfig: {path: "/srv/${{ env.name }}.tfstate"}'], {
    extraDocs: [resource('OpenTofu', 'copy', 'module: infra/app', 'backendConfig: {path: "/srv/${{ env.name }}.tfstate"}')],
  });
  const found = conflicts(p, 'dev');
  assert.deepEqual(found.map(([u]) => u).sort(), ['app', 'copy']);
  assert.match(found.find(([u]) => u === 'app')[2], /shared with unit copy/);
});

test('the planner refuses a shared backend before anything runs: blocked, with the error (exit 1 in reports)', async () => {
  const p = await project(['backendConfig: {path: /srv/app.tfstate}']);
  const plan = planEnvironment({
    project: p,
    env: p.environments.get('prod'),
    generation: 1,
    drivers: BUILTIN_DRIVERS,
    desired: new Map(),
    observed: new Map(),
  });
  const app = plan.units.get('app');
  assert.equal(app.action.type, 'blocked');
  assert.equal(app.action.errors[0].code, 'NYL-BACKEND-SHARED');
  assert.equal(app.executionKey, undefined, 'nothing was resolved to run');
});

test('a drift observation that the tool state is lost keeps the unit drifted (reason state-lost) under driftRepair converge; plain drift runs it again', async () => {
  const p = await project(['backendConfig: {path: "/srv/${{ env.name }}.tfstate"}']);
  const env = p.environments.get('dev');
  const uid = '0192f0c0-0000-7000-8000-00000000000a';
  const resolved = resolveUnit(p.units.get('app'), uid, { env, kinds: BUILTIN_KINDS, objects: p.objects, dirCalls: p.dirCalls, receiptOf: () => undefined });
  const desired = { uid, kind: 'Terraform', generation: 1, source: 'c1', rendering: resolved.rendering, reads: resolved.reads, lifecycle: { state: 'active' } };
  const observed = (drift) => ({ uid, receipt: { run: 'r1', executionKey: resolved.executionKey, finishedAt: 'x', outputs: {}, desired }, drift });
  const planWith = (drift) =>
    planEnvironment({
      project: p,
      env,
      generation: 1,
      drivers: BUILTIN_DRIVERS,
      desired: new Map([['app', desired]]),
      observed: new Map([['app', observed(drift)]]),
    }).units.get('app');
  const lost = planWith({
    status: 'drifted',
    observedAt: 't',
    run: 'v',
    receipt: 'r1',
    detail: 'the Terraform state of app is gone',
    code: 'NYL-BACKEND-STATE-LOST',
  });
  assert.deepEqual([lost.action.type, lost.action.reason], ['drifted', 'state-lost']);
  assert.match(statusDetail(lost), /no run repairs a lost state by itself: restore it, or `--reapply --unit app --reason` creates the resources again/);
  const drifted = planWith({ status: 'drifted', observedAt: 't', run: 'v', receipt: 'r1' });
  assert.deepEqual([drifted.action.type, drifted.action.reason], ['execute', 'drift-repair']);
  const reapplied = planEnvironment({
    project: p,
    env,
    generation: 1,
    drivers: BUILTIN_DRIVERS,
    desired: new Map([['app', desired]]),
    observed: new Map([['app', observed(lost.action.drift)]]),
    run: { runId: 'run2', reapply: new Set(['app']) },
  }).units.get('app');
  assert.deepEqual([reapplied.action.type, reapplied.action.reason], ['execute', 'reapply'], '--reapply is the way out');
});

test('the local modules a module calls (transitively) enter its reads: a change there changes the key', async () => {
  const p = await project(['backendConfig: {path: "/srv/${{ env.name }}.tfstate"}']);
  assert.deepEqual([...p.dirCalls], [['infra/app', ['modules/net', 'modules/sub']]]);
  const key = (proj) =>
    resolveUnit(proj.units.get('app'), 'u1', {
      env: proj.environments.get('dev'),
      kinds: BUILTIN_KINDS,
      objects: proj.objects,
      dirCalls: proj.dirCalls,
      receiptOf: () => undefined,
    });
  const before = key(p);
  assert.deepEqual(Object.keys(before.reads.sources).sort(), ['infra/app/', 'modules/net/', 'modules/sub/']);
  const changed = await project(['backendConfig: {path: "/srv/${{ env.name }}.tfstate"}'], { files: { 'modules/sub/main.tf': 'output "x" { value = 2 }\n' } });
  assert.notEqual(key(changed).executionKey, before.executionKey, 'a file two calls away runs the unit again');
  const unrelated = await project(['backendConfig: {path: "/srv/${{ env.name }}.tfstate"}'], { files: { 'modules/other/main.tf': 'x' } });
  assert.equal(key(unrelated).executionKey, before.executionKey);
});

test('two units of different modules with one backendConfig share it: the configuration names the location, whichever module reads it', async () => {
  const p = await project(['backendConfig: {path: "/srv/${{ env.name }}.tfstate"}'], {
    extraDocs: [resource('Terraform', 'other', 'module: modules/net', 'backendConfig: {path: "/srv/${{ env.name }}.tfstate"}')],
  });
  const found = conflicts(p, 'dev');
  assert.deepEqual(found.map(([u]) => u).sort(), ['app', 'other']);
  assert.match(
    sharedStates(p, p.environments.get('dev'), BUILTIN_KINDS).get('app').fix,
    /^give app and other each a state of its own/,
    'the fix names both units, not the environment',
  );
  const apart = await project(['backendConfig: {path: "/srv/${{ env.name }}.tfstate"}'], {
    extraDocs: [resource('Terraform', 'other', 'module: modules/net', 'backendConfig: {path: "/srv/other-${{ env.name }}.tfstate"}')],
  });
  assert.deepEqual(conflicts(apart, 'dev'), []);
  const workspaceOnly = await project(['workspace: "${{ env.name }}"'], {
    extraDocs: [resource('Terraform', 'other', 'module: modules/net', 'workspace: "${{ env.name }}"')],
  });
  assert.deepEqual(conflicts(workspaceOnly, 'dev'), [], 'modules whose own backend blocks hold the location differ, whatever the workspace');
});

test("a teardown of a state another environment renders alike is blocked (nyl teardown -e prod must not destroy dev's), unless sharedState", async () => {
  const p = await project(['backendConfig: {path: /srv/app.tfstate}']);
  const env = p.environments.get('prod');
  const uid = '0192f0c0-0000-7000-8000-00000000000a';
  const desired = (extra = {}) => ({
    uid,
    kind: 'Terraform',
    generation: 1,
    source: 'c1',
    rendering: { module: 'infra/app', backendConfig: { path: '/srv/app.tfstate' }, ...extra },
    lifecycle: { state: 'active' },
    teardownRequest: { by: 'Ops <ops@example.com>', at: 't' },
  });
  const observed = { uid, receipt: { run: 'r1', executionKey: 'sha256:' + '0'.repeat(64), finishedAt: 'x', outputs: {}, desired: desired() } };
  const planOf = (doc) =>
    planEnvironment({
      project: p,
      env,
      generation: 1,
      drivers: BUILTIN_DRIVERS,
      desired: new Map([['app', doc]]),
      observed: new Map([['app', observed]]),
      run: { runId: 'r2', mode: 'teardown' },
    }).units.get('app');
  const blocked = planOf(desired());
  assert.deepEqual([blocked.action.type, blocked.action.errors?.[0]?.code], ['blocked', 'NYL-BACKEND-SHARED']);
  assert.match(blocked.action.errors[0].message, /shared with environment dev/);
  assert.equal(planOf(desired({ sharedState: true })).action.type, 'teardown', 'sharedState: true says they share it on purpose');
});
