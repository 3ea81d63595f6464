import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collectReferences, lookupKey, parseExpression, parseTemplate, renderValue, scanReferences, stringifyValue } from '../../dist/project/references.js';

test('the four reference forms parse, with or without whitespace inside the braces', () => {
  assert.deepEqual(parseExpression('env.name'), { kind: 'env.name' });
  assert.deepEqual(parseExpression('env.values.db.host'), { kind: 'env.values', key: 'db.host' });
  assert.deepEqual(parseExpression('env.labels.stage'), { kind: 'env.labels', key: 'stage' });
  assert.deepEqual(parseExpression('units.db.outputs.url_1'), { kind: 'units.outputs', unit: 'db', output: 'url_1' });
  for (const text of ['${{env.name}}', '${{ env.name }}', '${{   env.name\t}}']) {
    assert.deepEqual(parseTemplate(text), { parts: [{ reference: { kind: 'env.name' }, expression: 'env.name' }], problems: [] });
  }
});

test('anything else inside ${{ }} is an unknown reference', () => {
  for (const expr of [
    'env.nam',
    'env.values.',
    'env.values',
    'units.DB.outputs.x',
    'units.db.output.x',
    'units.db.outputs',
    'secrets.token',
    'env. name',
    'env.values.a b',
    '',
  ]) {
    assert.equal(parseExpression(expr), undefined, expr);
    const { problems } = parseTemplate(`x \${{ ${expr} }} y`);
    assert.equal(problems.length, 1, expr);
    assert.match(problems[0].message, /unknown reference/);
  }
  assert.match(parseTemplate('a ${{ env.name').problems[0].message, /unterminated/);
});

test('parseTemplate splits text and references in order', () => {
  const { parts } = parseTemplate('postgres://${{ env.values.host }}:${{units.db.outputs.port}}/app');
  assert.deepEqual(parts, [
    { text: 'postgres://' },
    { reference: { kind: 'env.values', key: 'host' }, expression: 'env.values.host' },
    { text: ':' },
    { reference: { kind: 'units.outputs', unit: 'db', output: 'port' }, expression: 'units.db.outputs.port' },
    { text: '/app' },
  ]);
});

test('scanReferences reports pointers relative to spec, skipping dependsOn', () => {
  const spec = {
    dependsOn: ['${{ units.x.outputs.y }}'],
    run: ['psql', '${{ units.db.outputs.url }}'],
    env: { DB_URL: '${{ units.db.outputs.url }}', 'A/B': '${{ env.name }}', PLAIN: 'x' },
    variables: { nested: [{ v: 'a ${{ units.cache.outputs.host }} b' }] },
  };
  const scan = scanReferences(spec, 'Command');
  assert.deepEqual(scan.problems, []);
  assert.deepEqual(scan.unitReferences, [
    { unit: 'db', output: 'url', pointer: '/run/1' },
    { unit: 'db', output: 'url', pointer: '/env/DB_URL' },
    { unit: 'cache', output: 'host', pointer: '/variables/nested/0/v' },
  ]);
  assert.deepEqual(scan.pointers, ['/run/1', '/env/DB_URL', '/env/A~1B', '/variables/nested/0/v']);
  assert.deepEqual(collectReferences(spec), scan.unitReferences);
});

test("a reference in a Command's script is refused with a fix through env:", () => {
  for (const [spec, pointer] of [
    [{ script: 'psql "${{ units.db.outputs.url }}"' }, '/script'],
    [{ run: ['x'], teardown: { script: 'echo ${{ env.name }}' } }, '/teardown/script'],
    [{ run: ['x'], check: { script: 'echo ${{ nonsense }}' } }, '/check/script'],
  ]) {
    const scan = scanReferences(spec, 'Command');
    assert.equal(scan.problems.length, 1);
    assert.equal(scan.problems[0].pointer, pointer);
    assert.match(scan.problems[0].fix, /pass the value through env:/);
    assert.match(scan.problems[0].fix, /injection/);
    assert.deepEqual(scan.unitReferences, []);
  }
  assert.deepEqual(scanReferences({ script: 'echo "$DB_URL"' }, 'Command').problems, []);
});

test('references in keys are refused', () => {
  const scan = scanReferences({ variables: { '${{ env.name }}': 1 } }, 'Terraform');
  assert.equal(scan.problems.length, 1);
  assert.equal(scan.problems[0].pointer, '/variables/${{ env.name }}');
  assert.match(scan.problems[0].fix, /values only/);
});

test('renderValue: an exact reference keeps its JSON type, embedded ones are stringified', () => {
  const values = { n: 3, obj: { b: 1, a: [true] }, s: 'x' };
  const resolve = (ref) => values[ref.key];
  assert.deepEqual(
    renderValue(
      { a: '${{ env.values.n }}', b: 'n=${{ env.values.n }}', c: '${{ env.values.obj }}', d: 'o=${{env.values.obj}}', e: [' ${{ env.values.s }}'] },
      resolve,
    ),
    { a: 3, b: 'n=3', c: { b: 1, a: [true] }, d: 'o={"a":[true],"b":1}', e: [' x'] },
  );
  assert.equal(stringifyValue(null), 'null');
});

test('renderValue passes the pointer of each reference to the resolver', () => {
  const seen = [];
  renderValue({ env: { X: '${{ env.name }}' }, run: ['a', '${{ env.name }}'] }, (ref, pointer) => seen.push(pointer), '');
  assert.deepEqual(seen, ['/env/X', '/run/1']);
});

test('lookupKey finds a key as written first, then as a dotted path', () => {
  const src = { db: { host: 'h' }, 'a.b': 1, a: { b: 2 } };
  assert.deepEqual(lookupKey(src, 'db.host'), { found: true, value: 'h' });
  assert.deepEqual(lookupKey(src, 'a.b'), { found: true, value: 1 });
  assert.deepEqual(lookupKey(src, 'db.port'), { found: false });
  assert.deepEqual(lookupKey(src, 'toString'), { found: false });
  assert.deepEqual(lookupKey({ n: null }, 'n'), { found: true, value: null });
});
