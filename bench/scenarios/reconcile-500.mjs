// 4. reconcile-500: reconcile of 500 Command units (`run: ["true"]`) in 10 waves of 50, default
// concurrency (4), file:// state. Overhead per unit = (reconcile wall - the wall time of spawning
// `true` 500 times from node with concurrency 4) / 500, the baseline measured around each run.
// Pushes are informational (no target): with group commit their number depends on timing.
import { AUTHOR_ARGS, cpuMedian, makeProject, nyl, repeat, reps, retryKilled, spawnMany, summary } from '../lib.mjs';

export const id = 'reconcile-500';
export const title = 'nyl reconcile -e dev, 500 units in 10 waves (concurrency 4)';

const UNITS = 500;
const WAVES = 10;
const CONCURRENCY = 4;

export async function run() {
  const n = reps(5, 2);
  await spawnMany(['true'], 50, CONCURRENCY); // warm-up
  // The baseline is measured right before and after each reconcile, so that both see the same
  // load on a shared machine; each run's overhead uses the mean of its two baselines.
  const spawnRuns = [];
  const spawnCpu = [];
  const overheads = [];
  const runs = await repeat(n, () =>
    retryKilled('reconcile-500', async () => {
      const p = await makeProject({ units: UNITS, waves: WAVES, label: 'r500' });
      await nyl(p, ['state', 'init', '-e', 'dev', ...AUTHOR_ARGS]);
      const before = await spawnMany(['true'], UNITS, CONCURRENCY);
      spawnCpu.push({ cpuMs: spawnMany.lastCpuMs });
      const r = await nyl(p, ['reconcile', '-e', 'dev', ...AUTHOR_ARGS]);
      const after = await spawnMany(['true'], UNITS, CONCURRENCY);
      const executed = (r.stdout.match(/\bexecuted\b/g) ?? []).length;
      if (executed < UNITS) throw new Error(`reconcile executed ${executed} of ${UNITS} units\n${r.stdout.slice(0, 2000)}`);
      spawnRuns.push(before, after);
      overheads.push((r.ms - (before + after) / 2) / UNITS);
      return r;
    }),
  );
  const wall = summary(runs.map((r) => r.ms));
  const spawnWall = summary(spawnRuns);
  const stats = runs[runs.length - 1].stats;
  const overhead = summary(overheads);
  // Every run's counts (not only the last run's): group-committed checkpoint pushes vary with timing.
  const counts = (key) => (runs.every((r) => typeof r.stats?.[key] === 'number') ? summary(runs.map((r) => r.stats[key])) : undefined);
  const [processes, pushes, fetches] = [counts('processes'), counts('pushes'), counts('fetches')];
  // Processes that write refs: pushes, and the update-ref processes that write coordination refs
  // (started markers, checkpoints, renewals) on a state repository of this machine. Since the
  // long-lived writer (src/git/ref-transactions.ts) one update-ref takes every transaction of
  // the run: this counts processes, not transactions.
  const writes = runs.every((r) => r.stats?.byCommand)
    ? summary(runs.map((r) => (r.stats.byCommand.push ?? 0) + (r.stats.byCommand['update-ref'] ?? 0)))
    : undefined;
  return {
    metrics: [
      { name: 'reconcile wall', value: wall.median, unit: 'ms', cpu: cpuMedian(runs), spread: wall },
      { name: `spawn \`true\` x${UNITS} (concurrency ${CONCURRENCY})`, value: spawnWall.median, unit: 'ms', cpu: cpuMedian(spawnCpu), spread: spawnWall },
      { name: 'overhead per unit', value: overhead.median, unit: 'ms', target: { op: '<=', value: 2 }, spread: overhead },
      {
        name: 'cpu overhead per unit (info)',
        value: cpuMedian(runs) === undefined ? undefined : (cpuMedian(runs) - cpuMedian(spawnCpu)) / UNITS,
        unit: 'ms',
      },
      { name: 'git processes', value: processes?.median, unit: 'count', spread: processes },
      { name: 'pushes per run (info)', value: pushes?.median, unit: 'count', spread: pushes },
      { name: 'ref-writing processes per run: push + update-ref (info)', value: writes?.median, unit: 'count', spread: writes },
      { name: `ref-writing processes per wave (info, ${WAVES} waves)`, value: writes === undefined ? undefined : writes.median / WAVES, unit: 'count' },
      { name: 'fetches', value: fetches?.median, unit: 'count', spread: fetches },
    ],
    notes: [
      `median of ${n} reconciles (fresh project and state each); overhead per unit = median over runs of (reconcile - mean of the spawn baselines right before and after) / ${UNITS}`,
      `git processes / pushes / fetches per run: median ${processes?.median} / ${pushes?.median} / ${fetches?.median}, min-max ${processes?.min}-${processes?.max} / ${pushes?.min}-${pushes?.max} / ${fetches?.min}-${fetches?.max}`,
    ],
    details: { stats, perRun: runs.map((r) => ({ processes: r.stats?.processes, pushes: r.stats?.pushes, fetches: r.stats?.fetches })) },
  };
}
