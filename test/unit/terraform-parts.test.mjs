// The parts of the Terraform driver that need no tool: the scratch copy of a module (siblings
// reachable through ../), the diagnostics a reason keeps (machine-readable and text), the
// machine-readable UI stream, the plan digest and the drift read from a saved plan's JSON, the
// state read and its verdict against a receipt, the backend's identity, and the scan of a
// module's calls of local modules. The tool itself is exercised in test/conformance.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { moduleDir, writeVarFile } from '../../dist/drivers/terraform/workdir.js';
import { failureReason, textDiagnostics } from '../../dist/drivers/terraform/tool-errors.js';
import { driftOf, planDigest, summaryOf } from '../../dist/drivers/terraform/plan-json.js';
import { UiReader, planChangesSomething } from '../../dist/drivers/terraform/ui-json.js';
import { NO_STATE, parseState, stateVerdict, toolStateOf } from '../../dist/drivers/terraform/tool-state.js';
import { backendIdentity, backendProblem, describeBackend, localStatePath } from '../../dist/drivers/terraform/backend.js';
import { localModuleSources } from '../../dist/drivers/terraform/module-calls.js';

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

test('textDiagnostics (init prints text): summaries that wrap, the file and line, the detail; the coloured box stripped; warnings skipped', () => {
  const plain = [
    '',
    'Warning: Deprecated',
    '',
    'Something old.',
    '',
    'Error: Terraform encountered problems during initialisation, including problems',
    'with the configuration, described below.',
    '',
    'The configuration must be valid.',
    '',
    'Error: Unsupported block type',
    '',
    '  on main.tf line 6:',
    '   6: garbage {',
    '',
    'Blocks of type "garbage" are not expected here.',
    '',
  ];
  assert.deepEqual(textDiagnostics(plain), [
    {
      severity: 'error',
      summary: 'Terraform encountered problems during initialisation, including problems with the configuration, described below.',
      detail: 'The configuration must be valid.',
    },
    { severity: 'error', summary: 'Unsupported block type', detail: 'Blocks of type "garbage" are not expected here.', file: 'main.tf', line: 6 },
  ]);
  const boxed = [
    '╷',
    '│ Error: Invalid reference',
    '│ ',
    '│   on main.tf line 2:',
    '│ ',
    '│ A reference to a resource type must be followed by at least one attribute',
    '│ access.',
    '╵',
  ];
  assert.deepEqual(textDiagnostics(boxed), [
    {
      severity: 'error',
      summary: 'Invalid reference',
      detail: 'A reference to a resource type must be followed by at least one attribute\naccess.',
      file: 'main.tf',
      line: 2,
    },
  ]);
  assert.deepEqual(textDiagnostics(['plain failure text']), []);
});

test('failureReason: the first error on the first line with its file and line, every error with its detail indented; a held lock names its holder and ID', () => {
  const diags = [
    { severity: 'warning', summary: 'Ignored', detail: '' },
    {
      severity: 'error',
      summary: 'No value for required variable',
      detail: 'The root module input variable "name" is not set.\n\nUse a -var argument.',
      file: 'main.tf',
      line: 4,
    },
    { severity: 'error', summary: 'Second', detail: '' },
  ];
  assert.equal(
    failureReason('terraform plan exited with code 1', diags, '2m'),
    [
      'terraform plan exited with code 1: No value for required variable (main.tf line 4)',
      '  The root module input variable "name" is not set.',
      '',
      '  Use a -var argument.',
      'Second',
    ].join('\n'),
  );
  assert.equal(failureReason('terraform plan exited with code 1', [], '2m'), 'terraform plan exited with code 1');
  const many = Array.from({ length: 8 }, (_, i) => ({ severity: 'error', summary: `e${i}`, detail: '' }));
  assert.match(failureReason('x', many, '2m'), /e4\n\(and 3 more errors\)$/);
  const lock = {
    severity: 'error',
    summary: 'Error acquiring the state lock',
    detail:
      'Error message: resource temporarily unavailable\nLock Info:\n  ID:        0c85b01a-f59c-9272-86d2-da1844cb7e49\n  Path:      /srv/app.tfstate\n  Operation: OperationTypeApply\n  Who:       alice@ci-7\n  Version:   1.11.4\n  Created:   2026-12-07 16:57:59 +0000 UTC\n  Info:      \n\nTerraform acquires a state lock...',
  };
  assert.equal(
    failureReason('terraform apply exited with code 1', [lock], '2m'),
    [
      'terraform apply exited with code 1: the state is locked by alice@ci-7 (lock ID 0c85b01a-f59c-9272-86d2-da1844cb7e49, OperationTypeApply, since 2026-12-07 16:57:59 +0000 UTC); waited 2m (lockTimeout)',
      '  lock on /srv/app.tfstate',
      '  if that process is gone, release the lock with `terraform force-unlock 0c85b01a-f59c-9272-86d2-da1844cb7e49` in an initialized copy of the module, then run again',
    ].join('\n'),
  );
});

