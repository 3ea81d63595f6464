// End-to-end: `nyl hold` and `nyl resume`, the commits they write, the repeatable no-ops,
// NYL-UNIT-UNKNOWN for resume, the JSON StateOperationReport, and that hold never renders source.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { cleanupAll } from '../support/git-fixtures.mjs';
import { setup, changeUnits, reconcile } from '../support/reconcile-helpers.mjs';
import { sharedFixture } from '../support/shared-fixture.mjs';
import {
  DESIRED,
  OBSERVED,
  allCodes,
  commitAt,
  commits,
  coordinationRefs,
  decision,
  describe as show,
  desiredDoc,
  hold,
  observedDoc,
  outputScript,
  resume,
  tip,
} from '../support/hold-helpers.mjs';

after(cleanupAll);

const IDENTITY = 'Test User <test@example.com>';

const twoUnits = (log) => ({
  a: outputScript(log, '1'),
  b: `env: {X: "\${{ units.a.outputs.v }}"}\nscript: 'echo b $X >> ${log}'`,
});

/** twoUnits, state init and a first reconcile: built once, put back for every test that takes it. */
const reconciled = sharedFixture(() => {
  const ctx = setup(twoUnits);
  const ran = reconcile(ctx.project);
  assert.equal(ran.code, 0, show(ran));
  return ctx;
});

