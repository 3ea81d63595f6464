// The text of `nyl reconcile` and `nyl status`: a DETAIL cell shows the first line of a reason;
// a reason of several lines follows in full below the table, so that the columns stay aligned
// and nothing of the reason is lost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderReconcile } from '../../dist/commands/reconcile/render.js';
import { renderStatus } from '../../dist/commands/inspect/render-status.js';

const REASON = 'NYL_OUTPUTS holds invalid JSON\n  line 2: unexpected token o';

function reconcileReport(detail) {
  return {
    kind: 'ReconcileReport',
    environment: 'dev',
    run: 'r1',
    source: 'abc',
    sourceOverride: false,
    unitOrder: ['parse', 'ok'],
    units: {
      parse: { kind: 'Command', result: 'failed', detail, dispatched: true },
      ok: { kind: 'Command', result: 'executed', detail: '', dispatched: true },
    },
    details: {},
    errors: [],
    warnings: [],
    notes: [],
  };
}

test('reconcile: the table shows the first line of a reason, the whole reason follows below it', () => {
  const text = renderReconcile(reconcileReport(REASON));
  const lines = text.split('\n');
  assert.deepEqual(lines.slice(0, 3), [
    'UNIT   KIND     RESULT    DETAIL',
    'parse  Command  failed    NYL_OUTPUTS holds invalid JSON',
    'ok     Command  executed',
  ]);
  assert.match(text, /\n {2}source: +abc\n\nparse failed:\n {2}NYL_OUTPUTS holds invalid JSON\n {4}line 2: unexpected token o\n$/);
});

test('reconcile: a reason of one line is in the table only', () => {
  const text = renderReconcile(reconcileReport('command exited with code 1'));
  assert.equal(text.split('command exited with code 1').length, 2, text);
  assert.doesNotMatch(text, /parse failed:/);
});

test('status: the same for the DETAIL of a unit state', () => {
  const report = {
    environment: 'dev',
    unitOrder: ['parse'],
    units: { parse: { name: 'parse', kind: 'Command', state: 'failed', receipt: 'none', detail: REASON } },
    source: 'abc',
    details: {},
    errors: [],
    warnings: [],
    notes: [],
  };
  const text = renderStatus(report);
  assert.match(text.split('\n')[1], /^parse +Command +failed +none +- +NYL_OUTPUTS holds invalid JSON$/);
  assert.match(text, /\n\nparse failed:\n {2}NYL_OUTPUTS holds invalid JSON\n {4}line 2: unexpected token o\n$/);
});

test('nyl verify: a table of the units with their drift, and the skipped ones, between the headline and the fields', async () => {
  const { renderVerify: renderStateOperation } = await import('../../dist/commands/verify/render.js');
  const text = renderStateOperation({
    apiVersion: 'nyl.io/v1',
    formatVersion: 1,
    kind: 'StateOperationReport',
    operation: 'verify',
    environment: 'dev',
    result: 'done',
    observed: 'abc',
    details: {
      run: 'r1',
      units: { site: { drift: 'drifted', kind: 'Command' }, app: { drift: 'unknown', kind: 'Command', detail: 'app declares no check: action' } },
      skipped: { fresh: 'no receipt yet' },
    },
    errors: [],
    warnings: [],
    notes: [],
  });
  assert.equal(
    text,
    [
      'verify dev: done',
      '',
      'UNIT   KIND     DRIFT    DETAIL',
      'site   Command  drifted',
      'app    Command  unknown  app declares no check: action',
      'fresh  -        skipped  no receipt yet',
      '',
      '  observed: abc',
      '  run: r1',
      '',
    ].join('\n'),
  );
});
