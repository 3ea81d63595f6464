// End-to-end: the race between `nyl hold` and a running reconcile.
// A reconcile of 50 Command units (5 waves of 10; each unit depends on the one before it
// in its column) and one hold of a chosen unit sent at a random moment: before the run reads its
// signals, between units, after its last unit, or after it released the lease. Whatever the
// moment, the hold takes effect exactly once and never while the unit executes:
// - the unit's desired document is held afterwards, exactly one commit records its hold (a
//   `nyl: hold` commit or the run's transition listing it under `held`), no signal (or lease or
//   run) ref remains;
// - if the unit started, it finished (a start/end pair in its log) and it is held as it ran (its
//   desired document is the one of the receipt the run produced);
// - if the hold took effect before it started, it never ran, and neither did its dependents.
//
// NYL_HOLD_TRIALS sets the number of trials (`npm test`: 4; `npm run test:campaigns`: 20); NYL_HOLD_SEED makes the moments repeatable.
//
// The campaign also runs over smart HTTP with a server that answers pushes and fetches with a 503
// at random positions (NYL_HOLD_HTTP_TRIALS trials, 1 and 6; a server per trial, its faults
// drawn from NYL_FAULT_SEED + the trial, at most two in a row): the same invariants hold.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { HTTP_FAULTS, startHttpServer } from '../support/crash-harness.mjs';
import { cleanupAll, makeBareRepo } from '../support/git-fixtures.mjs';
import { nylAsync, waitForFile } from '../support/cli.mjs';
import { setup } from '../support/reconcile-helpers.mjs';
import {
  coordinationRefs,
  decision,
  describe as show,
  desiredDoc,
  holdAsync,
  holdCommitsOf,
  logLines,
  observedDoc,
  pauseAt,
  sleep,
} from '../support/hold-helpers.mjs';
import { seededRandom } from '../support/seeded.mjs';
import { campaignSize } from '../support/campaign.mjs';

after(cleanupAll);

const WAVES = 5;
const WIDTH = 10;
const TRIALS = campaignSize('NYL_HOLD_TRIALS', { quick: 2, full: 20 });
const SEED = Number(process.env.NYL_HOLD_SEED ?? Date.now() % 1_000_000);
const HTTP_TRIALS = campaignSize('NYL_HOLD_HTTP_TRIALS', { quick: 1, full: 6 });
const FAULT_SEED = Number(process.env.NYL_FAULT_SEED ?? 9500);

const name = (wave, col) => `w${wave}-${col}`;

function units(log) {
  const out = {};
  for (let w = 1; w <= WAVES; w++) {
    for (let c = 0; c < WIDTH; c++) {
      const deps = w > 1 ? `dependsOn: [${name(w - 1, c)}]\n` : '';
      out[name(w, c)] = `${deps}script: 'echo start $NYL_UNIT >> ${log}; sleep 0.02; echo end $NYL_UNIT >> ${log}'`;
    }
  }
  return out;
}

/** The units of the same column after unit (its dependents, transitively). */
function dependentsOf(unit) {
  const [, w, c] = unit.match(/^w(\d+)-(\d+)$/);
  const out = [];
  for (let k = Number(w) + 1; k <= WAVES; k++) out.push(name(k, Number(c)));
  return out;
}

/** Keeps removing the pause marker until the process ends (a fault point may be reached again). */
async function releaseUntilDone(proc, marker) {
  while (proc.child.exitCode === null && proc.child.signalCode === null) {
    if (fs.existsSync(marker)) fs.rmSync(marker, { force: true });
    await sleep(10);
  }
  return proc.done;
}

/**
 * One trial. moment: 'lease-acquired' (the run took its lease and has read no signal yet),
 * 'before-transition-push' (every unit ran, the transition is not pushed), 'after-exit', or a
 * delay in ms after the reconcile started.
 */
