// Cancellation of `nyl reconcile` by SIGINT/SIGTERM: the signal is
// forwarded to running tools, finished units are checkpointed, the run ends without a transition
// commit and releases the lease, and the next reconcile takes its run ref over. A tool that
// ignores the signal is killed after the grace; a second signal ends nyl at once, and the tool
// with it.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanupAll } from '../support/git-fixtures.mjs';
import { waitForFile } from '../support/cli.mjs';
import { groupEnds } from '../support/proc.mjs';
import { ENV, LEASE, RUNS, Scenario, allCodes, assertCrashInvariants, describeResult, errorCodes, killPid } from '../support/crash-harness.mjs';

after(cleanupAll);

/**
 * The script of `tool`: with SIG_UNIT naming it, it writes its pid, touches SIG_DIR/running and
 * loops for up to 10 s; SIG_MODE=trap exits 0 0.3 s after SIGINT/SIGTERM, SIG_MODE=ignore ignores both.
 */
const toolScript = (logDir) =>
  [
    `echo "$NYL_RUN" >> "${logDir}/$NYL_UNIT.log"`,
    'if [ "${SIG_UNIT:-}" = "$NYL_UNIT" ]; then',
    '  echo $$ > "$SIG_DIR/pid"',
    '  case "${SIG_MODE:-}" in',
    '    trap) trap \'sleep 0.3; echo trapped > "$SIG_DIR/trapped"; exit 0\' INT TERM ;;',
    "    ignore) trap '' INT TERM ;;",
    '  esac',
    '  touch "$SIG_DIR/running"',
    '  i=0',
    '  while [ $i -lt 200 ]; do sleep 0.05 || true; i=$((i+1)); done',
    'fi',
    'printf \'{"done":true}\' > "$NYL_OUTPUTS"',
  ].join('\n');

const UNITS = [
  { name: 'tool', dependsOn: [], wave: 1, script: toolScript },
  { name: 'after', recovery: 'converge', dependsOn: ['tool'], wave: 2 },
];

/**
 * Starts a reconcile whose `tool` runs in `mode`; resolves once the tool runs. validateJson: false
 * when the test ends nyl without its document (a second signal).
 */
/** Starts a reconcile whose tool ignores SIGTERM, then cancels it with SIGTERM: its result, how long it took, its run. */
async function cancelIgnoring(sc, env = {}) {
  const { h, run } = await startRunning(sc, 'ignore', env);
  const sent = Date.now();
  h.signal('SIGTERM');
  const r = await h.done;
  const took = Date.now() - sent;
  sc.record('reconcile after SIGTERM');
  return { r, took, run };
}

async function startRunning(sc, mode, env = {}, { validateJson = true } = {}) {
  const dir = fs.mkdtempSync(path.join(sc.dir, 'sig-'));
  const h = sc.start(['reconcile', '-e', ENV, '-o', 'json'], { env: { SIG_UNIT: 'tool', SIG_MODE: mode, SIG_DIR: dir, ...env }, validateJson });
  await Promise.race([
    waitForFile(path.join(dir, 'running'), 30000),
    h.done.then((r) => {
      throw new Error(`reconcile ended early: ${describeResult(r)}`);
    }),
  ]);
  const [run] = sc.runRefs();
  const toolPid = Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8'));
  sc.toolPids.push(toolPid);
  return { h, dir, run, toolPid };
}

function runRecord(sc, run) {
  const oid = sc.refs()[`${RUNS}${run}`];
  return oid ? sc.readRunCommit(oid) : undefined;
}

