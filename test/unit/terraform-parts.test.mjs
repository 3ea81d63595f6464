// The parts of the Terraform driver that need no tool: the scratch copy of a module (siblings
// reachable through ../), the Error: diagnostics a reason keeps, and the plan digest and outputs
// read from the tool's JSON.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { moduleDir, writeVarFile } from '../../dist/drivers/terraform/workdir.js';
import { errorDiagnostics } from '../../dist/drivers/terraform/tool-errors.js';
import { outputsOf, planOf } from '../../dist/drivers/terraform/plan-json.js';

test('moduleDir: the module is copied at its path, every sibling along the path is a link to the source, and the source is never written', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'nyl-tf-workdir-'));
  try {
    const project = path.join(root, 'source');
    for (const f of ['infra/app/main.tf.json', 'infra/app/sub/x.tf.json', 'infra/other/o.tf.json', 'modules/greet/main.tf.json', 'README.md']) {
      fs.mkdirSync(path.dirname(path.join(project, f)), { recursive: true });
      fs.writeFileSync(path.join(project, f), f);
    }
    fs.symlinkSync('main.tf.json', path.join(project, 'infra/app/link.tf.json'));
    const dir = moduleDir(project, 'infra/app', path.join(root, 'scratch'));
    assert.equal(dir.cwd, path.join(root, 'scratch', 'source', 'infra', 'app'));
    assert.equal(fs.readFileSync(path.join(dir.cwd, 'sub/x.tf.json'), 'utf8'), 'infra/app/sub/x.tf.json');
    assert.equal(fs.readlinkSync(path.join(dir.cwd, 'link.tf.json')), 'main.tf.json', 'a symlink inside the module stays one');
    assert.equal(fs.readFileSync(path.join(dir.cwd, '../../modules/greet/main.tf.json'), 'utf8'), 'modules/greet/main.tf.json', '../../modules resolves');
    assert.ok(fs.lstatSync(path.join(dir.cwd, '../other')).isSymbolicLink());
    assert.ok(!fs.lstatSync(path.join(dir.cwd, '..')).isSymbolicLink(), 'the path to the module is made of directories');
    fs.writeFileSync(path.join(dir.cwd, '.terraform.lock.hcl'), 'written by the tool');
    assert.ok(!fs.existsSync(path.join(project, 'infra/app/.terraform.lock.hcl')), 'the copy is written, not the source');
    assert.ok(dir.dataDir.startsWith(path.join(root, 'scratch')) && fs.statSync(dir.dataDir).isDirectory());
    assert.equal(writeVarFile(dir, {}), false, 'no variables, no file');
    assert.equal(writeVarFile(dir, { a: 1 }), true);
    assert.equal(fs.statSync(dir.varFile).mode & 0o777, 0o600);
    const top = moduleDir(project, '.', path.join(root, 'scratch2'));
    assert.ok(fs.existsSync(path.join(top.cwd, 'infra/app/main.tf.json')), 'a module at the project root is the whole project');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('errorDiagnostics: each Error: with its detail text, context lines left out, the colored box stripped, warnings skipped', () => {
  const plain = ['', 'Warning: Deprecated', '', 'Something old.', '', 'Error: No value for required variable', '', '  on main.tf line 1:', '   1: variable "a" {}', '', 'The root module input variable "a" is not set, and has no default value.', 'Use a -var argument.', '', 'Error: Second', ''];
  assert.deepEqual(errorDiagnostics(plain), ['Error: No value for required variable: The root module input variable "a" is not set, and has no default value. Use a -var argument.', 'Error: Second']);
  const boxed = ['╷', '│ Error: Invalid reference', '│ ', '│   on main.tf line 2:', '│ ', '│ A reference to a resource type must be followed by at least one attribute', '│ access.', '╵'];
  assert.deepEqual(errorDiagnostics(boxed), ['Error: Invalid reference: A reference to a resource type must be followed by at least one attribute access.']);
  const many = Array.from({ length: 8 }, (_, i) => `Error: e${i}`);
  assert.deepEqual(errorDiagnostics(many), ['Error: e0', 'Error: e1', 'Error: e2', 'Error: e3', 'Error: e4', '(and 3 more errors)']);
  assert.deepEqual(errorDiagnostics(['plain failure text']), []);
});

test('planOf: the digest covers resource and output changes only; changes from the exit code; the summary counts actions', () => {
  const base = { format_version: '1.2', terraform_version: '1.9.0', timestamp: 'a', resource_changes: [{ address: 'x.a', change: { actions: ['create'], after: { v: 1 }, after_unknown: { id: true } } }, { address: 'x.b', change: { actions: ['delete', 'create'] } }, { address: 'x.c', change: { actions: ['update'] } }], output_changes: { o: { actions: ['create'] }, same: { actions: ['no-op'] } } };
  const one = planOf(JSON.stringify(base), 2, '/p');
  assert.match(one.digest, /^sha256:[0-9a-f]{64}$/);
  assert.equal(one.summary, '+2 ~1 -1 (1 output changed)');
  assert.equal(one.changes, 'some');
  assert.deepEqual(one.artifact, { planFile: '/p' });
  assert.equal(planOf(JSON.stringify({ ...base, timestamp: 'b', terraform_version: '1.10.0' }), 2, '/p').digest, one.digest, 'time and version are not the change');
  const unknownChanged = structuredClone(base);
  unknownChanged.resource_changes[0].change.after_unknown = {};
  assert.notEqual(planOf(JSON.stringify(unknownChanged), 2, '/p').digest, one.digest, 'after_unknown is kept');
  assert.equal(planOf(JSON.stringify({ format_version: '1.2' }), 0, '/p').changes, 'none');
  assert.match(planOf('{', 0, '/p').problem, /not JSON/);
  assert.match(planOf(JSON.stringify({ format_version: '2.0' }), 0, '/p').problem, /format 1.x/);
});

test('outputsOf: values with their sensitive flags; anything else is a problem', () => {
  assert.deepEqual(outputsOf(JSON.stringify({ a: { sensitive: false, type: 'string', value: 'x' }, s: { sensitive: true, type: 'string', value: 'p' } })), { a: { value: 'x', sensitive: false }, s: { value: 'p', sensitive: true } });
  assert.deepEqual(outputsOf(''), {});
  assert.match(outputsOf('[]').problem, /not an object/);
  assert.match(outputsOf(JSON.stringify({ a: { sensitive: false } })).problem, /output a without a value/);
});
