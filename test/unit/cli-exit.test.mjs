import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { exitCodeOf, exitOfDiagnostic, worst } from '../../dist/report/exit-code.js';
import { renderDiagnostic, renderDiagnostics, renderTable } from '../../dist/commands/text/render.js';
import { transitionMessage } from '../../dist/state/transition.js';
import { CATALOG, exitCategoryOf, fixFor, isNylCode } from '../../dist/errors/catalog.js';
import { diagnostic } from '../../dist/errors/diagnostic.js';
import { parse } from 'yaml';

// --- worst ------------------------------------------------------------------------------------

const SEVERITY = [0, 2, 1, 3, 4]; // least to most severe

test('worst: 4 > 3 > 1 > 2 > 0 for every pair, in either order', () => {
  for (const a of SEVERITY) {
    for (const b of SEVERITY) {
      const expected = SEVERITY.indexOf(a) >= SEVERITY.indexOf(b) ? a : b;
      assert.equal(worst([a, b]), expected, `${a},${b}`);
      assert.equal(worst([b, a]), expected, `${b},${a}`);
    }
  }
});

test('worst: empty is 0, one code is itself, many codes pick the most severe', () => {
  assert.equal(worst([]), 0);
  for (const c of SEVERITY) assert.equal(worst([c]), c);
  assert.equal(worst([0, 2, 2, 1, 0]), 1);
  assert.equal(worst([2, 1, 3, 2]), 3);
  assert.equal(worst([3, 4, 1, 2, 0]), 4);
  assert.equal(worst([2, 0, 2]), 2);
});

// --- exitCodeOf -------------------------------------------------------------------------------

const base = { apiVersion: 'nyl.io/v1', formatVersion: 1, environment: 'dev', errors: [], warnings: [], notes: [], details: {} };
const status = (units) => ({
  ...base,
  kind: 'StatusReport',
  units: Object.fromEntries(Object.entries(units).map(([name, u]) => [name, { name, kind: 'Command', receipt: 'none', detail: '', ...u }])),
  unitOrder: Object.keys(units),
});
const reconcile = (results, selected) => ({
  ...base,
  kind: 'ReconcileReport',
  operation: 'reconcile',
  source: 'c1',
  sourceOverride: false,
  committed: true,
  units: Object.fromEntries(Object.entries(results).map(([name, result]) => [name, { kind: 'Command', result, detail: '', dispatched: false }])),
  unitOrder: Object.keys(results),
  ...(selected ? { selected } : {}),
});
const err = (code, extra = {}) => diagnostic(code, 'error', 'm', { env: 'dev', ...extra });

test('exitCodeOf StatusReport: current 0; pending, outdated, awaiting-dependencies, blocked, held, leaving, running 2; failed 3; uncertain 4', () => {
  const one = (u) => exitCodeOf(status({ x: u }), [], 'status');
  assert.equal(one({ state: 'current' }), 0);
  for (const state of ['retained', 'released']) assert.equal(one({ state }), 0, `${state}: a deletion that completed`);
  for (const state of ['pending-teardown', 'tearing-down']) assert.equal(one({ state }), 2, `${state}: a teardown that waits`);
  // awaiting-dependencies: not reconciled until its dependencies ran, though it may stay current then.
  for (const state of ['pending', 'outdated', 'awaiting-dependencies', 'blocked', 'held', 'leaving', 'running']) assert.equal(one({ state }), 2, state);
  assert.equal(one({ state: 'failed' }), 3);
  assert.equal(one({ state: 'failed', condition: { type: 'failed', retryable: true, reason: 'r', run: 'r', since: 's' } }), 3);
  assert.equal(one({ state: 'uncertain' }), 4);
  assert.equal(one({ state: 'held', condition: { type: 'uncertain', retryable: false, reason: 'r', run: 'r', since: 's' } }), 4, 'held (uncertain)');
  assert.equal(one({ state: 'held', condition: { type: 'failed', retryable: false, reason: 'r', run: 'r', since: 's' } }), 2);
  assert.equal(exitCodeOf(status({}), [], 'status'), 0, 'no units');
  assert.equal(exitCodeOf(status({ a: { state: 'current' }, b: { state: 'pending' }, c: { state: 'failed' } }), [], 'status'), 3);
  assert.equal(exitCodeOf(status({ a: { state: 'uncertain' }, c: { state: 'failed' } }), [], 'status'), 4);
});

