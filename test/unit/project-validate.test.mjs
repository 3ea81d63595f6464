import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadProject } from '../../dist/project/load.js';
import { NAME_PATTERN, refNameProblem, relativePathProblem, validateProject } from '../../dist/project/validate.js';
import { at, documents, loadErrors, resource, yaml } from '../support/memory-tree.mjs';

const errorsOf = (files) => loadErrors(loadProject, files);

function assertLocated(d, file, line, pointer) {
  assert.equal(d.code, 'NYL-SOURCE-INVALID');
  assert.equal(d.severity, 'error');
  assert.deepEqual([d.location.file, d.location.line, d.location.pointer], [file, line, pointer]);
  assert.ok(d.location.column >= 1);
  assert.ok(d.fix.length > 0);
}

test('the name pattern', () => {
  for (const ok of ['a', 'dev', 'db-1', '0', 'a'.repeat(63)]) assert.ok(NAME_PATTERN.test(ok), ok);
  for (const bad of ['', 'Dev', '-a', 'a-', 'a_b', 'a.b', 'a/b', 'a'.repeat(64), 'é']) assert.ok(!NAME_PATTERN.test(bad), bad);
});

test('invalid names of environments, units, groups and repositories; the fix says why', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(
      resource('Environment', 'Dev'),
      resource('Command', 'db_migrate', 'run: [x]'),
      resource('EnvironmentGroup', 'all-', 'environments: []'),
      resource('GitRepository', '"state.git"', 'url: x'),
      resource('Terraform', '"123456789012345678901234567890123456789012345678901234567890abcd"', 'module: m'),
    ),
  });
  assert.equal(errors.length, 5);
  const lines = [3, 8, 14, 20, 26];
  errors.forEach((d, i) => {
    assertLocated(d, 'nyl.yaml', lines[i], '/metadata/name');
    assert.match(d.message, /invalid name/);
    assert.match(d.fix, /Git ref and state path components/);
  });
  assert.deepEqual(errors[1].units, ['db_migrate']);
});

test('duplicate unit names across kinds and files report both locations', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(resource('Project', 'p', 'include: [units.yaml]'), resource('Command', 'db', 'run: [x]')),
    'units.yaml': documents(resource('Environment', 'dev'), resource('Terraform', 'db', 'module: m')),
  });
  assert.equal(errors.length, 1);
  const d = errors[0];
  assertLocated(d, 'units.yaml', 8, '/metadata/name');
  assert.equal(d.message, 'duplicate unit name "db": Command at nyl.yaml:9 and Terraform at units.yaml:8');
  assert.match(d.fix, /unique across Command, Terraform, OpenTofu and OciImage/);
  assert.deepEqual(d.data.locations.map((l) => [l.file, l.line]), [['nyl.yaml', 9], ['units.yaml', 8]]);
});

test('duplicate environments, repositories and groups', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(
      resource('Environment', 'dev'),
      resource('Environment', 'dev'),
      resource('GitRepository', 'r', 'url: a'),
      resource('GitRepository', 'r', 'url: b'),
      resource('EnvironmentGroup', 'g', 'environments: [dev]'),
      resource('EnvironmentGroup', 'g', 'environments: [dev]'),
    ),
  });
  assert.deepEqual(errors.map((e) => [e.location.line, e.message.split(':')[0]]), [
    [8, 'duplicate environment name "dev"'],
    [19, 'duplicate GitRepository name "r"'],
    [31, 'duplicate EnvironmentGroup name "g"'],
  ]);
});

