import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { canonicalJson, executionKey } from '../../dist/project/execution-key.js';

test('canonicalJson sorts keys recursively, keeps arrays, drops undefined', () => {
  assert.equal(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' }, u: undefined }), '{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}');
  assert.equal(canonicalJson([undefined, null, true, 'é']), '[null,null,true,"é"]');
  assert.equal(canonicalJson({ B: 1, a: 2, _: 3 }), '{"B":1,"_":3,"a":2}');
  assert.throws(() => canonicalJson({ f: () => 1 }), TypeError);
});

const base = { kind: 'Command', rendering: { run: ['echo', 'hi'], env: { A: '1' } }, uid: '0190a1b2-0000-7000-8000-000000000000', driverVersion: 'command/1' };

test('executionKey is sha256 over the canonical JSON of its inputs', () => {
  const expected = createHash('sha256')
    .update(canonicalJson({ driverVersion: base.driverVersion, kind: base.kind, rendering: base.rendering, uid: base.uid }))
    .digest('hex');
  assert.equal(executionKey(base), `sha256:${expected}`);
  assert.match(executionKey(base), /^sha256:[0-9a-f]{64}$/);
});

test('executionKey is stable under key order', () => {
  const reordered = { uid: base.uid, driverVersion: base.driverVersion, rendering: { env: { A: '1' }, run: ['echo', 'hi'] }, kind: 'Command' };
  assert.equal(executionKey(reordered), executionKey(base));
});

test('executionKey changes with the uid, the rendering, the kind and the driver version', () => {
  const key = executionKey(base);
  assert.notEqual(executionKey({ ...base, uid: '0190a1b2-0000-7000-8000-000000000001' }), key);
  assert.notEqual(executionKey({ ...base, rendering: { ...base.rendering, env: { A: '2' } } }), key);
  assert.notEqual(executionKey({ ...base, rendering: { ...base.rendering, run: ['hi', 'echo'] } }), key);
  assert.notEqual(executionKey({ ...base, kind: 'OciImage' }), key);
  assert.notEqual(executionKey({ ...base, driverVersion: 'command/2' }), key);
});