test('exitCodeOf ReconcileReport: each result maps to its category', () => {
  const one = (result) => exitCodeOf(reconcile({ x: result }), [], 'reconcile');
  for (const r of ['executed', 'current', 'imported', 'removed', 'retained', 'released']) assert.equal(one(r), 0, r);
  for (const r of ['blocked', 'held', 'awaiting-approval', 'drifted', 'pending-teardown', 'tearing-down']) assert.equal(one(r), 2, r);
  assert.equal(one('failed'), 3);
  assert.equal(one('uncertain'), 4);
  assert.equal(exitCodeOf(reconcile({}), [], 'reconcile'), 0);
  assert.equal(exitCodeOf(reconcile({ a: 'executed', b: 'blocked', c: 'failed' }), [], 'reconcile'), 3);
});

test('exitCodeOf ReconcileReport: a recovered unit (left uncertain by a dead run) is exit 4', () => {
  assert.equal(exitCodeOf(reconcile({ x: 'recovered' }), [], 'reconcile'), 4);
  assert.equal(exitCodeOf(reconcile({ x: 'recovered', y: 'blocked' }), [], 'reconcile'), 4);
});

test('exitCodeOf ReconcileReport: with selected, only the named units count (unknown names ignored)', () => {
  const r = reconcile({ a: 'executed', b: 'failed', c: 'uncertain', d: 'blocked' }, ['a']);
  assert.equal(exitCodeOf(r, [], 'reconcile'), 0);
  assert.equal(exitCodeOf({ ...r, selected: ['a', 'd'] }, [], 'reconcile'), 2);
  assert.equal(exitCodeOf({ ...r, selected: ['b', 'd'] }, [], 'reconcile'), 3);
  assert.equal(exitCodeOf({ ...r, selected: ['nope'] }, [], 'reconcile'), 0);
  assert.equal(exitCodeOf({ ...r, selected: [] }, [], 'reconcile'), 0, 'an empty selection counts nothing');
  assert.equal(exitCodeOf({ ...r, selected: undefined }, [], 'reconcile'), 4, 'without a selection every unit counts');
});

test('exitCodeOf: error diagnostics add their catalog category, combined by precedence', () => {
  assert.equal(exitCodeOf(undefined, [], 'status'), 0);
  assert.equal(exitCodeOf(undefined, [err('NYL-STATE-MISSING')], 'reconcile'), 1);
  assert.equal(exitCodeOf(undefined, [err('NYL-LEASE-HELD')], 'reconcile'), 2);
  assert.equal(exitCodeOf(undefined, [err('NYL-LEASE-LOST')], 'reconcile'), 4);
  assert.equal(exitCodeOf(undefined, [err('NYL-LEASE-HELD'), err('NYL-STATE-MISSING')], 'hold'), 1, '1 beats 2');
  assert.equal(exitCodeOf(reconcile({ a: 'blocked' }), [err('NYL-STATE-CONFLICT')], 'reconcile'), 1);
  assert.equal(exitCodeOf(reconcile({ a: 'failed' }), [err('NYL-STATE-CONFLICT')], 'reconcile'), 3);
  assert.equal(exitCodeOf(reconcile({ a: 'executed' }), [err('NYL-LEASE-LOST')], 'reconcile'), 4);
  assert.equal(exitCodeOf(status({ a: { state: 'uncertain' } }), [err('NYL-STATE-DELETED')], 'status'), 4);
  assert.equal(exitCodeOf(status({}), [err('NYL-STATE-DELETED')], 'status'), 1);
  for (const code of ['NYL-HOLD-REFUSED', 'NYL-UNIT-UNKNOWN', 'NYL-RECOVER-NOTHING', 'NYL-COMMIT-IDENTITY-MISSING', 'NYL-STATE-DELETE-INCARNATIONS']) {
    assert.equal(exitCodeOf(undefined, [err(code)], 'state'), 1, code);
  }
  assert.equal(exitCodeOf(undefined, [err('NYL-LEASE-BROKEN')], 'hold'), 2);
});