test('dependsOn naming an unknown unit points at the entry', async () => {
  const errors = await errorsOf({
    'nyl.yaml': yaml(
      'apiVersion: nyl.io/v1',
      'kind: Command',
      'metadata: {name: app}',
      'spec:',
      '  run: [x]',
      '  dependsOn:',
      '    - db',
      '    - cahce',
      '---',
      ...resource('Command', 'db', 'run: [x]'),
      '---',
      ...resource('Command', 'cache', 'run: [x]'),
    ),
  });
  assert.equal(errors.length, 1);
  assertLocated(errors[0], 'nyl.yaml', 8, '/spec/dependsOn/1');
  assert.equal(errors[0].message, 'unit app depends on unknown unit "cahce"');
  assert.match(errors[0].fix, /did you mean cache\?.*known: app, cache, db/);
  assert.deepEqual(errors[0].units, ['app']);
});

test('a reference to an unknown unit points at the referencing string', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(resource('Command', 'app', 'run: [x]', 'env:', '  DB_URL: "${{ units.dbb.outputs.url }}"'), resource('Terraform', 'db', 'module: m')),
  });
  assert.equal(errors.length, 1);
  assertLocated(errors[0], 'nyl.yaml', 7, '/spec/env/DB_URL');
  assert.match(errors[0].message, /unknown unit "dbb"/);
  assert.match(errors[0].fix, /did you mean db\?/);
});

test('a dependency cycle is named and points at the first unit\'s dependsOn', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(
      resource('Command', 'c', 'run: [x]', 'dependsOn: [a]'),
      resource('Command', 'b', 'run: [x]', 'dependsOn: [c]'),
      resource('Command', 'a', 'run: [x]', 'dependsOn: [ok, b]'),
      resource('Command', 'ok', 'run: [x]'),
    ),
  });
  assert.equal(errors.length, 1);
  assertLocated(errors[0], 'nyl.yaml', 20, '/spec/dependsOn/1');
  assert.equal(errors[0].message, 'dependency cycle: a -> b -> c -> a');
  assert.deepEqual(errors[0].units, ['a', 'b', 'c']);
});

test('a cycle through a reference points at the reference; a self-reference is a cycle', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(
      resource('Command', 'a', 'run: [x]', 'env: {B: "${{ units.b.outputs.v }}"}'),
      resource('Command', 'b', 'run: [x]', 'dependsOn: [a]'),
      resource('Command', 'self', 'run: ["${{ units.self.outputs.v }}"]'),
    ),
  });
  assert.deepEqual(errors.map((e) => [e.location.line, e.location.pointer, e.message]), [
    [6, '/spec/env/B', 'dependency cycle: a -> b -> a'],
    [19, '/spec/run/0', 'dependency cycle: self -> self'],
  ]);
});

test('environment checks: unknown repositoryRef, unknown dependsOn, cycles', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(
      resource('GitRepository', 'state', 'url: file:///s.git'),
      resource('Environment', 'dev', 'state:', '  repositoryRef: stat', 'dependsOn: [network, qa]'),
      resource('Environment', 'network', 'dependsOn: [qa]'),
      resource('Environment', 'qa', 'dependsOn: [network]'),
    ),
  });
  assert.deepEqual(errors.map((e) => [e.location.line, e.location.pointer]), [
    [12, '/spec/state/repositoryRef'],
    [19, '/spec/dependsOn/0'],
  ]);
  assert.match(errors[0].message, /unknown GitRepository "stat"/);
  assert.match(errors[0].fix, /did you mean state\?/);
  assert.equal(errors[1].message, 'environment dependency cycle: network -> qa -> network');

  const unknown = await errorsOf({ 'nyl.yaml': documents(resource('Environment', 'dev', 'dependsOn: [prod]')) });
  assertLocated(unknown[0], 'nyl.yaml', 5, '/spec/dependsOn/0');
  assert.match(unknown[0].message, /unknown environment "prod"/);
});

test('group checks: unknown environments and shared repositoryRef', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(
      resource('Environment', 'dev'),
      resource('EnvironmentGroup', 'g', 'environments:', '  - dev', '  - stagin', 'shared:', '  state: {repositoryRef: nope}'),
    ),
  });
  assert.deepEqual(errors.map((e) => [e.location.line, e.location.pointer]), [
    [12, '/spec/environments/1'],
    [14, '/spec/shared/state/repositoryRef'],
  ]);
  assert.match(errors[0].message, /unknown environment "stagin"/);
});

