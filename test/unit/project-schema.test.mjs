import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RESOURCE_KINDS, SPEC_SCHEMAS, resourceSchema, sourceJsonSchema } from '../../dist/project/schema.js';
import { BUILTIN_KINDS, UNIT_KINDS } from '../../dist/drivers/kinds.js';
import { parseDuration } from '../../dist/util/duration.js';
import { list, object, required, string, validateSchema } from '../../dist/util/schema.js';

test('parseDuration (the one grammar of source and command line) reads d, h, m, s and ms in that order', () => {
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('10s'), 10000);
  assert.equal(parseDuration('30m'), 1800000);
  assert.equal(parseDuration('1h30m'), 5400000);
  assert.equal(parseDuration('1h2m3s4ms'), 3723004);
  assert.equal(parseDuration('2d'), 172_800_000);
  for (const bad of ['', '5', 'm', '1.5h', '30m1h', ' 5m', '5 m', '10S']) assert.equal(parseDuration(bad), undefined, bad);
});

test('unknown fields are errors naming the known fields, with a did-you-mean', () => {
  const problems = validateSchema(SPEC_SCHEMAS.Command, { run: ['x'], dependOn: ['a'], bogus: 1 });
  assert.deepEqual(
    problems.map((p) => p.pointer),
    ['/dependOn', '/bogus'],
  );
  assert.match(
    problems[0].message,
    /^unknown field dependOn; known fields: dependsOn, recovery, approval, deletionPolicy, timeout, terminationGracePeriod, inputs, triggers, run, script/,
  );
  assert.match(problems[0].fix, /did you mean dependsOn\?/);
});

test('types: numbers where strings are expected are errors, except in free JSON fields', () => {
  const problems = validateSchema(SPEC_SCHEMAS.Terraform, {
    module: 5,
    binary: true,
    variables: { n: 1, deep: { x: [1, null] } },
    backendConfig: { port: 1, ok: true },
  });
  assert.deepEqual(
    problems.map((p) => p.pointer),
    ['/module', '/binary'],
  );
  assert.match(problems[0].fix, /quote the value \("5"\)/);
  assert.deepEqual(
    validateSchema(SPEC_SCHEMAS.Terraform, { module: 'tf', backendConfig: { nested: { a: 1 } } }).map((p) => p.pointer),
    ['/backendConfig/nested'],
  );
  assert.deepEqual(
    validateSchema(SPEC_SCHEMAS.Environment, { values: { x: Infinity } }).map((p) => p.pointer),
    ['/values/x'],
  );
  assert.deepEqual(
    validateSchema(SPEC_SCHEMAS.Environment, { values: [1] }).map((p) => p.pointer),
    ['/values'],
  );
});

test('exactly-one and at-most-one groups', () => {
  const none = validateSchema(SPEC_SCHEMAS.Command, {});
  assert.equal(none.length, 1);
  assert.equal(none[0].pointer, '');
  assert.match(none[0].message, /exactly one of run, script/);
  const both = validateSchema(SPEC_SCHEMAS.Command, { run: ['a'], script: 'b' });
  assert.deepEqual(
    both.map((p) => p.pointer),
    ['/script'],
  );
  const group = validateSchema(SPEC_SCHEMAS.EnvironmentGroup, { selector: { matchLabels: {} }, environments: [] });
  assert.deepEqual(
    group.map((p) => p.pointer),
    ['/environments'],
  );
  const state = validateSchema(SPEC_SCHEMAS.Environment, { state: { repository: { repoURL: 'x' }, repositoryRef: 'y' } });
  assert.deepEqual(
    state.map((p) => p.pointer),
    ['/state/repositoryRef'],
  );
});

test('field rules: env names, durations, enums, relative paths, refs', () => {
  const problems = validateSchema(SPEC_SCHEMAS.Command, {
    run: [],
    env: { '1BAD': 'x', NYL_RUN: 'y', GOOD_1: 'z' },
    workingDir: '../up',
    timeout: '0s',
    recovery: 'sometimes',
    approval: { required: 'yes' },
  });
  assert.deepEqual(problems.map((p) => p.pointer).sort(), ['/approval/required', '/env/1BAD', '/env/NYL_RUN', '/recovery', '/run', '/timeout', '/workingDir']);
  const envProblems = validateSchema(SPEC_SCHEMAS.Environment, {
    state: { desiredRef: 'a..b', observedRef: 'x.lock', path: '/abs', coordinationRefPrefix: 'refs/nyl' },
    lease: { duration: '5 minutes' },
    driftRepair: 'auto',
  });
  assert.deepEqual(envProblems.map((p) => p.pointer).sort(), [
    '/driftRepair',
    '/lease/duration',
    '/state/coordinationRefPrefix',
    '/state/desiredRef',
    '/state/observedRef',
    '/state/path',
  ]);
});

test('a small schema built with the DSL validates and reports missing required fields', () => {
  const s = object({ a: required(string()), b: list(string(), { minItems: 1 }) });
  assert.deepEqual(
    validateSchema(s, { b: [] }).map((p) => [p.pointer, p.message]),
    [
      ['/a', 'the document misses the required field a'],
      ['/b', '/b needs at least 1 item(s)'],
    ],
  );
});

