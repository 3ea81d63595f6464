import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadProject } from '../../dist/project/load.js';
import { at, documents, loadErrors, memoryTree, resource, yaml } from '../support/memory-tree.mjs';

const errorsOf = (files) => loadErrors(loadProject, files);

test('a missing nyl.yaml is NYL-PROJECT-MISSING', async () => {
  await assert.rejects(loadProject('/nowhere', memoryTree({})), (e) => e.name === 'NylError' && e.code === 'NYL-PROJECT-MISSING');
});

test('loads every kind into the typed project, with defaults and origins', async () => {
  const files = {
    'nyl.yaml': documents(
      resource('Project', 'shop'),
      [
        'apiVersion: nyl.io/v1',
        'kind: Environment',
        'metadata: {name: dev, labels: {stage: development}}',
        'spec:',
        '  values: {replicas: 1}',
        '  state: {repositoryRef: state, path: envs/dev}',
      ],
      resource(
        'Environment',
        'prod',
        'driftRepair: manual',
        'dependsOn: [dev]',
        'lease: {duration: 1h30m}',
        'source: {ref: main}',
        'unitSelector: {matchLabels: {app: shop}}',
      ),
      resource('GitRepository', 'state', 'url: file:///srv/state.git'),
      resource('EnvironmentGroup', 'all', 'selector: {matchLabels: {}}', 'shared: {state: {coordinationRefPrefix: refs/heads/nyl-run/}}'),
      [
        'apiVersion: nyl.io/v1',
        'kind: Command',
        'metadata: {name: migrate, labels: {app: shop}}',
        'spec:',
        '  dependsOn: [schema]',
        '  run: [migrate, "${{ units.db.outputs.url }}"]',
        '  env: {WHO: "${{ env.name }}"}',
      ],
      resource('Terraform', 'db', 'module: ./tf/db', 'variables: {size: 2, tags: {a: b}}', 'backendConfig: {path: x, lock: false}'),
      resource('OpenTofu', 'schema', 'module: tofu/schema', 'dependsOn: [db]'),
      resource('OciImage', 'job', 'image: registry/x@sha256:abc', 'command: [run]', 'args: ["${{ env.values.replicas }}"]', 'runtime: podman', 'env: {A: b}'),
    ),
  };
  const p = await loadProject('/work/../project', memoryTree(files));
  assert.equal(p.root, '/project');
  assert.equal(p.name, 'shop');
  assert.deepEqual([...p.environments.keys()], ['dev', 'prod']);
  const dev = p.environments.get('dev');
  assert.deepEqual(dev.labels, { stage: 'development' });
  assert.deepEqual(dev.origin, { file: 'nyl.yaml', line: 6, pointer: '', document: 1 });
  assert.deepEqual(dev.spec, {
    values: { replicas: 1 },
    state: { repositoryRef: 'state', path: 'envs/dev' },
    driftRepair: 'converge',
    dependsOn: [],
    lease: { durationMs: 300000 },
  });
  assert.equal(dev.spec.state.desiredRef, undefined, 'refs are not defaulted by the loader');
  const prod = p.environments.get('prod');
  assert.deepEqual(prod.spec, {
    source: { ref: 'main' },
    unitSelector: { matchLabels: { app: 'shop' } },
    values: {},
    driftRepair: 'manual',
    dependsOn: ['dev'],
    lease: { durationMs: 5400000 },
  });
  assert.deepEqual(prod.labels, {});
  assert.deepEqual(p.repositories.get('state').spec, { url: 'file:///srv/state.git' });
  assert.deepEqual(p.groups.get('all').spec, { selector: { matchLabels: {} }, shared: { state: { coordinationRefPrefix: 'refs/heads/nyl-run/' } } });
  assert.deepEqual([...p.units.keys()], ['migrate', 'db', 'schema', 'job']);
  const migrate = p.units.get('migrate');
  assert.equal(migrate.kind, 'Command');
  assert.deepEqual(migrate.spec, { dependsOn: ['schema'], run: ['migrate', '${{ units.db.outputs.url }}'], env: { WHO: '${{ env.name }}' } });
  assert.deepEqual(migrate.declaredDependsOn, ['schema']);
  assert.deepEqual(migrate.dependsOn, ['schema', 'db']);
  assert.deepEqual(migrate.references, [{ unit: 'db', output: 'url', pointer: '/run/1' }]);
  assert.deepEqual(migrate.locations, { '/run/1': { line: 41, column: 18 }, '/env/WHO': { line: 42, column: 9 } });
  assert.deepEqual(p.units.get('db').spec, { module: './tf/db', variables: { size: 2, tags: { a: 'b' } }, backendConfig: { path: 'x', lock: false } });
  assert.deepEqual(p.units.get('db').dependsOn, []);
  assert.equal(p.units.get('job').origin.line, 59);
});

