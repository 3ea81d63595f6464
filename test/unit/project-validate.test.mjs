import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadProject } from '../../dist/project/load.js';
import { nulBytes, validateProject } from '../../dist/project/validate.js';
import { NAME_PATTERN, refNameProblem, relativePathProblem } from '../../dist/util/fields.js';
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
  assert.deepEqual(
    d.data.locations.map((l) => [l.file, l.line]),
    [
      ['nyl.yaml', 9],
      ['units.yaml', 8],
    ],
  );
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
  assert.deepEqual(
    errors.map((e) => [e.location.line, e.message.split(':')[0]]),
    [
      [8, 'duplicate environment name "dev"'],
      [19, 'duplicate GitRepository name "r"'],
      [31, 'duplicate EnvironmentGroup name "g"'],
    ],
  );
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

test("a dependency cycle is named and points at the first unit's dependsOn", async () => {
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
  assert.deepEqual(
    errors.map((e) => [e.location.line, e.location.pointer, e.message]),
    [
      [6, '/spec/env/B', 'dependency cycle: a -> b -> a'],
      [19, '/spec/run/0', 'dependency cycle: self -> self'],
    ],
  );
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
  assert.deepEqual(
    errors.map((e) => [e.location.line, e.location.pointer]),
    [
      [12, '/spec/state/repositoryRef'],
      [19, '/spec/dependsOn/0'],
    ],
  );
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
  assert.deepEqual(
    errors.map((e) => [e.location.line, e.location.pointer]),
    [
      [12, '/spec/environments/1'],
      [14, '/spec/shared/state/repositoryRef'],
    ],
  );
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
  assert.deepEqual(
    errors.map((e) => [e.location.line, e.location.pointer]),
    [
      [13, '/spec/state/repositoryRef'],
      [14, '/spec/state/desiredRef'],
      [15, '/spec/state/observedRef'],
      [16, '/spec/state/coordinationRefPrefix'],
      [17, '/spec/state/path'],
      [25, '/spec/shared/state/coordinationRefPrefix'],
    ],
  );
  assert.match(errors[0].message, /repository and repositoryRef are both set/);
  assert.match(errors[3].message, /must start with refs\//);
  assert.match(errors[5].message, /must end with \//);
});

test('git branch name rules', () => {
  for (const ok of ['main', 'nyl/dev/desired', 'refs/heads/x', 'a-b_c.d', 'v1.2', 'a@b']) assert.equal(refNameProblem(ok), undefined, ok);
  for (const bad of [
    '',
    '@',
    '-x',
    '/x',
    'x/',
    'a//b',
    'a..b',
    'a@{1}',
    'x.',
    'a b',
    'a~1',
    'a^',
    'a:b',
    'a?',
    'a*',
    'a[b',
    'a\\b',
    'a\tb',
    '.hidden',
    'a/.b',
    'x.lock',
    'a.lock/b',
    'a\x7f',
  ]) {
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
  assert.deepEqual(
    errors.map((e) => e.location.pointer),
    ['/spec/extra', '/spec/lease/duration'],
  );
});

test('validateProject is pure and falls back to document lines without a locator', () => {
  const origin = (line) => ({ file: 'f.yaml', line, pointer: '', document: 0 });
  const unit = (name, deps, line) => ({
    kind: 'Command',
    name,
    labels: {},
    origin: origin(line),
    spec: { run: ['x'], dependsOn: deps },
    dependsOn: deps,
    declaredDependsOn: deps,
    references: [],
  });
  const errors = validateProject({ environments: [], repositories: [], groups: [], units: [unit('a', ['b'], 1), unit('b', ['a'], 9), unit('c', ['z'], 20)] });
  assert.deepEqual(
    errors.map((e) => [e.location.line, e.location.pointer, e.message]),
    [
      [20, '/spec/dependsOn/0', 'unit c depends on unknown unit "z"'],
      [1, '/spec/dependsOn/0', 'dependency cycle: a -> b -> a'],
    ],
  );
});

// --- NUL bytes ------------------------------------------------------------------------------

test('nulBytes: every string, key or value, at any depth, by its pointer', () => {
  const problems = nulBytes({ a: 'ok', 'k\0': 'ok', list: ['x', 'y\0'], deep: { 'a/b': { c: ['\0'] } }, n: 1, t: true, z: null });
  assert.deepEqual(
    problems.map((p) => p.pointer),
    ['/k\0', '/list/1', '/deep/a~1b/c/0'],
  );
  assert.match(problems[0].message, /the key at \/k\0 contains a NUL byte/);
  assert.match(problems[1].message, /the value at \/list\/1 contains a NUL byte/);
  for (const p of problems) assert.match(p.fix, /^remove the NUL byte/);
  assert.deepEqual(nulBytes({ a: ['b', { c: 'd' }] }), []);
});

test('a NUL byte in argv, env, script or any other string is NYL-SOURCE-INVALID at its line and pointer, and only that', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(
      resource('Environment', 'dev', 'values: {deep: {list: ["ok", "v\\0"]}}'),
      resource('Command', 'argv', 'run: ["echo", "x\\0y"]'),
      resource('Command', 'env', 'run: [echo]', 'env:', '  NAME: "x\\0y"', '  "BAD\\0KEY": ok'),
      resource('Command', 'script', 'script: "echo \\0"', 'teardown: {run: [rm, "a\\0"]}'),
      resource('Terraform', 'tf', 'module: "m\\0"', 'variables: {"k": ["\\0"]}'),
    ),
  });
  const expected = [
    [5, '/spec/values/deep/list/1', 'Environment dev: the value at /spec/values/deep/list/1 contains a NUL byte'],
    [11, '/spec/run/1', 'Command argv: the value at /spec/run/1 contains a NUL byte'],
    [19, '/spec/env/NAME', 'Command env: the value at /spec/env/NAME contains a NUL byte'],
    [20, '/spec/env/BAD\0KEY', 'Command env: the key at /spec/env/BAD\0KEY contains a NUL byte'],
    [26, '/spec/script', 'Command script: the value at /spec/script contains a NUL byte'],
    [27, '/spec/teardown/run/1', 'Command script: the value at /spec/teardown/run/1 contains a NUL byte'],
    [33, '/spec/module', 'Terraform tf: the value at /spec/module contains a NUL byte'],
    [34, '/spec/variables/k/0', 'Terraform tf: the value at /spec/variables/k/0 contains a NUL byte'],
  ];
  assert.deepEqual(
    errors.map((d) => [d.location.line, d.location.pointer, d.message]),
    expected,
  );
  for (const d of errors) {
    assertLocated(d, 'nyl.yaml', d.location.line, d.location.pointer);
    assert.match(d.fix, /^remove the NUL byte/);
  }
  assert.deepEqual(errors[1].units, ['argv']);
});

