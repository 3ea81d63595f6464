// End-to-end, two real processes on clocks that disagree by more than a lease (NYL_TEST_NOW
// sets a process's clock). A taker whose clock runs 10 minutes behind the holder's reports
// NYL-CLOCK-SKEW and writes nothing. One whose clock runs 10 minutes ahead finds the lease
// expired by its clock, watches it for a renewal interval and the margin on its own monotonic
// clock, sees the live holder renew, and takes nothing over (it used to take over and start the
// unit the holder was running). A holder killed on this machine is provably gone: any taker takes
// its lease over at once, whatever its clock says.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import path from 'node:path';
import { cleanupAll } from '../support/git-fixtures.mjs';
import { nyl, nylAsync } from '../support/cli.mjs';
import { setup } from '../support/reconcile-helpers.mjs';
import { describe as show, gatedScript, logLines, openGate, refsUnder, waitForLine } from '../support/hold-helpers.mjs';

after(cleanupAll);

const MINUTE = 60_000;
const codes = (r) => (r.json?.errors ?? []).map((e) => e.code);
/** A 6 s lease: renewed every 2 s, watched for 2.6 s (a renewal interval and the 0.6 s margin). */
const SHORT_LEASE = 'lease: {duration: 6s}';

function gatedProject() {
  let gate;
  const ctx = setup(
    (log) => {
      gate = path.join(path.dirname(log), 'gate');
      return { a: gatedScript(log, gate), b: `script: 'echo start b >> ${log}'` };
    },
    { envExtra: SHORT_LEASE },
  );
  return { ctx, gate };
}

test('clock skew beyond the margin: behind is reported; ahead watches, sees the holder renew and takes nothing over; every unit runs once', async () => {
  const { ctx, gate } = gatedProject();
  const holder = nylAsync(ctx.project, ['reconcile', '-e', 'dev', '--concurrency', '1', '-o', 'json']);
  try {
    await waitForLine(ctx.log, 'start a');
    const behind = nyl(ctx.project, ['reconcile', '-e', 'dev', '-o', 'json'], { env: { NYL_TEST_NOW: String(Date.now() - 10 * MINUTE) } });
    assert.equal(behind.code, 1, show(behind));
    assert.deepEqual(codes(behind), ['NYL-CLOCK-SKEW']);
    assert.deepEqual(behind.json.errors[0].data.hosts, [hostname(), hostname()]);
    assert.match(behind.json.errors[0].fix, /nyl lease break -e dev --reason 'clock skew'/);

    const coordination = Object.keys(refsUnder(ctx.bare, 'refs/nyl/dev/runs/'));
    const began = Date.now();
    const ahead = nyl(ctx.project, ['reconcile', '-e', 'dev', '-o', 'json'], { env: { NYL_TEST_NOW: String(Date.now() + 10 * MINUTE) } });
    assert.equal(ahead.code, 2, show(ahead));
    assert.deepEqual(codes(ahead), ['NYL-LEASE-HELD']);
    assert.equal(ahead.json.errors[0].data.clocksDisagree, true);
    assert.match(ahead.stderr, /watching it for 3 s before taking it over/);
    assert.ok(Date.now() - began < 15_000, 'it watched about one renewal interval, not a lease');
    assert.deepEqual(Object.keys(refsUnder(ctx.bare, 'refs/nyl/dev/runs/')), coordination, 'the taker made no run of its own');
  } finally {
    openGate(gate);
  }
  const done = await holder.done;
  assert.equal(done.code, 0, show(done));
  assert.deepEqual(
    logLines(ctx.log)
      .filter((l) => l.startsWith('start'))
      .sort(),
    ['start a', 'start b'],
    'each unit ran once, in the holder',
  );
});

test('a holder killed on this machine is provably gone: a taker ahead or behind takes its lease over at once, without lease break', async () => {
  for (const offset of [10 * MINUTE, -10 * MINUTE]) {
    const { ctx, gate } = gatedProject();
    const holder = nylAsync(ctx.project, ['reconcile', '-e', 'dev', '--concurrency', '1', '-o', 'json']);
    await waitForLine(ctx.log, 'start a');
    holder.child.kill('SIGKILL');
    await holder.done.catch(() => undefined);
    openGate(gate);
    const began = Date.now();
    const taker = nyl(ctx.project, ['reconcile', '-e', 'dev', '-o', 'json'], { env: { NYL_TEST_NOW: String(Date.now() + offset) } });
    assert.equal(taker.code, 4, show(taker));
    assert.equal(taker.json.units.a.result, 'recovered', 'a started in the dead run: uncertain, not run again');
    assert.ok(Date.now() - began < 6_000, `taken over at once, not after the lease (${Date.now() - began} ms)`);
    assert.doesNotMatch(taker.stderr, /watching it/);
  }
});
