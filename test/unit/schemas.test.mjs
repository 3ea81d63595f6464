// The published JSON Schemas of schemas/: every file compiles under Ajv's strict mode (with
// strictRequired), is exactly what scripts/gen-schemas.mjs writes from the current sources (a
// stale file fails here), and the source schema that editors use points at the misspelled field
// itself, from the branch of the document's own kind. The report schemas are also exercised by
// the end-to-end tests, which validate every -o json document against them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { schemaFiles } from '../../scripts/gen-schemas.mjs';
import { RESOURCE_KINDS, resourceSchema } from '../../dist/project/schema.js';
import { validateSchema } from '../../dist/util/schema.js';
import { refusalDocument } from '../../dist/report/refusal.js';
import { diagnostic } from '../../dist/errors/diagnostic.js';
import { DRAFT_2020_12, describeErrors, readSchema, schemaFileNames, strictAjv, validatorOf } from '../support/schemas.mjs';

test('every schema of schemas/ declares draft 2020-12 and compiles under Ajv strict mode with strictRequired', () => {
  const files = schemaFileNames();
  assert.ok(files.length >= 4, `schemas/ holds ${files.join(', ')}`);
  const problems = files.flatMap((file) => {
    const schema = readSchema(file);
    if (schema.$schema !== DRAFT_2020_12) return [`${file}: $schema is ${schema.$schema}`];
    try {
      strictAjv().compile(schema);
      return [];
    } catch (error) {
      return [`${file}: ${error.message}`];
    }
  });
  assert.deepEqual(problems, []);
});

test('schemas/ is exactly what scripts/gen-schemas.mjs writes from the sources: no stale file, no extra file', async () => {
  const generated = await schemaFiles();
  assert.deepEqual(schemaFileNames(), Object.keys(generated).sort(), 'the files of schemas/ are the generated ones');
  for (const [file, text] of Object.entries(generated)) {
    assert.equal(JSON.stringify(readSchema(file), null, 2) + '\n', text, `${file} is out of date: run npm run schemas`);
  }
});

// --- the source schema ------------------------------------------------------------------------

const MINIMAL_SPECS = {
  Project: undefined,
  Environment: {},
  GitRepository: { url: 'file:///x' },
  EnvironmentGroup: { environments: ['dev'] },
  EnvironmentTemplate: { namePattern: 'pr-*', environment: { values: { pr: '${{ instance.suffix }}' }, state: { path: 'previews/${{ instance.name }}' } } },
  Command: { run: ['true'], teardown: { script: 'echo bye' } },
  Terraform: { module: 'tf' },
  OpenTofu: { module: 'tf' },
  OciImage: { image: 'x@sha256:00' },
};

function resource(kind, spec, metadata = { name: kind === 'Project' ? 'p' : 'one' }) {
  return { apiVersion: 'nyl.io/v1', kind, metadata, ...(spec === undefined ? {} : { spec }) };
}

function validateSource(doc) {
  const validate = validatorOf('source');
  const valid = validate(doc);
  return { valid, errors: validate.errors ?? [] };
}

test("the source schema accepts a minimal document of every kind, as Nyl's own validation does", () => {
  assert.deepEqual(Object.keys(MINIMAL_SPECS), RESOURCE_KINDS);
  for (const [kind, spec] of Object.entries(MINIMAL_SPECS)) {
    const doc = resource(kind, spec);
    assert.deepEqual(validateSchema(resourceSchema(kind), doc), [], `${kind}: Nyl accepts it`);
    const r = validateSource(doc);
    assert.ok(r.valid, `${kind}:\n${describeErrors(r.errors)}`);
  }
});

/** The errors besides the `if` of the kind's branch, which only says that its `then` failed. */
function ownErrors(errors) {
  return errors.filter((e) => e.keyword !== 'if').map(({ instancePath, keyword, params }) => ({ instancePath, keyword, params }));
}

