// Source that asks for more than Nyl can do safely is refused when the project loads, with file,
// line and a fix: durations out of their range, a lease shorter than its
// renewal can serve, prototype keys, oversized files and alias bombs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadProject } from '../../dist/project/load.js';
import { at, documents, loadErrors, memoryTree, resource } from '../support/memory-tree.mjs';

const errorsOf = (files) => loadErrors(loadProject, files);

test('durations are bounded: timeout 1s..7d, lease.duration 2s..24h (Node timers overflow above 2^31-1 ms)', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(
      resource('Environment', 'big', 'lease: {duration: 2000h}'),
      resource('Environment', 'tiny', 'lease: {duration: 1s}'),
      resource('Command', 'slow', 'run: [a]', 'timeout: 600h'),
      resource('Command', 'fast', 'run: [a]', 'timeout: 500ms'),
      resource('Command', 'overflow', 'run: [a]', 'timeout: 99999999999999999999d'),
    ),
  });
  assert.deepEqual(
    errors.map((e) => [e.location.line, e.location.pointer]),
    [
      [5, '/spec/lease/duration'],
      [11, '/spec/lease/duration'],
      [18, '/spec/timeout'],
      [25, '/spec/timeout'],
      [32, '/spec/timeout'],
    ],
  );
  assert.ok(errors.every((e) => e.code === 'NYL-SOURCE-INVALID'));
  assert.match(errors[0].message, /2000h is out of range: it must be from 2s to 24h/);
  assert.match(errors[0].fix, /24h/);
  assert.match(errors[1].message, /1s is out of range/, 'a lease shorter than its renewal can serve');
  assert.match(errors[2].message, /600h is out of range: it must be from 1s to 7d/);
  assert.match(errors[3].message, /500ms is out of range/);
});

test('durations at their bounds load', async () => {
  const p = await loadProject(
    '/p',
    memoryTree({
      'nyl.yaml': documents(
        resource('Environment', 'short', 'lease: {duration: 2s}'),
        resource('Environment', 'long', 'lease: {duration: 24h}'),
        resource('Command', 'a', 'run: [a]', 'timeout: 1s'),
        resource('Command', 'b', 'run: [a]', 'timeout: 7d'),
      ),
    }),
  );
  assert.equal(p.environments.get('short').spec.lease.durationMs, 2000);
  assert.equal(p.environments.get('long').spec.lease.durationMs, 24 * 3600 * 1000);
});

test('a __proto__ key is refused in every mapping of a resource, at its line (never accepted and dropped)', async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(
      resource('Command', 'a', 'run: [a]', 'env:', '  __proto__: x', '  B: y'),
      resource('Environment', 'dev', 'values: {db: {__proto__: {polluted: true}}}'),
      ['apiVersion: nyl.io/v1', 'kind: Command', 'metadata: {name: b, labels: {__proto__: x}}', 'spec: {run: [b]}'],
    ),
  });
  assert.deepEqual(
    errors.map((e) => [e.location.line, e.location.pointer]),
    [
      [7, '/spec/env/__proto__'],
      [14, '/spec/values/db/__proto__'],
      [18, '/metadata/labels/__proto__'],
    ],
  );
  assert.ok(errors.every((e) => e.code === 'NYL-SOURCE-INVALID' && /__proto__/.test(e.message) && /rename/.test(e.fix)));
  assert.equal({}.polluted, undefined);
});

const MiB = 1024 * 1024;

test('a source file over 1 MiB is refused naming the file and the limit', async () => {
  const filler = `# ${'x'.repeat(1000)}\n`.repeat(1100);
  const errors = await errorsOf({
    'nyl.yaml': documents(resource('Project', 'p', 'include: [big.yaml]')),
    'big.yaml': filler + documents(resource('Command', 'a', 'run: [a]')),
  });
  const e = at(errors, '', 'big.yaml');
  assert.equal(e.code, 'NYL-SOURCE-INVALID');
  assert.equal(e.location.line, 1);
  assert.match(e.message, /big\.yaml .*1 MiB/);
  assert.match(e.fix, /spec\.include/);
});

test('YAML aliases may not expand a file beyond 4 MiB: the alias bomb is refused fast and small', async () => {
  // 990 aliases of a ~5 KB mapping: about 5 MB once expanded (the reproduction had 520 KB and 990).
  const block = Array.from({ length: 100 }, (_, i) => `      K${i}: "${'v'.repeat(40)}"`);
  const copies = Array.from({ length: 990 }, (_, i) => `    c${i}: *common`);
  const text =
    ['apiVersion: nyl.io/v1', 'kind: Environment', 'metadata: {name: dev}', 'spec:', '  values:', '    common: &common', ...block, ...copies].join('\n') + '\n';
  assert.ok(text.length < MiB);
  const began = process.hrtime.bigint();
  const errors = await errorsOf({ 'nyl.yaml': text });
  const ms = Number(process.hrtime.bigint() - began) / 1e6;
  assert.equal(errors.length, 1, JSON.stringify(errors.slice(0, 3), null, 2));
  assert.equal(errors[0].code, 'NYL-SOURCE-INVALID');
  assert.match(errors[0].message, /alias/);
  assert.match(errors[0].message, /4 MiB/);
  assert.ok(ms < 2000, `refused in ${ms} ms`);

  // A billion laughs (each level repeats the one before ten times) is refused just the same.
  const laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < 12; i++)
    laughs.push(
      `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10)
        .fill(`*${String.fromCharCode(96 + i)}`)
        .join(',')}]`,
    );
  const bomb =
    ['apiVersion: nyl.io/v1', 'kind: Environment', 'metadata: {name: dev}', 'spec:', '  values:', ...laughs.map((l) => `    ${l}`)].join('\n') + '\n';
  const bombErrors = await errorsOf({ 'nyl.yaml': bomb });
  assert.equal(bombErrors.length, 1);
  assert.match(bombErrors[0].message, /alias/);
});

test('aliases a sane source uses (one shared block repeated 200 times) load', async () => {
  const copies = Array.from({ length: 200 }, (_, i) => `    c${i}: *common`);
  const text =
    [
      'apiVersion: nyl.io/v1',
      'kind: Environment',
      'metadata: {name: dev}',
      'spec:',
      '  values:',
      '    common: &common {A: "1", B: "2", C: "3"}',
      ...copies,
    ].join('\n') + '\n';
  const p = await loadProject('/p', memoryTree({ 'nyl.yaml': text }));
  assert.deepEqual(p.environments.get('dev').spec.values.c199, { A: '1', B: '2', C: '3' });
});

test('nesting deeper than 100 levels is refused at its pointer; a deep flow collection never reaches the YAML parser', async () => {
  const deep = `{a: ${'{a: '.repeat(120)}1${'}'.repeat(120)}}`;
  const errors = await errorsOf({ 'nyl.yaml': documents(resource('Environment', 'dev', `values: ${deep}`)) });
  assert.equal(errors.length, 1);
  assert.match(errors[0].message, /100 levels/);
  assert.match(errors[0].location.pointer, /^\/spec\/values(\/a)+$/);

  // 200,000 unclosed brackets (400 KB) made the YAML parser run out of memory and abort the process.
  const brackets = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
  const flow = await errorsOf({ 'nyl.yaml': documents(resource('Environment', 'dev', `values: {a: ${brackets}}`)) });
  assert.equal(flow.length, 1);
  assert.equal(flow[0].location.line, 5);
  assert.match(flow[0].message, /nest/);
});
