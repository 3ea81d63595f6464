// 1. startup: wall time of `nyl --version` (median of 20) next to `node -e 0`.
import { NYL, cpuMedian, exec, nodeStartup, repeat, reps, summary } from '../lib.mjs';

export const id = 'startup';
export const title = 'nyl --version start-up';

export async function run() {
  const n = reps(20, 7);
  await exec([process.execPath, NYL, '--version']); // warm the page cache
  const runs = await repeat(n, () => exec([process.execPath, NYL, '--version']));
  const version = summary(runs.map((r) => r.ms));
  const node = await nodeStartup();
  return {
    metrics: [
      { name: 'nyl --version', value: version.median, unit: 'ms', cpu: cpuMedian(runs), target: { op: '<', value: 300 }, spread: version },
      { name: 'node -e 0 (reference)', value: node.median, unit: 'ms', cpu: node.cpu, spread: node },
      { name: 'nyl start-up beyond node', value: version.median - node.median, unit: 'ms' },
    ],
    notes: [`median of ${n} runs each`],
  };
}
