// plan/teardown-cancel.ts: which teardown requests `nyl teardown --cancel` may withdraw. Pure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cancelTeardowns } from '../../dist/plan/teardown-cancel.js';

const UID = '0192f0c0-0000-7000-8000-00000000000d';
const REQUEST = { by: 'Alice <alice@example.com>', at: '2026-10-26T23:03:58Z', reason: 'by mistake' };
const HOLD = { by: 'Bob <bob@example.com>', reason: 'incident', since: '2026-10-26T23:00:00Z' };
const active = (extra = {}) => ({ uid: UID, kind: 'Command', generation: 1, rendering: { run: ['x'] }, lifecycle: { state: 'active' }, ...extra });
const deletion = { cause: 'request', policy: 'Retain', since: '2026-10-26T23:04:00Z', run: 'r1' };

test('a request not started is withdrawn: only teardownRequest goes; uid, lifecycle and hold stay', () => {
  const desired = new Map([
    ['a', active({ teardownRequest: REQUEST })],
    ['h', active({ lifecycle: { state: 'held' }, hold: HOLD, teardownRequest: REQUEST })],
    ['b', active()],
  ]);
  const r = cancelTeardowns(desired, new Map(), 'all', new Map());
  assert.deepEqual(r.withdrawn, ['a', 'h']);
  assert.deepEqual(r.after.get('a'), active());
  assert.deepEqual(r.after.get('h'), active({ lifecycle: { state: 'held' }, hold: HOLD }));
  assert.equal(r.after.get('b'), desired.get('b'));
  assert.ok(desired.get('a').teardownRequest, 'the input is not changed');
});

test('a started teardown is not withdrawn: deleting (held while deleting too), uncertain, or a started marker in a run', () => {
  const desired = new Map([
    ['d', active({ lifecycle: { state: 'deleting' }, deletion, teardownRequest: REQUEST })],
    ['p', active({ lifecycle: { state: 'held' }, hold: HOLD, deletion, teardownRequest: REQUEST })],
    ['u', active({ lifecycle: { state: 'deleting' }, deletion, teardownRequest: REQUEST })],
    ['r', active({ teardownRequest: REQUEST })],
    ['ok', active({ teardownRequest: REQUEST })],
  ]);
  const observed = new Map([['u', { uid: UID, condition: { type: 'uncertain', retryable: false, reason: 'killed', run: 'r1', since: 'x' } }]]);
  const r = cancelTeardowns(desired, observed, 'all', new Map([['r', 'run-2']]));
  assert.deepEqual(r.withdrawn, ['ok']);
  assert.deepEqual(r.started, [
    { unit: 'd', why: 'deleting' },
    { unit: 'p', why: 'deleting' },
    { unit: 'r', why: 'in-run', run: 'run-2' },
    { unit: 'u', why: 'uncertain' },
  ]);
  assert.ok(r.after.get('d').teardownRequest);
});

test('named units: unknown ones, ones without a request, and nothing to withdraw returns the same map', () => {
  const desired = new Map([['a', active()]]);
  const observed = new Map([['gone', { uid: UID, released: { at: 'x', run: 'r', by: 'y' } }]]);
  const r = cancelTeardowns(desired, observed, ['a', 'gone', 'nope', 'a'], new Map());
  assert.deepEqual(r.withdrawn, []);
  assert.deepEqual(r.unknown, ['nope']);
  assert.deepEqual(r.notRequested, ['a', 'gone']);
  assert.equal(r.after, desired);
  // A teardown that source started (no request) is a started one when named: it cannot be withdrawn either.
  const leaving = new Map([['l', active({ lifecycle: { state: 'deleting' }, deletion: { ...deletion, cause: 'source' } })]]);
  assert.deepEqual(cancelTeardowns(leaving, new Map(), ['l'], new Map()).started, [{ unit: 'l', why: 'deleting' }]);
});