test('state: repository and repositoryRef together, refs, prefix and path', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(
      resource('GitRepository', 'state', 'url: x'),
      resource(
        'Environment',
        'dev',
        'state:',
        '  repository: {repoURL: file:///s.git}',
        '  repositoryRef: state',
        '  desiredRef: nyl/dev..x',
        '  observedRef: -nyl/dev',
        '  coordinationRefPrefix: nyl/',
        '  path: ../up',
      ),
      resource('EnvironmentGroup', 'g', 'environments: [dev]', 'shared:', '  state: {coordinationRefPrefix: refs/nyl}'),
    ),
  });
  assert.deepEqual(errors.map((e) => [e.location.line, e.location.pointer]), [
    [13, '/spec/state/repositoryRef'],
    [14, '/spec/state/desiredRef'],
    [15, '/spec/state/observedRef'],
    [16, '/spec/state/coordinationRefPrefix'],
    [17, '/spec/state/path'],
    [25, '/spec/shared/state/coordinationRefPrefix'],
  ]);
  assert.match(errors[0].message, /repository and repositoryRef are both set/);
  assert.match(errors[3].message, /must start with refs\//);
  assert.match(errors[5].message, /must end with \//);
});

test('git branch name rules', () => {
  for (const ok of ['main', 'nyl/dev/desired', 'refs/heads/x', 'a-b_c.d', 'v1.2', 'a@b']) assert.equal(refNameProblem(ok), undefined, ok);
  for (const bad of ['', '@', '-x', '/x', 'x/', 'a//b', 'a..b', 'a@{1}', 'x.', 'a b', 'a~1', 'a^', 'a:b', 'a?', 'a*', 'a[b', 'a\\b', 'a\tb', '.hidden', 'a/.b', 'x.lock', 'a.lock/b', 'a\x7f']) {
    assert.notEqual(refNameProblem(bad), undefined, JSON.stringify(bad));
  }
});

test('relative path rules', () => {
  for (const ok of ['envs/dev', './tf', 'a/b/c', '.']) assert.equal(relativePathProblem(ok), undefined, ok);
  for (const bad of ['', '/abs', '../x', 'a/../../b', 'a/..', 'C:/x', 'a\\b']) assert.notEqual(relativePathProblem(bad), undefined, bad);
});

test('a document that failed validation still counts as declared: no cascade of unknown names', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(
      resource('Terraform', 'db', 'module: m', 'extra: 1'),
      resource('Command', 'app', 'run: [x]', 'dependsOn: [db]'),
      resource('Environment', 'dev', 'lease: {duration: soon}'),
      resource('Environment', 'prod', 'dependsOn: [dev]'),
    ),
  });
  assert.deepEqual(errors.map((e) => e.location.pointer), ['/spec/extra', '/spec/lease/duration']);
});

test('validateProject is pure and falls back to document lines without a locator', () => {
  const origin = (line) => ({ file: 'f.yaml', line, pointer: '', document: 0 });
  const unit = (name, deps, line) => ({ kind: 'Command', name, labels: {}, origin: origin(line), spec: { run: ['x'], dependsOn: deps }, dependsOn: deps, declaredDependsOn: deps, references: [] });
  const errors = validateProject({ environments: [], repositories: [], groups: [], units: [unit('a', ['b'], 1), unit('b', ['a'], 9), unit('c', ['z'], 20)] });
  assert.deepEqual(errors.map((e) => [e.location.line, e.location.pointer, e.message]), [
    [20, '/spec/dependsOn/0', 'unit c depends on unknown unit "z"'],
    [1, '/spec/dependsOn/0', 'dependency cycle: a -> b -> a'],
  ]);
});
