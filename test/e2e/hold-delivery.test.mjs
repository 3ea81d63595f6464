// End-to-end: a hold delivered to a running reconcile. A unit the run already executed or is
// executing, and a hold delivered to a run that then died: test/protocol/hold-delivery.test.mjs.
// The run starts no held unit and records the hold in its transition commit; a unit it already ran
// is held as it ran; a signal the run never read is taken back by nyl hold, which holds the unit
// itself; a hold that arrives after the run's last unit is applied once the run released its lease.
// Whatever the timing, the hold takes effect exactly once and no signal ref is left.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cleanupAll } from '../support/git-fixtures.mjs';
import { nylAsync, waitForFile } from '../support/cli.mjs';
import { sharedFixture } from '../support/shared-fixture.mjs';
import { setup } from '../support/reconcile-helpers.mjs';
import {
  DESIRED,
  OBSERVED,
  commitAt,
  coordinationRefs,
  decision,
  describe as show,
  desiredDoc,
  gatedScript,
  holdAsync,
  hold,
  holdCommitsOf,
  logLines,
  observedDoc,
  openGate,
  pauseAt,
  readYaml,
  resume,
  signalRefs,
  sleep,
  tip,
  waitForLine,
} from '../support/hold-helpers.mjs';

after(cleanupAll);

const IDENTITY = 'Test User <test@example.com>';
const ALICE = 'Alice <alice@example.com>';

/**
 * a waits for the gate; b and c follow it. State init runs once; every test gets the fixture put
 * back as it was (test/support/shared-fixture.mjs), the gate closed.
 */
const chain = sharedFixture(() =>
  setup((log) => {
    const gate = path.join(path.dirname(log), 'gate');
    return {
      a: gatedScript(log, gate, 'a'),
      b: `dependsOn: [a]\nscript: 'echo b >> ${log}'`,
      c: `dependsOn: [b]\nscript: 'echo c >> ${log}'`,
    };
  }),
);

function leaseRecord(bare) {
  return readYaml(bare, 'refs/nyl/dev/lease', 'lease.yaml');
}

/** Common end state: no lease, run or signal ref; exactly one commit records the hold of unit. */
function assertSettled(bare, unit) {
  assert.deepEqual(coordinationRefs(bare), [], 'no lease, run or signal ref left');
  const found = holdCommitsOf(bare, unit);
  assert.equal(found.length, 1, `exactly one commit records the hold of ${unit}: ${found.map((c) => c.headline).join(' | ')}`);
  assert.equal(desiredDoc(bare, unit)?.lifecycle?.state, 'held');
  return found[0];
}

