import { test } from 'node:test';
import assert from 'node:assert/strict';
import { holdDocument, resumeDocument } from '../../dist/plan/hold.js';
import { isMarker } from '../../dist/plan/unit-view.js';
import { applyHolds } from '../../dist/run/apply-holds.js';

const UID = '0192f0c0-0000-7000-8000-00000000000d';
const OTHER_UID = '0192f0c0-0000-7000-8000-0000000000ff';
const HOLD = { by: 'Alice <alice@example.com>', reason: 'incident 4711', since: '2026-10-26T23:03:58Z' };

const ran = {
  uid: UID,
  kind: 'Command',
  generation: 1,
  source: 'c1',
  rendering: { run: ['migrate', 'v1'] },
  dependsOn: ['db'],
  lifecycle: { state: 'active' },
};
const receiptOf = (desired) => ({ run: 'r1', executionKey: 'sha256:k1', finishedAt: '2026-10-26T22:00:00Z', outputs: { version: 1 }, desired });

test('a unit with a receipt is held at the desired document of its receipt, with its uid', () => {
  const newer = { ...ran, source: 'c2', rendering: { run: ['migrate', 'v2'] } };
  const d = holdDocument(newer, { uid: UID, receipt: receiptOf(ran) }, HOLD);
  assert.equal(d.kind, 'hold');
  assert.equal(d.marker, false);
  assert.deepEqual(d.doc, { ...ran, lifecycle: { state: 'held' }, hold: { ...HOLD, pending: 'c2' } });
  assert.equal(d.doc.uid, UID);
  assert.equal(isMarker(d.doc), false);
});

test('no pending when the desired document is the one the receipt ran', () => {
  const d = holdDocument(ran, { uid: UID, receipt: receiptOf(ran) }, HOLD);
  assert.deepEqual(d.doc, { ...ran, lifecycle: { state: 'held' }, hold: HOLD });
  assert.equal(d.doc.hold.pending, undefined);
});

test('no pending when only the source commit moved but the rendering is the same', () => {
  const d = holdDocument({ ...ran, source: 'c2' }, { uid: UID, receipt: receiptOf(ran) }, HOLD);
  assert.equal(d.doc.hold.pending, undefined);
  assert.equal(d.doc.source, 'c1');
});

test('the hold record is copied, not shared', () => {
  const hold = { ...HOLD };
  const d = holdDocument({ ...ran, source: 'c2', rendering: { run: ['x'] } }, { uid: UID, receipt: receiptOf(ran) }, hold);
  assert.equal(hold.pending, undefined, "the caller's record is not changed");
  assert.equal(d.doc.hold.pending, 'c2');
});

test('a receipt of another incarnation does not count: the unit never ran as it is', () => {
  const d = holdDocument(ran, { uid: OTHER_UID, receipt: receiptOf({ ...ran, uid: OTHER_UID }) }, HOLD);
  assert.equal(d.kind, 'hold');
  assert.equal(d.marker, true);
  assert.deepEqual(d.doc, { lifecycle: { state: 'held' }, hold: HOLD });
});

test("an uncertain unit with a receipt is held at the receipt's document", () => {
  const newer = { ...ran, source: 'c2', rendering: { run: ['migrate', 'v2'] } };
  const observed = { uid: UID, receipt: receiptOf(ran), condition: { type: 'uncertain', retryable: false, reason: 'r', run: 'r2', since: 'x' } };
  const d = holdDocument(newer, observed, HOLD);
  assert.equal(d.marker, false);
  assert.deepEqual(d.doc.rendering, ran.rendering);
  assert.equal(d.doc.source, 'c1');
  assert.equal(d.doc.uid, UID);
  assert.equal(d.doc.hold.pending, 'c2');
});