test('includes: globs relative to the root, one readMany per level, nested Project documents', async () => {
  const tree = memoryTree({
    'nyl.yaml': documents([
      'apiVersion: nyl.io/v1',
      'kind: Project',
      'metadata: {name: p}',
      'spec:',
      '  include: ["deploy/**/*.yaml", "./envs/dev.yaml", "nyl.yaml"]',
    ]),
    'deploy/a.yaml': documents(resource('Command', 'a', 'run: [a]')),
    'deploy/sub/b.yaml': documents(resource('Command', 'b', 'run: [b]'), resource('Project', 'nested', 'include: ["more/*.yaml", "deploy/a.yaml"]')),
    'deploy/notes.md': 'not: [yaml',
    'envs/dev.yaml': documents(resource('Environment', 'dev')),
    'more/c.yaml': documents(resource('Command', 'c', 'run: [c]')),
    'more/d.yml': 'ignored: true',
  });
  const p = await loadProject('/p', tree);
  assert.equal(p.name, 'p');
  assert.deepEqual([...p.units.keys()], ['a', 'b', 'c']);
  assert.deepEqual([...p.environments.keys()], ['dev']);
  assert.deepEqual(tree.calls.read, ['nyl.yaml']);
  assert.deepEqual(tree.calls.readMany, [['deploy/a.yaml', 'deploy/sub/b.yaml', 'envs/dev.yaml'], ['more/c.yaml']]);
  assert.equal(tree.calls.list, 1);
  assert.equal(p.units.get('c').origin.file, 'more/c.yaml');
});

test('a project without includes never lists the tree', async () => {
  const tree = memoryTree({ 'nyl.yaml': documents(resource('Environment', 'dev')) });
  await loadProject('/p', tree);
  assert.equal(tree.calls.list, 0);
  assert.deepEqual(tree.calls.readMany, []);
});

test('an include that matches nothing, or an escaping one, is an error at its pointer', async () => {
  const errors = await errorsOf({
    'nyl.yaml': yaml(
      'apiVersion: nyl.io/v1',
      'kind: Project',
      'metadata: {name: p}',
      'spec:',
      '  include:',
      '    - deploy/*.yaml',
      '    - missing.yaml',
      '    - ../outside/*.yaml',
    ),
    'deploy/a.yaml': documents(resource('Environment', 'dev')),
  });
  assert.equal(errors.length, 1, 'the invalid Project document is not followed');
  const d = at(errors, '/spec/include/2');
  assert.equal(d.location.line, 8);
  assert.match(d.message, /"\.\.\/outside\/\*\.yaml".*\.\./);

  const errors2 = await errorsOf({
    'nyl.yaml': yaml(
      'apiVersion: nyl.io/v1',
      'kind: Project',
      'metadata: {name: p}',
      'spec:',
      '  include:',
      '    - deploy/*.yaml',
      '    - missing.yaml',
      '    - none/**/*.yaml',
    ),
    'deploy/a.yaml': documents(resource('Environment', 'dev')),
  });
  assert.deepEqual(
    errors2.map((e) => [e.code, e.location.file, e.location.line, e.location.pointer]),
    [
      ['NYL-SOURCE-INVALID', 'nyl.yaml', 7, '/spec/include/1'],
      ['NYL-SOURCE-INVALID', 'nyl.yaml', 8, '/spec/include/2'],
    ],
  );
  assert.match(errors2[0].message, /include "missing.yaml" matches no file/);
});

