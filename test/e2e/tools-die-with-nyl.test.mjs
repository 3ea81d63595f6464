// Tools never outlive the Nyl process that started them (issue 9, item 2), yet outlive its death
// long enough to save their state (issue 29, item 5). A tool runs in its own process group, out of
// reach of a signal to Nyl or to Nyl's group; SIGKILL of either used to leave it running, and the
// takeover then ran the same unit again, concurrently. Now the tool's group gets SIGTERM as soon
// as Nyl dies, whatever killed Nyl, and SIGKILL after its unit's terminationGracePeriod (30 s by
// default); what it prints meanwhile is read and dropped, so that it does not die of Nyl's closed
// output pipe before it has saved its state. A second cancelling signal (Nyl exits at once) ends a
// tool that ignores the first one at once.
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

/** How long a tool that honours SIGTERM may outlive Nyl: its watchdog signals at once; the rest is a busy machine. */
const BOUND_MS = 3000;

/**
 * What a tool that saves its state does on SIGTERM: it prints a line every 50 ms for a second,
 * then 2 MB at once (more than any pipe holds), then writes DIE_DIR/saved and exits. Killed, or
 * ended by a write to a closed pipe, it never writes DIE_DIR/saved.
 */
const SAVE = [
  'i=0; while [ $i -lt 20 ]; do echo "saving $i"; sleep 0.05; i=$((i+1)); done',
  'yes | head -c 2000000',
  'echo saved > "$DIE_DIR/saved"; exit 0',
].join('; ');

/**
 * The tool: with DIE_DIR set, it starts a background `sleep` (a child in its group), writes its pid
 * (= its process group) and touches DIE_DIR/running, then waits for the child. DIE_IGNORE=1 makes
 * it ignore SIGINT and SIGTERM; DIE_SAVE=1 makes it save its state on SIGTERM (SAVE).
 */
const TOOL = [
  'if [ -n "${DIE_DIR:-}" ]; then',
  '  if [ "${DIE_IGNORE:-}" = 1 ]; then trap "" INT TERM; fi',
  `  if [ "\${DIE_SAVE:-}" = 1 ]; then trap '${SAVE}' TERM; fi`,
  '  sleep 300 </dev/null >/dev/null 2>&1 &',
  '  echo $$ > "$DIE_DIR/pid"',
  '  touch "$DIE_DIR/running"',
  '  wait',
  'fi',
].join('\n');

const UNITS = [{ name: 'tool', dependsOn: [], wave: 1, script: TOOL }];

/** The same tool in a unit with a short grace of its own. */
const GRACE_MS = 2000;
const SHORT_GRACE_UNITS = [{ ...UNITS[0], terminationGracePeriod: '2s' }];

/** Every path under dir (recursively), sorted. */
function listing(dir) {
  return fs.readdirSync(dir, { recursive: true }).map(String).sort();
}

/**
 * Starts a reconcile and resolves once its tool runs: {h, pgid, dir}. validateJson: false when the test
 * ends nyl without its document (a second signal).
 */
async function startTool(sc, env = {}, { validateJson = true } = {}) {
  const dir = fs.mkdtempSync(path.join(sc.dir, 'die-'));
  const h = sc.start(['reconcile', '-e', ENV, '-o', 'json'], { env: { DIE_DIR: dir, ...env }, validateJson });
  await Promise.race([
    waitForFile(path.join(dir, 'running'), 30000),
    h.done.then((r) => {
      throw new Error(`reconcile ended early: ${describeResult(r)}`);
    }),
  ]);
  const pgid = Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8'));
  sc.toolPids.push(pgid);
  assert.ok(groupMembers(pgid).length >= 2, 'the tool and its child run in the tool group');
  return { h, pgid, dir };
}

describe('a tool ends with the Nyl process that started it', () => {
  for (const [what, kill] of [
    ['SIGKILL of the nyl process alone', (h) => h.signal('SIGKILL')],
    ["SIGKILL of nyl's whole process group", (h) => h.kill('SIGKILL')],
  ]) {
    test(`${what}: the tool's process group (the tool and its child) gets SIGTERM, and is gone within ${BOUND_MS} ms`, async () => {
      const sc = new Scenario({ units: UNITS });
      try {
        await sc.ok(['state', 'init', '-e', ENV]);
        const { h, pgid } = await startTool(sc);
        kill(h);
        const r = await h.done;
        assert.equal(r.signal, 'SIGKILL', describeResult(r));
        const killedAt = Date.now();
        assert.ok(
          await groupEnds(pgid, BOUND_MS),
          `tool group ${pgid} still runs ${Date.now() - killedAt} ms after nyl died: ${groupMembers(pgid).join(', ')}`,
        );
      } finally {
        await sc.cleanup();
      }
    });
  }

  test('SIGKILL of nyl: a tool that saves its state on SIGTERM prints for a second (2 MB too) and finishes; nothing is left in TMPDIR', async () => {
    const sc = new Scenario({ units: UNITS });
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const { h, pgid, dir } = await startTool(sc, { DIE_SAVE: '1' });
      const before = listing(sc.tmp);
      h.signal('SIGKILL');
      assert.equal((await h.done).signal, 'SIGKILL');
      assert.ok(await groupEnds(pgid, 15_000), `tool group ${pgid} still runs: ${groupMembers(pgid).join(', ')}`);
      assert.equal(fs.existsSync(path.join(dir, 'saved')), true, 'the tool got SIGTERM, printed what it had to print, and saved its state');
      assert.deepEqual(listing(sc.tmp), before, "nothing of the tool's output is left in nyl's TMPDIR");
    } finally {
      await sc.cleanup();
    }
  });

  test(`SIGKILL of nyl: a tool that ignores SIGTERM, and its child, run until the unit's terminationGracePeriod (${GRACE_MS} ms) ends, then are killed`, async () => {
    const sc = new Scenario({ units: SHORT_GRACE_UNITS });
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const { h, pgid } = await startTool(sc, { DIE_IGNORE: '1' });
      const members = groupMembers(pgid);
      h.signal('SIGKILL');
      await h.done;
      const killedAt = Date.now();
      await new Promise((r) => setTimeout(r, GRACE_MS / 2));
      assert.deepEqual(groupMembers(pgid), members, 'the tool and its child still run halfway through their grace');
      assert.ok(
        await groupEnds(pgid, GRACE_MS + BOUND_MS),
        `tool group ${pgid} still runs ${Date.now() - killedAt} ms after nyl died: ${groupMembers(pgid).join(', ')}`,
      );
      assert.ok(Date.now() - killedAt >= GRACE_MS - 100, `killed after the grace, not before (${Date.now() - killedAt} ms)`);
    } finally {
      await sc.cleanup();
    }
  });

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