const unknownField = (instancePath, field) => ({ instancePath, keyword: 'additionalProperties', params: { additionalProperty: field } });
const missingField = (instancePath, field) => ({ instancePath, keyword: 'required', params: { missingProperty: field } });
const pointerOf = (e) => `${e.instancePath}/${e.params.additionalProperty ?? e.params.missingProperty}`;

test("a misspelled field gets an error that names it, at its own depth, from the branch of the document's kind only", () => {
  const cases = [
    [resource('Command', { run: ['true'], dependsOnn: ['a'] }), [unknownField('/spec', 'dependsOnn')]],
    [resource('Command', { script: 'true', teardown: { script: 'echo bye', workingdir: 'infra' } }), [unknownField('/spec/teardown', 'workingdir')]],
    [resource('Terraform', { module: 'tf' }, { name: 'one', lables: { a: 'b' } }), [unknownField('/metadata', 'lables')]],
    [{ ...resource('GitRepository', { url: 'file:///x' }), specs: {} }, [unknownField('', 'specs')]],
    // A misspelled required field is also a missing one: both of the JSON Schema's errors name their
    // field; Nyl's own validation reports the misspelling only, with its did-you-mean.
    [
      resource('Environment', { state: { repository: { repoUrl: 'file:///s' } } }),
      [missingField('/spec/state/repository', 'repoURL'), unknownField('/spec/state/repository', 'repoUrl')],
    ],
  ];
  for (const [doc, expected] of cases) {
    const r = validateSource(doc);
    assert.equal(r.valid, false, JSON.stringify(doc));
    assert.deepEqual(ownErrors(r.errors), expected, `${JSON.stringify(doc)}:\n${describeErrors(r.errors)}`);
    // Nyl's own validation names the same fields, but for a missing one that a misspelling explains.
    const misspelled = new Set(expected.filter((e) => e.keyword === 'additionalProperties').map((e) => e.instancePath));
    const own = expected.filter((e) => e.keyword !== 'required' || !misspelled.has(e.instancePath));
    const pointers = validateSchema(resourceSchema(doc.kind), doc).map((p) => p.pointer);
    assert.deepEqual(pointers.sort(), own.map(pointerOf).sort(), doc.kind);
  }
});

test('a document of an unknown kind gets one error, at /kind, listing the kinds', () => {
  const r = validateSource(resource('Comand', { run: ['true'] }));
  assert.deepEqual(ownErrors(r.errors), [{ instancePath: '/kind', keyword: 'enum', params: { allowedValues: RESOURCE_KINDS } }], describeErrors(r.errors));
});

test("the source schema keeps the DSL's groups: exactly one of run and script, at most one of repository and repositoryRef", () => {
  const neither = validateSource(resource('Command', { env: { A: 'b' } }));
  assert.equal(neither.valid, false);
  assert.ok(
    ownErrors(neither.errors).every((e) => e.instancePath === '/spec'),
    describeErrors(neither.errors),
  );
  assert.equal(validateSource(resource('Command', { run: ['a'], script: 'b' })).valid, false, 'both run and script');
  const both = validateSource(resource('Environment', { state: { repository: { repoURL: 'file:///s' }, repositoryRef: 'r' } }));
  assert.equal(both.valid, false, 'both repository and repositoryRef');
  assert.ok(validateSource(resource('Environment', { state: { repositoryRef: 'r' } })).valid, 'repositoryRef alone');
});

// --- the report schemas ---------------------------------------------------------------------------

test('the refusal document of each command family validates against its report schema', () => {
  const errors = [diagnostic('NYL-USAGE', 'error', 'no', { fix: 'yes' })];
  for (const [kind, name, operation] of [
    ['StatusReport', 'status-report', undefined],
    ['ReconcileReport', 'reconcile-report', 'reconcile'],
    ['StateOperationReport', 'state-operation-report', 'lease-break'],
  ]) {
    const validate = validatorOf(name);
    const doc = refusalDocument(kind, operation, 'dev', errors);
    assert.ok(validate(doc), `${kind}:\n${describeErrors(validate.errors)}`);
    assert.equal(validate({ ...doc, errors: [] }), false, `${kind}: a refusal names its reasons`);
  }
});