test('an uncertain unit without a receipt keeps its own document and uid', () => {
  const observed = { uid: UID, condition: { type: 'uncertain', retryable: false, reason: 'r', run: 'r2', since: 'x' } };
  const d = holdDocument(ran, observed, HOLD);
  assert.equal(d.kind, 'hold');
  assert.equal(d.marker, false);
  assert.deepEqual(d.doc, { ...ran, lifecycle: { state: 'held' }, hold: HOLD });
});

test('a unit that never ran is held as a marker: no uid, kind or rendering', () => {
  for (const desired of [undefined, ran, { ...ran, uid: undefined }]) {
    const d = holdDocument(desired, undefined, HOLD);
    assert.equal(d.kind, 'hold');
    assert.equal(d.marker, true);
    assert.deepEqual(d.doc, { lifecycle: { state: 'held' }, hold: HOLD });
    assert.equal(isMarker(d.doc), true);
  }
});

test('a failed unit without a receipt keeps its incarnation: its condition must survive hold and resume', () => {
  const observed = { uid: UID, condition: { type: 'failed', retryable: false, reason: 'timed out', run: 'r1', since: 'x', acknowledgementRequired: true } };
  const d = holdDocument(ran, observed, HOLD);
  assert.equal(d.marker, false);
  assert.equal(d.doc.uid, UID);
  assert.deepEqual(d.doc.rendering, ran.rendering);
  assert.equal(d.doc.lifecycle.state, 'held');
  assert.equal(isMarker(d.doc), false);
});

test('a failed unit with a receipt is held at the receipt', () => {
  const observed = { uid: UID, receipt: receiptOf(ran), condition: { type: 'failed', retryable: false, reason: 'exit 1', run: 'r2', since: 'x' } };
  const d = holdDocument({ ...ran, source: 'c2', rendering: { run: ['broken'] } }, observed, HOLD);
  assert.equal(d.marker, false);
  assert.deepEqual(d.doc.rendering, ran.rendering);
  assert.equal(d.doc.hold.pending, 'c2');
});

test('a deleting unit pauses: its deletion block stays next to the hold', () => {
  const deletion = { cause: 'left-source', policy: 'Teardown', since: '2026-10-26T20:00:00Z' };
  const deleting = { ...ran, lifecycle: { state: 'deleting' }, deletion };
  const withReceipt = holdDocument(deleting, { uid: UID, receipt: receiptOf(ran) }, HOLD);
  assert.equal(withReceipt.marker, false);
  assert.deepEqual(withReceipt.doc, { ...ran, lifecycle: { state: 'held' }, hold: HOLD, deletion });
  const withoutReceipt = holdDocument(deleting, undefined, HOLD);
  assert.equal(withoutReceipt.marker, false);
  assert.deepEqual(withoutReceipt.doc, { ...ran, lifecycle: { state: 'held' }, hold: HOLD, deletion });
});

test('a recorded teardown request stays on the held document', () => {
  const teardownRequest = { by: 'Bob', at: 'x' };
  const d = holdDocument({ ...ran, teardownRequest }, { uid: UID, receipt: receiptOf(ran) }, HOLD);
  assert.deepEqual(d.doc.teardownRequest, teardownRequest);
});

test('a retained tombstone is refused; an already held unit is already-held', () => {
  const retained = { ...ran, lifecycle: { state: 'retained' } };
  assert.deepEqual(holdDocument(retained, { uid: UID, receipt: receiptOf(ran) }, HOLD), { kind: 'refused', reason: 'retained' });
  const held = { ...ran, lifecycle: { state: 'held' }, hold: { by: 'Bob', since: 'x' } };
  assert.deepEqual(holdDocument(held, { uid: UID, receipt: receiptOf(ran) }, HOLD), { kind: 'already-held', doc: held });
  const marker = { lifecycle: { state: 'held' }, hold: HOLD };
  assert.deepEqual(holdDocument(marker, undefined, HOLD), { kind: 'already-held', doc: marker });
});

