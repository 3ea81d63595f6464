// 7. memory-5000: peak memory of nyl with 5,000 Command units (`run: ["true"]`) in 10 waves of
// 500, file:// state. Each measurement gets a fresh project: `nyl state init -e dev`, then
// (a) the first `nyl reconcile -e dev` (executes all 5,000), (b) a second, no-op reconcile and
// (c) `nyl status -e dev`. For each: wall time and the peak RSS of the nyl node process, read two
// ways: the process's own getrusage maxRSS, written on exit by a preload (`node -r
// bench/maxrss.cjs`), and GNU time's %M (`/usr/bin/time -f %M`, which also counts any child that
// grew larger than node) when /usr/bin/time exists.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AUTHOR_ARGS, BENCH_DIR, cpuMedian, exec, gitEnv, makeProject, nyl, repeat, reps, retryKilled, summary } from '../lib.mjs';

export const id = 'memory-5000';
export const title = 'peak RSS of nyl reconcile / no-op reconcile / status, 5,000 units in 10 waves';

const UNITS = 5000;
const WAVES = 10;
const RSS_TARGET_MB = 150;
const PRELOAD = join(BENCH_DIR, 'maxrss.cjs');
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

let seq = 0;

/** The last line of a file as a number of KiB converted to MB (MiB), or undefined. */
function readKiB(file) {
  if (!existsSync(file)) return undefined;
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  const kib = Number(lines[lines.length - 1]);
  return Number.isFinite(kib) && kib > 0 ? kib / 1024 : undefined;
}

/** Runs `nyl ...args` under the preload (and /usr/bin/time); adds rssMb and timeRssMb to the result. */
async function measured(p, args) {
  const n = ++seq;
  const rssFile = join(p.base, `maxrss-${n}.txt`);
  const timeFile = join(p.base, `time-${n}.txt`);
  const wrap = TIME ? [TIME, '-o', timeFile, '-f', '%M'] : [];
  const r = await nyl(p, args, { check: false, nodeArgs: ['-r', PRELOAD], extraEnv: { BENCH_MAXRSS_FILE: rssFile }, wrap });
  const timeOut = existsSync(timeFile) ? readFileSync(timeFile, 'utf8') : '';
  const killed = /Command terminated by signal (\d+)/.exec(timeOut);
  if (killed) {
    // GNU time exits 128+n when node was killed: the bench sent no signal (see lib.nyl()).
    const e = new Error(`nyl ${args.join(' ')} was killed by signal ${killed[1]} from outside the bench`);
    e.killedOutside = true;
    throw e;
  }
  return { ...r, rssMb: readKiB(rssFile), timeRssMb: TIME ? readKiB(timeFile) : undefined };
}

function count(stdout, word) {
  return (stdout.match(new RegExp(`\\b${word}\\b`, 'g')) ?? []).length;
}

/** One fixture: a fresh 5,000-unit project and state, then (a), (b), (c). */
async function once() {
  const p = await makeProject({ units: UNITS, waves: WAVES, label: 'm5000' });
  await nyl(p, ['state', 'init', '-e', 'dev', ...AUTHOR_ARGS]);

  const first = await measured(p, ['reconcile', '-e', 'dev', ...AUTHOR_ARGS]);
  if (first.code !== 0) throw new Error(`first reconcile exited ${first.code}\n${first.stderr.slice(-3000)}`);
  const executed = count(first.stdout, 'executed');
  if (executed < UNITS) throw new Error(`first reconcile executed ${executed} of ${UNITS} units\n${first.stdout.slice(0, 2000)}`);

  const refsBefore = (await exec(['git', 'ls-remote', p.stateUrl], { env: gitEnv() })).stdout;
  const noop = await measured(p, ['reconcile', '-e', 'dev', ...AUTHOR_ARGS]);
  if (noop.code !== 0) throw new Error(`no-op reconcile exited ${noop.code}\n${noop.stderr.slice(-3000)}`);
  if (count(noop.stdout, 'executed') > 0) throw new Error(`the no-op reconcile executed ${count(noop.stdout, 'executed')} units`);
  const refsAfter = (await exec(['git', 'ls-remote', p.stateUrl], { env: gitEnv() })).stdout;
  if (refsAfter !== refsBefore) throw new Error(`the no-op reconcile moved state refs:\n${refsBefore}\n->\n${refsAfter}`);

  const status = await measured(p, ['status', '-e', 'dev']);
  if (status.code !== 0) throw new Error(`nyl status exited ${status.code} after a full reconcile\n${status.stderr.slice(-3000)}`);
  return { first, noop, status };
}

export async function run() {
  const n = reps(3, 1);
  const fixtures = await repeat(n, () => retryKilled('memory-5000', once));
  const metrics = [];
  const details = {};
  for (const [key, label] of [
    ['first', '(a) first reconcile'],
    ['noop', '(b) no-op reconcile'],
    ['status', '(c) status'],
  ]) {
    const runs = fixtures.map((f) => f[key]);
    const wall = summary(runs.map((r) => r.ms));
    const rss = runs.every((r) => r.rssMb !== undefined) ? summary(runs.map((r) => r.rssMb)) : undefined;
    const timeRss = runs.every((r) => r.timeRssMb !== undefined) ? summary(runs.map((r) => r.timeRssMb)) : undefined;
    const stats = runs[runs.length - 1].stats;
    metrics.push({ name: `${label}: wall`, value: wall.median, unit: 'ms', cpu: cpuMedian(runs), spread: wall });
    metrics.push({
      name: `${label}: peak RSS of nyl`,
      value: rss?.median,
      unit: 'MB',
      spread: rss,
      ...(key === 'first' ? { target: { op: '<', value: RSS_TARGET_MB } } : {}),
    });
    if (TIME) metrics.push({ name: `${label}: /usr/bin/time %M (info)`, value: timeRss?.median, unit: 'MB', spread: timeRss });
    metrics.push({ name: `${label}: git processes`, value: stats?.processes, unit: 'count' });
    details[key] = { stats, rssMb: runs.map((r) => r.rssMb), timeRssMb: runs.map((r) => r.timeRssMb) };
  }
  return {
    metrics,
    notes: [
      `median of ${n} fresh ${UNITS.toLocaleString('en')}-unit projects (${WAVES} waves): (a), (b), (c) once each on each; MB = 1024 KiB`,
      `peak RSS of nyl = the node process's own getrusage maxRSS (preload bench/maxrss.cjs)${TIME ? '; /usr/bin/time %M = the larger of node and any child it reaped' : '; /usr/bin/time not found, %M not measured'}`,
    ],
    details,
  };
}