describe('delivery to a running reconcile', () => {
  test('a unit not yet started: signal ref, NYL-HOLD-DELIVERED, no commit; the run does not start it and lists it under held', async () => {
    const ctx = chain();
    const gate = path.join(ctx.dir, 'gate');
    const run = nylAsync(ctx.project, ['reconcile', '-e', 'dev', '-o', 'json']);
    try {
      await waitForLine(ctx.log, 'start a');
      const lease = leaseRecord(ctx.bare);
      assert.equal(lease.operation, 'reconcile');
      const before = { desired: tip(ctx.bare, DESIRED), observed: tip(ctx.bare, OBSERVED) };

      const r = hold(ctx.project, 'b', { args: ['-o', 'json'] });
      assert.equal(r.code, 0, show(r));
      assert.equal(r.json.kind, 'StateOperationReport');
      assert.equal(r.json.operation, 'hold');
      assert.ok(
        r.json.notes.some((n) => n.code === 'NYL-HOLD-DELIVERED'),
        show(r),
      );
      assert.deepEqual(r.json.errors, []);
      const to = r.json.details.deliveredTo;
      assert.equal(to.run, lease.run);
      assert.deepEqual(to.runner, lease.holder);
      assert.equal(to.runner.name, IDENTITY);
      assert.deepEqual({ desired: tip(ctx.bare, DESIRED), observed: tip(ctx.bare, OBSERVED) }, before, 'no commit of its own');
      const signals = signalRefs(ctx.bare);
      assert.equal(signals.length, 1);
      assert.ok(signals[0].startsWith(`refs/nyl/dev/signals/${lease.run}/`), signals[0]);
      const sig = readYaml(ctx.bare, signals[0], 'signal.yaml');
      assert.equal(sig.unit, 'b');
      assert.equal(sig.reason, 'incident 4711');

      // The same hold again is delivered again; the run applies it once.
      const twice = hold(ctx.project, 'b', { args: ['-o', 'json'] });
      assert.equal(twice.code, 0, show(twice));
      assert.equal(signalRefs(ctx.bare).length, 2);

      // Text form of a delivery of another unit; --wait-lease does not make hold wait for a run.
      const startedAt = Date.now();
      const text = hold(ctx.project, 'c', { args: ['--wait-lease', '30s'] });
      assert.equal(text.code, 0, show(text));
      assert.match(text.stdout, /^hold dev: delivered/m);
      assert.match(text.stdout + text.stderr, /^note NYL-HOLD-DELIVERED/m);
      assert.ok(Date.now() - startedAt < 20000, 'delivered without waiting for the run');
      assert.equal(run.child.exitCode, null, 'the run still waits for a');

      openGate(gate);
      const done = await run.done;
      assert.equal(done.code, 2, show(done));
      assert.equal(done.json.run, lease.run);
      assert.equal(done.json.units.a.result, 'executed');
      assert.equal(done.json.units.b.result, 'held');
      assert.equal(done.json.units.c.result, 'held');
      assert.ok(done.json.warnings.some((w) => w.code === 'NYL-UNIT-HELD' && w.units?.includes('b')));
      assert.deepEqual(logLines(ctx.log), ['start a', 'end a'], 'b and c never started');

      const transition = commitAt(ctx.bare, DESIRED);
      assert.equal(transition.body.operation, 'reconcile');
      assert.equal(transition.body.run, lease.run);
      assert.deepEqual([...transition.body.held].sort(), ['b', 'c']);
      assert.equal(transition.body.units.b, 'held');
      assertSettled(ctx.bare, 'b');
      assertSettled(ctx.bare, 'c');
      const doc = desiredDoc(ctx.bare, 'b');
      assert.equal(doc.hold.by, IDENTITY);
      assert.equal(doc.hold.reason, 'incident 4711');
      assert.equal(doc.uid, undefined, 'b never ran: held without an incarnation');
      assert.equal(observedDoc(ctx.bare, 'b'), undefined);
    } finally {
      openGate(gate);
      await run.done;
    }
  });

  test('the run read the signal while nyl hold paused after writing it: one effect, the run applied it', async () => {
    const ctx = chain();
    const gate = path.join(ctx.dir, 'gate');
    const marker = path.join(ctx.dir, 'hold-paused');
    const run = nylAsync(ctx.project, ['reconcile', '-e', 'dev', '-o', 'json']);
    try {
      await waitForLine(ctx.log, 'start a');
      const h = holdAsync(ctx.project, 'b', { args: ['-o', 'json'], env: pauseAt('hold-signal-written', marker) });
      await waitForFile(marker);
      openGate(gate);
      const done = await run.done;
      assert.equal(done.code, 2, show(done));
      assert.equal(done.json.units.b.result, 'held');
      fs.rmSync(marker);
      const r = await h.done;
      assert.equal(r.code, 0, show(r));
      assert.ok(['delivered', 'done'].includes(r.json.result), show(r));
      assert.deepEqual(logLines(ctx.log), ['start a', 'end a']);
      assertSettled(ctx.bare, 'b');
    } finally {
      openGate(gate);
      fs.rmSync(marker, { force: true });
      await run.done;
    }
  });

  test('the run finished before it read the signal: nyl hold takes the signal back and holds the unit itself', async () => {
    const ctx = chain();
    const gate = path.join(ctx.dir, 'gate');
    // nyl hold pauses right before it writes its signal until the test releases it, so the run
    // (whose lease nyl hold saw live) finishes before the signal exists.
    const waiting = path.join(ctx.dir, 'signal-push-waiting');
    const run = nylAsync(ctx.project, ['reconcile', '-e', 'dev', '-o', 'json']);
    try {
      await waitForLine(ctx.log, 'start a');
      const lease = leaseRecord(ctx.bare);
      const h = holdAsync(ctx.project, 'b', {
        args: ['-o', 'json'],
        env: { NYL_FAULT_AT: 'before-hold-signal', NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: waiting },
      });
      await waitForFile(waiting);
      openGate(gate);
      const done = await run.done;
      assert.equal(done.code, 0, show(done));
      assert.equal(done.json.units.b.result, 'executed', 'the run never saw the hold');
      assert.deepEqual(coordinationRefs(ctx.bare), [], 'the run released its lease');
      const afterRun = tip(ctx.bare, DESIRED);
      fs.rmSync(waiting, { force: true });
      const r = await h.done;
      assert.equal(r.code, 0, show(r));
      assert.equal(r.json.result, 'done', show(r));
      assert.equal(r.json.details.deliveredTo, undefined, 'nothing was delivered');
      assert.equal(r.json.desired, tip(ctx.bare, DESIRED));
      const c = assertSettled(ctx.bare, 'b');
      assert.equal(c.headline, 'nyl: hold dev (b)');
      assert.equal(c.oid, tip(ctx.bare, DESIRED));
      assert.equal(tip(ctx.bare, `${DESIRED}^`), afterRun, 'one hold commit on top of the run');
      assert.notEqual(c.body.run, lease.run);
      const obs = observedDoc(ctx.bare, 'b');
      assert.deepEqual(decision(desiredDoc(ctx.bare, 'b')), decision(obs.receipt.desired), 'held as it ran');
    } finally {
      openGate(gate);
      fs.rmSync(waiting, { force: true });
      await run.done;
    }
  });

  test('a hold that reaches the run after its last unit is applied in a hold commit requested by its sender, after the run released its lease', async () => {
    const ctx = chain();
    openGate(path.join(ctx.dir, 'gate'));
    const marker = path.join(ctx.dir, 'run-paused');
    const run = nylAsync(ctx.project, ['reconcile', '-e', 'dev', '-o', 'json'], { env: pauseAt('before-transition-push', marker) });
    try {
      await waitForFile(marker);
      assert.deepEqual(logLines(ctx.log), ['start a', 'end a', 'b', 'c'], 'every unit ran');
      const lease = leaseRecord(ctx.bare);
      const r = hold(ctx.project, 'c', { args: ['-o', 'json', '--author', ALICE] });
      assert.equal(r.code, 0, show(r));
      assert.ok(
        r.json.notes.some((n) => n.code === 'NYL-HOLD-DELIVERED'),
        show(r),
      );
      assert.equal(r.json.details.deliveredTo.run, lease.run);
      // Let the run go on; its late hold commit passes the same fault point.
      while (run.child.exitCode === null && run.child.signalCode === null) {
        if (fs.existsSync(marker)) fs.rmSync(marker);
        await sleep(20);
      }
      const done = await run.done;
      assert.equal(done.code, 2, show(done));
      assert.equal(done.json.units.c.result, 'held', show(done));
      assert.deepEqual(done.json.details.heldAfterRun, ['c']);

      const top = commitAt(ctx.bare, DESIRED);
      assert.equal(top.headline, 'nyl: hold dev (c)');
      assert.equal(top.body.operation, 'hold');
      assert.equal(top.body.units.c.action, 'hold');
      assert.deepEqual(top.trailers['Nyl-Requested-By'], [ALICE], 'requested by whoever sent the hold');
      assert.deepEqual(top.trailers['Nyl-Reason'], ['incident 4711'], 'with the reason the hold was sent with');
      const transition = commitAt(ctx.bare, `${DESIRED}^`);
      assert.equal(transition.body.operation, 'reconcile');
      assert.equal(transition.body.run, lease.run);
      assert.ok(!(transition.body.held ?? []).includes('c'));
      assertSettled(ctx.bare, 'c');
      const doc = desiredDoc(ctx.bare, 'c');
      assert.equal(doc.hold.by, ALICE);
      const obs = observedDoc(ctx.bare, 'c');
      assert.equal(obs.receipt.run, lease.run);
      assert.deepEqual(decision(doc), decision(obs.receipt.desired), 'held as it ran');
    } finally {
      fs.rmSync(marker, { force: true });
      run.child.kill('SIGKILL');
      await run.done;
    }
  });

  test('a hold that paused after writing its signal while the run applies it after its lease: still exactly one effect, hold exits 0', async () => {
    const ctx = chain();
    openGate(path.join(ctx.dir, 'gate'));
    const runMarker = path.join(ctx.dir, 'run-paused');
    const holdMarker = path.join(ctx.dir, 'hold-paused');
    // lease-acquired pauses the run at its start and again when its late hold commit took the lease.
    const run = nylAsync(ctx.project, ['reconcile', '-e', 'dev', '-o', 'json'], { env: pauseAt(['lease-acquired', 'before-transition-push'], runMarker) });
    let h;
    try {
      await waitForFile(runMarker);
      fs.rmSync(runMarker); // lease-acquired of the run
      await waitForFile(runMarker); // before-transition-push: every unit ran
      h = holdAsync(ctx.project, 'c', { args: ['-o', 'json'], env: pauseAt('hold-signal-written', holdMarker) });
      await waitForFile(holdMarker);
      fs.rmSync(runMarker);
      await waitForFile(runMarker); // lease-acquired of the late hold commit
      assert.equal(fs.readFileSync(runMarker, 'utf8').trim(), 'lease-acquired');
      fs.rmSync(holdMarker);
      // The hold re-checks the lease while the late hold commit holds it; give it time to finish
      // (a hold that waits for that lease instead must not deadlock the test).
      await Promise.race([h.done, sleep(3000)]);
      while (run.child.exitCode === null && run.child.signalCode === null) {
        if (fs.existsSync(runMarker)) fs.rmSync(runMarker);
        await sleep(20);
      }
      const done = await run.done;
      const r = await h.done;
      assert.ok([0, 2].includes(done.code), show(done));
      assertSettled(ctx.bare, 'c');
      assert.equal(r.code, 0, `the hold: ${show(r)}`);
    } finally {
      fs.rmSync(runMarker, { force: true });
      fs.rmSync(holdMarker, { force: true });
      if (h) await h.done;
      run.child.kill('SIGKILL');
      await run.done;
    }
  });
});

