// Reading state documents (src/state/parse.ts, src/state/shapes.ts, src/state/damage.ts): what
// Nyl writes reads back as it was; invalid YAML is a flaw with its line, a wrong shape one with
// its JSON pointer; damage becomes NYL-STATE-CORRUPT naming the ref, the path and the line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { damageDiagnostic } from '../../dist/state/damage.js';
import { newStateDoc, toYaml } from '../../dist/state/documents.js';
import { parseStateDocument } from '../../dist/state/parse.js';

const UID = '01a22c53-8200-7531-b917-b6a7f7dec2dd';
const desired = {
  uid: UID,
  kind: 'Command',
  generation: 1,
  source: 'c0ffee',
  rendering: { run: ['a', 'b'], env: { X: 'line 1\nline 2' } },
  dependsOn: ['db'],
  lifecycle: { state: 'active' },
};
const receipt = { run: 'r1', executionKey: 'sha256:k', finishedAt: '2026-11-30T12:00:00Z', outputs: { url: 'postgres://db', n: 3 }, desired };
const observed = {
  uid: UID,
  receipt,
  condition: { type: 'uncertain', retryable: false, reason: 'r', run: 'r2', since: '2026-11-30T12:01:00Z', code: 'NYL-RUN-SUPERSEDED' },
  lastRun: { run: 'r2', result: 'uncertain', at: '2026-11-30T12:01:00Z' },
  acknowledgement: { by: 'A <a@example.com>', reason: 'checked', at: '2026-11-30T12:02:00Z' },
};
const run = {
  apiVersion: 'nyl.io/v1',
  kind: 'Run',
  run: 'r1',
  environment: 'dev',
  operation: 'reconcile',
  holder: { name: 'A <a@example.com>', host: 'h', pid: 7 },
  startedAt: '2026-11-30T12:00:00Z',
  deadline: '2026-11-30T12:05:00.250Z',
  source: 'c0ffee',
  ended: { at: '2026-11-30T12:03:00Z', reason: 'cancelled' },
};
const runUnit = {
  unit: 'db',
  uid: UID,
  kind: 'Command',
  executionKey: 'sha256:k',
  startedAt: '2026-11-30T12:00:00Z',
  desired,
  checkpoint: { result: 'failed', finishedAt: '2026-11-30T12:01:00Z', reason: 'exit 1', retryable: false, acknowledgementRequired: true },
};
const signal = {
  apiVersion: 'nyl.io/v1',
  kind: 'Signal',
  type: 'hold',
  run: 'r1',
  unit: 'db',
  by: 'A <a@example.com>',
  reason: 'incident',
  at: '2026-11-30T12:00:00Z',
};
const state = newStateDoc('dev', { type: 'initialized', at: '2026-11-30T12:00:00Z', by: 'A <a@example.com>' });

test('every document Nyl writes reads back as it was', () => {
  const cases = [
    ['state', state],
    ['desired-unit', desired],
    ['desired-unit', { lifecycle: { state: 'held' }, hold: { by: 'A', since: '2026-11-30T12:00:00Z' } }],
    ['desired-unit', { lifecycle: { state: 'active' } }],
    ['observed-unit', observed],
    ['run', run],
    ['run-unit', runUnit],
    ['signal', signal],
  ];
  for (const [kind, doc] of cases) assert.deepEqual(parseStateDocument(kind, toYaml(doc)), { ok: true, value: doc }, kind);
});

test("a condition's and a checkpoint's tool output read back as written, whatever the lines hold", () => {
  const output = [
    '',
    'Error: "quoted" #1',
    '- a list?',
    'yes',
    '123',
    'null',
    'tab\there',
    'ünïcode ✓ \ufffd',
    '  leading spaces',
    'key: value',
    '***',
    "it's",
  ];
  const failed = { ...observed, condition: { ...observed.condition, type: 'failed', retryable: true, output } };
  const record = { ...runUnit, checkpoint: { ...runUnit.checkpoint, output } };
  assert.deepEqual(parseStateDocument('observed-unit', toYaml(failed)), { ok: true, value: failed });
  assert.deepEqual(parseStateDocument('run-unit', toYaml(record)), { ok: true, value: record });
  assert.equal(parseStateDocument('observed-unit', toYaml({ ...failed, condition: { ...failed.condition, output: [1] } })).ok, false, 'lines are strings');
});