test("UiReader: prints each message's own text, keeps diagnostics, the change summary, output actions and drifted resources", () => {
  const printed = [];
  const ui = new UiReader((t) => printed.push(t));
  const lines = [
    { '@message': 'Terraform 1.11.4', type: 'version' },
    { '@message': 'terraform_data.d: Plan to create', type: 'planned_change', change: { resource: { addr: 'terraform_data.d' }, action: 'create' } },
    { '@message': 'terraform_data.x: Drift detected (update)', type: 'resource_drift', change: { resource: { addr: 'terraform_data.x' }, action: 'update' } },
    {
      '@message': 'Plan: 1 to add, 0 to change, 0 to destroy.',
      type: 'change_summary',
      changes: { add: 1, change: 0, import: 0, remove: 0, operation: 'plan' },
    },
    { '@message': 'Outputs: 2', type: 'outputs', outputs: { a: { sensitive: false, action: 'noop' }, b: { sensitive: true, action: 'create' } } },
    {
      '@message': 'Error: Bad',
      type: 'diagnostic',
      diagnostic: { severity: 'error', summary: 'Bad', detail: 'Because.', range: { filename: 'main.tf', start: { line: 3 } } },
    },
  ].map((m) => JSON.stringify(m));
  for (const l of [...lines, 'panic: not json']) ui.line(l);
  const r = ui.done();
  assert.deepEqual(printed, [
    'terraform_data.d: Plan to create',
    'terraform_data.x: Drift detected (update)',
    'Plan: 1 to add, 0 to change, 0 to destroy.',
    'Outputs: 2',
    'Error: Bad',
    '  on main.tf line 3',
    '  Because.',
    'panic: not json',
  ]);
  assert.deepEqual(r.changes, { add: 1, change: 0, import: 0, remove: 0 });
  assert.deepEqual(r.outputActions, { a: 'noop', b: 'create' });
  assert.deepEqual(r.drifted, ['terraform_data.x']);
  assert.deepEqual(r.diagnostics, [{ severity: 'error', summary: 'Bad', detail: 'Because.', file: 'main.tf', line: 3 }]);
  assert.equal(planChangesSomething(r), true);
  assert.equal(summaryOf(r), '+1 ~0 -0 (1 output changed)');
  // Exit 2 for an output that is merely computed: nothing changes.
  assert.equal(planChangesSomething({ ...r, changes: { add: 0, change: 0, import: 0, remove: 0 }, outputActions: { a: 'noop' } }), false);
  assert.equal(planChangesSomething({ diagnostics: [], outputActions: {}, drifted: [] }), undefined, 'no summary: unknown');
});