test('a NUL byte in a name, a kind or an apiVersion is reported as such, not as an invalid name or unknown kind', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(resource('Command', '"db\\0"', 'run: [x]'), resource('"Command\\0"', 'x', 'run: [x]'), [
      'apiVersion: "nyl.io/v1\\0"',
      'kind: Command',
      'metadata: {name: y}',
      'spec: {run: [x]}',
    ]),
  });
  assert.deepEqual(
    errors.map((d) => [d.location.line, d.location.pointer, d.message]),
    [
      [3, '/metadata/name', 'Command: the value at /metadata/name contains a NUL byte'],
      [8, '/kind', 'the value at /kind contains a NUL byte'],
      [13, '/apiVersion', 'the value at /apiVersion contains a NUL byte'],
    ],
  );
  for (const d of errors) assert.match(d.fix, /^remove the NUL byte/);
});

// --- follow-on errors -----------------------------------------------------------------------

test('a document of an unknown kind still declares its name: no unknown-unit follow-on, no did-you-mean naming the referrer', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(resource('Comand', 'a', 'run: [x]'), resource('Command', 'b', 'run: [x]', 'dependsOn: [a]')),
  });
  assert.deepEqual(
    errors.map((e) => [e.location.pointer, e.message]),
    [['/kind', 'unknown kind "Comand"']],
  );
  assert.match(errors[0].fix, /^did you mean Command\?/);
});

test('a did-you-mean never names the unit that holds the reference', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(
      resource('Command', 'b', 'run: [x]', 'dependsOn: [a]', 'env:', '  X: "${{ units.zzzz.outputs.y }}"'),
      resource('Command', 'ab', 'run: [x]', 'triggers: [b]'),
    ),
  });
  assert.deepEqual(
    errors.map((e) => e.message),
    ['unit b depends on unknown unit "a"', 'unit b references outputs of unknown unit "zzzz"'],
  );
  assert.match(errors[0].fix, /^did you mean ab\? /);
  for (const e of errors) assert.doesNotMatch(e.fix, /did you mean b\?/);
  assert.match(errors[1].fix, /^declare a unit named zzzz or correct the name; known: ab, b$/);
  const [env] = await errorsOf({ 'nyl.yaml': documents(resource('Environment', 'dev', 'dependsOn: [de]')) });
  assert.equal(env.fix, 'declare a Environment named de or correct the name; known: dev');
  // A name of another kind is no self-reference: a group dev listing dve meant the Environment dev.
  const [group] = await errorsOf({
    'nyl.yaml': documents(resource('Environment', 'dev'), resource('EnvironmentGroup', 'dev', 'environments: [dve]')),
  });
  assert.match(group.fix, /^did you mean dev\? /);
});

test('a misspelled field is reported as unknown with its did-you-mean, not as the field it misses', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(resource('Command', 'a', 'scirpt: echo hi'), resource('Terraform', 'db', 'modul: m'), resource('Command', 'c', 'dependsOn: [a]')),
  });
  assert.deepEqual(
    errors.map((e) => [e.location.pointer, e.message.split(';')[0]]),
    [
      ['/spec/scirpt', 'Command a: unknown field scirpt'],
      ['/spec/modul', 'Terraform db: unknown field modul'],
      // Why still reported: nothing written near run or script, so the missing field is the finding.
      ['/spec', 'Command c: /spec needs exactly one of run, script'],
    ],
  );
  assert.match(errors[0].fix, /^did you mean script\?/);
  assert.match(errors[1].fix, /^did you mean module\?/);
});
