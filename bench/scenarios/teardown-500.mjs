// 8. teardown-500: a teardown of 500 Command units in 10 waves of 50 (unit i of wave k depends on
// unit i of wave k-1), each with `deletionPolicy: Teardown` and `teardown: {run: ["true"]}`,
// file:// state, default concurrency (4), beside the first reconcile of the same units. Two ways
// a teardown happens, each on its own fixture (fresh project and state, `state init`, a first
// `nyl reconcile -e dev`, also measured):
//   (A) `nyl teardown -e dev --all --reason bench` (a run, consumers first: wave 10 down to 1);
//   (B) the units removed from source (a commit of nyl.yaml with the Environment alone), then
//       `nyl reconcile -e dev --allow-teardown`.
// Measured per command: wall, cpu, git processes, pushes, ref writes (push + update-ref), fetches,
// overhead per unit as in reconcile-500 (wall - the wall of spawning `true` 500 times from node
// with concurrency 4, the baseline measured right before and right after) / 500, and the
// lifecycle waves: the started-marker commits of the run's run ref (`nyl: start <units>`, one per
// wave), counted among the state repository's objects before and after the command.
// Checked: every command exits 0; the reconcile executes 500 units and the teardown removes 500;
// no unit's teardown starts before its dependent's was removed (from the progress lines); after
// the teardown, neither state branch holds a file under units/ and no lease or run ref is left.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AUTHOR_ARGS, cpuMedian, git, makeProject, nyl, projectYaml, repeat, reps, retryKilled, spawnMany, summary } from '../lib.mjs';

export const id = 'teardown-500';
export const title =
  'a teardown of 500 units in 10 waves (nyl teardown --all; units removed from source and reconcile --allow-teardown): wall time and pushes, beside a reconcile of the same units';

const UNITS = 500;
const WAVES = 10;
const PER_WAVE = UNITS / WAVES;
const CONCURRENCY = 4;
const UNIT_SPEC = ['deletionPolicy: Teardown', 'teardown: {run: ["true"]}'];
/** A teardown should cost about as much as the reconcile of the same units. */
const RATIO_TARGET = 1.25;

const name = (n) => `u${String(n).padStart(4, '0')}`;

/** Unit lines of the text report with this result (`u0001  Command  removed ...`). */
function unitsWith(stdout, result) {
  return (stdout.match(new RegExp(`^u\\d{4}\\s+Command\\s+${result}\\b`, 'gm')) ?? []).length;
}

/** The started-marker commits (`nyl: start ...`) among every object of the state repository. */
async function startCommits(p) {
  const objects = await git(p.statePath, ['cat-file', '--batch-all-objects', '--batch-check=%(objecttype) %(objectname)']);
  const commits = objects.stdout
    .split('\n')
    .filter((l) => l.startsWith('commit '))
    .map((l) => l.slice(7));
  if (commits.length === 0) return new Set();
  const log = await git(p.statePath, ['log', '--no-walk=unsorted', '--stdin', '--format=%H %s'], { input: `${commits.join('\n')}\n` });
  return new Set(
    log.stdout
      .split('\n')
      .filter((l) => / nyl: start /.test(l))
      .map((l) => l.split(' ')[0]),
  );
}

/** Runs `nyl ...args` (must exit 0) and counts the started-marker commits it wrote: its waves. */
async function measured(p, args) {
  const before = await startCommits(p);
  const r = await nyl(p, args);
  const after = await startCommits(p);
  return { ...r, waves: [...after].filter((c) => !before.has(c)).length };
}

/** Files under units/ of a state branch (none when the branch has no units tree). */
async function unitFiles(p, branch) {
  const r = await git(p.statePath, ['ls-tree', '-r', '--name-only', `refs/heads/nyl/dev/${branch}`]);
  return r.stdout.split('\n').filter((l) => l.startsWith('units/'));
}

/**
 * Consumers first, from the progress lines on stderr: a unit's teardown starts only after the
 * teardown of the unit that depends on it (unit i of the next wave) ended `removed`.
 */