describe('a signal cancels the run', () => {
  for (const sig of ['SIGINT', 'SIGTERM']) {
    test(`${sig}: the tool finishes, its receipt is checkpointed, exit 4 NYL-RUN-CANCELLED, no transition; the next run imports it`, async () => {
      const sc = new Scenario({ units: UNITS });
      try {
        await sc.ok(['state', 'init', '-e', ENV]);
        const before = sc.stateRefs();
        const { h, dir, run } = await startRunning(sc, 'trap');
        h.signal(sig);
        const r = await h.done;
        sc.record(`reconcile after ${sig}`);
        assert.equal(r.code, 4, describeResult(r));
        assert.ok(errorCodes(r).includes('NYL-RUN-CANCELLED'), describeResult(r));
        assert.ok(fs.existsSync(path.join(dir, 'trapped')), `the tool got ${sig}`);
        assert.equal(r.json.units.tool.result, 'executed', JSON.stringify(r.json.units));
        assert.notEqual(r.json.units.after.result, 'executed', 'no unit starts after the signal');

        assert.deepEqual(sc.stateRefs(), before, 'no transition commit');
        assert.equal(sc.refs()[LEASE], undefined, 'the lease is released');
        const rec = runRecord(sc, run);
        assert.ok(rec, 'the run ref is kept');
        assert.equal(rec.run.ended?.reason, 'cancelled', `run.yaml: ${JSON.stringify(rec.run)}`);
        assert.ok(rec.run.ended.at);
        assert.equal(rec.units.get('tool').checkpoint?.result, 'receipt');
        sc.noteDeadRuns();

        const status = await sc.nyl(['status', '-e', ENV, '-o', 'json']);
        assert.ok(allCodes(status).includes('NYL-RUN-UNIMPORTED'), `status warns about the unimported run: ${describeResult(status)}`);

        const next = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], 0);
        assert.equal(next.json.units.tool.result, 'imported', describeResult(next));
        assert.equal(next.json.units.after.result, 'executed');
        assert.equal(next.json.details.leaseBroken, undefined);
        const summary = await assertCrashInvariants(sc, { allCurrent: true });
        assert.deepEqual(summary.counts, { tool: 1, after: 1 }, 'nothing executed twice');
        assert.equal(sc.observedDoc('tool').receipt.run, run);
      } finally {
        await sc.cleanup();
      }
    });
  }

  test('a tool that ignores SIGTERM is killed after the grace (NYL_TEST_KILL_GRACE_MS=1000): the unit becomes uncertain', async () => {
    const sc = new Scenario({ units: UNITS });
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const { r, took, run } = await cancelIgnoring(sc, { NYL_TEST_KILL_GRACE_MS: '1000' });
      assert.equal(r.code, 4, describeResult(r));
      assert.ok(errorCodes(r).includes('NYL-RUN-CANCELLED'));
      assert.ok(took >= 900 && took < 6000, `ended after the 1 s grace, not the tool's 10 s (${took} ms)`);
      assert.equal(r.json.units.tool.result, 'uncertain', JSON.stringify(r.json.units.tool));
      const rec = runRecord(sc, run);
      assert.equal(rec.units.get('tool').checkpoint?.result, 'uncertain');
      assert.equal(rec.run.ended?.reason, 'cancelled');
      assert.equal(sc.refs()[LEASE], undefined);
      sc.noteDeadRuns();

      const next = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], 4);
      assert.equal(next.json.units.tool.result, 'recovered', describeResult(next));
      assert.ok(allCodes(next).includes('NYL-UNIT-UNCERTAIN'));
      assert.equal(sc.observedDoc('tool').condition?.type, 'uncertain');
      assert.equal(sc.observedDoc('tool').condition?.run, run);
      const summary = await assertCrashInvariants(sc);
      assert.deepEqual(summary.stuck, ['tool']);
      assert.deepEqual(summary.counts, { tool: 1, after: 0 });
    } finally {
      await sc.cleanup();
    }
  });

  test("a tool that ignores SIGTERM is killed after its unit's terminationGracePeriod (1s), not the default 30 s", async () => {
    const sc = new Scenario({ units: [{ ...UNITS[0], terminationGracePeriod: '1s' }, UNITS[1]] });
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const { r, took } = await cancelIgnoring(sc);
      assert.equal(r.code, 4, describeResult(r));
      assert.equal(r.json.units.tool.result, 'uncertain', JSON.stringify(r.json.units.tool));
      assert.ok(took >= 900 && took < 6000, `ended after the unit's 1 s grace (${took} ms)`);
    } finally {
      await sc.cleanup();
    }
  });

  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ]) {
    test(`a second ${sig} ends nyl at once with exit ${code}; the next run takes over as after a crash`, async () => {
      const sc = new Scenario({ units: UNITS });
      try {
        await sc.ok(['state', 'init', '-e', ENV]);
        // A second signal ends nyl at once, before it prints its report: no document is owed.
        const { h, run, toolPid } = await startRunning(sc, 'ignore', {}, { validateJson: false });
        h.signal(sig);
        await sleep(300);
        assert.equal(h.exited, false, 'the first signal waits for the tool (30 s grace)');
        const sent = Date.now();
        h.signal(sig);
        const r = await h.done;
        sc.record(`reconcile after two ${sig}`);
        assert.equal(r.code, code, describeResult(r));
        assert.ok(Date.now() - sent < 2000, 'at once');
        // The tool ignores the signals, but dies with nyl: the second signal kills its group.
        assert.ok(await groupEnds(toolPid, 3000), `the tool (group ${toolPid}) ends with nyl`);
        assert.ok(sc.refs()[LEASE], 'the lease is left as after a crash');
        const rec = runRecord(sc, run);
        assert.equal(rec.run.ended, undefined, 'the run ref is not marked ended');
        sc.noteDeadRuns();
        if (sig === 'SIGINT') {
          await sc.leaseBreak('forced kill');
          const next = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], [2, 4]);
          assert.equal(next.json.details.leaseBroken?.run, run);
          assert.equal(next.json.units.tool.result, 'recovered', describeResult(next));
          await assertCrashInvariants(sc);
        }
      } finally {
        await sc.cleanup();
      }
    });
  }
});