test('an included file the tree lists but cannot read is an error at the include', async () => {
  const tree = memoryTree({ 'nyl.yaml': documents(resource('Project', 'p', 'include: [a.yaml]')), 'a.yaml': 'x: 1' });
  tree.readMany = async (paths) => paths.map(() => undefined);
  const err = await loadProject('/p', tree).catch((e) => e);
  assert.equal(err.diagnostics.length, 1);
  assert.equal(err.diagnostics[0].location.pointer, '/spec/include/0');
  assert.equal(err.diagnostics[0].location.line, 5);
});

test('YAML syntax errors are NYL-SOURCE-INVALID at the line yaml reports; other documents still load', async () => {
  const errors = await errorsOf({
    'nyl.yaml': yaml(
      'apiVersion: nyl.io/v1',
      'kind: Environment',
      'metadata: {name: dev}',
      'spec:',
      '  values: {a: 1}',
      '  values: {a: 2}',
      '---',
      'apiVersion: nyl.io/v1',
      'kind: Command',
      'metadata: {name: x}',
      'spec:',
      '  run: [a',
      '---',
      resource('Command', 'ok', 'run: [ok]', 'bad: 1').join('\n'),
    ),
  });
  assert.deepEqual(
    errors.map((e) => [e.code, e.location.line]),
    [
      ['NYL-SOURCE-INVALID', 6],
      ['NYL-SOURCE-INVALID', 13],
      ['NYL-SOURCE-INVALID', 19],
    ],
  );
  assert.match(errors[0].message, /YAML syntax error: Map keys must be unique/);
  assert.equal(errors[2].location.pointer, '/spec/bad');
});

// A document that does not parse declares nothing, so references to what it would have declared
// looked unknown, and those errors came before the syntax error that caused them (issue 10, item 20).
test('a syntax error comes first and the unknown names it may cause are not reported; errors it did not cause follow it', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(
      resource('Project', 'p', 'include: ["units/*.yaml"]'),
      resource('Environment', 'dev', 'dependsOn: [network]', 'state: {repositoryRef: state}'),
      resource('Command', 'app', 'run: [app, "${{ units.db.outputs.url }}"]', 'dependsOn: [db]'),
      resource('EnvironmentGroup', 'all', 'environments: [dev, network]'),
      resource('Command', 'late', 'run: [x]', 'timeout: forever'),
    ),
    'units/db.yaml': yaml('apiVersion: nyl.io/v1', 'kind: Command', 'metadata: {name: db}', 'spec:', '  run: [db'),
    'units/other.yaml': documents(resource('Command', 'other', 'run: [x]', 'recovery: sometimes')),
  });
  assert.deepEqual(
    errors.map((e) => [e.location.file, e.location.line, e.location.pointer]),
    [
      ['units/db.yaml', 6, ''],
      ['nyl.yaml', 32, '/spec/timeout'],
      ['units/other.yaml', 6, '/spec/recovery'],
    ],
  );
  assert.match(errors[0].message, /^YAML syntax error: /);
  assert.equal(errors[0].fix, 'fix the YAML syntax at this line');
  assert.ok(
    errors.every((e) => !/unknown/.test(e.message)),
    JSON.stringify(errors.map((e) => e.message)),
  );
});

test('the same within one file: the syntax error of a later document comes before the errors above it', async () => {
  const errors = await errorsOf({
    'nyl.yaml': yaml(
      ...resource('Environment', 'dev', 'driftRepair: sometimes'),
      '---',
      ...resource('Command', 'app', 'run: [app]', 'dependsOn: [db]'),
      '---',
      ...resource('Command', 'db', 'run: [db'),
    ),
  });
  assert.deepEqual(
    errors.map((e) => [e.location.line, e.location.pointer]),
    [
      [19, ''],
      [5, '/spec/driftRepair'],
    ],
  );
  assert.match(errors[0].message, /^YAML syntax error: /);
});

