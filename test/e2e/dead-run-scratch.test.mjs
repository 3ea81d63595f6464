// Nothing sensitive is left in $TMPDIR (issue 30, item 7). A run killed (SIGKILL) mid-unit used
// to leave its scratch directory behind, with the unit's outputs file holding its values in
// plain text. Now the run that imports it removes that directory on this host; and a run that
// ends keeps no outputs file once it was read.
// Real processes: the built CLI, `sh`, a bare state repository over file://; TMPDIR is the
// scenario's own directory, so that everything a run leaves there can be listed.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cleanupAll } from '../support/git-fixtures.mjs';
import { waitForFile } from '../support/cli.mjs';
import { ENV, Scenario, describeResult } from '../support/crash-harness.mjs';
import { groupEnds } from '../support/proc.mjs';

after(cleanupAll);

const PLANTED = `planted-${process.pid}-value`;

/**
 * Writes its outputs (the planted value, from PLANTED in its environment), then, with DIE_DIR
 * set, says so and waits to be killed.
 */
const TOOL = [
  'printf \'{"token": {"value": "%s", "sensitive": true}}\' "$PLANTED" > "$NYL_OUTPUTS"',
  'if [ -n "${DIE_DIR:-}" ]; then',
  '  echo $$ > "$DIE_DIR/pid"',
  '  touch "$DIE_DIR/running"',
  '  exec sleep 300',
  'fi',
].join('\n');

/** Every file under dir (recursively, symlinks not followed) whose content holds text. */
function holding(dir, text) {
  const found = [];
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath ?? entry.path, entry.name);
    if (entry.isFile() && fs.readFileSync(full).includes(text)) found.push(full);
  }
  return found;
}

function outputsFiles(dir) {
  return fs
    .readdirSync(dir, { recursive: true })
    .map(String)
    .filter((p) => p.endsWith('.outputs.json'));
}

test('a run killed mid-unit leaves its values in TMPDIR; the run that imports it removes its scratch directory', { timeout: 120_000 }, async () => {
  const sc = new Scenario({ units: [{ name: 'vault', dependsOn: [], wave: 1, script: TOOL }] });
  const env = { NYL_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'), PLANTED };
  try {
    await sc.ok(['state', 'init', '-e', ENV]);
    const dir = fs.mkdtempSync(path.join(sc.dir, 'die-'));
    const h = sc.start(['reconcile', '-e', ENV, '-o', 'json'], { env: { ...env, DIE_DIR: dir } });
    await Promise.race([
      waitForFile(path.join(dir, 'running'), 30_000),
      h.done.then((r) => {
        throw new Error(`reconcile ended early: ${describeResult(r)}`);
      }),
    ]);
    const pgid = Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8'));
    sc.toolPids.push(pgid);
    const killed = await h.crash();
    assert.equal(killed.signal, 'SIGKILL');
    assert.ok(await groupEnds(pgid, 15_000), 'the tool ended with nyl');
    assert.notDeepEqual(holding(sc.tmp, PLANTED), [], 'the killed run left the value in its scratch directory');
    assert.equal(outputsFiles(sc.tmp).length, 1);

    await sc.leaseBreak();
    const r = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], [0, 4], { env });
    assert.equal(r.json.units.vault.result, 'recovered', describeResult(r));
    assert.deepEqual(holding(sc.tmp, PLANTED), [], 'no file under TMPDIR holds the value');
    assert.deepEqual(outputsFiles(sc.tmp), [], 'no outputs file remains');
    assert.deepEqual(fs.readdirSync(sc.tmp), [], 'nothing of either run is left');
    assert.match(r.stderr, /^\[dev\] removed .*\/nyl-run-[0-9a-f-]+-\w{6}, the scratch directory of the dead run [0-9a-f-]+$/m);
  } finally {
    await sc.cleanup();
  }
});
