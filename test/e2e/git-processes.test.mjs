// End-to-end: the git processes a reconcile starts do not grow with its units. Command units
// start one process each (their own); Nyl's git work for the run is a fixed set: reads, one
// fast-import, one long-lived update-ref for every coordination ref write (started markers,
// checkpoints, renewals) and the transition's push. Counted with NYL_GIT_STATS.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cleanupAll } from '../support/git-fixtures.mjs';
import { reconcile, setup } from '../support/reconcile-helpers.mjs';

after(cleanupAll);

/** `units` Command units running `true`, in `waves` waves: unit i of wave k depends on unit i of wave k-1. */
function waved(units, waves) {
  const per = units / waves;
  const name = (n) => `u${String(n).padStart(3, '0')}`;
  const map = {};
  for (let n = 0; n < units; n++) map[name(n)] = `${n >= per ? `dependsOn: [${name(n - per)}]\n` : ''}run: ["true"]`;
  return map;
}

function statsOf(ctx, units, waves) {
  const file = path.join(ctx.dir, `stats-${units}.jsonl`);
  const r = reconcile(ctx.project, ['--concurrency', '4'], { env: { NYL_GIT_STATS: file } });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal((r.stdout.match(/\bexecuted\b/g) ?? []).length, units, r.stdout);
  return JSON.parse(fs.readFileSync(file, 'utf8').trim().split('\n').pop());
}

test('a reconcile of 60 units in 6 waves over a state repository of this machine: at most two update-ref processes, a fixed number of git processes', () => {
  const stats = statsOf(setup(waved(60, 6)), 60, 6);
  // One writer for the state repository and one transaction on the checkout (its known branches
  // of the state). Before the long-lived writer: one update-ref per write, 2 or more per wave
  // (25 here, 37 git processes in all).
  assert.ok(stats.byCommand['update-ref'] <= 2, JSON.stringify(stats));
  assert.ok(stats.processes <= 16, `git processes: ${JSON.stringify(stats)}`);
});