function checkConsumersFirst(r, what) {
  const removed = new Set();
  let started = 0;
  for (const line of r.stderr.split('\n')) {
    const m = /^\[dev\/u(\d{4})\] (starting|removed)\b/.exec(line);
    if (!m) continue;
    const n = Number(m[1]);
    if (m[2] === 'removed') {
      removed.add(n);
      continue;
    }
    started++;
    if (n + PER_WAVE < UNITS && !removed.has(n + PER_WAVE)) {
      throw new Error(`${what}: the teardown of ${name(n)} started before its dependent ${name(n + PER_WAVE)} was removed\n${r.stderr.slice(-2000)}`);
    }
  }
  if (started !== UNITS || removed.size !== UNITS)
    throw new Error(`${what}: progress shows ${started} teardowns started and ${removed.size} removed of ${UNITS}\n${r.stderr.slice(-2000)}`);
}

/** After a teardown: no unit file on either state branch, no lease or run ref left. */
async function checkTornDown(p, what) {
  for (const branch of ['desired', 'observed']) {
    const files = await unitFiles(p, branch);
    if (files.length) throw new Error(`${what}: refs/heads/nyl/dev/${branch} still holds ${files.length} unit files (${files.slice(0, 5).join(', ')})`);
  }
  const refs = await git(p.statePath, ['for-each-ref', '--format=%(refname)', 'refs/nyl/']);
  if (refs.stdout.trim()) throw new Error(`${what}: coordination refs left: ${refs.stdout.trim()}`);
}

/**
 * One fixture: a fresh project and state, `state init`, the first reconcile, then the teardown
 * `way` ('teardown' or 'removal'). The spawn baseline runs before, between and after.
 */
async function once(way) {
  const p = await makeProject({ units: UNITS, waves: WAVES, label: `t500-${way}`, unitSpec: UNIT_SPEC });
  await nyl(p, ['state', 'init', '-e', 'dev', ...AUTHOR_ARGS]);
  const spawns = [await spawnMany(['true'], UNITS, CONCURRENCY)];
  const spawnCpu = [{ cpuMs: spawnMany.lastCpuMs }];

  const rec = await measured(p, ['reconcile', '-e', 'dev', ...AUTHOR_ARGS]);
  if (unitsWith(rec.stdout, 'executed') !== UNITS)
    throw new Error(`reconcile executed ${unitsWith(rec.stdout, 'executed')} of ${UNITS} units\n${rec.stdout.slice(0, 2000)}`);
  const files = await unitFiles(p, 'desired');
  if (files.length !== UNITS) throw new Error(`after the reconcile, refs/heads/nyl/dev/desired holds ${files.length} unit files, not ${UNITS}`);
  spawns.push(await spawnMany(['true'], UNITS, CONCURRENCY));
  spawnCpu.push({ cpuMs: spawnMany.lastCpuMs });

  let down;
  if (way === 'teardown') {
    down = await measured(p, ['teardown', '-e', 'dev', '--all', '--reason', 'bench', ...AUTHOR_ARGS]);
  } else {
    writeFileSync(join(p.src, 'nyl.yaml'), projectYaml({ stateUrl: p.stateUrl, units: 0 }));
    await git(p.src, ['commit', '-q', '-a', '-m', 'bench: remove every unit']);
    down = await measured(p, ['reconcile', '-e', 'dev', '--allow-teardown', ...AUTHOR_ARGS]);
  }
  const what = way === 'teardown' ? 'nyl teardown -e dev --all' : 'nyl reconcile -e dev --allow-teardown';
  if (unitsWith(down.stdout, 'removed') !== UNITS)
    throw new Error(`${what} removed ${unitsWith(down.stdout, 'removed')} of ${UNITS} units\n${down.stdout.slice(0, 2000)}\n${down.stderr.slice(-2000)}`);
  checkConsumersFirst(down, what);
  await checkTornDown(p, what);
  spawns.push(await spawnMany(['true'], UNITS, CONCURRENCY));
  spawnCpu.push({ cpuMs: spawnMany.lastCpuMs });

  return {
    rec: { ...rec, overhead: (rec.ms - (spawns[0] + spawns[1]) / 2) / UNITS },
    down: { ...down, overhead: (down.ms - (spawns[1] + spawns[2]) / 2) / UNITS, ratio: down.ms / rec.ms },
    spawns,
    spawnCpu,
  };
}

const writesOf = (r) => (r.stats?.byCommand ? (r.stats.byCommand.push ?? 0) + (r.stats.byCommand['update-ref'] ?? 0) : undefined);

