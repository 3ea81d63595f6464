// The pure parts of `nyl log`, `nyl show` and `nyl outputs`: transition messages taken apart
// (written by transitionMessage, and hand-made ones), the merge of the desired and observed
// histories into one entry per operation, which units an entry names, the receipt as show
// prints it (no sealed value, no desired copy), outputs for scripts, and their text forms.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeHistories, namesUnit, parseTransition, unitResults } from '../../dist/commands/inspect/log-entries.js';
import { parseStateCommit, pathChange, PathChanges, wrotePath } from '../../dist/state/state-commits.js';
import { transitionMessage } from '../../dist/state/transition.js';
import { logEntryOf } from '../../dist/commands/inspect/log.js';
import { shownReceipt } from '../../dist/commands/inspect/show.js';
import { unitOutputs } from '../../dist/commands/inspect/outputs.js';
import { outputValue, renderOutputs, yamlLines } from '../../dist/commands/inspect/render-inspect.js';
import { emitYaml } from '../../dist/state/yaml-emit.js';

const RUN = '01900000-0000-7000-8000-000000000001';
const SOURCE = 'a'.repeat(40);

const reconcileMessage = () =>
  transitionMessage(
    'dev',
    { operation: 'reconcile', run: RUN, source: SOURCE, units: { db: 'executed', web: 'failed' }, executed: ['db'], imported: ['web'], removed: [] },
    { requestedBy: 'Ann <ann@example.com>', reason: 'deploy\n42' },
    ['db', 'web'],
  );

test('parseTransition reads back what transitionMessage writes: headline, body, trailers', () => {
  const t = parseTransition(reconcileMessage());
  assert.equal(t.headline, 'nyl: reconcile dev (db, web)');
  assert.equal(t.operation, 'reconcile');
  assert.deepEqual(t.body, { executed: ['db'], imported: ['web'], operation: 'reconcile', run: RUN, source: SOURCE, units: { db: 'executed', web: 'failed' } });
  assert.equal(t.trailers['Nyl-Run'], RUN);
  assert.equal(t.trailers['Nyl-Source'], SOURCE);
  assert.equal(t.trailers['Nyl-Requested-By'], 'Ann <ann@example.com>');
  assert.equal(t.trailers['Nyl-Reason'], 'deploy 42');
});

test('parseTransition: a hand-made commit has its headline, operation "-", no body', () => {
  const t = parseTransition('hand edit of units/db.yaml\n');
  assert.deepEqual(t, { headline: 'hand edit of units/db.yaml', operation: '-', body: {}, trailers: {} });
  const prose = parseTransition('fix\n\nnot: [yaml\n');
  assert.equal(prose.operation, '-');
  assert.deepEqual(prose.body, {});
});

test('unitResults: the units map first, then each list that names the unit; actions of recover, hold and forget', () => {
  assert.deepEqual(
    [...unitResults(parseTransition(reconcileMessage()))],
    [
      ['db', 'executed'],
      ['web', 'failed, imported'],
    ],
  );
  const recover = parseTransition(
    transitionMessage('dev', { operation: 'recover', units: { db: { action: 'accept', run: RUN }, web: { action: 'retry' } } }, {}, ['db', 'web']),
  );
  assert.deepEqual(Object.fromEntries(unitResults(recover)), { db: `accept ${RUN}`, web: 'retry' });
  const forget = parseTransition(transitionMessage('dev', { operation: 'forget', units: { old: { action: 'forget', was: 'retained' } } }, {}, ['old']));
  assert.deepEqual(Object.fromEntries(unitResults(forget)), { old: 'forget (was retained)' });
  const del = parseTransition(transitionMessage('dev', { operation: 'state-delete', removed: ['a', 'b'] }, {}));
  assert.deepEqual(Object.fromEntries(unitResults(del)), { a: 'removed', b: 'removed' });
});

test('namesUnit: by the body, or by the headline alone', () => {
  const t = parseTransition(reconcileMessage());
  assert.equal(namesUnit(t, 'web'), true);
  assert.equal(namesUnit(t, 'cache'), false);
  assert.equal(namesUnit(parseTransition('nyl: hold dev (cache)\n'), 'cache'), true);
});

/** A commit as parseStateCommit makes it: time in seconds, parent, author. */
function commit(oid, time, message, parent) {
  const text = `tree ${'0'.repeat(40)}\n${parent ? `parent ${parent}\n` : ''}author Ann <ann@example.com> ${time} +0000\ncommitter Ann <ann@example.com> ${time} +0000\n\n${message}`;
  return parseStateCommit(oid, text);
}
const oid = (c) => c.repeat(40);

test('parseStateCommit keeps the author', () => {
  assert.equal(commit(oid('1'), 100, 'x\n').author, 'Ann <ann@example.com>');
});

