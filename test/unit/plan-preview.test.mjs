// What a waiting unit changed on its own (src/plan/preview.ts): an unknown output in its preview
// stands for any text, and only for that; the text around it must match the recorded rendering.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ownChanges } from '../../dist/plan/preview.js';

const UNKNOWN = '(known after apply)';

test('the text around an unknown output is compared as it is', () => {
  const recorded = { env: { URL: 'postgres://h/db1' }, script: 'migrate' };
  assert.deepEqual(ownChanges({ env: { URL: `postgres://${UNKNOWN}/db1` }, script: 'migrate' }, recorded), [], 'only the unknown part may differ');
  assert.deepEqual(ownChanges({ env: { URL: `postgres://${UNKNOWN}/db2` }, script: 'migrate' }, recorded), ['env'], 'db1 -> db2 is a change of its own');
  assert.deepEqual(ownChanges({ env: { URL: `mysql://${UNKNOWN}/db1` }, script: 'migrate' }, recorded), ['env']);
});

test('a value that is wholly unknown equals anything; two unknowns in one string each stand for any text', () => {
  assert.deepEqual(ownChanges({ port: UNKNOWN }, { port: 5432 }), []);
  assert.deepEqual(ownChanges({ url: `${UNKNOWN}:${UNKNOWN}/x` }, { url: 'h:5432/x' }), []);
  assert.deepEqual(ownChanges({ url: `${UNKNOWN}:${UNKNOWN}/x` }, { url: 'h:5432/y' }), ['url']);
  assert.deepEqual(ownChanges({ url: `a.b${UNKNOWN}` }, { url: 'aXb1' }), ['url'], 'a dot around an unknown is a dot, not any character');
});
