import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN_KINDS } from '../../dist/drivers/kinds.js';
import { renderUnit } from '../../dist/project/render.js';
import { executionKey } from '../../dist/project/execution-key.js';
import { collectReferences } from '../../dist/project/references.js';

const env = {
  kind: 'Environment',
  name: 'dev',
  labels: { stage: 'development' },
  origin: { file: 'nyl.yaml', line: 1, pointer: '', document: 0 },
  spec: { values: { replicas: 2, db: { size: 'small' } }, driftRepair: 'converge', dependsOn: [], lease: { durationMs: 300000 } },
};

function unit(spec, extra = {}) {
  const references = collectReferences(spec, 'Command');
  const declared = spec.dependsOn ?? [];
  return {
    kind: 'Command',
    name: 'migrate',
    labels: {},
    origin: { file: 'deploy/units.yaml', line: 10, pointer: '', document: 1 },
    spec,
    dependsOn: [...new Set([...declared, ...references.map((r) => r.unit)])],
    declaredDependsOn: declared,
    references,
    ...extra,
  };
}

const receipts = { db: { url: 'postgres://db', port: 5432, meta: { a: 1 } } };
/** Receipts as rendering reads them: plain outputs, and the run that produced them. */
const asReceipts = (outs) => (name) => (outs[name] === undefined ? undefined : { outputs: outs[name], run: `run-${name}` });
const outputsOf = asReceipts(receipts);

test('renders every reference, keeps JSON types of exact references, sorts keys', () => {
  const u = unit({
    run: ['migrate', '--to', '${{ units.db.outputs.url }}'],
    env: {
      PORT: '${{ units.db.outputs.port }}',
      WHO: '${{ env.name }}-${{ env.labels.stage }}',
      SIZE: '${{ env.values.db.size }}',
      N: 'n=${{ env.values.replicas }}',
    },
    dependsOn: ['schema', 'db'],
    timeout: '5m',
  });
  const result = renderUnit(u, env, outputsOf, BUILTIN_KINDS);
  assert.equal(result.ok, true);
  assert.deepEqual(result.rendering, {
    dependsOn: ['schema', 'db'],
    env: { N: 'n=2', PORT: 5432, SIZE: 'small', WHO: 'dev-development' },
    run: ['migrate', '--to', 'postgres://db'],
    timeout: '5m',
  });
  assert.deepEqual(Object.keys(result.rendering), ['dependsOn', 'env', 'run', 'timeout']);
  assert.deepEqual(Object.keys(result.rendering.env), ['N', 'PORT', 'SIZE', 'WHO']);
  assert.deepEqual(result.consumed, [
    { unit: 'db', output: 'url', pointer: '/run/2' },
    { unit: 'db', output: 'port', pointer: '/env/PORT' },
  ]);
});

test('an object output embedded in text is canonical JSON; exact keeps the object', () => {
  const result = renderUnit(unit({ run: ['x', 'm=${{ units.db.outputs.meta }}'], env: { M: '${{ units.db.outputs.meta }}' } }), env, outputsOf, BUILTIN_KINDS);
  assert.equal(result.ok, true);
  assert.equal(result.rendering.run[1], 'm={"a":1}');
  assert.deepEqual(result.rendering.env.M, { a: 1 });
});

test('a unit without a current receipt makes the consumer wait, by pointer inside spec', () => {
  const u = unit({ run: ['x', '${{ units.cache.outputs.host }}'], env: { DB: '${{ units.db.outputs.url }}', C: '${{ units.cache.outputs.port }}' } });
  const result = renderUnit(u, env, outputsOf, BUILTIN_KINDS);
  assert.deepEqual(result, {
    ok: false,
    waits: [
      { pointer: '/run/1', unit: 'cache', reason: 'no-current-receipt' },
      { pointer: '/env/C', unit: 'cache', reason: 'no-current-receipt' },
    ],
  });
});

test('a receipt without the output is a source error listing its outputs', () => {
  const u = unit({ run: ['x'], env: { DB: '${{ units.db.outputs.uri }}' } }, { locations: { '/env/DB': { line: 14, column: 9 } } });
  const result = renderUnit(u, env, outputsOf, BUILTIN_KINDS);
  assert.equal(result.ok, false);
  assert.equal(result.errors.length, 1);
  const d = result.errors[0];
  assert.equal(d.code, 'NYL-SOURCE-INVALID');
  assert.equal(d.message, 'unit db has no output uri');
  assert.match(d.fix, /meta, port, url/);
  assert.deepEqual(d.location, { file: 'deploy/units.yaml', line: 14, column: 9, pointer: '/spec/env/DB' });
  assert.deepEqual(d.units, ['migrate']);
});

test('a missing environment value or label is a source error naming the environment', () => {
  const result = renderUnit(unit({ run: ['${{ env.values.missing }}', '${{ env.labels.team }}'] }), env, outputsOf, BUILTIN_KINDS);
  assert.equal(result.ok, false);
  assert.equal(result.errors.length, 2);
  assert.match(result.errors[0].message, /env\.values\.missing.*environment dev/);
  assert.match(result.errors[0].fix, /Environment dev.*db, replicas/);
  assert.equal(result.errors[0].location.pointer, '/spec/run/0');
  assert.equal(result.errors[0].location.line, 10, 'falls back to the document line without locations');
  assert.match(result.errors[1].message, /env\.labels\.team.*environment dev/);
});

test('errors win over waits', () => {
  const result = renderUnit(unit({ run: ['${{ units.cache.outputs.x }}', '${{ env.values.nope }}'] }), env, outputsOf, BUILTIN_KINDS);
  assert.equal(result.ok, false);
  assert.ok('errors' in result);
});

test('the rendering feeds a stable execution key that follows the consumed outputs', () => {
  const key = (spec, outs) => {
    const r = renderUnit(unit(spec), env, asReceipts(outs), BUILTIN_KINDS);
    return executionKey({ kind: 'Command', rendering: r.rendering, uid: 'u1', driverVersion: 'command/1' });
  };
  const spec1 = { run: ['x', '${{ units.db.outputs.url }}'], env: { A: '1', B: '2' } };
  const spec2 = { env: { B: '2', A: '1' }, run: ['x', '${{ units.db.outputs.url }}'] };
  assert.equal(key(spec1, receipts), key(spec2, receipts));
  assert.notEqual(key(spec1, receipts), key(spec1, { db: { url: 'postgres://other' } }));
});
