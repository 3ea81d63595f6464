// End-to-end: `nyl plan` with the real CLI, real git and the real `terraform` on PATH (offline:
// only its built-in provider, terraform_data). A module that gains a resource is planned in a
// scratch copy (`+1 ~0 -0`, a sha256 plan digest that a reconcile's plan-bound approval then
// applies, where a wrong digest applies nothing) and a Command whose script changed shows the diff
// of its rendering; the plan exits 2, and afterwards every ref of the state repository and of the
// clone is what it was (the clone's known branch, left behind on purpose, is not fast-forwarded as
// status would) and its scratch copy is gone. Once a reconcile applied it, the plan exits 0.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { nyl } from '../support/cli.mjs';
import { cleanupAll, git, gitResult, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { commitFiles, stateRepo } from '../support/reconcile-helpers.mjs';
import { SKIP_NO_TERRAFORM, terraformEnv } from '../support/terraform.mjs';

after(cleanupAll);

const doc = (kind, name, spec) => ({ apiVersion: 'nyl.io/v1', kind, metadata: { name }, spec });

function nylYaml(url, dir, script, approval) {
  const docs = [
    doc('Environment', 'dev', { state: { repository: { repoURL: url } } }),
    doc('Terraform', 'net', { module: 'infra/net', backendConfig: { path: path.join(dir, 'net.tfstate') }, ...(approval ? { approval } : {}) }),
    doc('Command', 'hello', { script }),
  ];
  return `${docs.map((d) => JSON.stringify(d)).join('\n---\n')}\n`;
}

/** A root module with these terraform_data resources (name -> input). */
function moduleJson(resources) {
  const data = Object.fromEntries(Object.entries(resources).map(([name, input]) => [name, { input }]));
  return JSON.stringify({ terraform: { backend: { local: {} } }, resource: { terraform_data: data } }, null, 2);
}

/** Every ref of a repository, as both listings show them (show-ref exits 1 when there is none). */
function everyRef(dir) {
  return { forEachRef: git(dir, 'for-each-ref'), showRef: gitResult(dir, 'show-ref').stdout };
}

test('nyl plan: a module that gains a resource shows +1 ~0 -0 and its digest, a changed script its diff; exit 2 and no ref moves anywhere; after a reconcile it exits 0', {
  skip: SKIP_NO_TERRAFORM,
}, () => {
  const dir = tempDir('nyl-plan-');
  const state = stateRepo();
  const project = makeProject({ 'nyl.yaml': nylYaml(state.url, dir, 'echo hi'), 'infra/net/main.tf.json': moduleJson({ a: 'one' }) });
  const env = terraformEnv();
  const run = (args) => nyl(project, args, { env });
  assert.equal(run(['state', 'init', '-e', 'dev']).code, 0);
  const first = run(['reconcile', '-e', 'dev']);
  assert.equal(first.code, 0, first.stdout + first.stderr);

  const reviewed = { required: true, requireDigest: true };
  commitFiles(
    project,
    { 'nyl.yaml': nylYaml(state.url, dir, 'echo hi\necho there', reviewed), 'infra/net/main.tf.json': moduleJson({ a: 'one', b: 'two' }) },
    'grow',
  );
  // The clone's known desired branch one commit behind the state: status would fast-forward it.
  const desiredRef = 'refs/heads/nyl/dev/desired';
  git(project, 'update-ref', desiredRef, git(state.bare, 'rev-parse', `${desiredRef}~1`));
  const before = { state: everyRef(state.bare), clone: everyRef(project) };
  const scratch = tempDir('nyl-plan-tmp-');

  const planned = nyl(project, ['plan', '-e', 'dev', '-o', 'json'], { env: { ...env, TMPDIR: scratch } });
  assert.equal(planned.code, 2, planned.stdout + planned.stderr);
  assert.deepEqual({ state: everyRef(state.bare), clone: everyRef(project) }, before, 'no ref of the state repository or the clone moved');
  assert.deepEqual(fs.readdirSync(scratch), [], 'the scratch copy is removed');
  const { units } = planned.json;
  assert.equal(planned.json.operation, 'plan');
  assert.deepEqual([units.net.result, units.net.action, units.net.reason], ['awaiting-approval', 'awaiting-approval', 'approval-required']);
  assert.equal(units.net.changes, '+1 ~0 -0');
  assert.match(units.net.digest, /^sha256:[0-9a-f]{64}$/);
  assert.notEqual(units.net.digest, units.net.executionKey, 'bound to the driver plan, not the key alone');
  assert.deepEqual([units.hello.result, units.hello.reason, units.hello.digest], ['execute', 'key-changed', units.hello.executionKey]);
  assert.deepEqual(units.hello.diff, ['@@ -1 +1,3 @@', '-script: "echo hi"', '+script: |-', '+  echo hi', '+  echo there']);
  assert.match(planned.stderr, /\[dev\/net\] planning /);
  assert.match(planned.stderr, /Plan: 1 to add, 0 to change, 0 to destroy/);

  const text = run(['plan', '-e', 'dev']);
  assert.equal(text.code, 2);
  // The detail names the module's file that changed, not only "execution key changed".
  assert.match(
    text.stdout,
    /^net +Terraform +awaiting-approval +spec field approval changed; module file infra\/net\/main\.tf\.json changed; approval.required/m,
  );
  assert.match(units.net.detail, /^spec field approval changed; module file infra\/net\/main\.tf\.json changed; approval.required/);
  assert.deepEqual(units.net.keyChanges, [
    { read: 'spec', fields: ['approval'] },
    { read: 'module-file', path: 'infra/net/main.tf.json', how: 'changed' },
  ]);
  assert.match(text.stdout, new RegExp(`^net \\(awaiting-approval\\):\\n  digest:  ${units.net.digest}\\n  changes: \\+1 ~0 -0$`, 'm'), text.stdout);
  assert.match(text.stdout, /^ {4}\+ {2}echo there$/m);

  // A wrong digest applies nothing of the module; the digest plan printed applies it.
  const tfstate = () => fs.readFileSync(path.join(dir, 'net.tfstate'), 'utf8');
  const stateBefore = tfstate();
  const wrong = run(['reconcile', '-e', 'dev', '--approve', `net=sha256:${'0'.repeat(64)}`, '-o', 'json']);
  assert.equal(wrong.code, 2, wrong.stdout + wrong.stderr);
  assert.equal(wrong.json.units.net.result, 'awaiting-approval');
  assert.equal(wrong.json.units.net.approval.digest, units.net.digest, 'the run planned what nyl plan showed');
  assert.ok(wrong.json.warnings.some((w) => w.code === 'NYL-APPROVAL-DIGEST-MISMATCH'));
  assert.equal(tfstate(), stateBefore, 'nothing applied');
  const applied = run(['reconcile', '-e', 'dev', '--approve', `net=${units.net.digest}`, '-o', 'json']);
  assert.equal(applied.code, 0, applied.stdout + applied.stderr);
  assert.equal(applied.json.units.net.approvedBy.digest, units.net.digest);
  const quiet = run(['plan', '-e', 'dev', '-o', 'json']);
  assert.equal(quiet.code, 0, quiet.stdout);
  assert.deepEqual(
    Object.values(quiet.json.units).map((u) => [u.result, u.digest]),
    [
      ['current', undefined],
      ['current', undefined],
    ],
  );

  // A changed module needs a new approval: the reviewed digest no longer matches.
  commitFiles(project, { 'infra/net/main.tf.json': moduleJson({ a: 'one', b: 'two', c: 'three' }) }, 'grow again');
  const stale = run(['reconcile', '-e', 'dev', '--approve', `net=${units.net.digest}`, '-o', 'json']);
  assert.equal(stale.code, 2, stale.stdout + stale.stderr);
  assert.equal(stale.json.units.net.approval.reason, 'digest-mismatch');
});

test('nyl plan before the first commit says to commit first; before state init it previews every unit executing (a warning names state init)', () => {
  const state = stateRepo();
  const yaml = `${[doc('Environment', 'dev', { state: { repository: { repoURL: state.url } } }), doc('Command', 'hello', { script: 'echo hi' })]
    .map((d) => JSON.stringify(d))
    .join('\n---\n')}\n`;
  const project = tempDir('nyl-plan-fresh-');
  git(project, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(project, 'nyl.yaml'), yaml);
  const uncommitted = nyl(project, ['plan', '-e', 'dev']);
  assert.equal(uncommitted.code, 1, uncommitted.stdout + uncommitted.stderr);
  assert.match(uncommitted.stdout + uncommitted.stderr, /the checkout has no commit yet: Nyl renders units from a commit/);
  assert.match(uncommitted.stdout + uncommitted.stderr, /fix: commit the project first: `git add -A && git commit -m "nyl project"`/);
  assert.doesNotMatch(uncommitted.stderr, /HEAD HEAD/);
  // Run from elsewhere (the project as PATH), the fix commits there.
  const elsewhere = nyl(path.dirname(project), ['plan', '-e', 'dev', path.basename(project)]);
  const dir = path.basename(project);
  assert.ok(
    (elsewhere.stdout + elsewhere.stderr).includes(`fix: commit the project first: \`git -C ${dir} add -A && git -C ${dir} commit -m "nyl project"\``),
    elsewhere.stdout + elsewhere.stderr,
  );

  git(project, 'add', '-A');
  git(project, '-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'nyl project');
  const preview = nyl(project, ['plan', '-e', 'dev']);
  assert.equal(preview.code, 2, preview.stdout + preview.stderr);
  assert.match(preview.stdout, /^hello +Command +execute +new unit: will execute$/m);
  assert.match(preview.stdout, /warning NYL-STATE-MISSING\n {2}state missing: every unit would execute/);
  assert.match(preview.stdout, /fix: create it with `nyl state init -e dev`/);
});