describe('hold and resume write one desired commit each', () => {
  test('hold: one desired commit with headline, body and trailers; observed unchanged; JSON report', () => {
    const ctx = reconciled();
    const before = { desired: tip(ctx.bare, DESIRED), observed: tip(ctx.bare, OBSERVED) };
    const docBefore = desiredDoc(ctx.bare, 'a');

    const r = hold(ctx.project, 'a', { args: ['-o', 'json'] });
    assert.equal(r.code, 0, show(r));
    assert.equal(r.json.apiVersion, 'nyl.io/v1');
    assert.equal(r.json.kind, 'StateOperationReport');
    assert.equal(r.json.operation, 'hold');
    assert.equal(r.json.environment, 'dev');
    assert.equal(r.json.result, 'done');
    assert.equal(r.json.details.marker, false, 'a unit with a receipt is not held as a marker');
    assert.deepEqual(r.json.errors, []);

    const after = tip(ctx.bare, DESIRED);
    assert.equal(r.json.desired, after);
    assert.equal(git1(ctx.bare, `${after}^`), before.desired, 'exactly one desired commit');
    assert.equal(tip(ctx.bare, OBSERVED), before.observed, 'observed unchanged');
    assert.deepEqual(coordinationRefs(ctx.bare), [], 'lease released, no run or signal refs');

    const c = commitAt(ctx.bare, after);
    assert.equal(c.headline, 'nyl: hold dev (a)');
    assert.equal(c.body.operation, 'hold');
    assert.deepEqual(Object.keys(c.body.units), ['a']);
    assert.equal(c.body.units.a.action, 'hold');
    assert.deepEqual(c.trailers['Nyl-Requested-By'], [IDENTITY]);
    assert.deepEqual(c.trailers['Nyl-Reason'], ['incident 4711']);
    assert.deepEqual(c.trailers['Nyl-Operation'], ['hold']);

    const held = desiredDoc(ctx.bare, 'a');
    assert.equal(held.lifecycle.state, 'held');
    assert.equal(held.hold.by, IDENTITY);
    assert.equal(held.hold.reason, 'incident 4711');
    assert.match(held.hold.since, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(held.hold.pending, undefined, 'nothing newer waits');
    assert.equal(held.uid, docBefore.uid);
    assert.deepEqual(decision(held), decision(docBefore));
    // The other unit's document is untouched.
    assert.equal(desiredDoc(ctx.bare, 'b').lifecycle.state, 'active');
  });

  test('holding a held unit and resuming an unheld one change nothing and exit 0 with a note', () => {
    const ctx = reconciled();
    assert.equal(hold(ctx.project, 'a').code, 0);
    const refs = { desired: tip(ctx.bare, DESIRED), observed: tip(ctx.bare, OBSERVED) };

    const again = hold(ctx.project, 'a', { reason: 'another incident', args: ['-o', 'json'] });
    assert.equal(again.code, 0, show(again));
    assert.equal(again.json.result, 'unchanged');
    assert.equal(again.json.operation, 'hold');
    assert.ok(again.json.notes.length >= 1, 'a note says nothing changed');
    assert.deepEqual(again.json.errors, []);
    assert.equal(desiredDoc(ctx.bare, 'a').hold.reason, 'incident 4711', 'the first hold stays');

    const againText = hold(ctx.project, 'a');
    assert.equal(againText.code, 0, show(againText));
    assert.match(againText.stdout, /^hold dev: unchanged/m);
    assert.match(againText.stdout + againText.stderr, /^note NYL-/m);

    const notHeld = resume(ctx.project, 'b', { args: ['-o', 'json'] });
    assert.equal(notHeld.code, 0, show(notHeld));
    assert.equal(notHeld.json.operation, 'resume');
    assert.equal(notHeld.json.result, 'unchanged');
    assert.ok(
      notHeld.json.notes.some((n) => n.code === 'NYL-UNCHANGED'),
      'a note says nothing changed',
    );

    const notHeldText = resume(ctx.project, 'b');
    assert.equal(notHeldText.code, 0, show(notHeldText));
    assert.match(notHeldText.stdout + notHeldText.stderr, /^note NYL-/m);

    assert.deepEqual({ desired: tip(ctx.bare, DESIRED), observed: tip(ctx.bare, OBSERVED) }, refs, 'no commit');
    assert.deepEqual(coordinationRefs(ctx.bare), []);
  });

  test('resume: one desired commit that lifts the hold and keeps uid and receipt', () => {
    const ctx = reconciled();
    const active = desiredDoc(ctx.bare, 'a');
    assert.equal(hold(ctx.project, 'a').code, 0);
    const before = { desired: tip(ctx.bare, DESIRED), observed: tip(ctx.bare, OBSERVED) };

    const r = resume(ctx.project, 'a', { args: ['-o', 'json'] });
    assert.equal(r.code, 0, show(r));
    assert.equal(r.json.kind, 'StateOperationReport');
    assert.equal(r.json.operation, 'resume');
    assert.equal(r.json.result, 'done');
    const now = tip(ctx.bare, DESIRED);
    assert.equal(r.json.desired, now);
    assert.equal(git1(ctx.bare, `${now}^`), before.desired, 'exactly one desired commit');
    assert.equal(tip(ctx.bare, OBSERVED), before.observed, 'observed unchanged: receipt kept');
    const c = commitAt(ctx.bare, now);
    assert.equal(c.headline, 'nyl: resume dev (a)');
    assert.equal(c.body.operation, 'resume');
    assert.equal(c.body.units.a.action, 'resume');
    assert.deepEqual(c.trailers['Nyl-Requested-By'], [IDENTITY]);
    assert.deepEqual(c.trailers['Nyl-Reason'], ['incident 4711 resolved']);

    const doc = desiredDoc(ctx.bare, 'a');
    assert.equal(doc.lifecycle.state, 'active');
    assert.equal(doc.hold, undefined);
    assert.equal(doc.uid, active.uid);
    assert.deepEqual(doc, active, 'back to the document it had');
    assert.equal(observedDoc(ctx.bare, 'a').receipt.desired.uid, active.uid);
    // Nothing changed in source: the next reconcile has nothing to do.
    const next = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(next.code, 0, show(next));
    assert.equal(next.json.units.a.result, 'current');
  });

  test('resume of a unit the state does not hold: exit 1 NYL-UNIT-UNKNOWN, nothing written', () => {
    const ctx = reconciled();
    // In source, but never reconciled: the state does not hold it.
    changeUnits(ctx, (log) => ({ ...twoUnits(log), fresh: `script: 'echo fresh >> ${log}'` }));
    const before = { desired: tip(ctx.bare, DESIRED), observed: tip(ctx.bare, OBSERVED) };
    // The JSON refusal, for a unit in source and one nowhere: test/protocol/hold-keeps.test.mjs.
    const r = resume(ctx.project, 'fresh', { args: ['-o', 'json'] });
    assert.equal(r.code, 1, show(r));
    assert.deepEqual(
      r.json.errors.map((e) => e.code),
      ['NYL-UNIT-UNKNOWN'],
    );
    const text = resume(ctx.project, 'ghost');
    assert.equal(text.code, 1);
    assert.match(text.stdout + text.stderr, /^error NYL-UNIT-UNKNOWN/m);
    assert.deepEqual({ desired: tip(ctx.bare, DESIRED), observed: tip(ctx.bare, OBSERVED) }, before);
    assert.deepEqual(coordinationRefs(ctx.bare), []);
  });
});

describe('hold never renders source', () => {
  test('a unit whose reference cannot resolve does not stop hold (of itself or of another unit)', () => {
    const units = (log) => ({
      a: outputScript(log, '1'),
      broken: `env: {X: "\${{ env.values.missing }}"}\nscript: 'echo broken >> ${log}'`,
    });
    const ctx = setup(units);
    // Rendering fails for `broken`: reconcile reports it, a still runs.
    const ran = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(ran.json?.units?.a?.result, 'executed', show(ran));
    assert.notEqual(ran.json.units.broken.result, 'executed');

    const before = commits(ctx.bare).length;
    const r = hold(ctx.project, 'broken', { args: ['-o', 'json'] });
    assert.equal(r.code, 0, show(r));
    assert.equal(r.json.result, 'done');
    assert.equal(r.json.details.marker, true, 'it never ran: a held marker');
    const other = hold(ctx.project, 'a', { args: ['-o', 'json'] });
    assert.equal(other.code, 0, show(other));
    assert.equal(other.json.result, 'done');
    assert.equal(commits(ctx.bare).length, before + 2);
    assert.equal(desiredDoc(ctx.bare, 'broken').lifecycle.state, 'held');
    assert.equal(desiredDoc(ctx.bare, 'a').lifecycle.state, 'held');
    assert.ok(!allCodes(r).includes('NYL-SOURCE-INVALID'));
  });
});

function git1(repo, rev) {
  return tip(repo, rev);
}
