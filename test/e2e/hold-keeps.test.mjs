// End-to-end: what a hold and a resume keep: a running
// incarnation stays at the document of its receipt and its consumers keep resolving from it; an
// uncertain unit keeps its condition (status `held (uncertain)`, exit 4) also after resume; a unit
// that never ran is held as a marker and its dependents stay blocked; a held unit that left source
// is not deleted until resumed.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cleanupAll } from '../support/git-fixtures.mjs';
import { nyl, nylAsync, waitForFile } from '../support/cli.mjs';
import { setup, changeUnits, reconcile, commitFiles, projectYaml } from '../support/reconcile-helpers.mjs';
import { sharedFixture } from '../support/shared-fixture.mjs';
import {
  DESIRED,
  OBSERVED,
  commitAt,
  coordinationRefs,
  decision,
  describe as show,
  desiredDoc,
  hold,
  logLines,
  observedDoc,
  outputScript,
  pauseAt,
  refsUnder,
  resume,
  status,
  statusTable,
  tip,
} from '../support/hold-helpers.mjs';

after(cleanupAll);

const IDENTITY = 'Test User <test@example.com>';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** a produces output v; b consumes it and never changes; c consumes it and changes with `cTag`. */
const consumers =
  (v, cTag = 'c1') =>
  (log) => ({
    a: outputScript(log, v),
    b: `env: {X: "\${{ units.a.outputs.v }}"}\nscript: 'echo b $X >> ${log}'`,
    c: `env: {X: "\${{ units.a.outputs.v }}"}\nscript: 'echo ${cTag} $X >> ${log}'`,
  });

/** consumers('1'), state init and a first reconcile: built once, put back for every test that takes it. */
const reconciled = sharedFixture(() => {
  const ctx = setup(consumers('1'));
  const first = reconcile(ctx.project);
  assert.equal(first.code, 0, show(first));
  return ctx;
});

describe('a unit with a running incarnation', () => {
  test('keeps the document of its receipt; status and reconcile show the pending source; consumers resolve from the receipt', () => {
    const ctx = reconciled();
    const receiptDoc = observedDoc(ctx.bare, 'a').receipt.desired;
    const uid = desiredDoc(ctx.bare, 'a').uid;
    assert.equal(hold(ctx.project, 'a').code, 0);

    // Source moves on: a would produce 2, c changes its own spec, b does not change.
    const s2 = changeUnits(ctx, consumers('2', 'c2'));
    fs.rmSync(ctx.log);

    const held = desiredDoc(ctx.bare, 'a');
    assert.equal(held.uid, uid);
    assert.equal(held.lifecycle.state, 'held');
    assert.deepEqual(decision(held), decision(receiptDoc), 'the desired document its latest receipt was produced for');

    const st = status(ctx.project);
    assert.equal(st.code, 2, show(st));
    const rows = statusTable(st.stdout).rows;
    assert.equal(rows.a[2], 'held');
    assert.equal(rows.a[3], 'current', 'its receipt stays current against the held document');
    assert.equal(rows.a.at(-1), `pending changes from ${s2}`);
    assert.match(st.stdout + st.stderr, /^warning NYL-UNIT-HELD \(a\)$/m);

    const observedBefore = observedDoc(ctx.bare, 'a');
    const r = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(r.code, 2, show(r));
    assert.equal(r.json.units.a.result, 'held');
    assert.equal(r.json.units.a.dispatched, false);
    assert.ok(
      r.json.warnings.some((w) => w.code === 'NYL-UNIT-HELD' && (w.units ?? []).includes('a')),
      show(r),
    );
    assert.equal(r.json.units.b.result, 'current', 'a consumer that did not change stays current');
    assert.equal(r.json.units.c.result, 'executed', 'a consumer whose own spec changed executes');
    assert.deepEqual(logLines(ctx.log), ['c2 1'], "c ran with the held unit's receipt outputs; a did not run");

    assert.equal(held.hold.pending, undefined, 'nothing waited when the hold was written');
    assert.deepEqual(
      desiredDoc(ctx.bare, 'a'),
      { ...held, hold: { ...held.hold, pending: s2 } },
      'the reconcile records the source the hold keeps from applying, and changes nothing else',
    );
    assert.deepEqual(observedDoc(ctx.bare, 'a'), observedBefore);
    const desiredTip = tip(ctx.bare, DESIRED);
    assert.equal(reconcile(ctx.project).code, 2);
    assert.equal(tip(ctx.bare, DESIRED), desiredTip, 'recorded once: the next reconcile of the same source writes nothing');
    assert.equal(desiredDoc(ctx.bare, 'c').rendering.env.X, '1');
    assert.deepEqual(coordinationRefs(ctx.bare), []);

    // Resume: the next reconcile renders a from source again, and its consumers follow.
    assert.equal(resume(ctx.project, 'a').code, 0);
    const again = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(again.code, 0, show(again));
    assert.equal(again.json.units.a.result, 'executed');
    assert.equal(again.json.units.a.uid, uid, 'resume keeps the uid');
    assert.deepEqual(logLines(ctx.log).slice(1).sort(), ['a 2', 'b 2', 'c2 2']);
  });

  test('newer desired source kept from applying is recorded under hold.pending', () => {
    const ctx = reconciled();
    const receiptDoc = observedDoc(ctx.bare, 'a').receipt.desired;
    // The next source fails for a: the desired document moves on, the receipt stays at the first one.
    const s2 = commitFiles(ctx.project, {
      'nyl.yaml': projectYaml(ctx.url, { ...consumers('1')(ctx.log), a: `script: 'echo a2 >> ${ctx.log}; exit 1'` }),
    });
    const failed = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(failed.json.units.a.result, 'failed', show(failed));
    assert.equal(desiredDoc(ctx.bare, 'a').source, s2);

    const r = hold(ctx.project, 'a', { args: ['-o', 'json'] });
    assert.equal(r.code, 0, show(r));
    assert.equal(r.json.details.marker, false);
    const held = desiredDoc(ctx.bare, 'a');
    assert.deepEqual(decision(held), decision(receiptDoc));
    assert.equal(held.lifecycle.state, 'held');
    assert.equal(held.hold.pending, s2, 'recorded by the hold itself');
  });
});