test('NYL-RUN-CANCELLED is 4 for reconcile and teardown, 1 for state commands', () => {
  const cancelled = err('NYL-RUN-CANCELLED');
  assert.equal(exitOfDiagnostic(cancelled, 'reconcile'), 4);
  assert.equal(exitOfDiagnostic(cancelled, 'teardown'), 4);
  for (const command of ['recover', 'hold', 'resume', 'state-init', 'state-delete', 'lease-break', 'state']) {
    assert.equal(exitOfDiagnostic(cancelled, command), 1, command);
    assert.equal(exitCodeOf(undefined, [cancelled], command), 1, command);
  }
  assert.equal(exitCodeOf(reconcile({ a: 'failed' }), [cancelled], 'reconcile'), 4);
  assert.equal(exitCodeOf(undefined, [cancelled, err('NYL-LEASE-HELD')], 'hold'), 1);
});

// --- renderTable and renderDiagnostic ---------------------------------------------------------

test('renderTable: columns padded to the widest cell, two spaces apart, last column unpadded, no trailing space', () => {
  assert.equal(
    renderTable(
      ['UNIT', 'KIND', 'RESULT', 'DETAIL'],
      [
        ['broken', 'Command', 'failed', 'command exited with code 1'],
        ['report', 'Command', 'blocked', '/dependsOn/0 waits for broken (no-current-receipt)'],
      ],
    ),
    [
      'UNIT    KIND     RESULT   DETAIL',
      'broken  Command  failed   command exited with code 1',
      'report  Command  blocked  /dependsOn/0 waits for broken (no-current-receipt)',
    ].join('\n'),
  );
});

test("renderTable: a held marker's status row, with an empty last cell", () => {
  assert.equal(
    renderTable(['UNIT', 'KIND', 'STATE', 'RECEIPT', 'LAST RUN', 'DETAIL'], [['migrate', '-', 'held', 'none', '-', '']]),
    'UNIT     KIND  STATE  RECEIPT  LAST RUN  DETAIL\nmigrate  -     held   none     -',
  );
});

test('renderTable: header wider than cells, no rows, missing cells', () => {
  assert.equal(renderTable(['NAME', 'X'], []), 'NAME  X');
  assert.equal(
    renderTable(
      ['A', 'B', 'C'],
      [
        ['long-name', 'b', 'c'],
        ['x', '', ''],
      ],
    ),
    'A          B  C\nlong-name  b  c\nx',
  );
  assert.equal(renderTable(['A', 'B', 'C'], [['a']]), 'A  B  C\na');
});

test('renderDiagnostic: severity, code and units; the message indented; the fix last', () => {
  const d = diagnostic('NYL-UNIT-HELD', 'warning', 'migrate is held by Alice <alice@example.com> (incident 4711) since 2026-10-26T23:03:58Z', {
    env: 'dev',
    unit: 'migrate',
    units: ['migrate'],
  });
  assert.equal(
    renderDiagnostic(d),
    [
      'warning NYL-UNIT-HELD (migrate)',
      '  migrate is held by Alice <alice@example.com> (incident 4711) since 2026-10-26T23:03:58Z',
      '  fix: reconcile changes nothing about it until `nyl resume -e dev --unit migrate`',
    ].join('\n'),
  );
});

test('renderDiagnostic: no units, several units, multi-line messages', () => {
  const deleted = diagnostic('NYL-STATE-DELETED', 'error', 'the state of dev was deleted with `nyl state delete`', { env: 'dev' });
  assert.equal(
    renderDiagnostic(deleted),
    'error NYL-STATE-DELETED\n  the state of dev was deleted with `nyl state delete`\n  fix: remove the Environment dev from source to decommission it, or start it over with `nyl state init -e dev --fresh`',
  );
  const many = { code: 'NYL-UNIT-UNCERTAIN', severity: 'warning', message: 'line one\nline two', fix: 'check', units: ['a', 'b'] };
  assert.equal(renderDiagnostic(many), 'warning NYL-UNIT-UNCERTAIN (a, b)\n  line one\n  line two\n  fix: check');
  assert.equal(renderDiagnostic({ ...many, units: [] }).split('\n')[0], 'warning NYL-UNIT-UNCERTAIN');
});