test('invalid YAML is a flaw with its line, also a duplicate key the fast reader would otherwise take', () => {
  const text = toYaml(desired);
  const lines = text.split('\n').length;
  for (const [damaged, line] of [
    [`${text}kind: Command\n`, lines],
    ['uid: x\nlifecycle:\n\tstate: active\n', 3],
    ['lifecycle: [\n', 2],
  ]) {
    const parsed = parseStateDocument('desired-unit', damaged);
    assert.equal(parsed.ok, false, damaged);
    assert.equal(parsed.flaw.line, line, `${JSON.stringify(damaged)}: ${parsed.flaw.problem}`);
    assert.match(parsed.flaw.problem, /^invalid YAML: /);
    assert.doesNotMatch(parsed.flaw.problem, /\n/, 'one line');
  }
});

test('a wrong shape is a flaw with the JSON pointer of the first problem', () => {
  const cases = [
    ['desired-unit', { ...desired, uuid: UID }, '/uuid', /unknown field uuid/],
    ['desired-unit', { ...desired, uid: 42 }, '/uid', /must be a string/],
    ['desired-unit', { ...desired, lifecycle: 'active' }, '/lifecycle', /must be a mapping/],
    ['desired-unit', { kind: 'Command', lifecycle: { state: 'active' } }, '/uid', /misses its uid/],
    ['desired-unit', { ...desired, uid: undefined }, '/uid', /misses its uid/],
    ['desired-unit', { ...desired, generation: 0 }, '/generation', /at least 1/],
    ['observed-unit', { ...observed, receipt: { ...receipt, executionKey: [] } }, '/receipt/executionKey', /must be a string/],
    ['observed-unit', { uid: UID, condition: 'uncertain' }, '/condition', /must be a mapping/],
    ['state', { ...state, status: 'gone' }, '/status', /one of active, deleted, moved/],
    ['run', { ...run, deadline: 'soon' }, '/deadline', /not an ISO 8601 time/],
    ['run-unit', { ...runUnit, checkpoint: { ...runUnit.checkpoint, result: 'ok' } }, '/checkpoint/result', /one of/],
    ['signal', { ...signal, type: 'resume' }, '/type', /"hold"/],
    ['state', null, '', /must be a mapping/],
  ];
  for (const [kind, doc, pointer, problem] of cases) {
    const parsed = parseStateDocument(kind, toYaml(doc));
    assert.equal(parsed.ok, false, `${kind} ${JSON.stringify(doc)}`);
    assert.equal(parsed.flaw.pointer, pointer, `${kind}: ${parsed.flaw.problem}`);
    assert.match(parsed.flaw.problem, problem);
  }
});

test('damage is NYL-STATE-CORRUPT naming the ref, the path and the line, with the fix of its document', () => {
  const ref = 'refs/heads/nyl/dev/desired';
  const d = damageDiagnostic('dev', {
    document: 'desired-unit',
    ref,
    object: 'a'.repeat(40),
    path: 'units/db.yaml',
    unit: 'db',
    line: 3,
    problem: 'invalid YAML: Map keys must be unique',
  });
  assert.equal(d.code, 'NYL-STATE-CORRUPT');
  assert.equal(d.severity, 'error');
  assert.equal(d.message, 'the desired document of db is damaged: refs/heads/nyl/dev/desired:units/db.yaml line 3: invalid YAML: Map keys must be unique');
  assert.deepEqual(d.location, { file: `${ref}:units/db.yaml`, line: 3 });
  assert.deepEqual(d.units, ['db']);
  assert.deepEqual(d.data, {
    document: 'desired-unit',
    ref,
    object: 'a'.repeat(40),
    problem: 'invalid YAML: Map keys must be unique',
    path: 'units/db.yaml',
    line: 3,
    unit: 'db',
  });
  assert.match(d.fix, /^repair it with `nyl recover -e dev --reason "<why>"`: the unit keeps its incarnation and becomes uncertain/);

  const lease = damageDiagnostic('dev', {
    document: 'lease',
    ref: 'refs/nyl/dev/lease',
    object: 'b'.repeat(40),
    problem: 'the ref points at a blob, not a lease commit',
  });
  assert.equal(lease.message, 'the lease is damaged: refs/nyl/dev/lease: the ref points at a blob, not a lease commit');
  assert.match(lease.fix, /^break the lease with `nyl lease break -e dev --reason "<why>"`/);
  const shape = damageDiagnostic('dev', {
    document: 'state',
    ref,
    object: 'c'.repeat(40),
    path: 'state.yaml',
    pointer: '/generation',
    problem: '/generation must be an integer',
  });
  assert.match(shape.message, /state\.yaml \/generation: /);
  assert.match(shape.fix, /restores state\.yaml/);
});
