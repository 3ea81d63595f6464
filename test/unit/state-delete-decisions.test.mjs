// The two pure decisions of `nyl state delete`: which units keep the state from being deleted
// (src/commands/state/state-delete-checks.ts), and what --teardown does once its teardown reported
// (src/commands/state/state-delete-verdict.ts), over hand-built state documents and ReconcileReports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unitBlockers, refuseBlocked } from '../../dist/commands/state/state-delete-checks.js';
import { unimportedRuns } from '../../dist/state/location.js';
import { teardownVerdict, verdictErrors } from '../../dist/commands/state/state-delete-verdict.js';
import { exitCodeOf } from '../../dist/report/exit-code.js';

const UID = '0192f0c0-0000-7000-8000-00000000000d';
const BY = 'Alice <alice@example.com>';
const AT = '2026-10-26T23:03:58Z';

// --- which units block ----------------------------------------------------------------------------

const active = (extra = {}) => ({ uid: UID, kind: 'Command', generation: 2, rendering: { script: 'true' }, lifecycle: { state: 'active' }, ...extra });

test('incarnations, teardowns in progress and teardown requests block; markers, released records and given-up generations do not', () => {
  const desired = new Map([
    ['active', active()],
    ['held', active({ lifecycle: { state: 'held' }, hold: { by: BY, since: AT } })],
    ['marker', { lifecycle: { state: 'held' }, hold: { by: BY, since: AT } }],
    ['tombstone', active({ lifecycle: { state: 'retained' } })],
    ['deleting', active({ lifecycle: { state: 'deleting' }, deletion: { cause: 'source', policy: 'Teardown', since: AT } })],
    ['pending', active({ lifecycle: { state: 'pending-teardown' }, deletion: { cause: 'source', policy: 'Teardown', since: AT } })],
    ['requested', active({ teardownRequest: { by: BY, at: AT } })],
    ['old', active({ generation: 1 })],
    ['old-tombstone', active({ generation: 1, lifecycle: { state: 'retained' } })],
  ]);
  const observed = new Map([
    ['active', { uid: UID }],
    ['released', { uid: UID, released: { at: AT, run: 'r1', by: BY } }],
    ['orphan', { uid: UID, condition: { type: 'uncertain', retryable: false, reason: 'x', run: 'r1', since: AT } }],
    ['unnamed', { lastRun: { run: 'r1', result: 'failed', at: AT } }],
  ]);
  assert.deepEqual(unitBlockers({ desiredUnits: desired, observedUnits: observed }, 2), [
    { unit: 'active', why: 'active' },
    { unit: 'deleting', why: 'deleting' },
    { unit: 'held', why: 'held' },
    { unit: 'old-tombstone', why: 'retained' },
    { unit: 'orphan', why: 'observed only' },
    { unit: 'pending', why: 'pending-teardown' },
    { unit: 'requested', why: 'teardown requested' },
    { unit: 'tombstone', why: 'retained' },
  ]);
});

test('an empty state blocks nothing; a document without generation counts as generation 1', () => {
  assert.deepEqual(unitBlockers({ desiredUnits: new Map(), observedUnits: new Map() }, 1), []);
  const legacy = new Map([['x', { uid: UID, lifecycle: { state: 'active' } }]]);
  assert.deepEqual(unitBlockers({ desiredUnits: legacy, observedUnits: new Map() }, 1), [{ unit: 'x', why: 'active' }]);
  assert.deepEqual(unitBlockers({ desiredUnits: legacy, observedUnits: new Map() }, 2), []);
});

test('unimported runs are the run refs of this environment only, in run order', () => {
  const loc = { environment: 'dev', coordinationPrefix: 'refs/nyl/' };
  const refs = new Map([
    ['refs/nyl/dev/runs/0192b', 'a'],
    ['refs/nyl/dev/runs/0192a', 'b'],
    ['refs/nyl/dev/evidence/x/0192a', 'c'],
    ['refs/nyl/devx/runs/0192c', 'd'],
    ['refs/nyl/dev/lease', 'e'],
  ]);
  assert.deepEqual(unimportedRuns(loc, refs), ['0192a', '0192b']);
});

test('a refusal carries every reason: the units (listed, with the fix naming --teardown, teardown and forget), then the runs (naming reconcile and recover)', () => {
  const refusal = (() => {
    try {
      refuseBlocked('dev', [{ unit: 'cache', why: 'retained' }], ['0192a']);
    } catch (error) {
      return error;
    }
    return undefined;
  })();
  assert.ok(refusal, 'refused');
  const [units, runs] = refusal.diagnostics;
  assert.equal(units.code, 'NYL-STATE-DELETE-INCARNATIONS');
  assert.deepEqual(units.units, ['cache']);
  assert.match(units.message, /cache \(retained\)/);
  assert.match(units.fix, /`nyl state delete -e dev --teardown --reason "<why>"`/);
  assert.match(units.fix, /`nyl teardown -e dev --unit cache`/);
  assert.match(units.fix, /`nyl state forget -e dev --unit cache --reason "<why>"`/);
  assert.equal(runs.code, 'NYL-STATE-DELETE-INCARNATIONS');
  assert.deepEqual(runs.data, { runs: ['0192a'] });
  assert.match(runs.fix, /`nyl reconcile -e dev`/);
  assert.match(runs.fix, /`nyl recover -e dev`/);
  assert.doesNotThrow(() => refuseBlocked('dev', [], []));
});

// --- what --teardown does after its teardown --------------------------------------------------------

