// 2. state-init: `nyl state init -e dev` against a fresh state repository, over file:// and
// (optionally) a local `git daemon` with receive-pack enabled.
import { join } from 'node:path';
import { AUTHOR_ARGS, bareRepo, cpuMedian, log, makeProject, nyl, repeat, reps, retryKilled, startGitDaemon, summary, tempDir } from '../lib.mjs';

export const id = 'state-init';
export const title = 'nyl state init -e dev (fresh state repository)';

async function measure(n, makeStateUrl) {
  let seq = 0;
  const runs = await repeat(n, () =>
    retryKilled('state-init', async () => {
      const stateUrl = makeStateUrl ? await makeStateUrl(seq++) : undefined;
      const p = await makeProject({ units: 1, stateUrl, label: 'init' });
      return nyl(p, ['state', 'init', '-e', 'dev', ...AUTHOR_ARGS]);
    }),
  );
  return { wall: summary(runs.map((r) => r.ms)), cpu: cpuMedian(runs), stats: runs[runs.length - 1].stats };
}

export async function run() {
  const n = reps(7, 3);
  const metrics = [];
  const notes = [`median of ${n} runs, each against a new empty bare repository and an empty cache`];
  const file = await measure(n);
  metrics.push(
    { name: 'file:// wall', value: file.wall.median, unit: 'ms', cpu: file.cpu, spread: file.wall },
    { name: 'file:// git processes', value: file.stats?.processes, unit: 'count' },
    { name: 'file:// pushes', value: file.stats?.pushes, unit: 'count' },
    { name: 'file:// fetches', value: file.stats?.fetches, unit: 'count' },
  );
  const details = { file: file.stats };

  if (process.env.BENCH_NO_DAEMON !== '1') {
    let daemon;
    try {
      const served = tempDir('daemon');
      daemon = await startGitDaemon(served);
      const d = await measure(n, async (i) => {
        await bareRepo(join(served, `state-${i}.git`));
        return daemon.url(`state-${i}.git`);
      });
      metrics.push(
        { name: 'git daemon wall', value: d.wall.median, unit: 'ms', cpu: d.cpu, spread: d.wall },
        { name: 'git daemon git processes', value: d.stats?.processes, unit: 'count' },
        { name: 'git daemon pushes', value: d.stats?.pushes, unit: 'count' },
        { name: 'git daemon fetches', value: d.stats?.fetches, unit: 'count' },
      );
      details.daemon = d.stats;
    } catch (error) {
      log(`state-init: git daemon variant skipped: ${error.message.split('\n')[0]}`);
      notes.push(`git daemon variant skipped: ${error.message.split('\n')[0]}`);
    } finally {
      if (daemon) await daemon.stop();
    }
  }
  return { metrics, notes, details };
}