describe('a resume after a delivered hold', () => {
  test('while the run holds the lease resume exits 2 NYL-LEASE-HELD, even with nothing to change; once the lease is free it supersedes the hold, which never takes effect', async () => {
    const ctx = chain();
    openGate(path.join(ctx.dir, 'gate'));
    const marker = path.join(ctx.dir, 'paused');
    // The run pauses before its transition push, and again before its late hold commit takes the lease.
    const run = nylAsync(ctx.project, ['reconcile', '-e', 'dev', '-o', 'json'], { env: pauseAt(['before-transition-push', 'before-lease-push@hold'], marker) });
    try {
      await waitForFile(marker);
      const h = hold(ctx.project, 'c', { args: ['-o', 'json'] });
      assert.ok(
        h.json.notes.some((n) => n.code === 'NYL-HOLD-DELIVERED'),
        show(h),
      );
      const early = resume(ctx.project, 'c', { args: ['-o', 'json'] });
      assert.equal(early.code, 2, `resume decides under the lease: ${show(early)}`);
      assert.deepEqual(
        early.json.errors.map((e) => e.code),
        ['NYL-LEASE-HELD'],
      );

      fs.rmSync(marker);
      await waitForFile(marker);
      assert.equal(fs.readFileSync(marker, 'utf8').trim(), 'before-lease-push');
      const late = resume(ctx.project, 'c', { args: ['-o', 'json'] });
      assert.equal(late.code, 0, show(late));
      assert.equal(late.json.result, 'done', 'the resume supersedes the delivered hold');
      assert.deepEqual(signalRefs(ctx.bare), [], 'it took the signal back');
      const top = commitAt(ctx.bare, DESIRED);
      assert.equal(top.body.operation, 'resume');
      assert.equal(top.body.units.c.action, 'resume');

      // The late hold commit goes on to its own transition push (which the signal's deletion fences).
      while (run.child.exitCode === null && run.child.signalCode === null) {
        if (fs.existsSync(marker)) fs.rmSync(marker);
        await sleep(20);
      }
      const done = await run.done;
      assert.equal(done.code, 0, show(done));
      assert.equal(done.json.units.c.result, 'executed');
      assert.equal(desiredDoc(ctx.bare, 'c').lifecycle.state, 'active', 'the superseded hold never took effect');
      assert.deepEqual(holdCommitsOf(ctx.bare, 'c'), []);
      assert.deepEqual(coordinationRefs(ctx.bare), []);
    } finally {
      fs.rmSync(marker, { force: true });
      run.child.kill('SIGKILL');
      await run.done;
    }
  });
});