async function trial(moment, unit, state = {}) {
  const ctx = setup(units, state);
  const marker = path.join(ctx.dir, 'paused');
  const paused = typeof moment === 'string' && moment !== 'after-exit';
  // --wait-lease: a hold commit that lands just before the run must not make the run refuse.
  const run = nylAsync(ctx.project, ['reconcile', '-e', 'dev', '-o', 'json', '--wait-lease', '30s'], { env: paused ? pauseAt(moment, marker) : {} });
  const started = Date.now();
  let runMs;
  run.done.then(() => (runMs = Date.now() - started));
  let held;
  let done;
  try {
    if (paused) {
      await waitForFile(marker, 30000);
      held = holdAsync(ctx.project, unit, { args: ['-o', 'json'] });
      // Let the run go on only once the hold was delivered (or landed).
      await held.done;
      done = await releaseUntilDone(run, marker);
    } else if (moment === 'after-exit') {
      done = await run.done;
      held = holdAsync(ctx.project, unit, { args: ['-o', 'json'] });
    } else {
      await sleep(moment);
      held = holdAsync(ctx.project, unit, { args: ['-o', 'json'] });
      done = await run.done;
    }
  } finally {
    fs.rmSync(marker, { force: true });
    if (!done) {
      run.child.kill('SIGKILL');
      await run.done;
    }
  }
  const h = await held.done;
  return { ctx, run: done, hold: h, runMs };
}

function check(label, { ctx, run, hold }, unit) {
  const where = `${label}, unit ${unit}`;
  assert.equal(hold.code, 0, `${where}: the hold: ${show(hold)}`);
  assert.ok([0, 2].includes(run.code), `${where}: the reconcile: ${show(run)}`);
  assert.ok(run.json?.run, `${where}: the reconcile ran: ${show(run)}`);

  assert.deepEqual(coordinationRefs(ctx.bare), [], `${where}: no lease, run or signal ref remains`);
  const doc = desiredDoc(ctx.bare, unit);
  assert.equal(doc?.lifecycle?.state, 'held', `${where}: the unit is held afterwards`);
  const recorded = holdCommitsOf(ctx.bare, unit);
  assert.equal(recorded.length, 1, `${where}: exactly one commit records the hold: ${recorded.map((c) => c.headline).join(' | ')}`);

  const lines = logLines(ctx.log);
  const count = (what, u) => lines.filter((l) => l === `${what} ${u}`).length;
  const starts = count('start', unit);
  const ends = count('end', unit);
  assert.ok(starts <= 1, `${where}: started ${starts} times`);
  assert.equal(ends, starts, `${where}: a start without an end (or the reverse): the hold cut into its execution`);
  const dependents = new Set(dependentsOf(unit));
  for (const u of Object.keys(units(ctx.log))) {
    if (u === unit || dependents.has(u)) continue;
    assert.equal(count('start', u), 1, `${where}: ${u} ran once`);
    assert.equal(count('end', u), 1, `${where}: ${u} finished once`);
  }

  let path;
  if (starts === 1) {
    // Held as it ran: the desired document of the receipt this run produced.
    const obs = observedDoc(ctx.bare, unit);
    assert.equal(obs?.receipt?.run, run.json.run, `${where}: the receipt of the run is kept`);
    assert.equal(doc.uid, obs.uid, `${where}: same uid`);
    assert.deepEqual(decision(doc), decision(obs.receipt.desired), `${where}: held as it ran`);
    for (const d of dependents) assert.equal(count('start', d), 1, `${where}: dependent ${d} ran after it`);
    path = hold.json.result === 'done' ? 'after the run' : 'ran, then held by the run';
  } else {
    // Held before it started: it never ran in this run, and neither did its dependents.
    for (const d of dependents) assert.equal(count('start', d), 0, `${where}: dependent ${d} of a held unit never ran`);
    assert.equal(run.json.units[unit]?.result, 'held', `${where}: the run reports it held`);
    assert.equal(doc.uid, undefined, `${where}: held without an incarnation`);
    assert.equal(observedDoc(ctx.bare, unit), undefined, `${where}: nothing observed`);
    path = hold.json.result === 'done' ? 'held before the run' : 'not started by the run';
  }
  const c = recorded[0];
  if (c.body.operation === 'hold') assert.equal(c.body.units?.[unit]?.action, 'hold', `${where}: the hold commit lists the unit`);
  else assert.equal(c.body.run, run.json.run, `${where}: the run that listed it under held is this run`);
  return `${path} (${c.body.operation === 'hold' ? 'hold commit' : 'transition'})`;
}