test('planDigest: resource and output changes only, after_unknown kept; driftOf: resource_drift and non-no-op outputs, never the exit code', () => {
  const base = {
    format_version: '1.2',
    terraform_version: '1.9.0',
    timestamp: 'a',
    resource_changes: [{ address: 'x.a', change: { actions: ['create'], after: { v: 1 }, after_unknown: { id: true } } }],
    output_changes: { o: { actions: ['create'] } },
  };
  const one = planDigest(JSON.stringify(base));
  assert.match(one.digest, /^sha256:[0-9a-f]{64}$/);
  assert.equal(planDigest(JSON.stringify({ ...base, timestamp: 'b', terraform_version: '1.10.0' })).digest, one.digest, 'time and version are not the change');
  const unknownChanged = structuredClone(base);
  unknownChanged.resource_changes[0].change.after_unknown = {};
  assert.notEqual(planDigest(JSON.stringify(unknownChanged)).digest, one.digest);
  const withNoOps = {
    ...base,
    resource_changes: [...base.resource_changes, { address: 'x.same', change: { actions: ['no-op'], before: { t: 1 }, after: { t: 1 } } }],
    output_changes: { ...base.output_changes, same: { actions: ['no-op'], before: 1, after: 1 } },
  };
  const refreshed = structuredClone(withNoOps);
  refreshed.resource_changes[1].change.before = { t: 2 };
  refreshed.resource_changes[1].change.after = { t: 2 };
  assert.equal(planDigest(JSON.stringify(withNoOps)).digest, one.digest, 'what stays as it is is not the change');
  assert.equal(planDigest(JSON.stringify(refreshed)).digest, one.digest, 'a refreshed value of an unchanged resource does not change the digest');
  assert.match(planDigest('{').problem, /not JSON/);
  assert.match(planDigest(JSON.stringify({ format_version: '2.0' })).problem, /format 1.x/);
  const clean = { format_version: '1.2', output_changes: { size: { actions: ['no-op'] }, greeting: { actions: ['no-op'] } } };
  assert.deepEqual(driftOf(JSON.stringify(clean)), { drifted: false }, 'the computed-output case: exit 2, nothing drifted');
  const drifted = {
    format_version: '1.2',
    resource_drift: [{ address: 'aws_s3_bucket.b', change: { actions: ['update'] } }],
    output_changes: { url: { actions: ['update'] }, same: { actions: ['no-op'] } },
  };
  assert.deepEqual(driftOf(JSON.stringify(drifted)), { drifted: true, detail: 'changed outside Terraform: aws_s3_bucket.b; output would change: url' });
});

const STATE = {
  version: 4,
  terraform_version: '1.11.4',
  serial: 3,
  lineage: 'L1',
  outputs: { a: { value: 'x', type: 'string' }, s: { value: 'p', type: 'string', sensitive: true } },
  resources: [
    { mode: 'managed', type: 'terraform_data', name: 'd', instances: [{}] },
    { mode: 'managed', module: 'module.m', type: 'terraform_data', name: 'n', instances: [{ index_key: 0 }, { index_key: 'k' }] },
    { mode: 'data', type: 'terraform_remote_state', name: 'r', instances: [{}] },
  ],
};
const LOCAL = { type: 'local', config: { path: '/srv/app.tfstate', workspace_dir: null } };

test('parseState: outputs with their sensitive flag, lineage, serial and managed resource instances; nothing for no state; undefined for a format Nyl cannot read', () => {
  const s = parseState(JSON.stringify(STATE));
  assert.deepEqual(s, {
    exists: true,
    lineage: 'L1',
    serial: 3,
    resources: ['module.m.terraform_data.n["k"]', 'module.m.terraform_data.n[0]', 'terraform_data.d'],
    outputs: { a: { value: 'x', sensitive: false }, s: { value: 'p', sensitive: true } },
  });
  assert.deepEqual(parseState(''), NO_STATE);
  assert.equal(parseState('{"version": 3}'), undefined);
  assert.equal(
    parseState(JSON.stringify({ serial: 1, lineage: 'L', encrypted_data: 'x', encryption_version: 'v0' })),
    undefined,
    'an encrypted OpenTofu state: read with state pull',
  );
});

