// The rules about a unit's incarnation (src/plan/unit-view.ts), one by one: pure, no Git.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkpointMatches,
  conditionOfIncarnation,
  currentReceipt,
  currentUid,
  incarnationCondition,
  incarnationReceipt,
  isDeleting,
  isHeld,
  isMarker,
  isRetained,
  keyNow,
  lifecycleState,
  liveIncarnation,
  notReconciled,
  observesIncarnation,
  receiptOfIncarnation,
  sameRendering,
} from '../../dist/plan/unit-view.js';

const UID = '0192f0c0-0000-7000-8000-00000000000d';
const OLD = '0192f0c0-0000-7000-8000-0000000000ff';
const receipt = { run: 'r1', executionKey: 'sha256:k1', finishedAt: 't', outputs: {}, desired: {} };
const condition = { type: 'failed', retryable: true, reason: 'exit 1', run: 'r2', since: 't' };
const doc = (state, extra = {}) => ({ uid: UID, kind: 'Command', generation: 2, lifecycle: { state }, ...extra });

test('currentUid: the desired uid of the state generation, none for a uid --fresh gave up or a marker', () => {
  assert.equal(currentUid(doc('active'), 2), UID);
  assert.equal(currentUid(doc('active', { generation: 3 }), 2), UID);
  assert.equal(currentUid(doc('active', { generation: 1 }), 2), undefined);
  assert.equal(currentUid({ uid: UID, lifecycle: { state: 'active' } }, 1), UID, 'no generation recorded: the first');
  assert.equal(currentUid({ lifecycle: { state: 'held' } }, 1), undefined);
  assert.equal(currentUid(undefined, 1), undefined);
});

test("only the current incarnation's receipt and condition count", () => {
  const observed = { uid: UID, receipt, condition };
  assert.equal(observesIncarnation(observed, UID), true);
  assert.equal(observesIncarnation(observed, OLD), false);
  assert.equal(observesIncarnation({ receipt }, undefined), false, 'no uid: no incarnation to speak of');
  assert.equal(incarnationReceipt(observed, UID), receipt);
  assert.equal(incarnationReceipt(observed, OLD), undefined);
  assert.equal(incarnationCondition(observed, UID), condition);
  assert.equal(incarnationCondition({ uid: OLD, condition }, UID), undefined);
  assert.equal(currentReceipt(doc('active'), observed, 2), receipt);
  assert.equal(currentReceipt(doc('active', { generation: 1 }), observed, 2), undefined, 'given up by --fresh');
  assert.equal(currentReceipt(undefined, observed, 2), undefined);
  assert.equal(receiptOfIncarnation({ uid: UID, observed }), receipt);
  assert.equal(receiptOfIncarnation({ uid: OLD, observed }), undefined);
  assert.equal(receiptOfIncarnation(undefined), undefined);
  assert.equal(conditionOfIncarnation({ uid: UID, observed }), condition);
  assert.equal(conditionOfIncarnation({ observed }), undefined);
});

test('the lifecycle state and what it makes of the unit', () => {
  assert.equal(lifecycleState(doc('deleting')), 'deleting');
  assert.equal(lifecycleState(undefined), undefined);
  assert.deepEqual(
    ['active', 'held', 'deleting', 'pending-teardown', 'retained'].map((s) => [isHeld(doc(s)), isRetained(doc(s)), isDeleting(doc(s))]),
    [
      [false, false, false],
      [true, false, false],
      [false, false, true],
      [false, false, false],
      [false, true, false],
    ],
  );
  assert.equal(isHeld(undefined), false);
  assert.equal(isMarker({ lifecycle: { state: 'held' } }), true);
  assert.equal(isMarker(doc('held')), false);
  assert.equal(isMarker({ lifecycle: { state: 'active' } }), false);
  assert.equal(notReconciled(doc('active')), undefined);
  assert.equal(notReconciled(undefined), undefined);
  for (const s of ['held', 'deleting', 'pending-teardown', 'retained']) assert.equal(notReconciled(doc(s)), s);
});

test('liveIncarnation: a unit on its way out whatever its generation, else a uid of the current one', () => {
  for (const s of ['deleting', 'pending-teardown', 'retained']) assert.equal(liveIncarnation(doc(s, { generation: 1 }), 2), s);
  assert.equal(liveIncarnation(doc('active'), 2), 'active');
  assert.equal(liveIncarnation(doc('held'), 2), 'held');
  assert.equal(liveIncarnation(doc('active', { generation: 1 }), 2), undefined);
  assert.equal(liveIncarnation(doc('held', { generation: 1 }), 2), undefined);
  assert.equal(liveIncarnation({ lifecycle: { state: 'held' } }, 1), undefined, 'a marker');
});

test('checkpointMatches: the same incarnation and the key the unit has now', () => {
  const cp = { uid: UID, executionKey: 'sha256:k1' };
  assert.equal(checkpointMatches(cp, UID, 'sha256:k1'), true);
  assert.equal(checkpointMatches(cp, OLD, 'sha256:k1'), false);
  assert.equal(checkpointMatches(cp, UID, 'sha256:k2'), false);
  assert.equal(checkpointMatches(cp, undefined, 'sha256:k1'), false);
  assert.equal(checkpointMatches(cp, UID, undefined), false, 'a key that cannot be told matches nothing');
  assert.equal(keyNow('sha256:k1', undefined), 'sha256:k1', 'source does not resolve it: the recorded key');
  assert.equal(keyNow('sha256:k1', 'sha256:k1'), 'sha256:k1');
  assert.equal(keyNow('sha256:k1', 'sha256:k2'), undefined, 'source moved on');
  assert.equal(keyNow(undefined, undefined), undefined);
});

test('sameRendering: canonical JSON, key order and undefined members do not count', () => {
  assert.equal(sameRendering({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }), true);
  assert.equal(sameRendering({ a: 1, b: undefined }, { a: 1 }), true);
  assert.equal(sameRendering({ a: [1, 2] }, { a: [2, 1] }), false);
  assert.equal(sameRendering({ a: 1 }, { a: '1' }), false);
  assert.equal(sameRendering(undefined, undefined), true);
  assert.equal(sameRendering({ a: 1 }, undefined), false);
});