test('resume lifts the hold back to active, keeping uid and everything else', () => {
  const held = { ...ran, lifecycle: { state: 'held' }, hold: { ...HOLD, pending: 'c2' } };
  assert.deepEqual(resumeDocument(held), { ...ran, lifecycle: { state: 'active' } });
  assert.equal('hold' in resumeDocument(held), false);
  assert.deepEqual(held.hold.pending, 'c2', 'the input is not changed');
  assert.deepEqual(resumeDocument({ lifecycle: { state: 'held' }, hold: HOLD }), { lifecycle: { state: 'active' } });
});

test('resume of a held deleting unit returns to deleting with its deletion block', () => {
  const deletion = { cause: 'left-source', policy: 'Teardown', since: 'x' };
  const held = { ...ran, lifecycle: { state: 'held' }, hold: HOLD, deletion, teardownRequest: { by: 'Bob' } };
  assert.deepEqual(resumeDocument(held), { ...ran, lifecycle: { state: 'deleting' }, deletion, teardownRequest: { by: 'Bob' } });
});

test('resume of a unit that is not held is undefined', () => {
  assert.equal(resumeDocument(undefined), undefined);
  for (const state of ['active', 'deleting', 'pending-teardown', 'retained']) {
    assert.equal(resumeDocument({ ...ran, lifecycle: { state } }), undefined, state);
  }
  assert.equal(resumeDocument({ uid: UID }), undefined);
});

test('hold then resume round-trips a unit that ran as it is', () => {
  const d = holdDocument(ran, { uid: UID, receipt: receiptOf(ran) }, HOLD);
  assert.deepEqual(resumeDocument(d.doc), ran);
});

test('isMarker: held without uid and kind only', () => {
  assert.equal(isMarker({ lifecycle: { state: 'held' } }), true);
  assert.equal(isMarker({ lifecycle: { state: 'held' }, hold: HOLD, source: 'c1' }), true);
  assert.equal(isMarker({ lifecycle: { state: 'held' }, uid: UID }), false);
  assert.equal(isMarker({ lifecycle: { state: 'held' }, kind: 'Command' }), false);
  assert.equal(isMarker({ lifecycle: { state: 'active' } }), false);
  assert.equal(isMarker({ ...ran, lifecycle: { state: 'held' } }), false);
});

// --- applyHolds ------------------------------------------------------------------------------

test('applyHolds: held, markers, already held and refused, each with its effect', () => {
  const desired = new Map([
    ['migrate', ran],
    ['fresh', { ...ran, uid: undefined, kind: undefined, rendering: undefined }],
    ['frozen', { ...ran, lifecycle: { state: 'held' }, hold: { by: 'Bob', since: 'x' } }],
    ['tomb', { ...ran, lifecycle: { state: 'retained' } }],
  ]);
  const observed = new Map([['migrate', { uid: UID, receipt: receiptOf(ran) }]]);
  const at = '2026-10-26T23:03:58Z';
  const out = applyHolds('dev', desired, observed, [
    { unit: 'migrate', by: 'Alice <alice@example.com>', reason: 'incident 4711', at },
    { unit: 'fresh', by: 'Alice <alice@example.com>', at },
    { unit: 'never', by: 'Alice <alice@example.com>', at },
    { unit: 'frozen', by: 'Alice <alice@example.com>', at },
    { unit: 'tomb', by: 'Alice <alice@example.com>', at },
  ]);
  assert.deepEqual(out.held, ['migrate', 'fresh', 'never']);
  assert.deepEqual(out.markers, ['fresh', 'never']);
  assert.deepEqual(out.alreadyHeld, ['frozen']);
  assert.deepEqual(out.refused, ['tomb']);
  assert.deepEqual(out.desired.get('migrate'), {
    ...ran,
    lifecycle: { state: 'held' },
    hold: { by: 'Alice <alice@example.com>', reason: 'incident 4711', since: at },
  });
  assert.deepEqual(out.desired.get('fresh'), { lifecycle: { state: 'held' }, hold: { by: 'Alice <alice@example.com>', since: at } });
  assert.equal('reason' in out.desired.get('fresh').hold, false, 'no reason key without a reason');
  assert.deepEqual(out.desired.get('never'), { lifecycle: { state: 'held' }, hold: { by: 'Alice <alice@example.com>', since: at } });
  assert.equal(out.desired.get('frozen'), desired.get('frozen'));
  assert.equal(out.desired.get('tomb'), desired.get('tomb'));
  assert.equal(desired.get('migrate'), ran, 'the input map is not changed');
  assert.equal(desired.has('never'), false);
  assert.equal(out.diagnostics.length, 1);
  const d = out.diagnostics[0];
  assert.equal(d.code, 'NYL-HOLD-REFUSED');
  assert.equal(d.severity, 'error');
  assert.deepEqual(d.units, ['tomb']);
  assert.match(d.message, /tomb/);
  assert.match(d.fix, /teardown/);
  assert.match(d.fix, /forget/);
});

