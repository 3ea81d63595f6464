// The Terraform and OpenTofu driver (src/drivers/terraform) against the Driver contract, with the
// real `terraform` on PATH (only its built-in provider: terraform_data, outputs, local-exec
// provisioners), as `terraform` and under OpenTofu's binary name (test/support/tofu-shim). Every
// test runs the tool for real: saved plans, -json diagnostics, state locks, refresh-only drift,
// workspaces, lost and shared states, a cancelled or timed-out apply, local module calls, and a
// backend other than `local` (Terraform's http backend, served from memory) read with `state pull`.

import { describe, test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { openTofuDriver, terraformDriver } from '../../dist/drivers/terraform/index.js';
import { NodeProcessRunner } from '../../dist/exec/process.js';
import { SystemClock } from '../../dist/util/clock.js';
import { assertOutcome } from '../support/driver-outcomes.mjs';
import { SKIP_NO_TERRAFORM, TERRAFORM, TOFU_SHIM, httpStateServer, provisioned, terraform, terraformEnv } from '../support/terraform.mjs';

const SECRET = 'pa55-w0rd-never-printed';
/** A filesystem mirror with the AWS provider, which these machines' image ships: a real plugin offline. */
const AWS_MIRROR = '/opt/tf-plugins';
const AWS_VERSION = '5.100.0';
const GRACE = 3000;

const IMPLS = [
  { name: 'terraform', driver: terraformDriver, kind: 'Terraform', binary: TERRAFORM },
  { name: 'tofu (terraform under the name tofu)', driver: openTofuDriver, kind: 'OpenTofu', binary: TOFU_SHIM },
];

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nyl-driver-terraform-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The modules every test's project has, as *.tf.json. */
const MODULES = {
  // A local backend whose path comes from backendConfig; a sensitive variable and output; an
  // output Terraform computes (length(...)), for which a refresh-only plan exits 2 with "No changes".
  'infra/app/main.tf.json': {
    terraform: { backend: { local: {} } },
    variable: { name: { type: 'string' }, pw: { type: 'string', sensitive: true } },
    resource: { terraform_data: { d: { input: '${var.name}' } } },
    output: {
      greeting: { value: 'hello ${terraform_data.d.output}' },
      secret: { value: '${var.pw}', sensitive: true },
      size: { value: '${length(var.name)}' },
    },
  },
  // No backend block: its state would live in the scratch copy.
  'infra/nobackend/main.tf.json': { output: { x: { value: 1 } } },
  // An output read from a file outside Terraform: edited by hand, the refresh-only plan sees it change.
  'infra/file/main.tf.json': {
    terraform: { backend: { local: {} } },
    variable: { path: { type: 'string' } },
    resource: { terraform_data: { d: { input: 'x' } } },
    output: { content: { value: '${file(var.path)}' } },
  },
  // Creating its resource runs `sleep`: an apply that can be interrupted.
  'infra/slow/main.tf.json': {
    terraform: { backend: { local: {} } },
    variable: { seconds: { type: 'number' }, marker: { type: 'string' } },
    resource: { terraform_data: { slow: provisioned('touch ${var.marker} && sleep ${var.seconds}') } },
  },
  // Its apply fails in a provisioner, as a real tool's failure does.
  'infra/broken/main.tf.json': {
    terraform: { backend: { local: {} } },
    resource: { terraform_data: { bad: provisioned('echo the provisioner says no >&2; exit 3') } },
  },
  // The http backend (state read with `state pull`).
  'infra/remote/main.tf.json': {
    terraform: { backend: { http: {} } },
    resource: { terraform_data: { d: { input: 'remote' } } },
    output: { where: { value: 'http' }, secret: { value: 'remote-secret', sensitive: true } },
  },
  // A root module calling a sibling through ../, as in the repository.
  'infra/composed/main.tf.json': {
    terraform: { backend: { local: {} } },
    module: { g: { source: '../../modules/greet', name: 'world' } },
    output: { text: { value: '${module.g.text}' } },
  },
  'modules/greet/main.tf.json': { variable: { name: {} }, output: { text: { value: 'hi ${var.name}' } } },
  // A real provider's resource, against an endpoint given as a variable (the machine's offline mirror).
  'infra/aws/main.tf.json': {
    terraform: { backend: { local: {} }, required_providers: { aws: { source: 'hashicorp/aws', version: AWS_VERSION } } },
    variable: { endpoint: { type: 'string' } },
    provider: {
      aws: {
        region: 'us-east-1',
        access_key: 'x',
        secret_key: 'y',
        skip_credentials_validation: true,
        skip_requesting_account_id: true,
        skip_metadata_api_check: true,
        skip_region_validation: true,
        max_retries: 1,
        endpoints: { ssm: '${var.endpoint}' },
      },
    },
    resource: { aws_ssm_parameter: { p: { name: 'nyl-test', type: 'String', value: 'v' } } },
  },
};

function writeProject(dir) {
  for (const [file, doc] of Object.entries(MODULES)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), `${JSON.stringify(doc, null, 2)}\n`);
  }
}