test("PathChanges: what each commit of a history did to a path, each commit's object there read once", async () => {
  // c1 (root) adds p, c2 leaves it, c3 removes it, c4 adds it again, c5 changes it.
  const [c1, c2, c3, c4, c5] = ['1', '2', '3', '4', '5'].map(oid);
  const history = [commit(c5, 5, 'e\n', c4), commit(c4, 4, 'd\n', c3), commit(c3, 3, 'c\n', c2), commit(c2, 2, 'b\n', c1), commit(c1, 1, 'a\n')];
  const at = { [c1]: 'a'.repeat(40), [c2]: 'a'.repeat(40), [c4]: 'b'.repeat(40), [c5]: 'c'.repeat(40) };
  const reads = [];
  const read = async (spec) => {
    reads.push(spec);
    const [commitOid, path] = spec.split(':');
    return path === 'p' && at[commitOid] ? { oid: at[commitOid], type: 'tree', content: Buffer.alloc(0) } : undefined;
  };
  const reader = { read, readMany: (specs) => Promise.all(specs.map(read)), readTree: async () => undefined };
  const changes = new PathChanges(reader, 'p');
  const found = await changes.of(history);
  assert.deepEqual(found, ['changed', 'added', 'removed', undefined, 'added']);
  assert.deepEqual(found.map(wrotePath), [true, true, false, false, true]);
  assert.deepEqual(
    reads.sort(),
    [c1, c2, c3, c4, c5].map((c) => `${c}:p`),
    'each commit read once: a parent is the next commit',
  );
  assert.deepEqual(await changes.of([history[2]]), ['removed']);
  assert.equal(reads.length, 5, 'what was read is not read again');
  reads.length = 0;
  assert.equal(await pathChange(reader, history[0], 'p'), 'changed');
  assert.deepEqual(reads.sort(), [`${c4}:p`, `${c5}:p`]);
});

test('mergeHistories: one entry per operation, by message and time; one-ref operations stay entries of their own, newest first', () => {
  const init = 'nyl: state-init dev\n';
  const run = reconcileMessage();
  const hold = 'nyl: hold dev (db)\n';
  const verify = 'nyl: verify dev\n';
  const desired = [commit(oid('d'), 300, hold), commit(oid('c'), 200, run), commit(oid('a'), 100, init)];
  const observed = [commit(oid('f'), 400, verify), commit(oid('e'), 200, run), commit(oid('b'), 100, init)];
  const merged = mergeHistories(desired, observed);
  assert.deepEqual(
    merged.map((e) => [e.time, e.desired?.oid[0] ?? '-', e.observed?.oid[0] ?? '-']),
    [
      [400, '-', 'f'],
      [300, 'd', '-'],
      [200, 'c', 'e'],
      [100, 'a', 'b'],
    ],
  );
});

test("mergeHistories: each ref keeps its own order, whatever a hand-made commit's date says", () => {
  const run = 'nyl: reconcile dev (x)\n';
  // A hand edit on top of observed, dated before everything else.
  const desired = [commit(oid('2'), 200, run), commit(oid('1'), 100, 'nyl: state-init dev\n')];
  const observed = [commit(oid('9'), 5, 'hand edit\n'), commit(oid('8'), 200, run), commit(oid('7'), 100, 'nyl: state-init dev\n')];
  assert.deepEqual(
    mergeHistories(desired, observed).map((e) => [e.desired?.oid[0] ?? '-', e.observed?.oid[0] ?? '-']),
    [
      ['-', '9'],
      ['2', '8'],
      ['1', '7'],
    ],
  );
});

test("mergeHistories: two operations in the same second keep each ref's order, and the same message pairs once per commit", () => {
  const a = 'nyl: hold dev (x)\n';
  const b = 'nyl: resume dev (x)\n';
  // resume after hold, both within one second; the observed ref has only a reconcile of that second.
  const r = 'nyl: reconcile dev (x)\n';
  const desired = [commit(oid('3'), 50, r), commit(oid('2'), 50, b), commit(oid('1'), 50, a)];
  const observed = [commit(oid('9'), 50, r)];
  assert.deepEqual(
    mergeHistories(desired, observed).map((e) => [e.message, e.desired?.oid[0], e.observed?.oid[0] ?? '-']),
    [
      [r, '3', '9'],
      [b, '2', '-'],
      [a, '1', '-'],
    ],
  );
  // The same message twice on both refs (at different times): each pairs with its own.
  const d2 = [commit(oid('5'), 20, a), commit(oid('4'), 10, a)];
  const o2 = [commit(oid('7'), 20, a), commit(oid('6'), 10, a)];
  assert.deepEqual(
    mergeHistories(d2, o2).map((e) => [e.desired.oid[0], e.observed.oid[0]]),
    [
      ['5', '7'],
      ['4', '6'],
    ],
  );
});