test('applyHolds: two holds of one unit in a batch: the second finds it already held', () => {
  const out = applyHolds('dev', new Map(), new Map(), [
    { unit: 'x', by: 'A', at: 't1' },
    { unit: 'x', by: 'B', at: 't2' },
    { unit: 'x', by: 'C', at: 't3' },
  ]);
  assert.deepEqual(out.held, ['x']);
  assert.deepEqual(out.markers, ['x']);
  assert.deepEqual(out.alreadyHeld, ['x']);
  assert.deepEqual(out.desired.get('x').hold, { by: 'A', since: 't1' });
});

test('applyHolds with no requests changes nothing', () => {
  const desired = new Map([['migrate', ran]]);
  const out = applyHolds('dev', desired, new Map(), []);
  assert.deepEqual(out, { desired, held: [], markers: [], alreadyHeld: [], refused: [], diagnostics: [] });
  assert.notEqual(out.desired, desired);
});

// --- the planner's rules: the current incarnation, canonical rendering equality ----------------

test('a receipt of an incarnation --fresh gave up does not count: the unit keeps its own document', () => {
  // State generation 2: the uid of generation 1 is given up, as the planner treats it.
  const newer = { ...ran, source: 'c2', rendering: { run: ['migrate', 'v2'] } };
  const observed = { uid: UID, receipt: receiptOf(ran), lastRun: { run: 'r1', result: 'executed', at: 'x' } };
  const d = holdDocument(newer, observed, HOLD, 2);
  assert.deepEqual(d, { kind: 'hold', doc: { ...newer, lifecycle: { state: 'held' }, hold: HOLD }, marker: false });
  // In its own generation the same receipt counts.
  assert.deepEqual(holdDocument(newer, observed, HOLD, 1).doc.rendering, ran.rendering);
});

test('renderings equal as canonical JSON are the same: no pending for another key order', () => {
  const rendering = { run: ['migrate', 'v1'], env: { A: '1', B: '2' } };
  const reordered = { env: { B: '2', A: '1' }, run: ['migrate', 'v1'] };
  const d = holdDocument({ ...ran, source: 'c2', rendering: reordered }, { uid: UID, receipt: receiptOf({ ...ran, rendering }) }, HOLD, 1);
  assert.equal(d.doc.hold.pending, undefined);
  assert.equal(d.doc.source, 'c1');
});

test('applyHolds: the state generation decides which receipt counts', () => {
  const observed = new Map([['migrate', { uid: UID, receipt: receiptOf(ran) }]]);
  const newer = { ...ran, source: 'c2', rendering: { run: ['migrate', 'v2'] } };
  const out = applyHolds('dev', new Map([['migrate', newer]]), observed, [{ unit: 'migrate', by: 'A', at: 't' }], 2);
  // No current receipt, nothing shows it ran in this generation: a marker.
  assert.deepEqual(out.markers, ['migrate']);
});