test('renderDiagnostic: a source location as file:line:column pointer', () => {
  const d = {
    code: 'NYL-SOURCE-INVALID',
    severity: 'error',
    message: 'bad',
    fix: 'fix it',
    location: { file: 'nyl.yaml', line: 12, column: 5, pointer: '/spec/run/0' },
  };
  assert.equal(renderDiagnostic(d), 'error NYL-SOURCE-INVALID\n  bad\n  at: nyl.yaml:12:5 /spec/run/0\n  fix: fix it');
  assert.equal(renderDiagnostic({ ...d, location: { file: 'nyl.yaml', pointer: '' } }).split('\n')[2], '  at: nyl.yaml /');
  assert.equal(renderDiagnostic({ ...d, location: { file: 'a.yaml', line: 3 } }).split('\n')[2], '  at: a.yaml:3');
});

test('renderDiagnostics separates diagnostics by a blank line', () => {
  const a = { code: 'NYL-UNIT-HELD', severity: 'warning', message: 'a', fix: 'fa' };
  const b = { code: 'NYL-UNIT-UNCERTAIN', severity: 'warning', message: 'b', fix: 'fb' };
  assert.equal(renderDiagnostics([a, b]), `${renderDiagnostic(a)}\n\n${renderDiagnostic(b)}`);
  assert.equal(renderDiagnostics([]), '');
});

// --- transitionMessage ------------------------------------------------------------------------

function split(message) {
  const [headline, blank, ...rest] = message.split('\n');
  const text = rest.join('\n');
  const cut = text.lastIndexOf('\n\n');
  return { headline, blank, body: text.slice(0, cut), trailers: text.slice(cut + 2) };
}

test('transitionMessage: headline with up to three units, a YAML body and the trailers', () => {
  const m = transitionMessage(
    'dev',
    { operation: 'hold', units: { database: { action: 'hold' } } },
    { requestedBy: 'Alice <alice@example.com>', reason: 'incident 4711' },
    ['database'],
  );
  assert.equal(
    m,
    'nyl: hold dev (database)\n\noperation: hold\nunits:\n  database:\n    action: hold\n\nNyl-Operation: hold\nNyl-Requested-By: Alice <alice@example.com>\nNyl-Reason: incident 4711\n',
  );
});

test('transitionMessage: headline lists 1 to 3 units, none for 0 or more than 3', () => {
  const head = (units) => transitionMessage('dev', { operation: 'reconcile' }, {}, units).split('\n')[0];
  assert.equal(head(), 'nyl: reconcile dev');
  assert.equal(head([]), 'nyl: reconcile dev');
  assert.equal(head(['a']), 'nyl: reconcile dev (a)');
  assert.equal(head(['a', 'b', 'c']), 'nyl: reconcile dev (a, b, c)');
  assert.equal(head(['a', 'b', 'c', 'd']), 'nyl: reconcile dev');
});

test("transitionMessage: a run's headline counts its units by result in a fixed order, names one to three", () => {
  const head = (outcomes, operation = 'reconcile') => transitionMessage('dev', { operation }, {}, { outcomes }).split('\n')[0];
  assert.equal(head({}), 'nyl: reconcile dev', 'nothing recorded (a takeover that only records a lease break)');
  assert.equal(head({ migrate: 'executed' }), 'nyl: reconcile dev: 1 executed (migrate)');
  assert.equal(head({ migrate: 'failed', db: 'executed', api: 'executed' }), 'nyl: reconcile dev: 2 executed (api, db), 1 failed (migrate)');
  assert.equal(head({ a: 'uncertain', b: 'imported' }), 'nyl: reconcile dev: 1 imported (b), 1 uncertain (a)');
  assert.equal(head({ a: 'executed', b: 'executed', c: 'failed', d: 'executed' }), 'nyl: reconcile dev: 3 executed, 1 failed', 'four units: counts only');
  assert.equal(head({ a: 'removed', b: 'removed' }, 'teardown'), 'nyl: teardown dev: 2 removed (a, b)');
  assert.equal(head({ u: 'current' }), 'nyl: reconcile dev: 1 restored (u)', 'a current unit is recorded only when its desired document is restored');
  assert.equal(head({ a: 'blocked', b: 'awaiting-approval', c: 'recovered' }), 'nyl: reconcile dev: 1 recovered (c), 1 blocked (a), 1 awaiting-approval (b)');
  assert.equal(
    head({ b: 'some-new-result', a: 'a-newer-one', c: 'executed' }),
    'nyl: reconcile dev: 1 executed (c), 1 a-newer-one (a), 1 some-new-result (b)',
    'unknown results follow, by name',
  );
  const long = 'x'.repeat(40);
  assert.equal(
    head({ [`${long}1`]: 'executed', [`${long}2`]: 'failed' }),
    'nyl: reconcile dev: 1 executed, 1 failed',
    'names left out when the headline would get long',
  );
});

