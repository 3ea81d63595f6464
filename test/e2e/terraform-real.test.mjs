// End-to-end regressions of the Terraform driver against the real `terraform` (offline: only its
// built-in provider, terraform_data, outputs and local-exec provisioners), through the built CLI.
// Each test pins a bug of the driver before its rewrite (commit ec9a0e9; the comment above each
// test says which): the state of a unit under an inherited TF_WORKSPACE, drift of a computed
// output, a lost or moved state planned against as if it were new, two environments sharing one
// state, local module calls outside the unit's key, and failures that said only "exited with code
// 1". Run against a build of bde6de4 (the driver before it), every test failed at the assertion
// of its bug, except the spec.workspace one: that field did not exist, so the source was refused.
//
// Every module keeps its state in a local backend at an absolute path of the test's own
// directory. A module's terraform_data resource runs a local-exec provisioner that appends a line
// to a log when it is created: what ran, and how often, is read from there.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { nyl } from '../support/cli.mjs';
import { cleanupAll, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { commitFiles, stateRepo } from '../support/reconcile-helpers.mjs';
import { SKIP_NO_TERRAFORM, terraform, terraformEnv } from '../support/terraform.mjs';

after(cleanupAll);

const doc = (kind, name, spec) => ({ apiVersion: 'nyl.io/v1', kind, metadata: { name }, spec });

/** nyl.yaml from documents. */
function yamlOf(...docs) {
  return `${docs.map((d) => JSON.stringify(d)).join('\n---\n')}\n`;
}

/**
 * A root module (HCL): a local backend, a variable `name`, one terraform_data resource whose
 * creation appends `created <name>` to `log` (a local-exec provisioner), and outputs, one of them
 * computed by Terraform (`length(var.name)`).
 */
function appModule(log, extra = '') {
  return `terraform {
  backend "local" {}
}

variable "name" {
  type = string
}

resource "terraform_data" "app" {
  input = var.name
  provisioner "local-exec" {
    command = "echo created \${var.name} >> ${log}"
  }
}

output "greeting" {
  value = "hello \${terraform_data.app.output}"
}

output "size" {
  value = length(var.name)
}
${extra}`;
}

/**
 * A test's world: a directory for states and logs, a state repository, a project whose nyl.yaml
 * `yaml(world)` gives and whose other files are `files`, and `nyl state init` of each environment.
 */
function world(yaml, files = {}, envs = ['dev']) {
  const dir = tempDir('nyl-tf-real-');
  const state = stateRepo();
  const w = { dir, ...state, log: path.join(dir, 'created.log'), tfstate: (name = 'app') => path.join(dir, `${name}.tfstate`) };
  w.project = makeProject({ 'nyl.yaml': yaml(w), ...(typeof files === 'function' ? files(w) : files) });
  for (const env of envs) ok(w, ['state', 'init', '-e', env]);
  return w;
}

/** `nyl args...` in the world's project, with -o json added unless the args say otherwise (the document is held to its schema). */
function run(w, args, extra = {}) {
  const argv = args.includes('-o') ? args : [...args, '-o', 'json'];
  return nyl(w.project, argv, { env: terraformEnv(extra) });
}

/** A run's whole output, for a failed assertion. */
const shown = (r) => `exit ${r.code}\n${r.stdout}\n${r.stderr}`;

/** A run that must exit with `code` (0 unless said). */
function ok(w, args, code = 0, extra = {}) {
  const r = run(w, args, extra);
  assert.equal(r.code, code, `nyl ${args.join(' ')}: ${shown(r)}`);
  return r;
}

/** The lines the provisioners appended to the world's log. */
function created(w) {
  return fs.existsSync(w.log) ? fs.readFileSync(w.log, 'utf8').split('\n').filter(Boolean) : [];
}

/** The state file at `file`, parsed; undefined when there is none (or it is empty). */
function tfstateAt(file) {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  return text.trim() === '' ? undefined : JSON.parse(text);
}

/** Resource addresses of a parsed state. */
const addresses = (s) => (s?.resources ?? []).map((r) => `${r.type}.${r.name}`);

/** The receipt of a unit, as `nyl show -o json` prints it. */
function receiptOf(w, unit, env = 'dev') {
  const r = ok(w, ['show', '-e', env, '--unit', unit]);
  return r.json.receipt;
}

/** Codes of the diagnostics of a JSON report. */
const codesOf = (r) => [...(r.json?.errors ?? []), ...(r.json?.warnings ?? [])].map((d) => d.code);

/** The one Terraform unit `app` of environment dev, with module infra/app. */
function appYaml(w, spec = {}) {
  return yamlOf(
    doc('Environment', 'dev', { state: { repository: { repoURL: w.url } } }),
    doc('Terraform', 'app', { module: 'infra/app', variables: { name: 'world' }, backendConfig: { path: w.tfstate() }, ...spec }),
  );
}

// One test at a time: each runs the CLI synchronously, and the machine's two cores are shared.
describe('the Terraform driver against the real terraform', { skip: SKIP_NO_TERRAFORM }, () => {
  // Pins: `nyl verify` decided drift from the refresh-only plan's exit code, and Terraform exits 2
  // for an output it merely computes (length(var.name)): such a unit was drifted on every verify,
  // and the next reconcile ran it again. Now the saved plan's show -json decides.
  test('verify of a clean unit whose module has a computed output: in sync, and a second reconcile executes nothing', () => {
    const w = world(
      (w) => appYaml(w),
      (w) => ({ 'infra/app/main.tf': appModule(w.log) }),
    );
    assert.equal(ok(w, ['reconcile', '-e', 'dev']).json.units.app.result, 'executed');
    const verified = ok(w, ['verify', '-e', 'dev']);
    assert.deepEqual(verified.json.details.units.app, { drift: 'in-sync', kind: 'Terraform' });
    assert.deepEqual(codesOf(verified), []);
    assert.equal(ok(w, ['status', '-e', 'dev']).json.units.app.drift.status, 'in-sync');
    const again = ok(w, ['reconcile', '-e', 'dev']);
    assert.equal(again.json.units.app.result, 'current', shown(again));
    assert.deepEqual(created(w), ['created world'], 'the resource was created once');

    // What made the old verify wrong still holds: Terraform's own exit code says "changes" here.
    const copy = path.join(w.dir, 'by-hand');
    fs.cpSync(path.join(w.project, 'infra/app'), copy, { recursive: true });
    assert.equal(terraform(copy, ['init', '-input=false', `-backend-config=path=${w.tfstate()}`]).status, 0);
    const refresh = terraform(copy, ['plan', '-refresh-only', '-input=false', '-detailed-exitcode', '-lock=false', '-var', 'name=world']);
    assert.equal(refresh.status, 2, `terraform exits 2 for a computed output:\n${refresh.stdout}${refresh.stderr}`);
  });

  // Pins: a deleted state file was planned against as a new, empty state: the next reconcile (or
  // a verify-triggered drift repair) created every resource again next to the ones that exist,
  // and verify called it ordinary drift. Now verify and status report NYL-BACKEND-STATE-LOST, the
  // planner keeps the unit drifted until `--reapply --reason` (the operator's acknowledgement).
  test('a deleted tfstate: verify and status say NYL-BACKEND-STATE-LOST, reconcile does not run it, --reapply --reason re-creates it under a new lineage', () => {
    const w = world(
      (w) => appYaml(w),
      (w) => ({ 'infra/app/main.tf': appModule(w.log) }),
    );
    ok(w, ['reconcile', '-e', 'dev']);
    const before = tfstateAt(w.tfstate()).lineage;
    fs.rmSync(w.tfstate());

    const verified = ok(w, ['verify', '-e', 'dev'], 2);
    assert.deepEqual(codesOf(verified), ['NYL-BACKEND-STATE-LOST'], 'not NYL-UNIT-DRIFTED');
    assert.equal(verified.json.details.units.app.code, 'NYL-BACKEND-STATE-LOST');
    assert.match(verified.json.warnings[0].message, /the Terraform state of app is gone: local \S+app\.tfstate holds no state/);
    assert.match(verified.json.warnings[0].fix, /--reapply/);
    const status = ok(w, ['status', '-e', 'dev'], 2);
    assert.deepEqual(codesOf(status), ['NYL-BACKEND-STATE-LOST']);
    assert.equal(status.json.units.app.state, 'drifted');

    const planned = ok(w, ['plan', '-e', 'dev'], 2);
    assert.deepEqual([planned.json.units.app.action, planned.json.units.app.reason], ['drifted', 'state-lost'], shown(planned));
    const held = ok(w, ['reconcile', '-e', 'dev'], 2);
    assert.deepEqual([held.json.units.app.result, held.json.units.app.code], ['drifted', 'NYL-BACKEND-STATE-LOST'], shown(held));
    assert.equal(fs.existsSync(w.tfstate()), false, 'nothing was planned or applied');
    assert.deepEqual(created(w), ['created world']);

    const reapplied = ok(w, ['reconcile', '-e', 'dev', '--unit', 'app', '--reapply', '--reason', 'recreate']);
    assert.equal(reapplied.json.units.app.result, 'executed');
    assert.deepEqual(created(w), ['created world', 'created world'], 'created again, once');
    const after = receiptOf(w, 'app').toolState;
    assert.notEqual(after.lineage, before, 'a new state');
    assert.deepEqual(after, { ...after, workspace: 'default', lineage: tfstateAt(w.tfstate()).lineage, resources: 1, addresses: ['terraform_data.app'] });
    assert.deepEqual(codesOf(ok(w, ['verify', '-e', 'dev'])), []);
  });

  // Pins: a changed backendConfig.path was just another key change: the unit planned against the
  // new, empty location and created everything again there, leaving the old state's resources
  // unmanaged. Now the driver refuses before it plans (the unit fails with
  // NYL-BACKEND-STATE-LOST, exit 3) until `nyl recover --retry --reason` acknowledges it.
  test('a backendConfig.path changed to an empty location: the unit fails with NYL-BACKEND-STATE-LOST, nothing is created there; recover --retry --reason, then reconcile creates it', () => {
    const w = world(
      (w) => appYaml(w),
      (w) => ({ 'infra/app/main.tf': appModule(w.log) }),
    );
    ok(w, ['reconcile', '-e', 'dev']);
    const moved = path.join(w.dir, 'elsewhere', 'app.tfstate');
    fs.mkdirSync(path.dirname(moved));
    commitFiles(w.project, { 'nyl.yaml': appYaml(w, { backendConfig: { path: moved } }) }, 'app: another state path');

    const refused = ok(w, ['reconcile', '-e', 'dev'], 3);
    assert.deepEqual([refused.json.units.app.result, refused.json.units.app.code], ['failed', 'NYL-BACKEND-STATE-LOST'], shown(refused));
    assert.match(
      refused.json.units.app.detail,
      /the Terraform state of app is gone: local \S+elsewhere\/app\.tfstate holds no state.* The backend changed from local \S+\/app\.tfstate/s,
    );
    assert.deepEqual(fs.readdirSync(path.dirname(moved)), [], 'the tool created nothing at the new path');
    assert.deepEqual(created(w), ['created world']);
    const again = ok(w, ['reconcile', '-e', 'dev'], 3);
    assert.equal(again.json.units.app.result, 'failed', 'it waits for an operator');
    assert.deepEqual(fs.readdirSync(path.dirname(moved)), []);

    ok(w, ['recover', '-e', 'dev', '--unit', 'app', '--retry', '--reason', 'the old resources were removed by hand']);
    const recreated = ok(w, ['reconcile', '-e', 'dev']);
    assert.equal(recreated.json.units.app.result, 'executed');
    assert.deepEqual(addresses(tfstateAt(moved)), ['terraform_data.app']);
    assert.equal(receiptOf(w, 'app').toolState.backend.location.path, moved);
  });

  // Pins: TF_WORKSPACE in Nyl's environment (a CI runner's) reached terraform, which then kept the
  // state of workspace `staging` under terraform.tfstate.d/ of Nyl's scratch copy, deleted after
  // the run, instead of at backendConfig.path: every run created the resource again. Now it is
  // dropped: the unit's workspace is its own `workspace` field (the default workspace here).
  test("TF_WORKSPACE=staging in Nyl's environment: the state is kept at backendConfig.path (the default workspace), and the next run finds it", () => {
    const w = world(
      (w) => appYaml(w),
      (w) => ({ 'infra/app/main.tf': appModule(w.log) }),
    );
    const scratch = path.join(w.dir, 'tmp');
    fs.mkdirSync(scratch);
    const ci = { TF_WORKSPACE: 'staging', TMPDIR: scratch };
    assert.equal(ok(w, ['reconcile', '-e', 'dev'], 0, ci).json.units.app.result, 'executed');
    assert.deepEqual(addresses(tfstateAt(w.tfstate())), ['terraform_data.app'], 'the state is where backendConfig says');
    assert.deepEqual(
      fs
        .readdirSync(w.dir)
        .filter((f) => f.startsWith('terraform.tfstate'))
        .sort(),
      [],
      'no workspace directory beside it',
    );
    assert.deepEqual(fs.readdirSync(scratch), [], "nothing is left in the run's scratch space");
    assert.deepEqual(ok(w, ['verify', '-e', 'dev'], 0, ci).json.details.units.app.drift, 'in-sync');
    commitFiles(w.project, { 'infra/app/main.tf': appModule(w.log, '\noutput "more" {\n  value = 1\n}\n') }, 'app: another output');
    assert.equal(ok(w, ['reconcile', '-e', 'dev'], 0, ci).json.units.app.result, 'executed');
    assert.deepEqual(created(w), ['created world'], 'the second run planned against the state the first left: nothing created again');
    assert.equal(receiptOf(w, 'app').toolState.workspace, 'default');
  });

  // Pins: no unit could choose a workspace (spec.workspace did not exist; TF_WORKSPACE leaked in
  // from the environment, above). Now `workspace` selects it, and a local backend keeps its state
  // under an absolute workspace_dir; without one, the state would stay in the scratch copy, so the
  // unit is refused before anything is planned or created.
  test('spec.workspace: the state lands in <workspace_dir>/staging/terraform.tfstate; without an absolute workspace_dir the unit is refused and nothing is created', () => {
    const unit = (name, backendConfig) => doc('Terraform', name, { module: 'infra/app', variables: { name }, backendConfig, workspace: 'staging' });
    const w = world(
      (w) =>
        yamlOf(
          doc('Environment', 'dev', { state: { repository: { repoURL: w.url } } }),
          unit('staged', { path: w.tfstate('staged'), workspace_dir: path.join(w.dir, 'workspaces') }),
          unit('relative', { path: w.tfstate('relative') }),
        ),
      (w) => ({ 'infra/app/main.tf': appModule(w.log) }),
    );
    const first = ok(w, ['reconcile', '-e', 'dev'], 3, { TF_WORKSPACE: 'other' });
    const { units } = first.json;
    assert.deepEqual([units.staged.result, units.relative.result], ['executed', 'failed'], shown(first));
    assert.deepEqual(addresses(tfstateAt(path.join(w.dir, 'workspaces', 'staging', 'terraform.tfstate'))), ['terraform_data.app']);
    assert.equal(tfstateAt(w.tfstate('staged')), undefined, "the default workspace's state holds nothing");
    assert.equal(receiptOf(w, 'staged').toolState.workspace, 'staging');
    assert.match(
      units.relative.detail,
      /module infra\/app keeps the state of workspace staging in a local backend under its default directory terraform\.tfstate\.d, inside Nyl's scratch copy, where it would be lost after the run; give backendConfig\.workspace_dir an absolute path/,
    );
    assert.deepEqual(created(w), ['created staged'], 'relative created nothing that a lost state would leave behind');
    assert.equal(fs.existsSync(w.tfstate('relative')), false);
    assert.equal(ok(w, ['verify', '-e', 'dev', '--unit', 'staged']).json.details.units.staged.drift, 'in-sync');
  });

  // Pins: dev and prod whose backend renders alike (a hard-coded path) silently shared one state:
  // prod adopted dev's resources, and a teardown of either destroyed both. Now the planner refuses
  // (NYL-BACKEND-SHARED, exit 1) before anything runs, unless sharedState: true says it is meant.
  test('two environments with one hard-coded backend path: refused before anything runs; with sharedState: true, or ${{ env.name }} in the path, both reconcile', () => {
    const twoEnvs = (w, backendConfig, spec = {}, values = {}) =>
      yamlOf(
        doc('Environment', 'dev', { state: { repository: { repoURL: w.url } }, values: values.dev ?? {} }),
        doc('Environment', 'prod', { state: { repository: { repoURL: w.url } }, values: values.prod ?? {} }),
        doc('Terraform', 'app', { module: 'infra/app', variables: { name: 'world' }, backendConfig, ...spec }),
      );
    const w = world(
      (w) => twoEnvs(w, { path: w.tfstate('shared') }),
      (w) => ({ 'infra/app/main.tf': appModule(w.log) }),
      ['dev', 'prod'],
    );
    const refused = ok(w, ['reconcile', '-e', 'prod'], 1);
    const shared = refused.json.errors.find((d) => d.code === 'NYL-BACKEND-SHARED');
    assert.ok(shared, shown(refused));
    assert.match(
      shared.message,
      /the Terraform state of app in prod would be shared with environment dev: its backend renders alike for both \(backendConfig path=\S+shared\.tfstate, module infra\/app\)/,
    );
    assert.match(shared.fix, /sharedState: true/);
    assert.doesNotMatch(shared.fix, /`nyl /, 'nothing to run: the source must change');
    assert.equal(fs.existsSync(w.tfstate('shared')), false, 'nothing ran');
    assert.deepEqual(created(w), []);
    // Values that render alike are the same path: refused too, from source alone.
    commitFiles(
      w.project,
      {
        'nyl.yaml': twoEnvs(
          w,
          { path: '${{ env.values.statePath }}' },
          {},
          { dev: { statePath: w.tfstate('shared') }, prod: { statePath: w.tfstate('shared') } },
        ),
      },
      'values',
    );
    assert.ok(codesOf(ok(w, ['reconcile', '-e', 'dev'], 1)).includes('NYL-BACKEND-SHARED'));

    // Shared on purpose: prod adopts the state dev made, and creates nothing.
    commitFiles(w.project, { 'nyl.yaml': twoEnvs(w, { path: w.tfstate('shared') }, { sharedState: true }) }, 'shared on purpose');
    for (const env of ['dev', 'prod']) assert.equal(ok(w, ['reconcile', '-e', env]).json.units.app.result, 'executed');
    const lineage = tfstateAt(w.tfstate('shared')).lineage;
    assert.deepEqual([receiptOf(w, 'app', 'dev').toolState.lineage, receiptOf(w, 'app', 'prod').toolState.lineage], [lineage, lineage]);
    assert.deepEqual(created(w), ['created world'], 'one resource, created by dev');

    // One state per environment (another world: moving app's state would be a lost state).
    const own = world(
      (w) => twoEnvs(w, { path: path.join(w.dir, 'app-${{ env.name }}.tfstate') }),
      (w) => ({ 'infra/app/main.tf': appModule(w.log) }),
      ['dev', 'prod'],
    );
    for (const env of ['dev', 'prod']) assert.equal(ok(own, ['reconcile', '-e', env]).json.units.app.result, 'executed');
    assert.notEqual(tfstateAt(own.tfstate('app-dev')).lineage, tfstateAt(own.tfstate('app-prod')).lineage);
    assert.deepEqual(created(own), ['created world', 'created world']);
  });

  // Pins: a state that already held resources (another's, or made outside Nyl) was adopted by a
  // unit's first execution without a word, so a teardown of that unit destroyed them. When the
  // location is rendered from values that differ, only the driver can see it, at run time: the
  // unit fails with NYL-BACKEND-SHARED (exit 3), and a teardown does not destroy the state either.
  test("a state made outside Nyl at prod's path: the first execution fails with NYL-BACKEND-SHARED, and a teardown destroys nothing", () => {
    const w = world(
      (w) =>
        yamlOf(
          doc('Environment', 'dev', { state: { repository: { repoURL: w.url } }, values: { statePath: w.tfstate('dev') } }),
          doc('Environment', 'prod', { state: { repository: { repoURL: w.url } }, values: { statePath: w.tfstate('prod') } }),
          doc('Terraform', 'app', { module: 'infra/app', variables: { name: 'world' }, backendConfig: { path: '${{ env.values.statePath }}' } }),
        ),
      (w) => ({ 'infra/app/main.tf': appModule(w.log) }),
      ['prod'],
    );
    const byHand = path.join(w.dir, 'by-hand');
    fs.cpSync(path.join(w.project, 'infra/app'), byHand, { recursive: true });
    assert.equal(terraform(byHand, ['init', '-input=false', `-backend-config=path=${w.tfstate('prod')}`]).status, 0);
    const applied = terraform(byHand, ['apply', '-auto-approve', '-input=false', '-var', 'name=outside']);
    assert.equal(applied.status, 0, applied.stderr);
    const outside = tfstateAt(w.tfstate('prod'));

    const refused = ok(w, ['reconcile', '-e', 'prod'], 3);
    assert.deepEqual([refused.json.units.app.result, refused.json.units.app.code], ['failed', 'NYL-BACKEND-SHARED'], shown(refused));
    assert.match(
      refused.json.units.app.detail,
      new RegExp(
        `local \\S+prod\\.tfstate already holds a Terraform state \\(lineage ${outside.lineage}\\) with 1 resource \\(terraform_data\\.app\\) that no receipt of app in prod recorded`,
      ),
    );
    const torn = ok(w, ['teardown', '-e', 'prod', '--unit', 'app'], 3);
    assert.equal(torn.json.units.app.result, 'failed');
    assert.match(torn.json.units.app.detail, /already holds a Terraform state .* that no receipt of app in prod recorded/);
    assert.deepEqual(tfstateAt(w.tfstate('prod')).resources, outside.resources, 'the teardown destroyed nothing');
    assert.deepEqual(created(w), ['created outside'], 'nothing else was created');
  });

  // Pins: a root module's calls of local modules outside its directory (source =
  // "../../modules/greet") were not in the unit's execution key: a change there never ran the unit
  // again, and `nyl plan` said only "execution key changed" when something did. Now the scan of
  // the module's files puts the called directory into the key, and plan names the changed file.
  test('a module calling ../../modules/greet: a change there executes the unit, and plan names the file; so does a change of the root module', () => {
    const greet = (word) => `variable "name" {\n  type = string\n}\n\noutput "text" {\n  value = "${word} \${var.name}"\n}\n`;
    const root = (extra = '') =>
      `terraform {\n  backend "local" {}\n}\n\nmodule "greet" {\n  source = "../../modules/greet"\n  name   = "world"\n}\n\noutput "text" {\n  value = module.greet.text\n}\n${extra}`;
    const w = world(
      (w) =>
        yamlOf(
          doc('Environment', 'dev', { state: { repository: { repoURL: w.url } } }),
          doc('Terraform', 'app', { module: 'infra/app', backendConfig: { path: w.tfstate() } }),
        ),
      { 'infra/app/main.tf': root(), 'modules/greet/main.tf': greet('hi') },
    );
    ok(w, ['reconcile', '-e', 'dev']);
    assert.equal(receiptOf(w, 'app').outputs.text, 'hi world');
    assert.equal(ok(w, ['plan', '-e', 'dev']).json.units.app.action, 'current');

    commitFiles(w.project, { 'modules/greet/main.tf': greet('hey') }, 'greet: hey');
    const planned = ok(w, ['plan', '-e', 'dev'], 2);
    assert.deepEqual([planned.json.units.app.action, planned.json.units.app.reason], ['execute', 'key-changed'], shown(planned));
    assert.equal(planned.json.units.app.detail, 'module file modules/greet/main.tf changed');
    assert.equal(ok(w, ['reconcile', '-e', 'dev']).json.units.app.result, 'executed');
    const second = receiptOf(w, 'app');
    assert.deepEqual(
      [second.outputs.text, second.toolReads],
      ['hey world', ['modules/greet/']],
      "the receipt names what Terraform's manifest says the module read",
    );

    commitFiles(w.project, { 'infra/app/main.tf': root('\noutput "more" {\n  value = 1\n}\n') }, 'app: another output');
    const rooted = ok(w, ['plan', '-e', 'dev'], 2);
    assert.equal(rooted.json.units.app.detail, 'module file infra/app/main.tf changed');
    const text = run(w, ['plan', '-e', 'dev', '-o', 'text']);
    assert.match(text.stdout, /^app +Terraform +execute +module file infra\/app\/main\.tf changed$/m, shown(text));
  });

  // Pins: a failed step said only "terraform plan exited with code 1"; what Terraform said was
  // somewhere in the tool output. Now the failure carries its diagnostics: the summary with the
  // file and line, then the detail, indented.
  test("an apply that fails while it plans (a variable without a value): the unit's detail is Terraform's summary with file and line, and its detail follows", () => {
    const w = world(
      (w) => appYaml(w, { variables: {} }),
      (w) => ({ 'infra/app/main.tf': appModule(w.log) }),
    );
    const failed = ok(w, ['reconcile', '-e', 'dev'], 3);
    const row = failed.json.units.app;
    assert.equal(row.result, 'failed');
    assert.match(
      row.detail,
      /^terraform apply exited with code 1: No value for required variable \(main\.tf line 5\)\n {2}The root module input variable "name" is not set, and has no default value\./,
      shown(failed),
    );
    const text = run(w, ['reconcile', '-e', 'dev', '-o', 'text']);
    assert.equal(text.code, 3);
    assert.match(
      `${text.stdout}\n${text.stderr}`,
      /terraform apply exited with code 1: No value for required variable \(main\.tf line 5\)\n +The root module input variable "name" is not set, and has no default value\./,
      shown(text),
    );
  });
});
