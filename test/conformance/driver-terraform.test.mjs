// The Terraform and OpenTofu driver (src/drivers/terraform) against the Driver contract, with real
// processes: the stand-in of test/support/tf-standin as `terraform` and as `tofu` (always), and a
// real `terraform` or `tofu` when one is on PATH (the same tests; what only the stand-in can do,
// such as a managed file edited by hand or an apply slowed down to be killed, is marked so). The
// driver code is the same for every binary: only `spec.binary` differs.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openTofuDriver, terraformDriver } from '../../dist/drivers/terraform/index.js';
import { NodeProcessRunner } from '../../dist/exec/process.js';
import { SystemClock } from '../../dist/util/clock.js';
import { assertOutcome, assertReason } from '../support/driver-outcomes.mjs';

const STANDIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '../support/tf-standin/bin');
const SECRET = 'pa55-w0rd-never-printed';
const GRACE = 300;

/** An executable named `name` on PATH that is not the stand-in, if any. */
function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const file = path.join(dir || '.', name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (!fs.realpathSync(file).startsWith(fs.realpathSync(STANDIN))) return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

const realTerraform = onPath('terraform');
const realTofu = onPath('tofu');
const IMPLS = [
  { name: 'stand-in terraform', driver: terraformDriver, kind: 'Terraform', binary: path.join(STANDIN, 'terraform'), standin: true },
  { name: 'stand-in tofu', driver: openTofuDriver, kind: 'OpenTofu', binary: path.join(STANDIN, 'tofu'), standin: true },
  { name: 'real terraform', driver: terraformDriver, kind: 'Terraform', binary: realTerraform, skip: realTerraform ? false : 'no terraform on PATH' },
  { name: 'real tofu', driver: openTofuDriver, kind: 'OpenTofu', binary: realTofu, skip: realTofu ? false : 'no tofu on PATH' },
];

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nyl-driver-terraform-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The project every test runs: modules as *.tf.json, which both the stand-in and Terraform read. */
const MODULES = {
  // A local backend whose path comes from backendConfig; a sensitive variable and output.
  'infra/app/main.tf.json': {
    terraform: { backend: { local: {} } },
    variable: { name: { type: 'string' }, pw: { type: 'string', sensitive: true } },
    resource: { terraform_data: { d: { input: '${var.name}' } } },
    output: { greeting: { value: 'hello ${terraform_data.d.output}' }, secret: { value: '${var.pw}', sensitive: true } },
  },
  // No backend block: its state would live in the scratch copy.
  'infra/nobackend/main.tf.json': { output: { x: { value: 1 } } },
  // A file the stand-in manages (local_file), for drift.
  'infra/file/main.tf.json': {
    terraform: { backend: { local: {} } },
    variable: { path: { type: 'string' }, content: { type: 'string' } },
    resource: { local_file: { f: { filename: '${var.path}', content: '${var.content}' } } },
    output: { path: { value: '${local_file.f.filename}' } },
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
  /** The subcommands run, in order. */
  get subcommands() {
    return this.calls.map((c) => c.argv[1]);
  }
}

let seq = 0;
/**
 * A DriverContext as the engine builds one, for one unit of `impl`: its own project copy, scratch
 * directory, backend state file and Nyl cache.
 */
function context(impl, { module = 'infra/app', variables = { name: 'world', pw: SECRET }, secretPointers = ['/variables/pw'], backendConfig, timeout, baseEnv = {}, cancel = new AbortController().signal, state } = {}) {
  const root = fs.mkdtempSync(path.join(tmp, `u${++seq}-`));
  const projectDir = path.join(root, 'source');
  writeProject(projectDir);
  const runner = new RecordingRunner();
  const lines = [];
  const rendering = { module, variables, binary: impl.binary, backendConfig: backendConfig ?? { path: state ?? path.join(root, 'state', 'terraform.tfstate') } };
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
    baseEnv: { ...process.env, NYL_CACHE_DIR: path.join(root, 'cache'), TF_CLI_CONFIG_FILE: '/dev/null', ...baseEnv },
    cancel,
    killGraceMs: GRACE,
    toolOutput: ({ text }) => lines.push(text),
  };
  return { ctx, runner, lines, root };
}

/** Plans and applies that plan, as the engine does. */
async function planAndApply(driver, ctx) {
  const planned = await driver.plan(ctx);
  assertOutcome('plan', planned);
  assert.equal(planned.result, 'planned', planned.reason);
  const applied = await driver.apply(ctx, planned.plan);
  assertOutcome('apply', applied);
  return { planned, applied };
}

const OUTPUTS = { greeting: { value: 'hello world', sensitive: false }, secret: { value: SECRET, sensitive: true } };

/** Nothing the tool was given on a command line, and no line it printed, holds a variable's value. */
function assertNoValuesExposed(runner, lines, values) {
  for (const { argv } of runner.calls) for (const v of values) assert.ok(!argv.some((a) => a.includes(v)), `${JSON.stringify(argv)} holds ${v}`);
  for (const line of lines) assert.ok(!line.includes(SECRET), `printed: ${line}`);
}

for (const impl of IMPLS) {
  describe(`Terraform driver: ${impl.name}`, { skip: impl.skip, concurrency: true }, () => {
    const { driver } = impl;
    const standinOnly = impl.standin ? {} : { skip: 'the stand-in only' };

    test('descriptor: converge, a plan phase, teardown, check and readOutputs', () => {
      assert.equal(driver.kind, impl.kind);
      assert.equal(driver.defaultRecovery, 'converge');
      for (const phase of ['plan', 'apply', 'teardown', 'check', 'readOutputs']) assert.equal(typeof driver[phase], 'function', phase);
      assert.deepEqual(driver.sourceDirFields, ['module']);
      assert.deepEqual(driver.secretFields, ['/variables']);
    });

    test('plan, then apply of exactly that saved plan: init, plan -out, show -json, apply FILE, output -json; outputs keep their sensitive flag', async () => {
      const { ctx, runner, lines } = context(impl);
      const { planned, applied } = await planAndApply(driver, ctx);
      assert.equal(planned.plan.changes, 'some');
      assert.match(planned.plan.summary, /^\+1 ~0 -0/);
      assert.deepEqual(applied, { result: 'receipt', outputs: OUTPUTS });
      const [init, plan, show, apply, output] = runner.calls;
      assert.deepEqual(runner.subcommands, ['init', 'plan', 'show', 'apply', 'output']);
      assert.deepEqual(init.argv.slice(1), ['init', '-input=false', '-no-color', `-backend-config=path=${ctx.rendering.backendConfig.path}`]);
      const out = plan.argv.find((a) => a.startsWith('-out='))?.slice('-out='.length);
      const varFile = plan.argv.find((a) => a.startsWith('-var-file='))?.slice('-var-file='.length);
      assert.deepEqual(plan.argv.slice(1), ['plan', '-input=false', '-no-color', `-out=${out}`, '-detailed-exitcode', `-var-file=${varFile}`]);
      assert.deepEqual(show.argv.slice(1), ['show', '-json', out]);
      assert.deepEqual(apply.argv.slice(1), ['apply', '-input=false', '-no-color', out], 'the saved plan, never -auto-approve');
      assert.deepEqual(output.argv.slice(1), ['output', '-json']);
      assert.deepEqual(JSON.parse(fs.readFileSync(varFile, 'utf8')), { name: 'world' }, 'the sensitive variable is not in the file');
      assert.equal(fs.statSync(varFile).mode & 0o777, 0o600);
      assert.equal(plan.env.TF_VAR_pw, SECRET, 'it reaches the tool through its environment');
      assert.equal(plan.env.TF_VAR_name, undefined);
      assertNoValuesExposed(runner, lines, ['world', SECRET]);
    });

    test('every step runs in a scratch copy of the module with its own TF_DATA_DIR, the plugin cache under the Nyl cache, and the unit named', async () => {
      const { ctx, runner } = await (async () => {
        const c = context(impl);
        await planAndApply(driver, c.ctx);
        return c;
      })();
      for (const call of runner.calls) {
        assert.ok(call.cwd.startsWith(ctx.scratchDir()), `${call.cwd} is in the scratch directory`);
        assert.ok(call.cwd.endsWith(path.join('infra', 'app')), 'at the module path');
        assert.ok(call.env.TF_DATA_DIR.startsWith(ctx.scratchDir()));
        assert.equal(call.env.TF_PLUGIN_CACHE_DIR, path.join(ctx.baseEnv.NYL_CACHE_DIR, 'terraform-plugins'));
        assert.equal(call.env.TF_IN_AUTOMATION, '1');
        assert.equal(call.env.NYL_UNIT, 'app');
      }
      assert.ok(fs.statSync(path.join(ctx.baseEnv.NYL_CACHE_DIR, 'terraform-plugins')).isDirectory());
      assert.deepEqual(fs.readdirSync(path.join(ctx.projectDir, 'infra', 'app')), ['main.tf.json'], "the run's copy of the source is untouched");
    });

    test('a second plan has no changes: apply runs no apply and still reads the outputs', async () => {
      const first = context(impl);
      await planAndApply(driver, first.ctx);
      const again = context(impl, { state: first.ctx.rendering.backendConfig.path });
      const { planned, applied } = await planAndApply(driver, again.ctx);
      assert.equal(planned.plan.changes, 'none');
      assert.match(planned.plan.summary, /^\+0 ~0 -0$/);
      assert.deepEqual(applied, { result: 'receipt', outputs: OUTPUTS });
      assert.deepEqual(again.runner.subcommands, ['init', 'plan', 'show', 'output']);
    });

    test('the plan digest: the same change, the same digest; another change, another digest', async () => {
      const a = await driver.plan(context(impl).ctx);
      const b = await driver.plan(context(impl).ctx);
      const c = await driver.plan(context(impl, { variables: { name: 'moon', pw: SECRET } }).ctx);
      assert.equal(a.plan.digest, b.plan.digest);
      assert.notEqual(a.plan.digest, c.plan.digest);
    });

    test('check: in sync after an apply; readOutputs: the outputs from the backend, sensitive flag kept; teardown: destroy -auto-approve, and the outputs are gone', async () => {
      const { ctx } = context(impl);
      await planAndApply(driver, ctx);
      const later = context(impl, { state: ctx.rendering.backendConfig.path });
      const checked = await driver.check(later.ctx);
      assertOutcome('check', checked);
      assert.deepEqual(checked, { result: 'checked', drift: 'in-sync' });
      assert.deepEqual(later.runner.calls.at(-1).argv.slice(1, 5), ['plan', '-refresh-only', '-detailed-exitcode', '-input=false']);
      const read = await driver.readOutputs(later.ctx);
      assertOutcome('readOutputs', read);
      assert.deepEqual(read, { result: 'read', outputs: OUTPUTS });
      const removed = await driver.teardown(later.ctx);
      assertOutcome('teardown', removed);
      assert.deepEqual(removed, { result: 'removed' });
      assert.deepEqual(later.runner.calls.at(-1).argv.slice(1, 5), ['destroy', '-auto-approve', '-input=false', '-no-color']);
      assert.deepEqual(await driver.readOutputs(later.ctx), { result: 'read', outputs: {} });
    });

    test("a failure carries the tool's Error: diagnostics, retryable", async () => {
      const { ctx } = context(impl, { variables: { pw: SECRET } });
      const outcome = await driver.apply(ctx);
      assertOutcome('apply', outcome);
      assert.equal(outcome.result, 'failed');
      assert.equal(outcome.retryable, true);
      assert.match(outcome.reason, /plan exited with code 1:\nError: No value for required variable: The root module input variable "name" is not set/);
    });

    test('a module whose state would stay in the scratch copy is refused before it plans: no backend, or a local one without an absolute path', async () => {
      const none = context(impl, { module: 'infra/nobackend' });
      const refused = await driver.apply(none.ctx);
      assertOutcome('apply', refused);
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
      assertOutcome('apply', outcome);
      assert.equal(outcome.result, 'failed');
      assert.equal(outcome.retryable, true);
      assert.match(outcome.reason, /cannot start .*no-such-terraform: ENOENT .*spec\.binary/);
    });

    test('drift: a managed file edited by hand is drifted; put back, in sync', standinOnly, async () => {
      const file = path.join(tmp, `managed-${++seq}.txt`);
      const { ctx } = context(impl, { module: 'infra/file', variables: { path: file, content: 'v1\n' }, secretPointers: [] });
      await planAndApply(driver, ctx);
      assert.equal(fs.readFileSync(file, 'utf8'), 'v1\n');
      fs.writeFileSync(file, 'edited by hand\n');
      assert.deepEqual(await driver.check(ctx), { result: 'checked', drift: 'drifted' });
      fs.writeFileSync(file, 'v1\n');
      assert.deepEqual(await driver.check(ctx), { result: 'checked', drift: 'in-sync' });
    });

    test('cancellation during apply ends uncertain; the tool was stopped, its lock released', standinOnly, async () => {
      const ac = new AbortController();
      const { ctx, runner } = context(impl, { cancel: ac.signal, baseEnv: { TF_STANDIN_SLEEP_APPLY: '20000' } });
      const began = Date.now();
      const planned = await driver.plan(ctx);
      const applying = driver.apply(ctx, planned.plan);
      while (!runner.subcommands.includes('apply')) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 300));
      ac.abort('SIGTERM');
      const outcome = await applying;
      assertOutcome('apply', outcome);
      assert.equal(outcome.result, 'uncertain');
      assert.match(outcome.reason, /cancelled during .*terraform apply|cancelled during .*tofu apply/);
      assert.ok(Date.now() - began < 10_000, 'not waited for');
      assert.ok(!fs.existsSync(`${ctx.rendering.backendConfig.path}.lock.info`), 'the lock went with the tool');
    });

    test('a timeout during apply needs an acknowledgement; before apply it is retryable', standinOnly, async () => {
      // The deadline covers every step: 12 s leaves init, plan and show time even on a machine
      // that runs the whole suite (5 s did not: each step is a process of its own).
      const slow = context(impl, { timeout: '12s', baseEnv: { TF_STANDIN_SLEEP_APPLY: '60000' } });
      const outcome = await driver.apply(slow.ctx);
      assertOutcome('apply', outcome);
      assert.equal(outcome.result, 'failed');
      assert.equal(outcome.retryable, false);
      assert.equal(outcome.acknowledgementRequired, true);
      assert.match(outcome.reason, /timed out after 12s during .*apply, which was killed: what it changed is unknown/);
      const early = context(impl, { timeout: '50ms' });
      const before = await driver.apply(early.ctx);
      assertOutcome('apply', before);
      assert.equal(before.result, 'failed');
      assert.equal(before.retryable, true, before.reason);
      assert.equal(before.acknowledgementRequired, undefined);
      assert.match(before.reason, /timed out after 50ms during .*init, which was killed$/);
    });

    test('an injected apply failure: its Error: line is the reason', standinOnly, async () => {
      const { ctx } = context(impl, { baseEnv: { TF_STANDIN_FAIL: 'apply' } });
      const outcome = await driver.apply(ctx);
      assertOutcome('apply', outcome);
      assert.equal(outcome.result, 'failed');
      assertReason(outcome.reason);
      assert.match(outcome.reason, /apply exited with code 1:\nError: injected failure/);
    });
  });
}

test('real terraform: a root module calls a sibling module through ../, as in the repository', { skip: realTerraform ? false : 'no terraform on PATH' }, async () => {
  const impl = IMPLS[2];
  const { ctx, projectDir } = (() => {
    const c = context(impl, { module: 'infra/composed', variables: { name: 'world' }, secretPointers: [] });
    return { ...c, projectDir: c.ctx.projectDir };
  })();
  fs.mkdirSync(path.join(projectDir, 'infra/composed'), { recursive: true });
  fs.mkdirSync(path.join(projectDir, 'modules/greet'), { recursive: true });
  fs.writeFileSync(path.join(projectDir, 'modules/greet/main.tf.json'), JSON.stringify({ variable: { name: {} }, output: { text: { value: 'hi ${var.name}' } } }));
  fs.writeFileSync(path.join(projectDir, 'infra/composed/main.tf.json'), JSON.stringify({ terraform: { backend: { local: {} } }, variable: { name: {} }, module: { g: { source: '../../modules/greet', name: '${var.name}' } }, output: { text: { value: '${module.g.text}' } } }));
  const { applied } = await planAndApply(terraformDriver, ctx);
  assert.deepEqual(applied, { result: 'receipt', outputs: { text: { value: 'hi world', sensitive: false } } });
});