describe('signals at other moments', () => {
  test('SIGTERM after the started push, before any driver: those units are checkpointed not-started and run once later', async () => {
    const sc = new Scenario({ units: UNITS });
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const marker = path.join(sc.dir, 'pause');
      const h = sc.start(['reconcile', '-e', ENV, '-o', 'json'], {
        env: { NYL_FAULT_AT: 'after-started-push', NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: marker },
      });
      await waitForFile(marker);
      const [run] = sc.runRefs();
      h.signal('SIGTERM');
      await sleep(200);
      fs.rmSync(marker);
      const r = await h.done;
      sc.record('cancelled before its drivers');
      assert.equal(r.code, 4, describeResult(r));
      assert.ok(errorCodes(r).includes('NYL-RUN-CANCELLED'));
      const rec = runRecord(sc, run);
      assert.equal(rec.units.get('tool').checkpoint?.result, 'not-started', JSON.stringify(rec.units.get('tool')));
      assert.equal(sc.executionCounts().tool, 0);
      sc.noteDeadRuns();
      const next = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], 0);
      assert.deepEqual(next.json.details.recovered ?? [], [], 'a unit that never started is not uncertain');
      const summary = await assertCrashInvariants(sc, { allCurrent: true });
      assert.deepEqual(summary.counts, { tool: 1, after: 1 });
    } finally {
      await sc.cleanup();
    }
  });

  test('SIGINT while --wait-lease waits: reconcile exits 4, recover exits 1, NYL-RUN-CANCELLED, nothing written', async () => {
    const sc = new Scenario({ units: UNITS });
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const marker = path.join(sc.dir, 'pause');
      const holder = sc.start(['reconcile', '-e', ENV, '-o', 'json'], {
        env: { NYL_FAULT_AT: 'lease-acquired', NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: marker },
      });
      await waitForFile(marker);
      const refs = sc.refs();
      for (const [args, code] of [
        [['reconcile', '-e', ENV, '--wait-lease', '30s', '-o', 'json'], 4],
        [['recover', '-e', ENV, '--unit', 'tool', '--retry', '--wait-lease', '30s', '-o', 'json'], 1],
      ]) {
        // The waiter says when it waits (its signal handlers are in place by then): a fixed sleep
        // raced a slow start under load, and a SIGINT before the handlers killed it outright.
        const waiting = path.join(sc.dir, `waiting-${args[0]}`);
        const waiter = sc.start(args, { env: { NYL_FAULT_AT: 'lease-waiting', NYL_FAULT_ACTION: 'mark', NYL_FAULT_MARKER: waiting } });
        await waitForFile(waiting);
        assert.equal(waiter.exited, false, `${args[0]} waits for the lease`);
        waiter.signal('SIGINT');
        const r = await waiter.done;
        assert.equal(r.code, code, describeResult(r));
        assert.deepEqual(errorCodes(r), ['NYL-RUN-CANCELLED']);
        assert.deepEqual(sc.refs(), refs, `${args[0]} wrote nothing`);
      }
      fs.rmSync(marker);
      const done = await holder.done;
      assert.equal(done.code, 0, describeResult(done));
    } finally {
      await sc.cleanup();
    }
  });

  test('once recover holds the lease, a signal lets it finish its single commit', async () => {
    const sc = new Scenario({ units: UNITS });
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const { run } = await startRunning(sc, 'ignore').then(async ({ h, run, toolPid }) => {
        await h.crash();
        killPid(toolPid);
        return { run };
      });
      sc.record('reconcile killed');
      sc.noteDeadRuns();
      await sc.leaseBreak();
      const marker = path.join(sc.dir, 'pause-recover');
      const h = sc.start(['recover', '-e', ENV, '-o', 'json'], {
        env: { NYL_FAULT_AT: 'before-recover-push', NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: marker },
      });
      await waitForFile(marker);
      h.signal('SIGINT');
      await sleep(200);
      fs.rmSync(marker);
      const r = await h.done;
      sc.record('recover after SIGINT');
      assert.equal(r.code, 0, describeResult(r));
      assert.equal(r.json.details.leaseBroken?.run, run);
      assert.equal(sc.refs()[LEASE], undefined);
      assert.equal(sc.observedDoc('tool').condition?.type, 'uncertain');
      await assertCrashInvariants(sc);
    } finally {
      await sc.cleanup();
    }
  });
});
