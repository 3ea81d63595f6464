// What `nyl state forget` may drop (src/plan/forget.ts): only what nothing reconciles any more.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { forgetDecision } from '../../dist/plan/forget.js';

const UID = '0192f0c0-0000-7000-8000-00000000000d';
const doc = (state, extra = {}) => ({ uid: UID, kind: 'Command', generation: 1, lifecycle: { state }, ...extra });
const receipt = { run: 'r1', executionKey: 'sha256:k1', finishedAt: '2026-10-26T22:00:00Z', outputs: {}, desired: doc('active') };
const released = { at: '2026-10-27T00:00:00Z', run: 'r2', by: 'Alice <alice@example.com>' };

test('a tombstone, a pending teardown and a released record are dropped, and say what they were', () => {
  const deletion = { deletion: { cause: 'source', policy: 'Retain', since: '2026-10-27T00:00:00Z' } };
  assert.deepEqual(forgetDecision(doc('retained', deletion), { uid: UID, receipt }), { kind: 'forget', was: 'retained' });
  assert.deepEqual(forgetDecision(doc('pending-teardown'), { uid: UID, receipt }), { kind: 'forget', was: 'pending-teardown' });
  assert.deepEqual(forgetDecision(undefined, { uid: UID, receipt, released }), { kind: 'forget', was: 'released' });
});

test('a unit with an incarnation is refused with what it is; a held marker too', () => {
  for (const state of ['active', 'deleting', 'held']) {
    assert.deepEqual(forgetDecision(doc(state), { uid: UID, receipt }), { kind: 'refused', state, uid: UID }, state);
  }
  assert.deepEqual(forgetDecision({ lifecycle: { state: 'held' }, hold: { by: 'a', since: 'now' } }, undefined), { kind: 'refused', state: 'held' });
});

test('the desired document decides over a released record; an observed file no release left is refused', () => {
  assert.deepEqual(forgetDecision(doc('active'), { uid: UID, released }), { kind: 'refused', state: 'active', uid: UID });
  assert.deepEqual(forgetDecision(undefined, { uid: UID, receipt }), { kind: 'refused', state: 'observed-only', uid: UID });
});

test('a unit state does not hold is unknown', () => {
  assert.deepEqual(forgetDecision(undefined, undefined), { kind: 'unknown' });
});
