// The state documents' YAML emitter must read back as the same data through a YAML 1.2 parser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { emitYaml } from '../../dist/state/yaml-emit.js';

const tricky = [
  '',
  ' lead',
  'trail ',
  '#x',
  '- x',
  'a: b',
  'trail:',
  'a:b',
  '12:30',
  '1:2:3',
  'true',
  'True',
  'NULL',
  '~',
  'yes',
  'n',
  'on',
  '1',
  '-1',
  '+1',
  '1e5',
  '0x1F',
  '0o17',
  '.5',
  '1.',
  '.inf',
  '-.inf',
  '.nan',
  '1_000',
  '01a22a60-ff32',
  'sha256:abc',
  '2026-11-30T02:55:30Z',
  'multi\nline',
  'multi\nline\n',
  'keep\n\n',
  'keep\n\n\n',
  '\nleading',
  ' lead\nx',
  'a\n\n  b\n',
  'a\n   \nb',
  'cr\r\nlf',
  'x\n# not a comment\n- not a list\n',
  'x\n---\n...\n',
  'nel\u0085x\ny',
  'ls\u2028x\ny',
  'tab\n\tindented\n',
  'trail \nspace ',
  'tab\there',
  'quote"d',
  "single'd",
  'back\\slash',
  'ünïcödé',
  '@at',
  '`tick',
  '%pct',
  '!bang',
  '&amp',
  '*star',
  '|pipe',
  '>gt',
  '[x]',
  '{x}',
  'a, b',
  'x # y',
];

test('every tricky string round-trips as a value and as a key', () => {
  for (const s of tricky) {
    const doc = { [s]: s, list: [s] };
    assert.deepEqual(parse(emitYaml(doc)), doc, JSON.stringify(s));
  }
});

test('nested collections, empties, numbers, booleans and null round-trip; keys are sorted', () => {
  const doc = { z: 1, a: [1, 'two', { c: [], b: {} }, [], [[1], 2]], m: { deep: { deeper: [{ x: null, y: false }] } }, n: -3.25, t: true };
  const text = emitYaml(doc);
  assert.deepEqual(parse(text), doc);
  assert.deepEqual(
    text
      .split('\n')
      .filter((l) => /^\S/.test(l))
      .map((l) => l.split(':')[0].replace(/"/g, '')),
    ['a', 'm', 'n', 't', 'z'],
  );
});

test('undefined members are left out, like JSON', () => {
  assert.deepEqual(parse(emitYaml({ a: undefined, b: 1 })), { b: 1 });
  assert.equal(emitYaml({}), '{}\n');
  assert.equal(emitYaml([]), '[]\n');
});

import { readEmittedYaml, NOT_EMITTED } from '../../dist/state/yaml-read.js';

test('the strict reader reads back everything the emitter writes, like a YAML parser', () => {
  const docs = [
    Object.fromEntries(tricky.map((s, i) => [`k${i}`, s])),
    { list: tricky, keys: Object.fromEntries(tricky.map((s) => [s, s])) },
    {
      z: 1,
      a: [1, 'two', { c: [], b: {} }, [], [[1], 2], [{ x: 1, y: [{ z: 'w' }] }]],
      m: { deep: { deeper: [{ x: null, y: false }] } },
      n: -3.25,
      big: 1e21,
      t: true,
    },
    [],
    {},
    [{ a: 1 }, 'x', [1, [2, [3]]]],
  ];
  for (const doc of docs) {
    const text = emitYaml(doc);
    assert.deepEqual(readEmittedYaml(text), parse(text), text);
  }
});

test('a multi-line string is a literal block, one line per line; its header keeps the trailing line breaks', () => {
  const script = 'set -e\necho "one"\n\necho two\n';
  assert.equal(emitYaml({ script }), 'script: |\n  set -e\n  echo "one"\n\n  echo two\n');
  assert.equal(emitYaml({ a: 'x\ny' }), 'a: |-\n  x\n  y\n');
  assert.equal(emitYaml({ a: 'x\n\n' }), 'a: |+\n  x\n\n');
  assert.equal(emitYaml({ list: ['x\ny\n', { k: 'p\nq' }] }), 'list:\n  - |\n    x\n    y\n  - k: |-\n      p\n      q\n');
  // Quoted where a reader could take it differently: a leading space or line break, a carriage return.
  for (const s of [' x\ny', '\nx', 'x\r\ny']) assert.match(emitYaml({ s }), /^s: "/, JSON.stringify(s));
});

test('anything else is handed to the full parser', () => {
  for (const text of [
    'a: 1 # comment\n',
    'a: [1, 2]\n',
    'a:\n\tb: 1\n',
    'a: {b: 1}\n',
    "a: 'single'\n",
    'a: >\n  folded\n',
    'a: |2\n  block\n',
    'a: |\n  x\n\n',
    '? complex\n',
  ]) {
    assert.equal(readEmittedYaml(text), NOT_EMITTED, text);
  }
});