test('logEntryOf: who (Nyl-Requested-By, else the author), why, run, source, units; a state move says from where to where', () => {
  const c = commit(oid('c'), 1767225600, reconcileMessage());
  const e = logEntryOf({ time: c.time, message: c.message, desired: c });
  assert.equal(e.at, '2026-01-01T00:00:00Z');
  assert.equal(e.by, 'Ann <ann@example.com>');
  assert.equal(e.reason, 'deploy 42');
  assert.equal(e.run, RUN);
  assert.equal(e.source, SOURCE);
  assert.equal(e.desired, oid('c'));
  assert.equal(e.observed, undefined);
  assert.deepEqual(e.units, { db: 'executed', web: 'failed, imported' });
  const move = commit(oid('m'), 10, transitionMessage('dev', { operation: 'state-move', from: 'file:///old', to: 'file:///new' }, {}));
  assert.deepEqual(logEntryOf({ time: 10, message: move.message, observed: move }).moved, { from: 'file:///old', to: 'file:///new' });
  assert.equal(logEntryOf({ time: 10, message: 'hand edit\n', desired: commit(oid('h'), 10, 'hand edit\n') }).by, 'Ann <ann@example.com>');
});

const receipt = {
  run: RUN,
  executionKey: `sha256:${'1'.repeat(64)}`,
  finishedAt: '2026-01-01T00:00:00Z',
  outputs: { url: 'pg://db', port: 5432 },
  sensitiveOutputs: { password: { sha256: `sha256:${'2'.repeat(64)}`, sealed: 'v1:SEALED' } },
  desired: 'a blob id, or an inline copy: never shown',
};

test('shownReceipt: no desired copy, no sealed value; unitOutputs leaves sensitive outputs out and names them', () => {
  const shown = shownReceipt(receipt);
  assert.deepEqual(shown, {
    run: RUN,
    executionKey: receipt.executionKey,
    finishedAt: receipt.finishedAt,
    outputs: { url: 'pg://db', port: 5432 },
    sensitiveOutputs: { password: { sha256: receipt.sensitiveOutputs.password.sha256 } },
  });
  assert.doesNotMatch(JSON.stringify(shown), /SEALED/);
  assert.deepEqual(unitOutputs({ receipt }), { outputs: { url: 'pg://db', port: 5432 }, sensitive: ['password'] });
  assert.deepEqual(unitOutputs({ receipt: { ...receipt, outputs: { ...receipt.outputs, password: 'leaked?' } } }).outputs, { url: 'pg://db', port: 5432 });
  assert.deepEqual(unitOutputs(undefined), { outputs: {}, sensitive: [] });
});

test('outputs text: KEY=VALUE lines, non-strings and multi-line strings as JSON, sensitive ones masked', () => {
  assert.equal(outputValue('pg://db'), 'pg://db');
  assert.equal(outputValue(5432), '5432');
  assert.equal(outputValue('a\nb'), '"a\\nb"');
  assert.equal(outputValue({ a: [1] }), '{"a":[1]}');
  const base = {
    apiVersion: 'nyl.io/v1',
    formatVersion: 1,
    kind: 'OutputsReport',
    operation: 'outputs',
    environment: 'dev',
    details: {},
    errors: [],
    warnings: [],
    notes: [],
  };
  assert.equal(
    renderOutputs({ ...base, unit: 'db', outputs: { url: 'pg://db', port: 5432 }, sensitive: ['password'] }),
    'url=pg://db\nport=5432\npassword=(sensitive)\n',
  );
  assert.equal(renderOutputs({ ...base, outputs: { db: { url: 'x' }, web: {} }, sensitive: { db: ['password'] } }), 'db.url=x\ndb.password=(sensitive)\n');
});

test('yamlLines: block YAML for reading, strings that would read as something else quoted', () => {
  assert.deepEqual(yamlLines({ a: 'plain', b: 'true', c: '0123', d: { e: [1, 'x'] }, f: [], g: 'deadbeef1' }, ''), [
    'a: plain',
    'b: "true"',
    'c: "0123"',
    'd:',
    '  e:',
    '    - 1',
    '    - x',
    'f: []',
    'g: deadbeef1',
  ]);
});

test('yamlLines writes as state files do (emitYaml): a multi-line script as a literal block, not a JSON one-liner', () => {
  const doc = { rendering: { script: 'set -e\necho "migrating"\n./migrate up\n', env: { A: 'x' } } };
  assert.deepEqual(yamlLines(doc, '  '), [
    '  rendering:',
    '    env:',
    '      A: x',
    '    script: |',
    '      set -e',
    '      echo "migrating"',
    '      ./migrate up',
  ]);
  assert.deepEqual(yamlLines(doc, '').join('\n'), emitYaml(doc).replace(/\n$/, ''));
});

test("a run's headline grows linearly with its units: 40,000 outcomes take well under a second (each unit was copied into its group's array again: 12 s)", () => {
  const outcomes = {};
  for (let i = 0; i < 40_000; i++) outcomes[`u${String(i).padStart(5, '0')}`] = i % 7 ? 'executed' : 'failed';
  const began = performance.now();
  const message = transitionMessage('dev', { operation: 'reconcile' }, {}, { outcomes });
  const ms = performance.now() - began;
  assert.equal(message.split('\n')[0], 'nyl: reconcile dev: 34285 executed, 5715 failed');
  assert.ok(ms < 2000, `${Math.round(ms)} ms`);
});