/** A runner that records every argv and environment it is given, then runs it for real. */
class RecordingRunner {
  calls = [];
  inner = new NodeProcessRunner();
  run(argv, options = {}) {
    this.calls.push({ argv: [...argv], env: options.env ?? {}, cwd: options.cwd });
    return this.inner.run(argv, options);
  }
  get subcommands() {
    return this.calls.map((c) => c.argv[1]);
  }
}

let seq = 0;

/**
 * A DriverContext as the engine builds one, for one unit of `impl`: its own project copy, scratch
 * directory, backend state file and Nyl cache. `like` reuses another context's state file.
 */
function context(impl, options = {}) {
  const {
    module = 'infra/app',
    variables = { name: 'world', pw: SECRET },
    secretPointers = ['/variables/pw'],
    timeout,
    baseEnv = {},
    cancel = new AbortController().signal,
    receipt,
    acknowledgement,
    attempt,
  } = options;
  const root = fs.mkdtempSync(path.join(tmp, `u${++seq}-`));
  const projectDir = path.join(root, 'source');
  writeProject(projectDir);
  const runner = new RecordingRunner();
  const lines = [];
  const state = options.state ?? path.join(root, 'state', 'terraform.tfstate');
  const rendering = {
    module,
    variables,
    binary: impl.binary,
    backendConfig: options.backendConfig ?? { path: state },
    lockTimeout: options.lockTimeout ?? '1s',
    ...(options.spec ?? {}),
  };
  if (timeout) rendering.timeout = timeout;
  fs.mkdirSync(path.join(root, 'state'), { recursive: true });
  const ctx = {
    environment: 'dev',
    unit: 'app',
    uid: 'uid-app',
    run: `run-${seq}`,
    kind: impl.kind,
    rendering,
    secretPointers,
    projectDir,
    scratchDir: () => (fs.mkdirSync(path.join(root, 'scratch'), { recursive: true }), path.join(root, 'scratch')),
    outputsPath: path.join(root, 'outputs.json'),
    runner,
    clock: new SystemClock(),
    baseEnv: { ...process.env, ...terraformEnv(), NYL_CACHE_DIR: path.join(root, 'cache'), ...baseEnv },
    cancel,
    killGraceMs: GRACE,
    toolOutput: ({ text }) => lines.push(text),
    ...(receipt ? { receipt } : {}),
    ...(acknowledgement ? { acknowledgement } : {}),
    ...(attempt ? { attempt } : {}),
  };
  return { ctx, runner, lines, root, state };
}

/** Plans and applies that plan, as the engine does (no approval: no digest asked for). */
async function planAndApply(driver, ctx, options = { digest: false }) {
  const planned = await driver.plan(ctx, options);
  assertOutcome('plan', planned);
  assert.equal(planned.result, 'planned', planned.reason);
  const applied = await driver.apply(ctx, planned.plan);
  assertOutcome('apply', applied);
  return { planned, applied };
}

/** The receipt a context's next phases see, from an apply's outcome. */
function receiptOf(applied, current = true) {
  return { run: 'run-before', current, toolState: applied.toolState };
}

const OUTPUTS = { greeting: { value: 'hello world', sensitive: false }, secret: { value: SECRET, sensitive: true }, size: { value: 5, sensitive: false } };

function assertNoValuesExposed(runner, lines, values) {
  for (const { argv } of runner.calls) for (const v of values) assert.ok(!argv.some((a) => a.includes(v)), `${JSON.stringify(argv)} holds ${v}`);
  for (const line of lines) assert.ok(!line.includes(SECRET), `printed: ${line}`);
}

/** Waits until `check()` holds. */
async function until(check, what, ms = 20_000) {
  for (const end = Date.now() + ms; !check(); ) {
    assert.ok(Date.now() < end, what);
    await new Promise((r) => setTimeout(r, 25));
  }
}

