// 5. noop-1000: a reconcile in which all 1,000 units are current, against the floor of reading the
// state refs from the same remote (`git ls-remote` + `git fetch` of the state refs into a scratch
// bare repository) plus Node's start-up.
import { join } from 'node:path';
import { AUTHOR_ARGS, bareRepo, cpuMedian, exec, gitEnv, nodeStartup, nyl, repeat, reps, retryKilled, summary, tempDir, thousandUnits } from '../lib.mjs';

export const id = 'noop-1000';
export const title = 'no-op nyl reconcile -e dev, 1,000 current units';

export async function run() {
  const n = reps(5, 3);
  const p = await thousandUnits({ reconciled: true });
  const refsBefore = (await exec(['git', 'ls-remote', p.stateUrl], { env: gitEnv() })).stdout;
  // A no-op reconcile pushes nothing, so a run killed from outside can simply be measured again.
  const noop = () => retryKilled('noop reconcile', () => nyl(p, ['reconcile', '-e', 'dev', ...AUTHOR_ARGS]));
  await noop(); // warm-up
  const runs = await repeat(n, noop);
  const refsAfter = (await exec(['git', 'ls-remote', p.stateUrl], { env: gitEnv() })).stdout;
  if (refsAfter !== refsBefore) throw new Error(`a no-op reconcile moved state refs:\n${refsBefore}\n->\n${refsAfter}`);
  const executed = runs.map((r) => (r.stdout.match(/\bexecuted\b/g) ?? []).length).reduce((a, b) => a + b, 0);
  if (executed > 0) throw new Error(`a no-op reconcile executed ${executed} units`);
  const wall = summary(runs.map((r) => r.ms));
  const stats = runs[runs.length - 1].stats;
  // For reference: the same no-op with an empty NYL_CACHE_DIR each time (nothing parsed before),
  // as on a fresh machine or CI runner.
  const coldRuns = await repeat(reps(3, 1), () =>
    retryKilled('cold no-op reconcile', () => nyl({ ...p, cache: tempDir('cold-cache') }, ['reconcile', '-e', 'dev', ...AUTHOR_ARGS])),
  );
  const cold = summary(coldRuns.map((r) => r.ms));

  // Floor: list the remote's refs, then fetch the state refs (desired, observed, coordination
  // refs of dev) into a scratch bare repository that has none of their objects yet.
  const ls = await exec(['git', 'ls-remote', p.stateUrl], { env: gitEnv() });
  const refs = ls.stdout
    .trim()
    .split('\n')
    .map((l) => l.split('\t')[1])
    .filter((r) => r && (r.startsWith('refs/heads/nyl/dev/') || r.startsWith('refs/nyl/dev/')));
  const scratchBase = tempDir('floor');
  const floorRuns = await repeat(n + 1, async (i) => {
    const scratch = await bareRepo(join(scratchBase, `scratch-${i}.git`));
    const a = await exec(['git', 'ls-remote', p.stateUrl], { env: gitEnv() });
    const b = await exec(['git', 'fetch', '-q', '--no-tags', p.stateUrl, ...refs.map((r) => `+${r}:${r}`)], { cwd: scratch, env: gitEnv() });
    return { lsRemote: a.ms, fetch: b.ms, total: a.ms + b.ms, cpuMs: a.cpuMs === undefined ? undefined : a.cpuMs + b.cpuMs };
  });
  floorRuns.shift(); // warm-up
  const floor = summary(floorRuns.map((r) => r.total));
  const node = await nodeStartup();
  const ratio = wall.median / (floor.median + node.median);
  const [noopCpu, floorCpu] = [cpuMedian(runs), cpuMedian(floorRuns)];
  const cpuRatio = noopCpu === undefined || floorCpu === undefined ? undefined : noopCpu / (floorCpu + node.cpu);
  return {
    metrics: [
      { name: 'no-op reconcile wall', value: wall.median, unit: 'ms', cpu: cpuMedian(runs), spread: wall },
      { name: 'git processes', value: stats?.processes, unit: 'count' },
      { name: 'pushes', value: stats?.pushes, unit: 'count' },
      { name: 'same, empty NYL_CACHE_DIR (info)', value: cold.median, unit: 'ms', cpu: cpuMedian(coldRuns), spread: cold },
      { name: `floor: ls-remote + fetch of ${refs.length} refs`, value: floor.median, unit: 'ms', cpu: cpuMedian(floorRuns), spread: floor },
      { name: '  of which ls-remote', value: summary(floorRuns.map((r) => r.lsRemote)).median, unit: 'ms' },
      { name: '  of which fetch', value: summary(floorRuns.map((r) => r.fetch)).median, unit: 'ms' },
      { name: 'node -e 0', value: node.median, unit: 'ms', cpu: node.cpu },
      { name: 'ratio noop / (floor + node)', value: ratio, unit: 'x', target: { op: '<=', value: 1.5 } },
      { name: 'same ratio by cpu (info)', value: cpuRatio, unit: 'x' },
    ],
    notes: [
      `median of ${n} after one warm-up (state refs checked unchanged); the fixture's first full reconcile of 1,000 units took ${Math.round(p.fullReconcile.ms)} ms`,
    ],
    details: { stats, refs },
  };
}