test('the backend: no backend, a relative local path or workspace directory keeps no state; its identity leaves credentials out', () => {
  assert.match(backendProblem(undefined, 'infra/app', 'default'), /declares no backend/);
  assert.equal(backendProblem(LOCAL, 'infra/app', 'default'), undefined);
  assert.match(backendProblem({ type: 'local', config: { path: null } }, 'infra/app', 'default'), /its default path/);
  assert.match(backendProblem(LOCAL, 'infra/app', 'staging'), /workspace staging .* its default directory terraform.tfstate.d/);
  assert.equal(backendProblem({ type: 'local', config: { path: '/a', workspace_dir: '/w' } }, 'infra/app', 'staging'), undefined);
  assert.equal(backendProblem({ type: 's3', config: {} }, 'infra/app', 'staging'), undefined);
  assert.equal(localStatePath(LOCAL, 'default'), '/srv/app.tfstate');
  assert.equal(localStatePath({ type: 'local', config: { path: '/a', workspace_dir: '/w' } }, 'staging'), '/w/staging/terraform.tfstate');
  assert.equal(localStatePath({ type: 's3', config: {} }, 'default'), undefined);
  const s3 = backendIdentity({
    type: 's3',
    config: { bucket: 'b', key: 'app/prod', region: 'eu-west-1', secret_key: 'SECRET', access_key: 'AKIA', encrypt: null },
  });
  assert.deepEqual(s3.location, { bucket: 'b', key: 'app/prod', region: 'eu-west-1' });
  assert.equal(
    backendIdentity({ type: 's3', config: { bucket: 'b', key: 'app/prod', region: 'eu-west-1', secret_key: 'OTHER' } }).fingerprint,
    s3.fingerprint,
    'credentials are not part of where the state is',
  );
  assert.notEqual(backendIdentity({ type: 's3', config: { bucket: 'b', key: 'app/dev', region: 'eu-west-1' } }).fingerprint, s3.fingerprint);
  assert.ok(!JSON.stringify(s3).includes('SECRET') && !JSON.stringify(s3).includes('AKIA'));
  assert.equal(describeBackend(s3), 's3 bucket=b key=app/prod region=eu-west-1');
  const http = backendIdentity({
    type: 'http',
    config: { address: 'https://ci:t0ken-secret@state.example.com/app', lock_address: 'https://ci:t0ken-secret@state.example.com/lock' },
  });
  assert.deepEqual(http.location, { address: 'https://state.example.com/app' });
  assert.ok(!JSON.stringify(http).includes('t0ken-secret'), "a password in a URL reaches neither the location nor the fingerprint's input");
  assert.equal(
    http.fingerprint,
    backendIdentity({ type: 'http', config: { address: 'https://state.example.com/app', lock_address: 'https://state.example.com/lock' } }).fingerprint,
  );
  assert.equal(describeBackend(backendIdentity(LOCAL)), 'local /srv/app.tfstate');
});

