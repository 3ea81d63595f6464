// The serializers of state documents and execution keys are bounded in depth (issue 9, item 5):
// a value nested deeper than they take is refused with an error that names the limit, never a
// stack overflow that ends the run with NYL-INTERNAL. Up to the limit, what is written reads back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson } from '../../dist/project/execution-key.js';
import { toYaml } from '../../dist/state/documents.js';
import { readEmittedYaml } from '../../dist/state/yaml-read.js';
import { MAX_DOCUMENT_DEPTH, nestingDepth } from '../../dist/util/nesting.js';

/** A value `levels` deep: objects and arrays in turn, a number at the bottom. */
function nested(levels) {
  let v = 1;
  for (let i = 0; i < levels; i++) v = i % 2 ? { k: v } : [v];
  return v;
}

test('the limit is 1,000 levels', () => {
  assert.equal(MAX_DOCUMENT_DEPTH, 1000);
});

test('nestingDepth counts levels of objects and arrays without recursion, 1,000,000 levels too', () => {
  assert.equal(nestingDepth(1), 0);
  assert.equal(nestingDepth({}), 1);
  assert.equal(nestingDepth([1, [2, { a: [] }]]), 4);
  assert.equal(nestingDepth(nested(1_000_000)), 1_000_000);
});

test('a document 1,000 levels deep is written and reads back the same; its canonical JSON is JSON.stringify sorted', () => {
  const value = { doc: nested(999) };
  assert.deepEqual(readEmittedYaml(toYaml(value)), value, 'the strict reader reads it back');
  assert.equal(canonicalJson(value), JSON.stringify(value));
});

for (const levels of [1001, 100_000]) {
  test(`a value ${levels} levels deep: toYaml and canonicalJson refuse it naming the limit, no stack overflow`, () => {
    const value = nested(levels);
    for (const [name, write] of [
      ['toYaml', toYaml],
      ['canonicalJson', canonicalJson],
    ]) {
      assert.throws(
        () => write(value),
        (error) => {
          assert.ok(error instanceof RangeError, `${name}: ${error}`);
          assert.match(error.message, /nested deeper than 1000 levels/, `${name}: ${error.message}`);
          return true;
        },
      );
    }
  });
}