test('a file over a limit, an invalid Project document, an included file that cannot be read and an include that matches nothing hide names as a syntax error does', async () => {
  const units = resource('Command', 'app', 'run: [app]', 'dependsOn: [db]');
  const big = await errorsOf({
    'nyl.yaml': documents(resource('Project', 'p', 'include: [db.yaml]'), units),
    'db.yaml': `# ${'x'.repeat(1024 * 1024)}\n`,
  });
  assert.deepEqual(
    big.map((e) => [e.location.file, e.location.line]),
    [['db.yaml', 1]],
  );
  const invalid = await errorsOf({
    'nyl.yaml': documents(resource('Project', 'p', 'include: [db.yaml]', 'bogus: 1'), units),
    'db.yaml': documents(resource('Command', 'db', 'run: [x]')),
  });
  assert.deepEqual(
    invalid.map((e) => e.location.pointer),
    ['/spec/bogus'],
    'an invalid Project document is not followed, so db.yaml is not read',
  );
  const none = await errorsOf({ 'nyl.yaml': documents(resource('Project', 'p', 'include: [dbs/*.yaml]'), units) });
  assert.deepEqual(
    none.map((e) => e.location.pointer),
    ['/spec/include/0'],
  );
  const tree = memoryTree({ 'nyl.yaml': documents(resource('Project', 'p', 'include: [db.yaml]'), units), 'db.yaml': 'x: 1' });
  tree.readMany = async (paths) => paths.map(() => undefined);
  const unread = await loadProject('/p', tree).catch((e) => e);
  assert.deepEqual(
    unread.diagnostics.map((e) => e.location.pointer),
    ['/spec/include/0'],
  );
});

test('an unknown name is still reported when every document parsed', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(resource('Command', 'app', 'run: [app]', 'dependsOn: [db]'), resource('Command', 'other', 'run: [x]')),
  });
  assert.deepEqual(
    errors.map((e) => e.message),
    ['unit app depends on unknown unit "db"'],
  );
});

test('errors of every file come back together, in file and line order', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(resource('Project', 'p', 'include: ["units/*.yaml"]'), resource('Environment', 'Dev')),
    'units/a.yaml': documents(resource('Command', 'a', 'run: [a]', 'timeout: forever')),
    'units/b.yaml': documents(resource('Terraform', 'b', 'module: /abs')),
  });
  assert.deepEqual(
    errors.map((e) => [e.location.file, e.location.line, e.location.pointer]),
    [
      ['nyl.yaml', 9, '/metadata/name'],
      ['units/a.yaml', 6, '/spec/timeout'],
      ['units/b.yaml', 5, '/spec/module'],
    ],
  );
  assert.ok(errors.every((e) => e.code === 'NYL-SOURCE-INVALID' && e.location.column >= 1 && e.fix.length > 0));
});

test('wrong apiVersion, unknown kind, non-mapping documents; empty documents are skipped', async () => {
  const errors = await errorsOf({
    'nyl.yaml': yaml(
      '# only a comment',
      '---',
      'apiVersion: nyl.io/v2',
      'kind: Environment',
      'metadata: {name: a}',
      '---',
      'apiVersion: nyl.io/v1',
      'kind: Enviroment',
      'metadata: {name: b}',
      '---',
      '- just a list',
      '---',
      'kind: Command',
    ),
  });
  assert.deepEqual(
    errors.map((e) => [e.location.line, e.location.pointer]),
    [
      [3, '/apiVersion'],
      [8, '/kind'],
      [11, ''],
      [13, '/apiVersion'],
    ],
  );
  assert.match(errors[0].message, /unsupported apiVersion "nyl.io\/v2"/);
  assert.match(errors[0].fix, /apiVersion: nyl.io\/v1/);
  assert.match(errors[1].fix, /did you mean Environment\?/);
  assert.match(errors[3].message, /no apiVersion/);
});

