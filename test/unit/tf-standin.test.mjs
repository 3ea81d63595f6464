// The Terraform/OpenTofu stand-in (test/support/tf-standin): the CLI contract Nyl's Terraform
// driver relies on, driven through the real executables (execFile, no shell) in temporary
// directories. Where real terraform is on PATH (outside the stand-in's bin directory), the shapes
// of `show -json` and `output -json` are compared with what it prints for the same module.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'support', 'tf-standin', 'bin');

/** The environment of every run: none of the caller's TF_ settings, node reachable for the shim. */
function baseEnv(extra = {}) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^TF_(VAR_|DATA_DIR|STANDIN_|LOG|PLUGIN_CACHE_DIR|CLI_ARGS)/.test(k)));
  env.PATH = [dirname(process.execPath), env.PATH].join(delimiter);
  return { ...env, ...extra };
}

/** Runs `bin` with `args` in `cwd`; resolves {code, stdout, stderr} whatever the exit code. */
function exec(bin, args, cwd, env = {}) {
  return new Promise((resolve) => {
    execFile(bin, args, { cwd, env: baseEnv(env) }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

const tf = (cwd, args, env) => exec(join(BIN, 'terraform'), args, cwd, env);
const NC = ['-input=false', '-no-color'];

/** A temporary working directory holding `files` (objects are written as JSON). */
function workdir(t, files) {
  const dir = mkdtempSync(join(tmpdir(), 'nyl-tf-standin-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return dir;
}

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

function assertExit(result, code, what) {
  assert.equal(result.code, code, `${what}: exit ${result.code}, expected ${code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
}

/** A module with a backend block, variables (one sensitive), a local, both resource types. */
const MODULE = {
  terraform: { backend: { local: {} } },
  variable: {
    name: { type: 'string' },
    replicas: { type: 'number' },
    tags: { type: 'map(string)', default: { team: 'core' } },
    token: { type: 'string', sensitive: true, default: 's3cret' },
  },
  locals: { greeting: 'hello ${var.name}' },
  resource: {
    terraform_data: { seed: { input: { greeting: '${local.greeting}', replicas: '${var.replicas}' } } },
    local_file: { note: { filename: 'out/${var.name}.txt', content: '${local.greeting} x${var.replicas}', file_permission: '0644' } },
  },
  output: {
    file: { value: '${local_file.note.filename}', description: 'where the note is' },
    seed: { value: '${terraform_data.seed.output}' },
    replicas: { value: '${var.replicas}' },
    tags: { value: '${var.tags}' },
    token: { value: '${var.token}', sensitive: true },
  },
};

/** terraform_data only, no backend block: terraform itself needs no init for it. */
const SMALL = {
  variable: { v: { type: 'string' } },
  resource: { terraform_data: { a: { input: '${var.v}' } } },
  output: { o: { value: '${terraform_data.a.output}' } },
};

/** Waits until `file` exists (the stand-in has taken its lock), polling. */
async function waitFor(file, ms) {
  const end = Date.now() + ms;
  while (!existsSync(file)) {
    if (Date.now() > end) throw new Error(`${file} did not appear within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('tf stand-in', { concurrency: 4 }, () => {
  test('init, plan, show, apply, output and destroy round trip, variables from a var-file and TF_VAR_', async (t) => {
    const dir = workdir(t, { 'main.tf.json': MODULE, 'vars.json': { name: 'ada', unknown_key: 1 } });
    const env = { TF_VAR_replicas: '3' };

    const early = await tf(dir, ['plan', ...NC], env);
    assertExit(early, 1, 'plan before init');
    assert.match(early.stderr, /^\nError: Backend initialization required, please run "terraform init"\n\nReason: Initial configuration of the requested backend "local"\n/);

    assertExit(await tf(dir, ['init', ...NC, '-backend-config=path=state/main.tfstate']), 0, 'init');
    assert.deepEqual(readJson(join(dir, '.terraform', 'terraform.tfstate')).backend.config, { path: 'state/main.tfstate', workspace_dir: null });
    assert.match(readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8'), /provider "registry.terraform.io\/hashicorp\/local"/, 'local_file needs the provider in the lock file');

    const plan = await tf(dir, ['plan', ...NC, '-var-file=vars.json', '-out=tfplan', '-detailed-exitcode'], env);
    assertExit(plan, 2, 'plan with changes');
    assert.match(plan.stdout, /Plan: 2 to add, 0 to change, 0 to destroy\./);
    assert.match(plan.stdout, /Warning: Value for undeclared variable/, 'an unknown var-file key only warns');

    const show = await tf(dir, ['show', '-json', 'tfplan']);
    assertExit(show, 0, 'show -json');
    const json = JSON.parse(show.stdout);
    assert.equal(json.format_version, '1.2');
    assert.equal(json.errored, false);
    assert.deepEqual(json.variables.name, { value: 'ada' });
    assert.deepEqual(json.variables.replicas, { value: '3' }, 'as given, like terraform');
    const byAddress = Object.fromEntries(json.resource_changes.map((c) => [c.address, c]));
    assert.deepEqual(Object.keys(byAddress), ['local_file.note', 'terraform_data.seed']);
    assert.deepEqual(byAddress['terraform_data.seed'].change.actions, ['create']);
    assert.deepEqual(byAddress['terraform_data.seed'].change.after, { input: { greeting: 'hello ada', replicas: 3 }, triggers_replace: null });
    assert.deepEqual(byAddress['terraform_data.seed'].change.after_unknown, { id: true, input: {}, output: true });
    assert.equal(byAddress['local_file.note'].change.after.filename, 'out/ada.txt');
    assert.equal(byAddress['local_file.note'].provider_name, 'registry.terraform.io/hashicorp/local');
    assert.deepEqual(json.output_changes.token, { actions: ['create'], before: null, after: 's3cret', after_unknown: false, before_sensitive: true, after_sensitive: true });
    assert.deepEqual(json.output_changes.seed, { actions: ['create'], before: null, after_unknown: true, before_sensitive: false, after_sensitive: false });

    const apply = await tf(dir, ['apply', ...NC, 'tfplan']);
    assertExit(apply, 0, 'apply of the saved plan');
    assert.match(apply.stdout, /Apply complete! Resources: 2 added, 0 changed, 0 destroyed\./);
    assert.equal(readFileSync(join(dir, 'out', 'ada.txt'), 'utf8'), 'hello ada x3');
    const state = readJson(join(dir, 'state', 'main.tfstate'));
    assert.equal(state.version, 4);
    assert.equal(state.serial, 1);
    assert.match(state.lineage, /^[0-9a-f-]{36}$/);
    assert.deepEqual(state.outputs.replicas, { value: 3, type: 'number' });
    assert.deepEqual(state.outputs.token, { value: 's3cret', type: 'string', sensitive: true });
    const note = state.resources.find((r) => r.type === 'local_file').instances[0].attributes;
    assert.equal(note.id, createHash('sha1').update('hello ada x3').digest('hex'), 'id is the sha1 of the content, as the provider makes it');
    assert.equal(state.resources.find((r) => r.type === 'local_file').instances[0].dependencies, undefined);
    assert.deepEqual(state.resources.find((r) => r.type === 'terraform_data').instances[0].attributes.output, {
      value: { greeting: 'hello ada', replicas: 3 },
      type: ['object', { greeting: 'string', replicas: 'number' }],
    });

    const outputs = await tf(dir, ['output', '-json']);
    assertExit(outputs, 0, 'output -json');
    const values = JSON.parse(outputs.stdout);
    assert.deepEqual(values.token, { sensitive: true, type: 'string', value: 's3cret' }, 'sensitive flagged, value shown in -json');
    assert.deepEqual(values.tags, { sensitive: false, type: ['map', 'string'], value: { team: 'core' } });
    assert.deepEqual(values.file, { sensitive: false, type: 'string', value: 'out/ada.txt' });

    const human = await tf(dir, ['output', '-no-color']);
    assert.match(human.stdout, /^token = <sensitive>$/m);
    assert.match(human.stdout, /^file = "out\/ada.txt"$/m);
    assert.doesNotMatch(human.stdout, /s3cret/);

    const destroy = await tf(dir, ['destroy', '-auto-approve', ...NC, '-var-file=vars.json'], env);
    assertExit(destroy, 0, 'destroy');
    assert.ok(!existsSync(join(dir, 'out', 'ada.txt')), 'destroy removes the managed file');
    const after = readJson(join(dir, 'state', 'main.tfstate'));
    assert.deepEqual([after.resources, after.outputs, after.serial, after.lineage], [[], {}, 2, state.lineage]);
    assert.ok(existsSync(join(dir, 'state', 'main.tfstate.backup')));
  });

  test('detailed exit codes: 2 with changes, 0 with none after apply, 1 on error; a changed variable is an update', async (t) => {
    const dir = workdir(t, { 'main.tf.json': SMALL });
    assertExit(await tf(dir, ['plan', ...NC, '-detailed-exitcode'], { TF_VAR_v: 'one' }), 2, 'first plan');
    assertExit(await tf(dir, ['apply', '-auto-approve', ...NC], { TF_VAR_v: 'one' }), 0, 'apply');
    const same = await tf(dir, ['plan', ...NC, '-detailed-exitcode'], { TF_VAR_v: 'one' });
    assertExit(same, 0, 'plan after apply');
    assert.match(same.stdout, /No changes\. Your infrastructure matches the configuration\./);

    const changed = await tf(dir, ['plan', ...NC, '-detailed-exitcode', '-out=p'], { TF_VAR_v: 'two' });
    assertExit(changed, 2, 'plan with a changed variable');
    assert.match(changed.stdout, /Plan: 0 to add, 1 to change, 0 to destroy\./);
    const json = JSON.parse((await tf(dir, ['show', '-json', 'p'])).stdout);
    const change = json.resource_changes[0].change;
    assert.deepEqual(change.actions, ['update']);
    assert.equal(change.before.input, 'one');
    assert.equal(change.after.input, 'two');
    assert.deepEqual(change.after_unknown, { output: true }, 'the output is recomputed, the id kept');
    assert.deepEqual(json.output_changes.o.actions, ['update']);

    const missing = await tf(dir, ['plan', ...NC, '-detailed-exitcode']);
    assertExit(missing, 1, 'plan without a required variable');
    assert.match(missing.stderr, /\nError: No value for required variable\n\n {2}on main\.tf\.json line \d+, in variable:\n/);
    assert.match(missing.stderr, /The root module input variable "v" is not set/);
  });

  test('a saved plan is refused once the state has moved on', async (t) => {
    const dir = workdir(t, { 'main.tf.json': SMALL });
    assertExit(await tf(dir, ['plan', ...NC, '-out=old'], { TF_VAR_v: 'a' }), 0, 'plan');
    assertExit(await tf(dir, ['apply', '-auto-approve', ...NC], { TF_VAR_v: 'b' }), 0, 'another apply');
    const stale = await tf(dir, ['apply', ...NC, 'old']);
    assertExit(stale, 1, 'apply of the stale plan');
    assert.equal(stale.stderr, '\nError: Saved plan is stale\n\nThe given plan file can no longer be applied because the state was changed by\nanother operation after the plan was created.\n');
    assert.equal(readJson(join(dir, 'terraform.tfstate')).outputs.o.value, 'b', 'the stale plan changed nothing');
  });

  test('refresh-only: an untouched file is no drift, an edited one is (exit 2)', async (t) => {
    const dir = workdir(t, {
      'main.tf.json': { resource: { local_file: { f: { filename: 'f.txt', content: 'managed' } } } },
    });
    assertExit(await tf(dir, ['init', ...NC]), 0, 'init');
    assertExit(await tf(dir, ['apply', '-auto-approve', ...NC]), 0, 'apply');
    const clean = await tf(dir, ['plan', ...NC, '-refresh-only', '-detailed-exitcode']);
    assertExit(clean, 0, 'refresh-only with the file untouched');
    assert.match(clean.stdout, /No changes\. Your infrastructure still matches the configuration\./);
    writeFileSync(join(dir, 'f.txt'), 'edited by hand');
    const drift = await tf(dir, ['plan', ...NC, '-refresh-only', '-detailed-exitcode']);
    assertExit(drift, 2, 'refresh-only with the file edited');
    assert.match(drift.stdout, /# local_file\.f has been deleted/);
  });

  test('a held lock is an error; -lock=false goes ahead', async (t) => {
    const dir = workdir(t, { 'main.tf.json': SMALL });
    writeFileSync(join(dir, 'terraform.tfstate.lock.info'), JSON.stringify({ ID: 'held-by-test', Operation: 'OperationTypeApply' }));
    const locked = await tf(dir, ['apply', '-auto-approve', ...NC], { TF_VAR_v: 'x' });
    assertExit(locked, 1, 'apply with the lock held');
    assert.match(locked.stderr, /^\nError: Error acquiring the state lock\n\nError message: resource temporarily unavailable\nLock Info:\n {2}ID: {8}held-by-test\n/);
    assert.ok(!existsSync(join(dir, 'terraform.tfstate')), 'nothing written');
    assertExit(await tf(dir, ['plan', ...NC, '-lock=false'], { TF_VAR_v: 'x' }), 0, 'plan -lock=false');
    assert.ok(existsSync(join(dir, 'terraform.tfstate.lock.info')), "someone else's lock is left alone");
    writeFileSync(join(dir, 'terraform.tfstate.lock.info'), JSON.stringify({ ID: 'live', Pid: process.pid }));
    assertExit(await tf(dir, ['plan', ...NC], { TF_VAR_v: 'x' }), 1, 'the holder lives: its lock holds');
  });

  test('a lock whose holder died (SIGKILL) is stale and taken over, as the kernel releases an fcntl lock', async (t) => {
    const dir = workdir(t, { 'main.tf.json': SMALL });
    const child = spawn(join(BIN, 'terraform'), ['apply', '-auto-approve', ...NC], { cwd: dir, env: baseEnv({ TF_VAR_v: 'x', TF_STANDIN_SLEEP_APPLY: '10000' }), stdio: 'ignore' });
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    await waitFor(join(dir, 'terraform.tfstate.lock.info'), 15000);
    child.kill('SIGKILL');
    assert.deepEqual(await exited, { code: null, signal: 'SIGKILL' });
    assert.ok(existsSync(join(dir, 'terraform.tfstate.lock.info')), 'no handler ran');
    assertExit(await tf(dir, ['apply', '-auto-approve', ...NC], { TF_VAR_v: 'x' }), 0, 'the next apply takes the stale lock');
  });

  test('SIGTERM during TF_STANDIN_SLEEP_APPLY: exit 143, no lock left, state as it was', async (t) => {
    const dir = workdir(t, { 'main.tf.json': SMALL });
    assertExit(await tf(dir, ['apply', '-auto-approve', ...NC], { TF_VAR_v: 'before' }), 0, 'first apply');
    const before = readFileSync(join(dir, 'terraform.tfstate'), 'utf8');
    const child = spawn(join(BIN, 'terraform'), ['apply', '-auto-approve', ...NC], { cwd: dir, env: baseEnv({ TF_VAR_v: 'after', TF_STANDIN_SLEEP_APPLY: '10000' }), stdio: 'ignore' });
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    await waitFor(join(dir, 'terraform.tfstate.lock.info'), 15000);
    child.kill('SIGTERM');
    assert.deepEqual(await exited, { code: 143, signal: null });
    assert.ok(!existsSync(join(dir, 'terraform.tfstate.lock.info')), 'the lock is removed');
    assert.equal(readFileSync(join(dir, 'terraform.tfstate'), 'utf8'), before, 'the state is the one before');
    assertExit(await tf(dir, ['plan', ...NC, '-detailed-exitcode'], { TF_VAR_v: 'before' }), 0, 'the state reads back, nothing to do');
  });

  test('an HCL file is an error', async (t) => {
    const dir = workdir(t, { 'main.tf.json': SMALL, 'extra.tf': 'variable "x" {}\n' });
    const result = await tf(dir, ['plan', ...NC]);
    assertExit(result, 1, 'plan with main.tf');
    assert.match(result.stderr, /^\nError: Unsupported configuration file\n\n.*reads only JSON configuration/s);
    assert.match(result.stderr, /extra\.tf/);
  });

  test('an unknown reference is an error naming it and its file', async (t) => {
    const dir = workdir(t, {
      'main.tf.json': SMALL,
      'more.tf.json': { output: { bad: { value: 'x-${var.nope}' }, worse: { value: '${terraform_data.zz.output}' } } },
    });
    const result = await tf(dir, ['plan', ...NC], { TF_VAR_v: 'x' });
    assertExit(result, 1, 'plan');
    assert.match(result.stderr, /\nError: Reference to undeclared input variable\n\n {2}on more\.tf\.json line \d+, in output\.bad:\n.*\n\nAn input variable with the name "nope" has not been declared/);
    assert.match(result.stderr, /Error: Reference to undeclared resource\n\n {2}on more\.tf\.json line \d+, in output\.worse:/);
    assert.match(result.stderr, /A managed resource "terraform_data" "zz" has not been declared/);
  });

  test('TF_STANDIN_LOG records argv and TF_VAR_ names only; TF_STANDIN_FAIL fails a subcommand', async (t) => {
    const dir = workdir(t, { 'main.tf.json': SMALL });
    const log = join(dir, 'calls.jsonl');
    const env = { TF_STANDIN_LOG: log, TF_VAR_v: 'very-secret-value', TF_DATA_DIR: join(dir, 'data'), TF_PLUGIN_CACHE_DIR: join(dir, 'cache') };
    assertExit(await tf(dir, ['init', ...NC], env), 0, 'init');
    const failed = await tf(dir, ['plan', ...NC, '-out=p'], { ...env, TF_STANDIN_FAIL: 'plan' });
    assertExit(failed, 1, 'plan with TF_STANDIN_FAIL=plan');
    assert.match(failed.stderr, /^\nError: injected failure\n/);
    const text = readFileSync(log, 'utf8');
    assert.doesNotMatch(text, /very-secret-value/);
    const lines = text.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.argv), [['init', ...NC], ['plan', ...NC, '-out=p']]);
    assert.deepEqual(lines[1], {
      program: 'terraform',
      argv: ['plan', ...NC, '-out=p'],
      cwd: realpathSync(dir),
      env: { TF_DATA_DIR: join(dir, 'data'), TF_PLUGIN_CACHE_DIR: join(dir, 'cache'), TF_VAR_names: ['TF_VAR_v'] },
    });
  });

  test('version: tofu prints OpenTofu, -json has terraform_version; bad flags and subcommands fail', async (t) => {
    const dir = workdir(t, { 'main.tf.json': SMALL });
    const tofu = await exec(join(BIN, 'tofu'), ['version'], dir);
    assertExit(tofu, 0, 'tofu version');
    assert.match(tofu.stdout, /^OpenTofu v1\.8\.0\n/);
    const json = JSON.parse((await tf(dir, ['version', '-json'])).stdout);
    assert.equal(json.terraform_version, '1.9.0');
    assert.equal(typeof json.platform, 'string');

    const flag = await tf(dir, ['plan', '-no-color', '-bogus']);
    assertExit(flag, 1, 'unknown flag');
    assert.equal(flag.stderr, '\nError: Failed to parse command-line flags\n\nflag provided but not defined: -bogus\n\nFor more help on using this command, run:\n  terraform plan -help\n');
    const sub = await tf(dir, ['frobnicate']);
    assertExit(sub, 1, 'unknown subcommand');
    assert.match(sub.stderr, /^Terraform has no command named "frobnicate"\./);
  });

  test('show -json and output -json have the shapes real terraform gives', async (t) => {
    const real = findRealTerraform();
    if (!real) {
      t.skip('no terraform on PATH outside the stand-in');
      return;
    }
    const module = {
      variable: { name: { type: 'string' }, count_of: { type: 'number', default: 2 }, token: { type: 'string', sensitive: true, default: 'x' } },
      locals: { greeting: 'hi ${var.name}' },
      resource: {
        terraform_data: {
          first: { input: '${local.greeting}', triggers_replace: ['${var.count_of}'] },
          second: { input: { from: '${terraform_data.first.output}', n: '${var.count_of}' } },
        },
      },
      output: {
        greeting: { value: '${terraform_data.first.output}', description: 'd' },
        both: { value: '${terraform_data.second.output}' },
        n: { value: '${var.count_of}' },
        token: { value: '${var.token}', sensitive: true },
      },
    };
    /** Plans (create), shows, applies, outputs, then plans a change and shows it. */
    const scenario = async (run) => {
      const dir = workdir(t, { 'main.tf.json': module, 'vars.json': { name: 'ada' } });
      const steps = [
        ['plan', ...NC, '-var-file=vars.json', '-out=p1'],
        ['show', '-json', 'p1'],
        ['apply', ...NC, 'p1'],
        ['output', '-json'],
        ['plan', ...NC, '-out=p2'],
        ['show', '-json', 'p2'],
      ];
      const out = [];
      for (const args of steps) {
        const r = await run(dir, args, { TF_VAR_name: args.includes('-out=p2') ? 'bob' : 'ada' });
        assertExit(r, 0, args.join(' '));
        out.push(r.stdout);
      }
      return { create: JSON.parse(out[1]), outputs: JSON.parse(out[3]), update: JSON.parse(out[5]) };
    };
    const [mine, theirs] = await Promise.all([scenario(tf), scenario((dir, args, env) => exec(real, args, dir, env))]);
    for (const key of ['create', 'outputs', 'update']) assert.deepEqual(shape(mine[key]), shape(theirs[key]), `${key}: shape`);
    // Beyond shape, the values that do not depend on ids, times or versions agree too.
    const stable = (doc) => JSON.parse(JSON.stringify(doc, (k, v) => (['id', 'timestamp', 'terraform_version'].includes(k) ? '*' : v)));
    assert.deepEqual(stable(mine.outputs), stable(theirs.outputs));
    assert.deepEqual(stable(mine.create.output_changes), stable(theirs.create.output_changes));
    assert.deepEqual(stable(mine.update.resource_changes).map((c) => c.change.actions), stable(theirs.update.resource_changes).map((c) => c.change.actions));
    assert.deepEqual(stable(mine.update.configuration), stable(theirs.update.configuration));
  });
});

/** A value's structure: object keys (sorted), array lengths, and the JSON type of each leaf. */
function shape(v) {
  if (Array.isArray(v)) return v.map(shape);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, shape(v[k])]));
  return v === null ? 'null' : typeof v;
}

/** The first `terraform` on PATH that is not the stand-in (its bin directory skipped). */
function findRealTerraform() {
  const standin = realpathSync(BIN);
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'terraform');
    try {
      accessSync(candidate, constants.X_OK);
      if (dirname(realpathSync(candidate)) === standin) continue;
      return candidate;
    } catch {
      // not there: keep looking
    }
  }
  return null;
}