// hold.pending over later source commits (recorded once, kept, cleared): test/protocol/hold-keeps.test.mjs.

describe('an uncertain unit', () => {
  test('is held at its last receipt with its condition; status `held (uncertain)` exits 4; resume keeps the condition', async () => {
    const units = (v) => (log) => ({
      ...consumers(v)(log),
      // Never ran before the crash: uncertain without a receipt; m consumes it.
      n: `script: 'echo n >> ${log}; printf "{\\"v\\":\\"n\\"}" > $NYL_OUTPUTS'`,
      m: `env: {X: "\${{ units.n.outputs.v }}"}\nscript: 'echo m $X >> ${log}'`,
    });
    const ctx = reconciled();
    const receiptDoc = observedDoc(ctx.bare, 'a').receipt.desired;
    changeUnits(ctx, units('2'));

    // Crash the run after it recorded that a and n started (before either ran), then import it.
    const marker = path.join(ctx.dir, 'paused');
    const run = nylAsync(ctx.project, ['reconcile', '-e', 'dev'], { env: pauseAt('after-started-push', marker) });
    await waitForFile(marker);
    run.child.kill('SIGKILL');
    await run.done;
    fs.rmSync(marker);
    const broke = nyl(ctx.project, ['lease', 'break', '-e', 'dev', '--reason', 'runner killed']);
    assert.equal(broke.code, 0, show(broke));
    const rec = nyl(ctx.project, ['recover', '-e', 'dev', '--reason', 'import the killed run']);
    assert.equal(rec.code, 0, show(rec));
    const obsA = observedDoc(ctx.bare, 'a');
    assert.equal(obsA.condition?.type, 'uncertain', 'setup: a is uncertain');
    assert.equal(observedDoc(ctx.bare, 'n')?.condition?.type, 'uncertain', 'setup: n is uncertain');
    const evidence = refsUnder(ctx.bare, 'refs/nyl/dev/evidence/');
    const observedTip = tip(ctx.bare, OBSERVED);
    fs.rmSync(ctx.log, { force: true });

    for (const unit of ['a', 'n']) {
      const r = hold(ctx.project, unit, { args: ['-o', 'json'] });
      assert.equal(r.code, 0, show(r));
      assert.equal(r.json.result, 'done');
    }
    const held = desiredDoc(ctx.bare, 'a');
    assert.equal(held.lifecycle.state, 'held');
    assert.equal(held.uid, obsA.uid);
    assert.deepEqual(decision(held), decision(receiptDoc), 'the document and uid of its last receipt');
    assert.equal(tip(ctx.bare, OBSERVED), observedTip, 'hold does not touch the condition');
    assert.deepEqual(refsUnder(ctx.bare, 'refs/nyl/dev/evidence/'), evidence, 'evidence refs stay');

    const st = status(ctx.project);
    assert.equal(st.code, 4, show(st));
    const rows = statusTable(st.stdout).rows;
    assert.equal(rows.a[2], 'held (uncertain)', st.stdout);
    assert.equal(rows.n[2], 'held (uncertain)', st.stdout);
    assert.equal(rows.b[2], 'current', 'b resolves from the receipt of held a');
    assert.equal(rows.m[2], 'blocked', 'an uncertain unit without a receipt: its dependents stay blocked');

    const r = reconcile(ctx.project, ['-o', 'json']);
    assert.ok(r.code === 2 || r.code === 4, show(r));
    assert.equal(r.json.units.a.result, 'held');
    assert.equal(r.json.units.n.result, 'held');
    assert.equal(r.json.units.m.result, 'blocked');
    assert.deepEqual(
      logLines(ctx.log).filter((l) => /^(a|n|m) /.test(l) || l === 'n'),
      [],
      'nothing of a, n or m ran',
    );
    assert.equal(observedDoc(ctx.bare, 'a').condition?.type, 'uncertain');

    // Resume lifts the hold only: the condition (and evidence) stay; the unit still needs recovery.
    assert.equal(resume(ctx.project, 'a').code, 0);
    const obsAfter = observedDoc(ctx.bare, 'a');
    assert.equal(obsAfter.condition?.type, 'uncertain');
    assert.deepEqual(obsAfter.condition, obsA.condition);
    assert.equal(desiredDoc(ctx.bare, 'a').uid, obsA.uid);
    assert.deepEqual(refsUnder(ctx.bare, 'refs/nyl/dev/evidence/'), evidence);
    const after = status(ctx.project);
    assert.equal(after.code, 4, show(after));
    assert.equal(statusTable(after.stdout).rows.a[2], 'uncertain');
    // a is manual (the Command default): reconcile does not run it.
    const again = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(again.code, 4, show(again));
    assert.equal(again.json.units.a.result, 'uncertain');
    assert.ok(!logLines(ctx.log).some((l) => l.startsWith('a ')));
  });
});