test("stateVerdict: the receipt's state or nothing; gone, emptied or replaced is lost; resources no receipt recorded are another's", () => {
  const backend = backendIdentity(LOCAL);
  const mine = parseState(JSON.stringify(STATE));
  const recorded = toolStateOf(mine, backend, 'default');
  assert.deepEqual(recorded, { backend, workspace: 'default', lineage: 'L1', serial: 3, resources: 3, addresses: mine.resources });
  const receipt = { run: 'r1', current: true, toolState: recorded };
  const verdict = (state, extra = {}) =>
    stateVerdict({ unit: 'app', environment: 'prod', state, backend, workspace: 'default', receipt, sharedState: false, ...extra });
  assert.deepEqual(verdict(mine), { ok: true });
  assert.deepEqual(verdict({ ...mine, serial: 9, resources: ['terraform_data.d'] }), { ok: true }, 'a later write of the same state');
  assert.match(
    verdict({ ...mine, serial: 9, resources: [] }).reason,
    /was emptied: .* and no run of the unit did that/,
    'every resource gone with no attempt of the unit since: a state rm',
  );
  assert.deepEqual(
    verdict({ ...mine, serial: 9, resources: [] }, { attempt: { uncertain: true } }),
    { ok: true },
    "the unit's own interrupted apply (a replacement) emptied it",
  );
  assert.match(verdict({ ...mine, serial: 2 }).reason, /was rolled back: .* holds serial 2 of lineage L1, older than the receipt's serial 3/);
  assert.match(
    stateVerdict({ unit: 'app', environment: 'prod', state: NO_STATE, backend, workspace: 'default', receipt, sharedState: false, phase: 'teardown' }).reason,
    /A teardown now would destroy nothing of what the receipt recorded and claim its removal$/,
  );
  assert.match(verdict(NO_STATE).reason, /is gone: local \/srv\/app.tfstate holds no state, while its receipt \(run r1\) recorded lineage L1 with 3 resources/);
  assert.equal(verdict(NO_STATE).code, 'NYL-BACKEND-STATE-LOST');
  assert.match(verdict({ ...mine, lineage: 'L2', resources: [] }).reason, /was replaced by an empty one/);
  assert.match(verdict({ ...mine, lineage: 'L2' }).reason, /was replaced: .* holds lineage L2 with 3 resources/);
  const elsewhere = backendIdentity({ type: 'local', config: { path: '/new/app.tfstate' } });
  assert.match(
    stateVerdict({ unit: 'app', environment: 'prod', state: NO_STATE, backend: elsewhere, workspace: 'default', receipt, sharedState: false }).reason,
    /The backend changed from local \/srv\/app.tfstate\./,
  );
  // Without a receipt of its current incarnation: a state with resources is another's.
  const fresh = (extra) =>
    stateVerdict({ unit: 'app', environment: 'prod', state: mine, backend, workspace: 'default', receipt: undefined, sharedState: false, ...extra });
  assert.equal(fresh({}).code, 'NYL-BACKEND-SHARED');
  assert.match(
    fresh({}).reason,
    /already holds a Terraform state \(lineage L1\) with 3 resources \(module.m.terraform_data.n\["k"\], module.m.terraform_data.n\[0\], terraform_data.d\) that no receipt of app in prod recorded/,
  );
  assert.deepEqual(fresh({ sharedState: true }), { ok: true });
  assert.deepEqual(fresh({ receipt: { ...receipt, current: false } }), { ok: true }, "an earlier incarnation's own state");
  assert.deepEqual(fresh({ state: { ...mine, resources: [] } }), { ok: true }, "an empty state is no one's");
  assert.deepEqual(fresh({ attempt: { uncertain: false, toolState: recorded } }), { ok: true }, 'the state its own failed attempt left');
  assert.equal(fresh({ attempt: { uncertain: false } }).code, 'NYL-BACKEND-SHARED', 'a failed attempt that recorded no state wrote none');
  assert.deepEqual(fresh({ attempt: { uncertain: true } }), { ok: true }, 'an uncertain attempt that recorded nothing may have written it');
  // A receipt from before Nyl recorded tool states proves only that a state existed.
  const legacy = { run: 'r0', current: true };
  assert.deepEqual(stateVerdict({ unit: 'app', environment: 'prod', state: mine, backend, workspace: 'default', receipt: legacy, sharedState: false }), {
    ok: true,
  });
  assert.equal(
    stateVerdict({ unit: 'app', environment: 'prod', state: NO_STATE, backend, workspace: 'default', receipt: legacy, sharedState: false }).code,
    'NYL-BACKEND-STATE-LOST',
  );
});

test('localModuleSources: relative sources of HCL and JSON module files, comments ignored, registry and git sources left out', () => {
  const hcl = [
    'module "net" {',
    '  source = "../../modules/net" # the network',
    '}',
    '# module "old" { source = "../old" }',
    '/* module "older" {',
    '  source = "../older"',
    '} */',
    'module "vpc" { source = "terraform-aws-modules/vpc/aws" }',
    'module "sub" {',
    '  source="./sub"',
    '}',
    'terraform { required_providers { aws = { source = "hashicorp/aws" } } }',
  ].join('\n');
  const json = JSON.stringify({ module: { g: { source: '../greet' }, r: { source: 'git::https://example.com/m.git' } } });
  assert.deepEqual(
    localModuleSources([
      { name: 'main.tf', text: hcl },
      { name: 'more.tf.json', text: json },
      { name: 'README.md', text: 'source = "../nope"' },
    ]),
    ['../../modules/net', '../greet', './sub'],
  );
});
