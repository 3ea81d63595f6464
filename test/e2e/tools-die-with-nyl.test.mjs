// Tools never outlive the Nyl process that started them (issue 9, item 2). A tool runs in its own
// process group, out of reach of a signal to Nyl or to Nyl's group; SIGKILL of either used to
// leave it running, and the takeover then ran the same unit again, concurrently. Now the tool's
// group ends within a bound of Nyl's death, whatever killed Nyl, and a second cancelling signal
// (Nyl exits at once) ends a tool that ignores the first one too.
// Real processes: the built CLI, `sh` and `sleep`, a bare state repository over file://.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cleanupAll } from '../support/git-fixtures.mjs';
import { waitForFile } from '../support/cli.mjs';
import { ENV, Scenario, describeResult } from '../support/crash-harness.mjs';
import { groupEnds, groupMembers } from '../support/proc.mjs';

after(cleanupAll);

/** How long a tool's group may outlive Nyl: the watchdog acts at once; the rest is a busy machine. */
const BOUND_MS = 3000;

/**
 * The tool: with DIE_DIR set, it starts a background `sleep` (a child in its group), writes its pid
 * (= its process group) and touches DIE_DIR/running, then waits for the child. DIE_IGNORE=1 makes
 * it ignore SIGINT and SIGTERM.
 */
const TOOL = [
  'if [ -n "${DIE_DIR:-}" ]; then',
  '  if [ "${DIE_IGNORE:-}" = 1 ]; then trap "" INT TERM; fi',
  '  sleep 300 </dev/null >/dev/null 2>&1 &',
  '  echo $$ > "$DIE_DIR/pid"',
  '  touch "$DIE_DIR/running"',
  '  wait',
  'fi',
].join('\n');

const UNITS = [{ name: 'tool', dependsOn: [], wave: 1, script: TOOL }];

/**
 * Starts a reconcile and resolves once its tool runs: {h, pgid}. validateJson: false when the test
 * ends nyl without its document (a second signal).
 */
async function startTool(sc, env = {}, { validateJson = true } = {}) {
  const dir = fs.mkdtempSync(path.join(sc.dir, 'die-'));
  const h = sc.start(['reconcile', '-e', ENV, '-o', 'json'], { env: { DIE_DIR: dir, ...env }, validateJson });
  await Promise.race([waitForFile(path.join(dir, 'running'), 30000), h.done.then((r) => { throw new Error(`reconcile ended early: ${describeResult(r)}`); })]);
  const pgid = Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8'));
  sc.toolPids.push(pgid);
  assert.ok(groupMembers(pgid).length >= 2, 'the tool and its child run in the tool group');
  return { h, pgid };
}

describe('a tool ends with the Nyl process that started it', () => {
  for (const [what, kill] of [
    ['SIGKILL of the nyl process alone', (h) => h.signal('SIGKILL')],
    ["SIGKILL of nyl's whole process group", (h) => h.kill('SIGKILL')],
  ]) {
    test(`${what}: the tool's process group (the tool and its child) is gone within ${BOUND_MS} ms`, async () => {
      const sc = new Scenario({ units: UNITS });
      try {
        await sc.ok(['state', 'init', '-e', ENV]);
        const { h, pgid } = await startTool(sc);
        kill(h);
        const r = await h.done;
        assert.equal(r.signal, 'SIGKILL', describeResult(r));
        const killedAt = Date.now();
        assert.ok(await groupEnds(pgid, BOUND_MS), `tool group ${pgid} still runs ${Date.now() - killedAt} ms after nyl died: ${groupMembers(pgid).join(', ')}`);
      } finally {
        await sc.cleanup();
      }
    });
  }

  test('a tool that ignores SIGTERM ends as soon as a second SIGTERM ends nyl, not 30 s later', async () => {
    const sc = new Scenario({ units: UNITS });
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      // A second signal ends nyl at once, before it prints its report: no document is owed.
      const { h, pgid } = await startTool(sc, { DIE_IGNORE: '1' }, { validateJson: false });
      h.signal('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(h.exited, false, 'the first signal waits for the tool (30 s grace)');
      h.signal('SIGTERM');
      const r = await h.done;
      assert.equal(r.code, 143, describeResult(r));
      assert.ok(await groupEnds(pgid, BOUND_MS), `tool group ${pgid} still runs after nyl exited: ${groupMembers(pgid).join(', ')}`);
    } finally {
      await sc.cleanup();
    }
  });
});
