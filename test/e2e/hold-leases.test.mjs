// End-to-end: hold and resume against the lease: another
// operation's lease stops both with NYL-LEASE-HELD (exit 2) unless --wait-lease; a reconcile's
// lease stops resume; a broken, unimported lease stops both with NYL-LEASE-BROKEN naming
// `nyl recover -e dev`; a signal while waiting for the lease cancels without writing anything.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cleanupAll } from '../support/git-fixtures.mjs';
import { nyl, nylAsync, waitForFile } from '../support/cli.mjs';
import { sharedFixture } from '../support/shared-fixture.mjs';
import { setup, reconcile } from '../support/reconcile-helpers.mjs';
import {
  DESIRED,
  LEASE,
  OBSERVED,
  SIGNALS,
  describe as show,
  desiredDoc,
  gatedScript,
  hold,
  holdAsync,
  logLines,
  openGate,
  pauseAt,
  readYaml,
  refsUnder,
  resume,
  sleep,
  signalRefs,
  tip,
  waitForLine,
} from '../support/hold-helpers.mjs';

after(cleanupAll);

/** Resolves once the child says on stderr that it waits for the lease (fails after 30 s). */
function saysWaiting(child) {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no "waiting up to" line on stderr: ${seen}`)), 30000);
    child.stderr.on('data', (d) => {
      seen += d;
      if (/^nyl: waiting up to \d+s for the lease of dev: /m.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

function errorCodes(r) {
  return (r.json?.errors ?? []).map((e) => e.code);
}

/** The state refs and the coordination refs; `liveRun`: a run ID whose run ref to leave out (a live run moves it itself, with its checkpoints). */
/**
 * The state refs and the coordination refs. A live run's own writes move its run ref and renew
 * its lease (every write of a holder does): with `liveRun`, its run ref is left out and the lease
 * stands for the run that holds it.
 */
function snapshot(bare, { liveRun } = {}) {
  const coordination = Object.fromEntries(Object.entries(refsUnder(bare, 'refs/nyl/dev/')).filter(([ref]) => ref !== `refs/nyl/dev/runs/${liveRun}`));
  if (liveRun && coordination[LEASE]) coordination[LEASE] = `held by run ${readYaml(bare, LEASE, 'lease.yaml').run}`;
  return { desired: tip(bare, DESIRED), observed: tip(bare, OBSERVED), coordination };
}

/** The ID of the one run whose run ref exists now. */
function onlyRun(bare) {
  const runs = Object.keys(refsUnder(bare, 'refs/nyl/dev/runs/'));
  assert.equal(runs.length, 1, `one run ref: ${runs.join(', ')}`);
  return runs[0].slice('refs/nyl/dev/runs/'.length);
}

/** Units a and h (never reconciled); h is held (a marker) before the test takes the lease. */
function heldSetup(extra = {}) {
  const ctx = setup((log) => ({ a: `script: 'echo a >> ${log}'`, h: `script: 'echo h >> ${log}'`, ...(typeof extra === 'function' ? extra(log) : extra) }));
  const r = hold(ctx.project, 'h');
  assert.equal(r.code, 0, show(r));
  return ctx;
}

/** heldSetup() without more units: built once, put back for every test that takes it (test/support/shared-fixture.mjs). */
const heldAandH = sharedFixture(() => heldSetup());

/** Starts `nyl state init -e dev --fresh` paused with the lease taken; returns { run, marker }. */
async function otherOperation(ctx) {
  const marker = path.join(ctx.dir, 'init-paused');
  const run = nylAsync(ctx.project, ['state', 'init', '-e', 'dev', '--fresh', '--reason', 'start over'], { env: pauseAt('lease-acquired', marker) });
  await waitForFile(marker);
  return { run, marker };
}

describe('another operation holds the lease', () => {
  test('hold and resume exit 2 NYL-LEASE-HELD and write nothing; with --wait-lease they wait and succeed', async () => {
    const ctx = heldAandH();
    const other = await otherOperation(ctx);
    try {
      const before = snapshot(ctx.bare);
      assert.ok(before.coordination[LEASE], 'the other operation holds the lease');

      const h = hold(ctx.project, 'a', { args: ['-o', 'json'] });
      assert.equal(h.code, 2, show(h));
      assert.deepEqual(errorCodes(h), ['NYL-LEASE-HELD']);
      assert.equal(h.json.errors[0].data?.operation, 'state-init');
      const ht = hold(ctx.project, 'a');
      assert.equal(ht.code, 2);
      assert.match(ht.stdout + ht.stderr, /^error NYL-LEASE-HELD/m);

      const r = resume(ctx.project, 'h', { args: ['-o', 'json'] });
      assert.equal(r.code, 2, show(r));
      assert.deepEqual(errorCodes(r), ['NYL-LEASE-HELD']);

      assert.deepEqual(snapshot(ctx.bare), before, 'nothing written: no commit, no signal, same lease');
      assert.deepEqual(signalRefs(ctx.bare), [], 'hold delivers only to reconcile and teardown runs');

      const waitingHold = holdAsync(ctx.project, 'a', { args: ['--wait-lease', '30s', '-o', 'json'] });
      const waitingResume = nylAsync(ctx.project, ['resume', '-e', 'dev', '--unit', 'h', '--reason', 'resolved', '--wait-lease', '30s', '-o', 'json']);
      await sleep(700);
      assert.equal(waitingHold.child.exitCode, null, 'hold waits for the lease');
      assert.equal(waitingResume.child.exitCode, null, 'resume waits for the lease');
      assert.deepEqual(snapshot(ctx.bare), before);

      fs.rmSync(other.marker);
      const init = await other.run.done;
      assert.equal(init.code, 0, show(init));
      const [hr, rr] = await Promise.all([waitingHold.done, waitingResume.done]);
      assert.equal(hr.code, 0, show(hr));
      assert.equal(hr.json.result, 'done');
      assert.equal(rr.code, 0, show(rr));
      assert.equal(rr.json.result, 'done');
      assert.equal(desiredDoc(ctx.bare, 'a').lifecycle.state, 'held');
      assert.equal(desiredDoc(ctx.bare, 'h').lifecycle.state, 'active');
      assert.deepEqual(Object.keys(refsUnder(ctx.bare, 'refs/nyl/dev/')), [], 'every lease released');
    } finally {
      fs.rmSync(other.marker, { force: true });
      await other.run.done;
    }
  });

  test('SIGTERM while hold (or resume) waits for the lease: exit 1 NYL-RUN-CANCELLED, nothing written', async () => {
    const ctx = heldAandH();
    const other = await otherOperation(ctx);
    try {
      const before = snapshot(ctx.bare);
      const waiters = [
        holdAsync(ctx.project, 'a', { args: ['--wait-lease', '1m'] }),
        holdAsync(ctx.project, 'a', { args: ['--wait-lease', '1m', '-o', 'json'] }),
        nylAsync(ctx.project, ['resume', '-e', 'dev', '--unit', 'h', '--reason', 'resolved', '--wait-lease', '1m']),
      ];
      // Each says on stderr that it waits for the lease: it is past its start-up, signal handlers set.
      await Promise.all(waiters.map((w) => saysWaiting(w.child)));
      for (const w of waiters) assert.equal(w.child.exitCode, null, 'still waiting');
      for (const w of waiters) w.child.kill('SIGTERM');
      const [text, json, res] = await Promise.all(waiters.map((w) => w.done));
      assert.equal(text.code, 1, show(text));
      assert.match(text.stdout + text.stderr, /^error NYL-RUN-CANCELLED/m);
      assert.equal(json.code, 1, show(json));
      assert.deepEqual(errorCodes(json), ['NYL-RUN-CANCELLED']);
      assert.equal(res.code, 1, show(res));
      assert.match(res.stdout + res.stderr, /^error NYL-RUN-CANCELLED/m);
      assert.deepEqual(snapshot(ctx.bare), before, 'nothing written while waiting');
    } finally {
      fs.rmSync(other.marker, { force: true });
      const init = await other.run.done;
      assert.equal(init.code, 0, show(init));
    }
    assert.equal(desiredDoc(ctx.bare, 'a'), undefined, 'the cancelled hold never landed');
    assert.deepEqual(Object.keys(refsUnder(ctx.bare, 'refs/nyl/dev/')), []);
  });
});

describe('a reconcile holds the lease', () => {
  test('resume exits 2 NYL-LEASE-HELD; with --wait-lease it waits for the run and succeeds', async () => {
    const ctx = heldSetup((log) => ({ slow: gatedScript(log, path.join(path.dirname(log), 'gate')) }));
    const gate = path.join(ctx.dir, 'gate');
    const run = nylAsync(ctx.project, ['reconcile', '-e', 'dev', '-o', 'json']);
    try {
      await waitForLine(ctx.log, 'start slow');
      // The run checkpoints its units as they end: its own run ref may move meanwhile.
      const liveRun = onlyRun(ctx.bare);
      const before = snapshot(ctx.bare, { liveRun });
      const r = resume(ctx.project, 'h', { args: ['-o', 'json'] });
      assert.equal(r.code, 2, show(r));
      assert.deepEqual(errorCodes(r), ['NYL-LEASE-HELD']);
      assert.equal(r.json.errors[0].data?.operation, 'reconcile');
      assert.deepEqual(snapshot(ctx.bare, { liveRun }), before, 'nothing written');

      const waiting = nylAsync(ctx.project, ['resume', '-e', 'dev', '--unit', 'h', '--reason', 'resolved', '--wait-lease', '30s', '-o', 'json']);
      await sleep(500);
      assert.equal(waiting.child.exitCode, null, 'resume waits for the run');
      openGate(gate);
      const done = await run.done;
      assert.equal(done.code, 2, show(done));
      assert.equal(done.json.units.h.result, 'held', 'the run saw h held');
      const w = await waiting.done;
      assert.equal(w.code, 0, show(w));
      assert.equal(w.json.result, 'done');
      assert.equal(desiredDoc(ctx.bare, 'h').lifecycle.state, 'active');
      assert.deepEqual(
        logLines(ctx.log).filter((l) => l === 'h'),
        [],
        'h never ran while held',
      );
    } finally {
      openGate(gate);
      await run.done;
    }
  });
});

describe('a broken, unimported lease', () => {
  test('stops hold and resume with NYL-LEASE-BROKEN (exit 2) naming `nyl recover -e dev`; after recover both work', async () => {
    const ctx = heldAandH();
    const marker = path.join(ctx.dir, 'paused');
    const run = nylAsync(ctx.project, ['reconcile', '-e', 'dev'], { env: pauseAt('lease-acquired', marker) });
    await waitForFile(marker);
    run.child.kill('SIGKILL');
    await run.done;
    fs.rmSync(marker);
    const broke = nyl(ctx.project, ['lease', 'break', '-e', 'dev', '--reason', 'runner killed']);
    assert.equal(broke.code, 0, show(broke));
    const before = snapshot(ctx.bare);

    for (const [what, r] of [
      ['hold', hold(ctx.project, 'a', { args: ['-o', 'json'] })],
      ['resume', resume(ctx.project, 'h', { args: ['-o', 'json'] })],
    ]) {
      assert.equal(r.code, 2, `${what}: ${show(r)}`);
      assert.deepEqual(errorCodes(r), ['NYL-LEASE-BROKEN'], what);
      const e = r.json.errors[0];
      assert.match(`${e.message}\n${e.fix}`, /nyl recover -e dev/, `${what} names nyl recover -e dev`);
    }
    for (const [what, r] of [
      ['hold', hold(ctx.project, 'a')],
      ['resume', resume(ctx.project, 'h')],
    ]) {
      assert.equal(r.code, 2, `${what}: ${show(r)}`);
      assert.match(r.stdout + r.stderr, /^error NYL-LEASE-BROKEN/m);
      assert.match(r.stdout + r.stderr, /nyl recover -e dev/);
    }
    assert.deepEqual(snapshot(ctx.bare), before, 'nothing written, no signal to the dead run');

    const rec = nyl(ctx.project, ['recover', '-e', 'dev', '--reason', 'import the killed run']);
    assert.equal(rec.code, 0, show(rec));
    assert.equal(hold(ctx.project, 'a').code, 0);
    assert.equal(resume(ctx.project, 'h').code, 0);
    assert.equal(desiredDoc(ctx.bare, 'a').lifecycle.state, 'held');
    assert.equal(desiredDoc(ctx.bare, 'h').lifecycle.state, 'active');
    assert.deepEqual(Object.keys(refsUnder(ctx.bare, SIGNALS)), []);
  });
});