/**
 * The campaign: `trials` holds of a random unit at a random moment (the first three pin the
 * edges), each checked as above; then the paths the holds took must cover the run's edges.
 * open(i) gives trial i's state repository (state: {url, bare}, or {} for file://), its note(),
 * which failures and the trial's diagnostic carry, and close().
 */
async function campaign(t, trials, open = async () => ({ state: {}, note: async () => '', close: async () => {} })) {
  const rnd = seededRandom(SEED);
  t.diagnostic(`NYL_HOLD_SEED=${SEED} trials ${trials}`);
  const all = [];
  for (let w = 1; w <= WAVES; w++) for (let c = 0; c < WIDTH; c++) all.push(name(w, c));
  const fixed = ['after-exit', 'lease-acquired', 'before-transition-push'];
  let runMs = 2000;
  const seen = new Map();
  for (let i = 0; i < trials; i++) {
    const unit = all[Math.floor(rnd() * all.length)];
    // The first trials pin the three edges; the rest pick a moment anywhere in a run (measured by
    // the first trial, from the start of the process); later moments land after the run.
    const moment = i < fixed.length && trials >= fixed.length ? fixed[i] : Math.round(rnd() * runMs);
    const remote = await open(i);
    try {
      const label = `trial ${i + 1} (seed ${SEED}, moment ${moment})`;
      let path;
      try {
        const result = await trial(moment, unit, remote.state);
        if (moment === 'after-exit') runMs = Math.max(500, result.runMs);
        path = check(label, result, unit);
      } catch (error) {
        const note = await remote.note();
        if (note) error.message += `\n[${note}]`;
        throw error;
      }
      seen.set(path, (seen.get(path) ?? 0) + 1);
      const note = await remote.note();
      t.diagnostic(`${label}: ${unit}: ${path}${note ? ` [${note}]` : ''}`);
    } finally {
      await remote.close();
    }
  }
  t.diagnostic(`paths: ${[...seen].map(([p, n]) => `${p} x${n}`).join(', ')}`);
  if (trials >= fixed.length) {
    assert.ok(seen.get('not started by the run (transition)') || seen.get('ran, then held by the run (transition)'), 'some hold reached the run');
    assert.ok(seen.get('ran, then held by the run (hold commit)'), 'some hold arrived after the last unit');
    assert.ok(seen.get('after the run (hold commit)'), 'some hold arrived after the run');
  }
}

test(`a hold sent at a random moment takes effect exactly once and never mid-execution (${TRIALS} trials)`, { timeout: 600_000 }, async (t) => {
  await campaign(t, TRIALS);
});

test(`over smart HTTP with 503s at random positions too (${HTTP_TRIALS} trials)`, { timeout: 600_000 }, async (t) => {
  await campaign(t, HTTP_TRIALS, async (i) => {
    const seed = FAULT_SEED + i;
    const server = await startHttpServer({ ...HTTP_FAULTS, seed });
    const bare = makeBareRepo(path.join(server.base, 'state.git'));
    return {
      state: { bare, url: server.url('state.git') },
      note: async () => {
        const c = await server.counts();
        return `http-faults seed ${seed}: ${c.injected} of ${c.requests} requests answered 503 (${c.pushes503} pushes, ${c.fetches503} fetches)`;
      },
      close: () => server.stop(),
    };
  });
});