test('transitionMessage: the body drops empty lists, empty maps and undefined; keys sorted', () => {
  const m = transitionMessage(
    'dev',
    {
      operation: 'reconcile',
      run: 'r1',
      source: 'c1',
      executed: ['db', 'app'],
      imported: [],
      recovered: [],
      held: undefined,
      leaseBroken: { by: 'Bob', reason: 'killed', at: 't' },
      incomplete: {},
      generation: 0,
      dry: false,
    },
    {},
  );
  const { body } = split(m);
  const doc = parse(body);
  assert.deepEqual(doc, {
    operation: 'reconcile',
    run: 'r1',
    source: 'c1',
    executed: ['db', 'app'],
    leaseBroken: { by: 'Bob', reason: 'killed', at: 't' },
    generation: 0,
    dry: false,
  });
  const keys = body
    .split('\n')
    .filter((l) => /^\w/.test(l))
    .map((l) => l.split(':')[0]);
  assert.deepEqual(keys, [...keys].sort());
  assert.doesNotMatch(body, /imported|recovered|held|incomplete/);
});

test('transitionMessage trailers: Nyl-Operation, Nyl-Run, Nyl-Source (override), Nyl-Requested-By, Nyl-Reason', () => {
  const full = split(
    transitionMessage(
      'dev',
      { operation: 'reconcile', run: 'r1', source: 'c1' },
      { requestedBy: 'Release Bot <release@example.com>', reason: 'rotate', sourceOverride: true },
    ),
  );
  assert.equal(
    full.trailers,
    'Nyl-Operation: reconcile\nNyl-Run: r1\nNyl-Source: c1 (override)\nNyl-Requested-By: Release Bot <release@example.com>\nNyl-Reason: rotate\n',
  );
  const plain = split(transitionMessage('dev', { operation: 'reconcile', run: 'r1', source: 'c1' }, { sourceOverride: false }));
  assert.equal(plain.trailers, 'Nyl-Operation: reconcile\nNyl-Run: r1\nNyl-Source: c1\n');
  const bare = split(transitionMessage('dev', { operation: 'state-init' }, {}));
  assert.equal(bare.trailers, 'Nyl-Operation: state-init\n');
  const noSource = split(transitionMessage('dev', { operation: 'recover' }, { sourceOverride: true, requestedBy: 'A <a@x>' }));
  assert.equal(noSource.trailers, 'Nyl-Operation: recover\nNyl-Requested-By: A <a@x>\n', 'no Nyl-Source without a source');
  const worktree = split(transitionMessage('dev', { operation: 'reconcile', run: 'r1', source: 'c1' }, { sourceWorktree: true }));
  assert.equal(worktree.trailers, 'Nyl-Operation: reconcile\nNyl-Run: r1\nNyl-Source: c1 (worktree)\n', '--worktree marks its snapshot');
});

test('transitionMessage: newlines in the reason are folded into one trailer line', () => {
  const m = transitionMessage('dev', { operation: 'hold' }, { reason: 'incident 4711\n  the database\r\nis down \n\n again' });
  const last = m.trimEnd().split('\n').at(-1);
  assert.equal(last, 'Nyl-Reason: incident 4711 the database is down again');
  assert.equal(m.split('\n').filter((l) => l.startsWith('Nyl-')).length, 2);
});

