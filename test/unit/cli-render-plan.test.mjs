// The text and the exit code of `nyl plan` (a ReconcileReport with operation plan): the table with
// the leaving section first, per unit its digest, change summary, the command that approves it
// and the diff of its rendering; a detail of several lines in full below; exit 0 only when the
// next reconcile would do nothing, while reconcile's own rows count as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exitCodeOf } from '../../dist/report/exit-code.js';
import { renderPlan } from '../../dist/commands/plan/render.js';

const DIGEST = `sha256:${'d'.repeat(64)}`;

function report(units, operation = 'plan') {
  return {
    kind: 'ReconcileReport',
    operation,
    environment: 'prod',
    source: 'abc',
    sourceOverride: false,
    committed: false,
    unitOrder: Object.keys(units),
    units: Object.fromEntries(Object.entries(units).map(([n, u]) => [n, { kind: 'Command', detail: '', dispatched: false, ...u }])),
    details: {},
    errors: [],
    warnings: [],
    notes: [],
  };
}

test('renderPlan: leaving section, then the others; digest, changes, approve command and diff per unit; a long detail in full below', () => {
  const text = renderPlan(
    report({
      old: { result: 'retain', action: 'retain', detail: 'left the ownership set', leaving: true },
      net: { kind: 'Terraform', result: 'awaiting-approval', action: 'awaiting-approval', detail: 'needs an approval', digest: DIGEST, changes: '+1 ~0 -0' },
      web: { result: 'execute', action: 'execute', detail: 'execution key changed', digest: DIGEST, diff: ['@@ -1 +1 @@', '-a: 1', '+a: 2'] },
      db: { result: 'current', action: 'current', detail: '' },
      bad: { result: 'execute', action: 'execute', detail: 'its plan failed: Error: locked\n  on main.tf line 3' },
    }),
  );
  assert.equal(
    text,
    [
      'leaving:',
      'UNIT  KIND     ACTION  DETAIL',
      'old   Command  retain  left the ownership set',
      '',
      'UNIT  KIND       ACTION             DETAIL',
      'net   Terraform  awaiting-approval  needs an approval',
      'web   Command    execute            execution key changed',
      'db    Command    current',
      'bad   Command    execute            its plan failed: Error: locked',
      '',
      'net (awaiting-approval):',
      `  digest:  ${DIGEST}`,
      '  changes: +1 ~0 -0',
      `  approve: nyl reconcile -e prod --approve net=${DIGEST}`,
      '',
      'web (execute):',
      `  digest:  ${DIGEST}`,
      '  rendering (recorded -> new):',
      '    @@ -1 +1 @@',
      '    -a: 1',
      '    +a: 2',
      '',
      '  source:   abc',
      '',
      'bad execute:',
      '  its plan failed: Error: locked',
      '    on main.tf line 3',
      '',
    ].join('\n'),
  );
  assert.equal(renderPlan(report({})), 'prod: no units\n\n  source:   abc\n');
});

test('exit codes of plan rows: 0 only when nothing would happen; failed 3, uncertain 4; reconcile rows count as before', () => {
  const code = (units, operation) => exitCodeOf(report(units, operation), [], operation ?? 'plan');
  assert.equal(code({ a: { result: 'current', reason: 'receipt-current' } }), 0);
  assert.equal(code({ a: { result: 'current', reason: 'desired-restored' } }), 2, 'the next reconcile writes the desired document again');
  for (const result of [
    'execute',
    'wait',
    'teardown',
    'retain',
    'release',
    'blocked',
    'held',
    'awaiting-approval',
    'drifted',
    'pending-teardown',
    'tearing-down',
  ]) {
    assert.equal(code({ a: { result: 'current' }, b: { result } }), 2, result);
  }
  assert.equal(code({ a: { result: 'failed' }, b: { result: 'execute' } }), 3);
  assert.equal(code({ a: { result: 'uncertain' }, b: { result: 'failed' } }), 4);
  assert.equal(code({ a: { result: 'held', uncertain: true } }), 4);
  const selected = { ...report({ a: { result: 'current' }, b: { result: 'execute' } }), selected: ['a'] };
  assert.equal(exitCodeOf(selected, [], 'plan'), 0, 'only the selected units count');
  assert.equal(code({ a: { result: 'current', reason: 'desired-restored' } }, 'reconcile'), 0, 'reconcile: unchanged');
  assert.equal(code({ a: { result: 'executed' } }, 'reconcile'), 0);
});