/** Medians and spreads of one command's runs. */
function figures(runs) {
  const all = (f) => {
    const v = runs.map(f);
    return v.every((x) => typeof x === 'number') ? summary(v) : undefined;
  };
  return {
    wall: summary(runs.map((r) => r.ms)),
    cpu: cpuMedian(runs),
    overhead: summary(runs.map((r) => r.overhead)),
    processes: all((r) => r.stats?.processes),
    pushes: all((r) => r.stats?.pushes),
    fetches: all((r) => r.stats?.fetches),
    writes: all(writesOf),
    waves: all((r) => r.waves),
    ratio: runs.every((r) => typeof r.ratio === 'number') ? summary(runs.map((r) => r.ratio)) : undefined,
  };
}

function rows(label, f) {
  const out = [
    { name: `${label}: wall`, value: f.wall.median, unit: 'ms', cpu: f.cpu, spread: f.wall },
    { name: `${label}: overhead per unit`, value: f.overhead.median, unit: 'ms', spread: f.overhead },
  ];
  if (f.ratio)
    out.push({
      name: `${label}: wall / reconcile wall (same fixture)`,
      value: f.ratio.median,
      unit: 'x',
      target: { op: '<=', value: RATIO_TARGET, label: 'about the reconcile' },
      spread: f.ratio,
    });
  out.push(
    { name: `${label}: git processes`, value: f.processes?.median, unit: 'count', spread: f.processes },
    { name: `${label}: pushes`, value: f.pushes?.median, unit: 'count', spread: f.pushes },
    { name: `${label}: ref writes (push + update-ref)`, value: f.writes?.median, unit: 'count', spread: f.writes },
    { name: `${label}: lifecycle waves (started-marker commits)`, value: f.waves?.median, unit: 'count', spread: f.waves },
  );
  return out;
}

const range = (s) => (s ? `${s.median} (${s.min}-${s.max})` : '-');

function note(label, f) {
  return `${label}: git processes ${range(f.processes)}, pushes ${range(f.pushes)}, ref writes ${range(f.writes)}, fetches ${range(f.fetches)}, waves ${range(f.waves)} (median (min-max))`;
}

export async function run() {
  const n = reps(5, 2);
  await spawnMany(['true'], 50, CONCURRENCY); // warm-up
  const results = [];
  await repeat(n, async () => {
    results.push({ way: 'teardown', ...(await retryKilled('teardown-500 (teardown --all)', () => once('teardown'))) });
    results.push({ way: 'removal', ...(await retryKilled('teardown-500 (source removal)', () => once('removal'))) });
  });
  const rec = figures(results.map((r) => r.rec));
  const td = figures(results.filter((r) => r.way === 'teardown').map((r) => r.down));
  const rm = figures(results.filter((r) => r.way === 'removal').map((r) => r.down));
  const spawnWall = summary(results.flatMap((r) => r.spawns));
  const spawnCpu = cpuMedian(results.flatMap((r) => r.spawnCpu));
  return {
    metrics: [
      ...rows('reconcile', rec),
      ...rows('teardown --all', td),
      ...rows('reconcile --allow-teardown', rm),
      { name: `spawn \`true\` x${UNITS} (concurrency ${CONCURRENCY})`, value: spawnWall.median, unit: 'ms', cpu: spawnCpu, spread: spawnWall },
    ],
    notes: [
      `${n} fixtures per way (fresh project and state each), so reconcile figures are medians of ${2 * n} first reconciles and each teardown's of ${n}; overhead per unit = (wall - mean of the spawn baselines right before and after) / ${UNITS}; the ratio divides a teardown by the reconcile of its own fixture`,
      note('reconcile', rec),
      note('teardown --all', td),
      note('reconcile --allow-teardown', rm),
      `checked: exit 0, ${UNITS} executed / removed, consumers first (progress lines), no units/ file on refs/heads/nyl/dev/desired or observed and no refs/nyl/ ref after each teardown`,
    ],
    details: {
      perRun: results.map((r) => ({
        way: r.way,
        reconcile: { ms: r.rec.ms, stats: r.rec.stats, waves: r.rec.waves },
        teardown: { ms: r.down.ms, stats: r.down.stats, waves: r.down.waves },
        spawns: r.spawns,
      })),
    },
  };
}