test('transitionMessage: the message parses as git does (headline, blank, body, trailers)', () => {
  const m = transitionMessage('prod', { operation: 'recover', units: { migrate: { action: 'retry' } } }, { requestedBy: 'A <a@x>', reason: 'checked' }, [
    'migrate',
  ]);
  const { headline, blank, body, trailers } = split(m);
  assert.equal(headline, 'nyl: recover prod (migrate)');
  assert.equal(blank, '');
  assert.deepEqual(parse(body), { operation: 'recover', units: { migrate: { action: 'retry' } } });
  assert.match(trailers, /^Nyl-Operation: recover\n/);
  assert.ok(m.endsWith('\n') && !m.endsWith('\n\n'));
});

// --- the catalog ------------------------------------------------------------------------------

/** The codes docs/error-codes.md documents (the user's reference of every code). */
function documentedCodes() {
  const text = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'error-codes.md'), 'utf8');
  return [...new Set([...text.matchAll(/NYL-[A-Z0-9-]*/g)].map((m) => m[0].replace(/-+$/, '')))].sort();
}

test('every documented code exists in the catalog, and every catalog code is documented', () => {
  const codes = documentedCodes();
  assert.ok(codes.length >= 38, `found ${codes.length} codes in docs/error-codes.md`);
  assert.deepEqual(
    codes.filter((c) => !isNylCode(c)),
    [],
    'documented but not in the catalog',
  );
  assert.deepEqual(
    Object.keys(CATALOG)
      .filter((c) => !codes.includes(c))
      .sort(),
    [],
    'in the catalog but not documented',
  );
});

test('every catalog entry has an exit category, a summary and a fix, with and without parameters', () => {
  const entries = Object.entries(CATALOG);
  assert.ok(entries.length > 0);
  for (const [code, spec] of entries) {
    assert.match(code, /^NYL-[A-Z0-9]+(-[A-Z0-9]+)*$/, code);
    assert.ok([0, 1, 2, 3, 4].includes(spec.exit), `${code} exit ${spec.exit}`);
    assert.equal(exitCategoryOf(code), spec.exit);
    assert.equal(typeof spec.summary, 'string', code);
    assert.ok(spec.summary.trim().length > 0, `${code} summary`);
    for (const params of [
      {},
      { env: 'dev', unit: 'db', units: ['db'] },
      { env: 'dev', unit: 'db', retryable: false, expired: true, rev: 'main', fix: 'do x', known: ['dev'] },
    ]) {
      const fix = fixFor(code, params);
      assert.equal(typeof fix, 'string', code);
      assert.ok(fix.trim().length > 0, `${code} fix with ${JSON.stringify(params)}`);
      assert.doesNotMatch(fix, /undefined|\[object Object\]/, `${code} fix with ${JSON.stringify(params)}: ${fix}`);
    }
  }
});

test('catalog fixes name the environment and unit they are given', () => {
  assert.match(fixFor('NYL-UNIT-HELD', { env: 'dev', unit: 'migrate' }), /nyl resume -e dev --unit migrate/);
  assert.match(fixFor('NYL-LEASE-BROKEN', { env: 'prod' }), /nyl recover -e prod/);
  assert.match(fixFor('NYL-HOLD-REFUSED', { env: 'dev', unit: 'cache' }), /nyl teardown/);
  assert.match(fixFor('NYL-HOLD-REFUSED', { env: 'dev', unit: 'cache' }), /nyl state forget/);
  assert.match(fixFor('NYL-STATE-DELETED', { env: 'dev' }), /nyl state init -e dev --fresh/);
});

test('the exit categories of the codes whose exit is fixed', () => {
  const expected = {
    'NYL-LEASE-HELD': 2,
    'NYL-LEASE-BROKEN': 2,
    'NYL-LEASE-LOST': 4,
    'NYL-STATE-MISSING': 1,
    'NYL-STATE-UNAVAILABLE': 1,
    'NYL-STATE-CONFLICT': 1,
    'NYL-STATE-DELETED': 1,
    'NYL-STATE-DELETE-INCARNATIONS': 1,
    'NYL-HOLD-REFUSED': 1,
    'NYL-UNIT-UNKNOWN': 1,
    'NYL-COMMIT-IDENTITY-MISSING': 1,
    'NYL-SOURCE-UNREACHABLE': 1,
    'NYL-PROJECT-MISSING': 1,
  };
  for (const [code, exit] of Object.entries(expected)) assert.equal(CATALOG[code].exit, exit, code);
});