test('field errors point at the exact line of the field, or of its nearest existing parent', async () => {
  const errors = await errorsOf({
    'nyl.yaml': yaml(
      'apiVersion: nyl.io/v1', // 1
      'kind: Command',
      'metadata:',
      '  name: web',
      '  labels: {tier: 3}', // 5
      'spec:',
      '  run:',
      '    - ./serve',
      '    - 8080', // 9
      '  env:',
      '    PORT: "8080"',
      '    NYL_UNIT: web', // 12
      '    bad-name: x', // 13
      '  workingDir: ../up', // 14
      '  approval:',
      '    required: "yes"', // 16
      '    reviewers: [a]', // 17
      '  teardown:', // 18
      '    env: {A: b}',
      '  deletionPolicy: Delete', // 20
      '---',
      'apiVersion: nyl.io/v1', // 22
      'kind: GitRepository',
      'metadata: {name: state}',
      'spec:', // 25
      '  publishURL: x',
    ),
  });
  const expect = [
    ['/metadata/labels/tier', 5],
    ['/spec/run/1', 9],
    ['/spec/env/NYL_UNIT', 12],
    ['/spec/env/bad-name', 13],
    ['/spec/workingDir', 14],
    ['/spec/approval/required', 16],
    ['/spec/approval/reviewers', 17],
    ['/spec/teardown', 18],
    ['/spec/deletionPolicy', 20],
    ['/spec/url', 25],
  ];
  assert.deepEqual(
    errors.map((e) => [e.location.pointer, e.location.line]),
    expect,
  );
  assert.match(at(errors, '/spec/env/NYL_UNIT').message, /reserved/);
  assert.match(at(errors, '/spec/teardown').message, /exactly one of run, script/);
  assert.match(at(errors, '/spec/approval/reviewers').message, /unknown field reviewers; known fields: required, requireDigest/);
  assert.match(at(errors, '/spec/url').message, /misses the required field url/);
  assert.deepEqual(at(errors, '/spec/run/1').units, ['web']);
});

test('unknown and misplaced references are errors with their pointer', async () => {
  const errors = await errorsOf({
    'nyl.yaml': yaml(
      'apiVersion: nyl.io/v1',
      'kind: Command',
      'metadata: {name: app}',
      'spec:',
      '  script: |', // 5
      '    psql "${{ units.db.outputs.url }}"',
      '  env:',
      '    TOKEN: "${{ secrets.token }}"', // 8
      '  teardown:',
      '    run: [rm, "${{ env.values.dir }"]', // 10
      '---',
      'apiVersion: nyl.io/v1',
      'kind: OciImage',
      'metadata: {name: img}',
      'spec:',
      '  image: "${{ env.values.image }}"',
      '  args: ["${{ units.app.outputs.x }}", "${{ env.label.x }}"]', // 17
    ),
  });
  assert.deepEqual(
    errors.map((e) => [e.location.pointer, e.location.line]),
    [
      ['/spec/script', 5],
      ['/spec/env/TOKEN', 8],
      ['/spec/teardown/run/1', 10],
      ['/spec/args/1', 17],
    ],
  );
  assert.match(
    errors[0].fix,
    /^pass the value through env: \(e\.g\. env: \{DB_URL: '\$\{\{ units\.db\.outputs\.url \}\}'\}\) and use "\$DB_URL" in the script; splicing values into shell text is an injection$/,
  );
  assert.match(errors[1].message, /unknown reference \$\{\{ secrets\.token \}\}/);
  assert.match(errors[2].message, /unterminated/);
});

test('values, variables and backendConfig take any JSON; keys stay as written', async () => {
  const p = await loadProject(
    '/p',
    memoryTree({
      'nyl.yaml': documents(
        resource('Environment', 'dev', 'values: {n: 1, list: [1, "a", null], deep: {x: {y: true}}}'),
        resource('OpenTofu', 'net', 'module: net', 'variables: {cidr: 10, zones: [a, b]}', 'backendConfig: {bucket: b, port: 9000}'),
      ),
    }),
  );
  assert.deepEqual(p.environments.get('dev').spec.values, { n: 1, list: [1, 'a', null], deep: { x: { y: true } } });
  assert.deepEqual(p.units.get('net').spec.backendConfig, { bucket: 'b', port: 9000 });
});