describe('a unit that never ran', () => {
  test('in an environment never reconciled: a held marker; dependents blocked; resume starts a new incarnation', () => {
    const ctx = setup((log) => ({
      migrate: `script: 'echo migrate >> ${log}'`,
      app: `dependsOn: [migrate]\nscript: 'echo app >> ${log}'`,
    }));
    const observedTip = tip(ctx.bare, OBSERVED);
    const r = hold(ctx.project, 'migrate', { args: ['-o', 'json'] });
    assert.equal(r.code, 0, show(r));
    assert.equal(r.json.result, 'done');
    assert.equal(r.json.details.marker, true);
    assert.equal(tip(ctx.bare, OBSERVED), observedTip);
    const c = commitAt(ctx.bare, DESIRED);
    assert.equal(c.headline, 'nyl: hold dev (migrate)');
    assert.equal(c.body.units.migrate.action, 'hold');

    const doc = desiredDoc(ctx.bare, 'migrate');
    assert.equal(doc.lifecycle.state, 'held');
    assert.equal(doc.hold.by, IDENTITY);
    assert.equal(doc.hold.reason, 'incident 4711');
    assert.ok(doc.hold.since);
    for (const key of ['uid', 'kind', 'rendering']) assert.equal(doc[key], undefined, `a held marker has no ${key}`);
    assert.equal(desiredDoc(ctx.bare, 'app'), undefined, 'hold writes nothing about other units');

    const text = hold(ctx.project, 'migrate');
    assert.equal(text.code, 0);

    const st = status(ctx.project);
    assert.equal(st.code, 2, show(st));
    const row = statusTable(st.stdout).rows.migrate;
    assert.deepEqual(row, ['migrate', '-', 'held', 'none', '-'], `the row of a held marker, exactly (no detail): ${st.stdout}`);
    assert.match(st.stdout + st.stderr, /^warning NYL-UNIT-HELD \(migrate\)$/m);
    assert.match(st.stdout + st.stderr, /migrate is held by Test User <test@example.com> \(incident 4711\) since /);
    assert.match(st.stdout + st.stderr, /nyl resume -e dev --unit migrate/);

    const blocked = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(blocked.code, 2, show(blocked));
    assert.equal(blocked.json.units.migrate.result, 'held');
    assert.equal(blocked.json.units.app.result, 'blocked');
    assert.ok(blocked.json.warnings.some((w) => w.code === 'NYL-UNIT-HELD'));
    assert.deepEqual(logLines(ctx.log), [], 'nothing ran');
    assert.equal(desiredDoc(ctx.bare, 'migrate').uid, undefined, 'not created while held');
    assert.equal(observedDoc(ctx.bare, 'migrate'), undefined);

    assert.equal(resume(ctx.project, 'migrate').code, 0);
    assert.equal(desiredDoc(ctx.bare, 'migrate').uid, undefined, 'resume creates nothing');
    const ran = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(ran.code, 0, show(ran));
    assert.equal(ran.json.units.migrate.result, 'executed');
    assert.equal(ran.json.units.app.result, 'executed');
    assert.deepEqual(logLines(ctx.log), ['migrate', 'app']);
    const created = desiredDoc(ctx.bare, 'migrate');
    assert.match(created.uid, UUID, 'a new incarnation');
    assert.equal(created.kind, 'Command');
    assert.equal(created.lifecycle.state, 'active');
    assert.equal(created.hold, undefined);
    assert.equal(observedDoc(ctx.bare, 'migrate').uid, created.uid);
  });
});

