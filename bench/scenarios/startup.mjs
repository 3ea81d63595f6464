// 1. startup: wall time of `nyl --version` (median of 20) next to `node -e 0`.
import { NYL, exec, nodeStartup, repeat, reps, summary } from '../lib.mjs';

export const id = 'startup';
export const title = 'nyl --version start-up';

export async function run() {
  const n = reps(20, 7);
  await exec([process.execPath, NYL, '--version']); // warm the page cache
  const version = summary(await repeat(n, async () => (await exec([process.execPath, NYL, '--version'])).ms));
  const node = await nodeStartup();
  return {
    metrics: [
      { name: 'nyl --version', value: version.median, unit: 'ms', target: { op: '<', value: 300 }, spread: version },
      { name: 'node -e 0 (reference)', value: node.median, unit: 'ms', spread: node },
      { name: 'nyl start-up beyond node', value: version.median - node.median, unit: 'ms' },
    ],
    notes: [`median of ${n} runs each`],
  };
}