for (const impl of IMPLS) {
  describe(`Terraform driver: ${impl.name}`, { skip: SKIP_NO_TERRAFORM, concurrency: true }, () => {
    const { driver } = impl;

    test('descriptor: converge, a plan phase, teardown, check and readOutputs; module, backendConfig and workspace locate its state', () => {
      assert.equal(driver.kind, impl.kind);
      assert.equal(driver.defaultRecovery, 'converge');
      for (const phase of ['plan', 'apply', 'teardown', 'check', 'readOutputs']) assert.equal(typeof driver[phase], 'function', phase);
      assert.deepEqual(driver.sourceDirFields, ['module']);
      assert.deepEqual(driver.secretFields, ['/variables']);
      assert.deepEqual(driver.stateLocationFields, ['module', 'backendConfig', 'workspace']);
    });

    test('an execution without a reviewed plan runs init and `apply -auto-approve`, like plain Terraform: two processes', async () => {
      const { ctx, runner, lines } = context(impl);
      const applied = await driver.apply(ctx);
      assert.equal(applied.result, 'receipt', applied.reason);
      assert.deepEqual(applied.outputs, OUTPUTS);
      assert.deepEqual(runner.subcommands, ['init', 'apply']);
      const apply = runner.calls[1];
      const varFile = apply.argv.find((a) => a.startsWith('-var-file='))?.slice('-var-file='.length);
      assert.deepEqual(apply.argv.slice(1), ['apply', '-input=false', '-json', '-lock-timeout=1s', '-auto-approve', `-var-file=${varFile}`]);
      assert.deepEqual(JSON.parse(fs.readFileSync(varFile, 'utf8')), { name: 'world' }, 'the sensitive variable is not in the file');
      assert.equal(apply.env.TF_VAR_pw, SECRET, 'it reaches the tool through its environment');
      assertNoValuesExposed(runner, lines, ['world', SECRET]);
      assert.ok(lines.includes('Apply complete! Resources: 1 added, 0 changed, 0 destroyed.'), lines.join('\n'));
      assert.equal(applied.toolState.resources, 1);
      const again = context(impl, { receipt: receiptOf(applied), state: ctx.rendering.backendConfig.path });
      assert.equal((await driver.apply(again.ctx)).result, 'receipt', 'the same state, applied again: no refusal');
    });

    // Pins: a sensitive variable named with `-` went as TF_VAR_db-token, which the tool's
    // process-group start does not pass on (only shell names reach it): Terraform silently used
    // the variable's default.
    test('a sensitive variable whose name is no shell name is refused before anything runs', async () => {
      const { ctx, runner } = context(impl, { variables: { name: 'world', 'db-token': SECRET }, secretPointers: ['/variables/db-token'] });
      const outcome = await driver.apply(ctx);
      assert.equal(outcome.result, 'failed');
      assert.match(outcome.reason, /variable db-token carries a sensitive value, .* rename the variable .* \(db_token\)/);
      assert.deepEqual(runner.calls, [], 'no process started');
    });

    test('an apply of a plan this driver made applies exactly that saved plan, and reads outputs and state from the local state file: three processes', async () => {
      const { ctx, runner, lines } = context(impl);
      const { planned, applied } = await planAndApply(driver, ctx);
      assert.equal(planned.plan.changes, 'some');
      assert.equal(planned.plan.digest, undefined, 'no digest was asked for: no show -json');
      assert.match(planned.plan.summary, /^\+1 ~0 -0/);
      assert.equal(applied.result, 'receipt', applied.reason);
      assert.deepEqual(applied.outputs, OUTPUTS);
      assert.deepEqual(runner.subcommands, ['init', 'plan', 'apply']);
      const [init, plan, apply] = runner.calls;
      assert.deepEqual(init.argv.slice(1), ['init', '-input=false', '-no-color', `-backend-config=path=${ctx.rendering.backendConfig.path}`]);
      const out = plan.argv.find((a) => a.startsWith('-out='))?.slice('-out='.length);
      const varFile = plan.argv.find((a) => a.startsWith('-var-file='))?.slice('-var-file='.length);
      assert.deepEqual(plan.argv.slice(1), ['plan', '-input=false', '-json', `-out=${out}`, '-detailed-exitcode', '-lock-timeout=1s', `-var-file=${varFile}`]);
      assert.deepEqual(apply.argv.slice(1), ['apply', '-input=false', '-json', '-lock-timeout=1s', out], 'the saved plan, never -auto-approve');
      assert.equal(fs.existsSync(out), false, 'the saved plan (sensitive variables in plain text) is gone once applied');
      assert.deepEqual(JSON.parse(fs.readFileSync(varFile, 'utf8')), { name: 'world' }, 'the sensitive variable is not in the file');
      assert.equal(fs.statSync(varFile).mode & 0o777, 0o600);
      assert.equal(plan.env.TF_VAR_pw, SECRET, 'it reaches the tool through its environment');
      assertNoValuesExposed(runner, lines, ['world', SECRET]);
      assert.ok(lines.includes('Plan: 1 to add, 0 to change, 0 to destroy.'), 'the human text of the machine-readable messages is printed');
      const tfstate = JSON.parse(fs.readFileSync(ctx.rendering.backendConfig.path, 'utf8'));
      assert.deepEqual(applied.toolState, {
        backend: { type: 'local', location: { path: ctx.rendering.backendConfig.path }, fingerprint: applied.toolState.backend.fingerprint },
        workspace: 'default',
        lineage: tfstate.lineage,
        serial: tfstate.serial,
        resources: 1,
        addresses: ['terraform_data.d'],
      });
    });

    test('asked for the digest (nyl plan, a plan-bound approval), the plan runs show -json once; the same change has the same digest', async () => {
      const a = context(impl);
      const first = await driver.plan(a.ctx, { digest: true });
      assertOutcome('plan', first);
      assert.deepEqual(a.runner.subcommands, ['init', 'plan', 'show']);
      const second = await driver.plan(context(impl).ctx, { digest: true });
      const other = await driver.plan(context(impl, { variables: { name: 'moon', pw: SECRET } }).ctx, { digest: true });
      assert.equal(first.plan.digest, second.plan.digest);
      assert.notEqual(first.plan.digest, other.plan.digest);
    });

    test("every step runs in one scratch copy with its own TF_DATA_DIR; TF_WORKSPACE of Nyl's environment never reaches the tool", async () => {
      const { ctx, runner, lines } = context(impl, { baseEnv: { TF_WORKSPACE: 'staging' } });
      const { applied } = await planAndApply(driver, ctx);
      assert.ok(
        lines.includes(
          "note: TF_WORKSPACE=staging in Nyl's environment is not passed to infra/app: it uses the default workspace; declare workspace: staging on app to use that one",
        ),
      );
      assert.equal(applied.result, 'receipt', applied.reason);
      const dirs = new Set(runner.calls.map((c) => c.cwd));
      assert.equal(dirs.size, 1, 'one working copy for the whole execution');
      for (const call of runner.calls) {
        assert.ok(call.cwd.startsWith(ctx.scratchDir()) && call.cwd.endsWith(path.join('infra', 'app')));
        assert.ok(call.env.TF_DATA_DIR.startsWith(ctx.scratchDir()));
        assert.equal(call.env.TF_WORKSPACE, undefined);
        assert.equal(call.env.TF_IN_AUTOMATION, '1');
        assert.equal(call.env.NYL_UNIT, 'app');
      }
      assert.equal(applied.toolState.workspace, 'default');
      assert.ok(fs.existsSync(ctx.rendering.backendConfig.path), 'the default workspace state is where backendConfig says');
      assert.deepEqual(fs.readdirSync(path.join(ctx.projectDir, 'infra', 'app')), ['main.tf.json'], "the run's copy of the source is untouched");
    });

    test('spec.workspace selects the workspace: its state is kept under an absolute workspace_dir; a relative one is refused before it plans', async () => {
      const root = fs.mkdtempSync(path.join(tmp, 'ws-'));
      const ok = context(impl, {
        spec: { workspace: 'staging' },
        backendConfig: { path: path.join(root, 'default.tfstate'), workspace_dir: path.join(root, 'workspaces') },
      });
      const { applied } = await planAndApply(driver, ok.ctx);
      assert.equal(applied.result, 'receipt', applied.reason);
      assert.equal(ok.runner.calls[1].env.TF_WORKSPACE, 'staging');
      assert.ok(fs.existsSync(path.join(root, 'workspaces', 'staging', 'terraform.tfstate')), 'the workspace state outlives the scratch copy');
      assert.equal(applied.toolState.workspace, 'staging');
      assert.equal(applied.toolState.resources, 1);
      const relative = context(impl, { spec: { workspace: 'staging' } });
      const refused = await driver.plan(relative.ctx);
      assert.equal(refused.result, 'failed');
      assert.match(
        refused.reason,
        /state of workspace staging in a local backend under its default directory terraform\.tfstate\.d, inside Nyl's scratch copy/,
      );
      assert.deepEqual(relative.runner.subcommands, ['init']);
    });

    test('a second execution without changes runs init and plan only, and its outputs come from the state', async () => {
      const first = context(impl);
      const { applied } = await planAndApply(driver, first.ctx);
      const again = context(impl, { state: first.state, receipt: receiptOf(applied) });
      const { planned, applied: second } = await planAndApply(driver, again.ctx);
      assert.equal(planned.plan.changes, 'none');
      assert.match(planned.plan.summary, /^\+0 ~0 -0$/);
      assert.deepEqual(second.outputs, OUTPUTS);
      assert.deepEqual(again.runner.subcommands, ['init', 'plan']);
    });

    test('check: in sync after an apply although an output is computed (Terraform exits 2 for it); drifted when an output changed outside; readOutputs; teardown', async () => {
      const { ctx, state } = context(impl);
      const { applied } = await planAndApply(driver, ctx);
      const later = context(impl, { state, receipt: receiptOf(applied) });
      const checked = await driver.check(later.ctx);
      assertOutcome('check', checked);
      assert.deepEqual(checked, { result: 'checked', drift: 'in-sync' });
      assert.deepEqual(later.runner.subcommands, ['init', 'plan', 'show'], 'exit 2 is not trusted: show -json decides');
      assert.deepEqual(later.runner.calls[1].argv.slice(1, 4), ['plan', '-refresh-only', '-input=false']);
      const refreshPlan = later.runner.calls[1].argv.find((a) => a.startsWith('-out=')).slice('-out='.length);
      assert.equal(fs.existsSync(refreshPlan), false, 'the saved refresh-only plan is gone once read');
      assert.deepEqual(await driver.readOutputs(later.ctx), { result: 'read', outputs: OUTPUTS });
      const removed = await driver.teardown(later.ctx);
      assertOutcome('teardown', removed);
      assert.deepEqual(removed, { result: 'removed' });
      assert.deepEqual(later.runner.calls.at(-1).argv.slice(1, 5), ['destroy', '-auto-approve', '-input=false', '-json']);
      const left = JSON.parse(fs.readFileSync(state, 'utf8'));
      assert.deepEqual([left.resources, left.outputs], [[], {}]);
    });

    test('drift from the saved refresh-only plan: an output that reads a file edited by hand is drifted, with what changed; put back, in sync', async () => {
      const file = path.join(tmp, `managed-${++seq}.txt`);
      fs.writeFileSync(file, 'v1\n');
      const { ctx } = context(impl, { module: 'infra/file', variables: { path: file }, secretPointers: [] });
      const { applied } = await planAndApply(driver, ctx);
      ctx.receipt = receiptOf(applied);
      fs.writeFileSync(file, 'edited by hand\n');
      assert.deepEqual(await driver.check(ctx), { result: 'checked', drift: 'drifted', detail: 'output would change: content' });
      fs.writeFileSync(file, 'v1\n');
      assert.deepEqual(await driver.check(ctx), { result: 'checked', drift: 'in-sync' });
    });

    test('a failure says what Terraform said: summary, file and line, and the detail', async () => {
      const { ctx } = context(impl, { variables: { pw: SECRET } });
      const outcome = await driver.apply(ctx);
      assertOutcome('apply', outcome);
      assert.equal(outcome.result, 'failed');
      assert.equal(outcome.retryable, true);
      assert.match(
        outcome.reason,
        /^.*apply exited with code 1: No value for required variable \(main\.tf\.json line \d+\)\n {2}The root module input variable "name" is not set, and has no default value\./,
      );
      assert.notEqual(outcome.acknowledgementRequired, true, 'it failed while planning: nothing was changed');
      const broken = await driver.apply(context(impl, { module: 'infra/broken', variables: {}, secretPointers: [] }).ctx);
      assert.equal(broken.result, 'failed');
      assert.match(broken.reason, /apply exited with code 1: local-exec provisioner error \(main\.tf\.json line \d+\)/);
      assert.match(broken.reason, /exit status 3/);
    });

    test('a state lock held by another process: the step waits lockTimeout, then fails naming the holder and the lock ID', async () => {
      const held = context(impl, { module: 'infra/slow', variables: { seconds: 6, marker: path.join(tmp, `lock-${++seq}`) }, secretPointers: [] });
      const dir = path.join(held.root, 'holder');
      fs.cpSync(path.join(held.ctx.projectDir, 'infra/slow'), dir, { recursive: true });
      assert.equal(terraform(dir, ['init', '-input=false', `-backend-config=path=${held.state}`]).status, 0);
      const holder = spawn(TERRAFORM, ['apply', '-auto-approve', '-input=false', '-var', 'seconds=6', `-var=marker=${held.ctx.rendering.variables.marker}`], {
        cwd: dir,
        env: { ...process.env, ...terraformEnv() },
        stdio: 'ignore',
      });
      try {
        await until(() => fs.existsSync(held.ctx.rendering.variables.marker), 'the holder applies');
        const began = Date.now();
        const outcome = await driver.plan(held.ctx);
        assert.equal(outcome.result, 'failed');
        assert.ok(Date.now() - began >= 1000, 'it waited lockTimeout');
        assert.match(
          outcome.reason,
          /plan exited with code 1: the state is locked by \S+@\S+ \(lock ID [0-9a-f-]{36}, OperationTypeApply, since .+\); waited 1s \(lockTimeout\)/,
        );
        assert.match(outcome.reason, new RegExp(`release the lock with \`${impl.name === 'terraform' ? 'terraform' : 'tofu'} force-unlock [0-9a-f-]{36}\``));
        assert.equal(outcome.retryable, true);
      } finally {
        holder.kill('SIGTERM');
        await new Promise((r) => holder.once('exit', r));
      }
    });

    test('a module whose state would stay in the scratch copy is refused before it plans: no backend, or a local one without an absolute path', async () => {
      const none = context(impl, { module: 'infra/nobackend' });
      const refused = await driver.apply(none.ctx);
      assert.equal(refused.result, 'failed');
      assert.match(refused.reason, /module infra\/nobackend declares no backend/);
      assert.deepEqual(none.runner.subcommands, ['init']);
      const relative = context(impl, { backendConfig: { path: 'terraform.tfstate' } });
      const alsoRefused = await driver.plan(relative.ctx);
      assert.equal(alsoRefused.result, 'failed');
      assert.match(alsoRefused.reason, /local backend at the relative path terraform.tfstate/);
    });

    test('a binary that cannot start: a retryable failure that names spec.binary', async () => {
      const { ctx } = context(impl);
      ctx.rendering.binary = path.join(tmp, 'no-such-terraform');
      const outcome = await driver.apply(ctx);
      assert.equal(outcome.result, 'failed');
      assert.equal(outcome.retryable, true);
      assert.match(outcome.reason, /cannot start .*no-such-terraform: ENOENT .*spec\.binary/);
    });

    test('a lost state (deleted, emptied, replaced) is refused before anything is planned, with NYL-BACKEND-STATE-LOST; check reports it; an acknowledgement goes on', async () => {
      const { ctx, state } = context(impl);
      const { applied } = await planAndApply(driver, ctx);
      const receipt = receiptOf(applied);
      fs.renameSync(state, `${state}.moved`);
      const gone = context(impl, { state, receipt });
      const refused = await driver.plan(gone.ctx);
      assert.equal(refused.result, 'failed');
      assert.equal(refused.code, 'NYL-BACKEND-STATE-LOST');
      assert.equal(refused.acknowledgementRequired, true, "going on against it needs an operator's reason");
      assert.equal(refused.retryable, true, 'every run tries again: restoring the state fixes it');
      assert.match(
        refused.reason,
        new RegExp(
          `the Terraform state of app is gone: local ${state.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} holds no state, while its receipt \\(run run-before\\) recorded lineage ${applied.toolState.lineage} with 1 resource \\(terraform_data.d\\)`,
        ),
      );
      assert.deepEqual(gone.runner.subcommands, ['init'], 'nothing was planned against it');
      const checked = await driver.check(gone.ctx);
      assert.equal(checked.drift, 'drifted');
      assert.equal(checked.code, 'NYL-BACKEND-STATE-LOST');
      // Replaced: a state of another lineage with resources.
      const other = context(impl, { state: path.join(tmp, `other-${++seq}.tfstate`) });
      await planAndApply(driver, other.ctx);
      fs.copyFileSync(other.state, state);
      const replaced = await driver.plan(context(impl, { state, receipt }).ctx);
      assert.equal(replaced.code, 'NYL-BACKEND-STATE-LOST');
      assert.match(replaced.reason, /was replaced: .* holds lineage \S+ with 1 resource/);
      // Emptied: a file without content is no state.
      fs.writeFileSync(state, '');
      const emptied = await driver.plan(context(impl, { state, receipt }).ctx);
      assert.equal(emptied.code, 'NYL-BACKEND-STATE-LOST');
      assert.match(emptied.reason, /is gone/);
      // Put back, it is the unit's state again.
      fs.copyFileSync(`${state}.moved`, state);
      assert.equal((await planAndApply(driver, context(impl, { state, receipt }).ctx)).planned.plan.changes, 'none');
      // Rolled back: the same lineage at an older serial (a restored backup) misses what the receipt's apply made.
      const same = JSON.parse(fs.readFileSync(state, 'utf8'));
      fs.writeFileSync(state, JSON.stringify({ ...same, serial: same.serial - 1 }));
      const rolledBack = await driver.plan(context(impl, { state, receipt }).ctx);
      assert.equal(rolledBack.code, 'NYL-BACKEND-STATE-LOST');
      assert.match(rolledBack.reason, /was rolled back: .* holds serial \d+ of lineage \S+, older than the receipt's serial \d+/);
      // Emptied: every resource gone from the same lineage (a state rm), with no run of the unit since its receipt.
      fs.writeFileSync(state, JSON.stringify({ ...same, serial: same.serial + 1, resources: [] }));
      const afterRm = await driver.plan(context(impl, { state, receipt }).ctx);
      assert.equal(afterRm.code, 'NYL-BACKEND-STATE-LOST');
      assert.match(afterRm.reason, /was emptied: .* without any resource, and no run of the unit did that/);
      // The same, after an attempt of the unit since its receipt (an interrupted replacement): its own doing.
      const afterAttempt = await driver.plan(context(impl, { state, receipt, attempt: { uncertain: true } }).ctx);
      assert.equal(afterAttempt.result, 'planned', afterAttempt.reason);
      assert.match(afterAttempt.plan.summary, /^\+1 /);
      // An operator who checked acknowledges it: the plan creates the resource again.
      const acknowledged = context(impl, {
        state,
        receipt,
        acknowledgement: { by: 'Ops <ops@example.com>', reason: 'gone for good', at: '2026-12-07T00:00:00Z' },
      });
      const { planned } = await planAndApply(driver, acknowledged.ctx);
      assert.match(planned.plan.summary, /^\+1 /);
    });

    test("a state that holds resources no receipt of the unit recorded (another environment's) is refused with NYL-BACKEND-SHARED, unless sharedState or its own earlier incarnation", async () => {
      const dev = context(impl);
      const { applied } = await planAndApply(driver, dev.ctx);
      const prod = context(impl, { state: dev.state });
      const refused = await driver.plan(prod.ctx);
      assert.equal(refused.result, 'failed');
      assert.equal(refused.code, 'NYL-BACKEND-SHARED');
      assert.equal(refused.acknowledgementRequired, true);
      assert.match(
        refused.reason,
        /already holds a Terraform state \(lineage \S+\) with 1 resource \(terraform_data.d\) that no receipt of app in dev recorded/,
      );
      const shared = await driver.plan(context(impl, { state: dev.state, spec: { sharedState: true } }).ctx);
      assert.equal(shared.result, 'planned', shared.reason);
      const earlier = await driver.plan(context(impl, { state: dev.state, receipt: receiptOf(applied, false) }).ctx);
      assert.equal(earlier.result, 'planned', 'a new incarnation of the same unit finds its own state');
      const torn = await driver.teardown(
        context(impl, { state: dev.state, receipt: { run: 'r', current: true, toolState: { ...applied.toolState, lineage: 'another-lineage' } } }).ctx,
      );
      assert.equal(torn.result, 'failed', 'a teardown never destroys a state the receipt did not record');
      assert.equal(torn.code, 'NYL-BACKEND-STATE-LOST');
    });

    test('a first apply that failed half-way left a state with resources: the next attempt knows it as its own', async () => {
      const marker = path.join(tmp, `half-${++seq}`);
      const first = context(impl, { module: 'infra/slow', variables: { seconds: 0, marker }, secretPointers: [], spec: {} });
      // The provisioner fails until the marker file exists: a resource is created (tainted), the apply fails.
      fs.writeFileSync(
        path.join(first.ctx.projectDir, 'infra/slow/main.tf.json'),
        JSON.stringify({
          terraform: { backend: { local: {} } },
          variable: { seconds: { type: 'number' }, marker: { type: 'string' } },
          resource: { terraform_data: { slow: provisioned('test -e ${var.marker}') } },
        }),
      );
      const failed = await driver.apply(first.ctx);
      assert.equal(failed.result, 'failed');
      assert.equal(failed.toolState.resources, 1, 'the failed apply saved a tainted resource, and the outcome says which state');
      fs.writeFileSync(marker, '');
      const again = context(impl, {
        state: first.state,
        module: 'infra/slow',
        variables: { seconds: 0, marker },
        secretPointers: [],
        attempt: { uncertain: false, toolState: failed.toolState },
      });
      fs.copyFileSync(path.join(first.ctx.projectDir, 'infra/slow/main.tf.json'), path.join(again.ctx.projectDir, 'infra/slow/main.tf.json'));
      const { applied } = await planAndApply(driver, again.ctx);
      assert.equal(applied.result, 'receipt', applied.reason);
      assert.equal(applied.toolState.lineage, failed.toolState.lineage);
      const stranger = await driver.plan(
        context(impl, { state: first.state, module: 'infra/slow', variables: { seconds: 0, marker }, secretPointers: [] }).ctx,
      );
      assert.equal(stranger.code, 'NYL-BACKEND-SHARED', "without that attempt, the same state is another's");
      const crashed = await driver.plan(
        context(impl, { state: first.state, module: 'infra/slow', variables: { seconds: 0, marker }, secretPointers: [], attempt: { uncertain: true } }).ctx,
      );
      assert.equal(crashed.result, 'planned', 'an uncertain attempt that recorded nothing may have written it');
    });

    test('a changed backend whose state moved along is a change the plan names', async () => {
      const { ctx, state } = context(impl);
      const { applied } = await planAndApply(driver, ctx);
      const moved = path.join(tmp, `moved-${++seq}.tfstate`);
      fs.copyFileSync(state, moved);
      const planned = await driver.plan(context(impl, { state: moved, receipt: receiptOf(applied) }).ctx);
      assert.equal(planned.result, 'planned', planned.reason);
      assert.match(
        planned.plan.summary,
        new RegExp(
          `^\\+0 ~0 -0; backend changed from local ${state.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} to local ${moved.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`,
        ),
      );
    });

    test('cancellation during apply ends uncertain; Terraform got SIGTERM and saved its state', async () => {
      const ac = new AbortController();
      const marker = path.join(tmp, `cancel-${++seq}`);
      const { ctx, state } = context(impl, { module: 'infra/slow', variables: { seconds: 30, marker }, secretPointers: [], cancel: ac.signal });
      const planned = await driver.plan(ctx);
      const applying = driver.apply(ctx, planned.plan);
      await until(() => fs.existsSync(marker), 'the apply runs its provisioner');
      ac.abort('SIGTERM');
      const outcome = await applying;
      assert.equal(outcome.result, 'uncertain');
      assert.match(outcome.reason, /cancelled during .*(terraform|tofu) apply/);
      const saved = JSON.parse(fs.readFileSync(state, 'utf8'));
      assert.deepEqual(
        saved.resources.map((r) => `${r.type}.${r.name}`),
        ['terraform_data.slow'],
        'stopped gracefully, Terraform recorded the resource it was creating',
      );
    });

    test('a timeout during apply needs an acknowledgement; before apply it is retryable', async () => {
      const slow = context(impl, {
        module: 'infra/slow',
        variables: { seconds: 60, marker: path.join(tmp, `timeout-${++seq}`) },
        secretPointers: [],
        timeout: '4s',
      });
      const outcome = await driver.apply(slow.ctx);
      assert.equal(outcome.result, 'failed');
      assert.equal(outcome.retryable, false);
      assert.equal(outcome.acknowledgementRequired, true);
      assert.match(outcome.reason, /timed out after 4s during .*apply, which was stopped: what it changed is unknown/);
      const early = context(impl, { timeout: '1ms' });
      const before = await driver.apply(early.ctx);
      assert.equal(before.result, 'failed');
      assert.equal(before.retryable, true, before.reason);
      assert.match(before.reason, /timed out after 1ms during .*init, which was stopped$/);
    });

    test('a root module that calls a sibling through ../ runs as in the repository, and the receipt names the directory it read', async () => {
      const { ctx, lines } = context(impl, { module: 'infra/composed', variables: {}, secretPointers: [] });
      ctx.sourceReads = ['infra/composed/'];
      const { applied } = await planAndApply(driver, ctx);
      assert.deepEqual(applied.outputs, { text: { value: 'hi world', sensitive: false } });
      assert.deepEqual(applied.toolReads, ['modules/greet/']);
      assert.ok(
        lines.some((l) => /calls the local module modules\/greet\/ \(Terraform's module manifest\), which the execution key of app does not cover/.test(l)),
        'a key without it is named',
      );
      const covered = context(impl, { module: 'infra/composed', variables: {}, secretPointers: [] });
      covered.ctx.sourceReads = ['infra/composed/', 'modules/greet/'];
      await planAndApply(driver, covered.ctx);
      assert.ok(!covered.lines.some((l) => /does not cover/.test(l)));
    });

    test('a saved plan that changes nothing is removed too when it is "applied" (nothing runs)', async () => {
      const { ctx, state } = context(impl);
      const { applied } = await planAndApply(driver, ctx);
      const again = context(impl, { state, receipt: receiptOf(applied) });
      const planned = await driver.plan(again.ctx, { digest: false });
      assert.equal(planned.plan.changes, 'none');
      const out = again.runner.calls
        .find((c) => c.argv[1] === 'plan')
        .argv.find((a) => a.startsWith('-out='))
        .slice('-out='.length);
      assert.equal(fs.existsSync(out), true);
      assert.equal((await driver.apply(again.ctx, planned.plan)).result, 'receipt');
      assert.equal(fs.existsSync(out), false, 'the saved plan (sensitive variables in plain text) is gone');
    });

    test('one init per unit and run: plan, apply and a later read of its outputs share the working copy', async () => {
      const { ctx, runner } = context(impl);
      await planAndApply(driver, ctx);
      assert.equal((await driver.readOutputs(ctx)).result, 'read');
      assert.deepEqual(runner.subcommands, ['init', 'plan', 'apply']);
    });

    // A real provider plugin, where the machine has one offline: the AWS provider of the image's
    // filesystem mirror, against an SSM endpoint on 127.0.0.1 that never answers. Terraform's
    // plugins share its process group; SIGTERM to the group killed the plugin in the middle of the
    // create ("Plugin did not respond"), SIGINT lets Terraform stop it and record what it did.
    test('a cancelled apply with a real provider plugin: the plugin is stopped by Terraform, not killed with it', {
      skip:
        impl.kind !== 'Terraform'
          ? 'the same tool under another name: once is enough for a 700 MB plugin'
          : fs.existsSync(AWS_MIRROR)
            ? false
            : `no provider mirror at ${AWS_MIRROR}`,
    }, async () => {
      const requests = [];
      const server = http.createServer((req) => requests.push(req.method));
      await new Promise((r) => server.listen(0, '127.0.0.1', r));
      const ac = new AbortController();
      try {
        const cli = path.join(tmp, `aws-${++seq}.tfrc`);
        fs.writeFileSync(cli, `provider_installation {\n  filesystem_mirror {\n    path = "${AWS_MIRROR}"\n  }\n}\n`);
        // A plugin cache that already holds the provider (a link to the mirror): Terraform links it instead of copying 700 MB.
        const cache = path.join(tmp, `aws-cache-${seq}`, 'registry.terraform.io/hashicorp/aws', AWS_VERSION);
        fs.mkdirSync(cache, { recursive: true });
        fs.symlinkSync(path.join(AWS_MIRROR, 'registry.terraform.io/hashicorp/aws', AWS_VERSION, 'linux_amd64'), path.join(cache, 'linux_amd64'));
        const { ctx, lines } = context(impl, {
          module: 'infra/aws',
          variables: { endpoint: `http://127.0.0.1:${server.address().port}` },
          secretPointers: [],
          cancel: ac.signal,
          baseEnv: { TF_CLI_CONFIG_FILE: cli, TF_PLUGIN_CACHE_DIR: path.join(tmp, `aws-cache-${seq}`) },
        });
        const planned = await driver.plan(ctx, { digest: false });
        assert.equal(planned.result, 'planned', planned.reason);
        const applying = driver.apply(ctx, planned.plan);
        await until(() => requests.length > 0, 'the provider called the endpoint', 60_000);
        ac.abort('SIGTERM');
        const outcome = await applying;
        assert.equal(outcome.result, 'uncertain');
        assert.ok(
          lines.some((l) => /context canceled/.test(l)),
          `the plugin answered the stop itself:\n${lines.join('\n')}`,
        );
        assert.ok(!lines.some((l) => /Plugin did not respond/.test(l)), 'the plugin was not killed');
      } finally {
        ac.abort();
        await new Promise((r) => server.close(r));
      }
    });

    describe("a backend other than local: Terraform's http backend, read with state pull", () => {
      let server;
      before(async () => (server = await httpStateServer()));
      after(() => server.close());

      test('apply, outputs and the recorded state come from `state pull`; a lost remote state is refused', async () => {
        const name = `remote-${++seq}`;
        const backendConfig = { address: server.address(name), lock_address: server.address(name), unlock_address: server.address(name) };
        const { ctx, runner } = context(impl, { module: 'infra/remote', variables: {}, secretPointers: [], backendConfig });
        const { applied } = await planAndApply(driver, ctx);
        assert.equal(applied.result, 'receipt', applied.reason);
        assert.deepEqual(applied.outputs, { where: { value: 'http', sensitive: false }, secret: { value: 'remote-secret', sensitive: true } });
        assert.deepEqual(runner.subcommands, ['init', 'state', 'plan', 'apply', 'state']);
        assert.deepEqual(applied.toolState.backend.location, { address: server.address(name) });
        assert.equal(applied.toolState.resources, 1);
        server.states.delete(`/${name}`);
        const lost = await driver.plan(
          context(impl, { module: 'infra/remote', variables: {}, secretPointers: [], backendConfig, receipt: receiptOf(applied) }).ctx,
        );
        assert.equal(lost.code, 'NYL-BACKEND-STATE-LOST');
      });
    });
  });
}