test('every kind has a document schema with apiVersion, kind, metadata and spec', () => {
  assert.deepEqual(RESOURCE_KINDS, [
    'Project',
    'Environment',
    'GitRepository',
    'EnvironmentGroup',
    'EnvironmentTemplate',
    'Command',
    'Terraform',
    'OpenTofu',
    'OciImage',
  ]);
  for (const kind of RESOURCE_KINDS) {
    const s = resourceSchema(kind);
    assert.deepEqual(Object.keys(s.fields), ['apiVersion', 'kind', 'metadata', 'spec']);
    assert.deepEqual(validateSchema(s, { apiVersion: 'nyl.io/v1', kind, metadata: { name: 'x' }, spec: minimal[kind] }), [], kind);
  }
});

const minimal = {
  Project: {},
  Environment: {},
  GitRepository: { url: 'file:///x' },
  EnvironmentGroup: { environments: [] },
  EnvironmentTemplate: { namePattern: 'pr-*' },
  Command: { run: ['true'] },
  Terraform: { module: 'tf' },
  OpenTofu: { module: 'tf' },
  OciImage: { image: 'x@sha256:00' },
};

test('sourceJsonSchema is draft 2020-12 and mirrors the DSL', () => {
  const js = sourceJsonSchema();
  assert.equal(js.$schema, 'https://json-schema.org/draft/2020-12/schema');
  // The document's kind picks its definition, so that errors come from that kind's alone.
  assert.deepEqual(js.properties.kind.enum, RESOURCE_KINDS);
  assert.deepEqual(
    js.allOf.map((b) => [b.if.properties.kind.const, b.then.$ref]),
    RESOURCE_KINDS.map((k) => [k, `#/$defs/${k}`]),
  );
  const command = js.$defs.Command;
  assert.deepEqual(command.required, ['apiVersion', 'kind', 'metadata', 'spec']);
  assert.equal(command.additionalProperties, false);
  assert.deepEqual(command.properties.kind, { const: 'Command' });
  assert.equal(command.properties.metadata.properties.name.pattern, '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$');
  const spec = command.properties.spec;
  assert.deepEqual(spec.oneOf, [
    { properties: { run: true }, required: ['run'] },
    { properties: { script: true }, required: ['script'] },
  ]);
  assert.deepEqual(spec.properties.recovery.enum, ['converge', 'manual']);
  assert.equal(spec.properties.env.propertyNames.pattern, '^(?!NYL_)[A-Za-z_][A-Za-z0-9_]*$');
  const duration = new RegExp(spec.properties.timeout.pattern);
  for (const ok of ['500ms', '10s', '30m', '1h30m', '1d']) assert.ok(duration.test(ok), ok);
  for (const bad of ['', '5', '1.5s', '30m1h']) assert.ok(!duration.test(bad), bad);
  const envState = js.$defs.Environment.properties.spec.properties.state;
  assert.deepEqual(envState.not, { properties: { repository: true, repositoryRef: true }, required: ['repository', 'repositoryRef'] });
  assert.deepEqual(js.$defs.Terraform.properties.spec.properties.variables, { description: 'input variables', type: 'object' });
  assert.equal(js.$defs.Project.properties.spec.required, undefined);
  assert.equal(js.$defs.GitRepository.properties.spec.required[0], 'url');
  assert.doesNotThrow(() => JSON.stringify(js));
});

test('terminationGracePeriod: a duration of every unit kind, from 0s (SIGKILL right after SIGTERM) to 1h', () => {
  for (const kind of UNIT_KINDS) {
    const base = kind === 'Command' ? { script: 'x' } : kind === 'OciImage' ? { image: 'busybox' } : { module: 'tf' };
    for (const ok of ['0s', '500ms', '30s', '1h'])
      assert.deepEqual(validateSchema(SPEC_SCHEMAS[kind], { ...base, terminationGracePeriod: ok }), [], `${kind} ${ok}`);
    for (const bad of ['1h1ms', '2h', '30', 30, '']) {
      const problems = validateSchema(SPEC_SCHEMAS[kind], { ...base, terminationGracePeriod: bad });
      assert.deepEqual(
        problems.map((p) => p.pointer),
        ['/terminationGracePeriod'],
        `${kind} ${JSON.stringify(bad)}`,
      );
    }
  }
  const tooLong = validateSchema(SPEC_SCHEMAS.Command, { script: 'x', terminationGracePeriod: '2h' })[0];
  assert.match(tooLong.fix, /from 0s to 1h/);
});

test("unit kinds come from their descriptors: the common unit fields, then the kind's own spec fields", () => {
  assert.deepEqual(RESOURCE_KINDS.slice(5), [...UNIT_KINDS]);
  const common = ['dependsOn', 'recovery', 'approval', 'deletionPolicy', 'timeout', 'terminationGracePeriod', 'inputs', 'triggers'];
  for (const kind of UNIT_KINDS) {
    const own = BUILTIN_KINDS.descriptor(kind).spec;
    assert.ok(own, `${kind} has a spec schema`);
    assert.deepEqual(Object.keys(SPEC_SCHEMAS[kind].fields), [...common, ...Object.keys(own.fields)], kind);
    assert.deepEqual(SPEC_SCHEMAS[kind].exactlyOne, own.exactlyOne, kind);
  }
  const binary = (kind) => sourceJsonSchema().$defs[kind].properties.spec.properties.binary.description;
  assert.equal(binary('Terraform'), 'executable; default terraform');
  assert.equal(binary('OpenTofu'), 'executable; default tofu');
});