/** A teardown's ReconcileReport with one row per unit: {name: result} or {name: [result, {more}]}. */
function teardownReport(rows, more = {}) {
  const units = {};
  for (const [name, row] of Object.entries(rows)) {
    const [result, extra] = Array.isArray(row) ? row : [row, {}];
    units[name] = { kind: 'Command', result, detail: '', dispatched: result === 'removed', ...extra };
  }
  return {
    apiVersion: 'nyl.io/v1',
    formatVersion: 1,
    kind: 'ReconcileReport',
    operation: 'teardown',
    environment: 'dev',
    run: '0192f0c0-0000-7000-8000-0000000000aa',
    source: 'a'.repeat(40),
    sourceOverride: false,
    committed: true,
    units,
    unitOrder: Object.keys(rows),
    details: {},
    errors: [],
    warnings: [],
    notes: [],
    ...more,
  };
}

/** The exit code state delete ends with for a verdict that stops it. */
function exitOf(report, verdict) {
  return exitCodeOf(undefined, verdictErrors('dev', report, verdict), 'state delete');
}

test('every unit gone (removed, released) or no unit at all: on to the deletion', () => {
  assert.deepEqual(teardownVerdict(teardownReport({ a: 'removed', b: 'released' })), { kind: 'delete' });
  assert.deepEqual(teardownVerdict(teardownReport({})), { kind: 'delete' });
});

test('every remaining unit waits: stop, exit 2, NYL-STATE-DELETE-WAITING naming the units and what they wait for', () => {
  for (const waiting of ['pending-teardown', 'tearing-down', 'blocked', 'held', 'awaiting-approval']) {
    const report = teardownReport({ gone: 'removed', w: [waiting, { uid: UID }] });
    const verdict = teardownVerdict(report);
    assert.deepEqual(verdict, { kind: 'waiting', units: ['w'] }, waiting);
    assert.equal(exitOf(report, verdict), 2, waiting);
    const [d] = verdictErrors('dev', report, verdict);
    assert.equal(d.code, 'NYL-STATE-DELETE-WAITING');
    assert.deepEqual(d.units, ['w']);
    assert.match(d.message, new RegExp(`w \\(${waiting}\\)`));
    assert.match(d.fix, /`nyl state delete -e dev --teardown --reason "<why>"`/);
  }
  const all = teardownReport({ a: ['held', { uid: UID }], b: 'awaiting-approval', c: 'blocked' });
  assert.deepEqual(teardownVerdict(all), { kind: 'waiting', units: ['a', 'b', 'c'] });
});

test('a held unit waits only while it has an incarnation: a held marker (no uid) is removed by the deletion', () => {
  assert.deepEqual(teardownVerdict(teardownReport({ h: ['held', { uid: UID }] })), { kind: 'waiting', units: ['h'] });
  assert.deepEqual(teardownVerdict(teardownReport({ a: 'removed', marker: 'held' })), { kind: 'delete' });
  assert.deepEqual(teardownVerdict(teardownReport({ marker: 'held', w: 'blocked' })), { kind: 'waiting', units: ['w'] });
});

test('a teardown that failed or is uncertain: stop, exit 1, also when other units wait', () => {
  for (const failed of ['failed', 'uncertain', 'recovered']) {
    const report = teardownReport({ a: 'removed', f: failed, w: ['held', { uid: UID }] });
    const verdict = teardownVerdict(report);
    assert.equal(verdict.kind, 'failed', failed);
    assert.deepEqual(verdict.units, ['f']);
    assert.equal(exitOf(report, verdict), 1, failed);
    const [d] = verdictErrors('dev', report, verdict);
    assert.equal(d.code, 'NYL-STATE-DELETE-INCARNATIONS');
    assert.match(d.fix, /`nyl recover -e dev --unit f --retry --reason "<why>"`/);
  }
  // A held unit whose condition is uncertain is uncertain first.
  const heldUncertain = teardownReport({ h: ['held', { uncertain: true }] });
  assert.equal(teardownVerdict(heldUncertain).kind, 'failed');
  assert.equal(exitOf(heldUncertain, teardownVerdict(heldUncertain)), 1);
});

test("the teardown's own errors stop the command with their codes; a cancelled teardown is exit 1 for state delete", () => {
  const cancelled = { code: 'NYL-RUN-CANCELLED', severity: 'error', message: 'cancelled', fix: 'run again' };
  const report = teardownReport({ a: 'removed' }, { errors: [cancelled] });
  const verdict = teardownVerdict(report);
  assert.deepEqual(verdict, { kind: 'failed', units: [], errors: [cancelled] });
  assert.deepEqual(verdictErrors('dev', report, verdict), [cancelled]);
  assert.equal(exitOf(report, verdict), 1);
});

test('a unit neither gone nor waiting (retained, current): not every remaining unit waits, so the state decides under the lease', () => {
  assert.deepEqual(teardownVerdict(teardownReport({ a: 'retained', w: ['held', { uid: UID }] })), { kind: 'delete' });
  assert.deepEqual(teardownVerdict(teardownReport({ a: 'current' })), { kind: 'delete' });
  assert.deepEqual(teardownVerdict(teardownReport({ a: 'removed', b: 'imported' })), { kind: 'delete' });
});

test('units missing from unitOrder still count', () => {
  const report = teardownReport({ a: 'removed' });
  report.units.late = { kind: 'Command', result: 'failed', detail: '', dispatched: true };
  assert.deepEqual(teardownVerdict(report).units, ['late']);
});