describe('a held unit that leaves the ownership set', () => {
  const units = (log) => ({
    a: `script: 'echo a >> ${log}'`,
    gone: `deletionPolicy: Release\nscript: 'echo gone >> ${log}'`,
  });

  /** Reconciles a and gone, holds gone, then removes it from source (built once, put back for each test). */
  const heldAndGone = sharedFixture(() => {
    const ctx = setup(units);
    assert.equal(reconcile(ctx.project).code, 0);
    assert.equal(hold(ctx.project, 'gone').code, 0);
    const held = desiredDoc(ctx.bare, 'gone');
    changeUnits(ctx, (log) => ({ a: units(log).a }));
    return { ctx, held };
  });

  test('is not deleted while held: reported held with a pending deletion, its file stays', () => {
    const { ctx, held } = heldAndGone();
    const st = status(ctx.project, ['-o', 'json']);
    assert.equal(st.code, 2, show(st));
    assert.equal(st.json.units.gone?.state, 'held', show(st));
    assert.match(st.json.units.gone.detail, /pending deletion/);
    const r = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(r.code, 2, show(r));
    assert.equal(r.json.units.gone?.result, 'held');
    assert.match(r.json.units.gone.detail, /pending deletion/);
    assert.ok(r.json.warnings.some((w) => w.code === 'NYL-UNIT-HELD'));
    assert.deepEqual(desiredDoc(ctx.bare, 'gone'), held, 'its file stays, untouched');
    assert.ok(observedDoc(ctx.bare, 'gone')?.receipt, 'its receipt stays');
    // a and gone ran side by side in the first reconcile: their lines come in either order.
    assert.deepEqual(logLines(ctx.log).sort(), ['a', 'gone'], 'nothing ran again');

    assert.equal(resume(ctx.project, 'gone').code, 0);
    assert.ok(desiredDoc(ctx.bare, 'gone'), 'resume deletes nothing');
    assert.equal(desiredDoc(ctx.bare, 'gone').lifecycle.state, 'active');
  });

  test('after resume, the next reconcile releases it (deletionPolicy Release): its desired file goes', () => {
    const { ctx } = heldAndGone();
    assert.equal(resume(ctx.project, 'gone').code, 0);
    const after = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(after.code, 0, show(after));
    assert.equal(desiredDoc(ctx.bare, 'gone'), undefined, 'its desired file is removed');
  });
});
