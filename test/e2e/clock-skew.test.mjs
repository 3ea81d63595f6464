// End-to-end, two real processes on clocks that disagree by more than a lease (NYL_TEST_NOW
// sets a process's clock): a taker whose clock runs 10 minutes behind the holder's reports
// NYL-CLOCK-SKEW and writes nothing; one whose clock runs 10 minutes ahead takes the lease over,
// and the holder, whose next push fails, starts nothing more: no unit runs twice.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import path from 'node:path';
import { cleanupAll } from '../support/git-fixtures.mjs';
import { nyl, nylAsync } from '../support/cli.mjs';
import { setup, sleep } from '../support/reconcile-helpers.mjs';
import { DESIRED, OBSERVED, describe as show, gatedScript, logLines, openGate, refsUnder, tip, waitForLine } from '../support/hold-helpers.mjs';

after(cleanupAll);

const MINUTE = 60_000;
const codes = (r) => (r.json?.errors ?? []).map((e) => e.code);

test('clock skew beyond the margin: behind is reported, ahead takes over and the holder starts nothing more', async () => {
  let gate;
  const ctx = setup((log) => {
    gate = path.join(path.dirname(log), 'gate');
    return { a: gatedScript(log, gate), b: `script: 'echo start b >> ${log}'` };
  });
  const holder = nylAsync(ctx.project, ['reconcile', '-e', 'dev', '--concurrency', '1', '-o', 'json']);
  try {
    await waitForLine(ctx.log, 'start a');
    const state = { desired: tip(ctx.bare, DESIRED), observed: tip(ctx.bare, OBSERVED) };
    const coordination = refsUnder(ctx.bare, 'refs/nyl/dev/');

    const behind = nyl(ctx.project, ['reconcile', '-e', 'dev', '-o', 'json'], { env: { NYL_TEST_NOW: String(Date.now() - 10 * MINUTE) } });
    assert.equal(behind.code, 1, show(behind));
    assert.deepEqual(codes(behind), ['NYL-CLOCK-SKEW']);
    assert.deepEqual(behind.json.errors[0].data.hosts, [hostname(), hostname()]);
    assert.match(behind.json.errors[0].fix, /nyl lease break -e dev --reason 'clock skew'/);
    assert.deepEqual(refsUnder(ctx.bare, 'refs/nyl/dev/'), coordination, 'the behind taker wrote nothing');

    const ahead = nyl(ctx.project, ['reconcile', '-e', 'dev', '-o', 'json'], { env: { NYL_TEST_NOW: String(Date.now() + 10 * MINUTE) } });
    assert.equal(ahead.code, 4, show(ahead));
    assert.equal(ahead.json.units.a.result, 'recovered', 'a runs in the holder: uncertain for the taker, not run again');
    assert.notEqual(tip(ctx.bare, OBSERVED), state.observed, 'the taker recorded its import');
    assert.equal(ahead.json.units.b.result, 'recovered', "b's started marker went out with a's: uncertain for the taker");
    // A queued unit starts without a push of its own only within a second of the last push that
    // confirmed the lease: past that, the holder must fence again before b starts, and fails.
    await sleep(1200);
  } finally {
    openGate(gate);
  }
  const lost = await holder.done;
  assert.equal(lost.code, 4, show(lost));
  assert.deepEqual(codes(lost), ['NYL-LEASE-LOST']);
  assert.deepEqual(logLines(ctx.log).filter((l) => l.startsWith('start')).sort(), ['start a'], 'a ran once; the holder started nothing after its lease was taken');
});
