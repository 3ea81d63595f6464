// 3. status-1000: `nyl status -e dev` of an environment declaring 1,000 Command units,
// (a) right after state init (no receipts), (b) after a reconcile of all 1,000 (all current).
import { cpuMedian, nyl, repeat, reps, retryKilled, summary, thousandUnits } from '../lib.mjs';

export const id = 'status-1000';
export const title = 'nyl status -e dev, 1,000 units';

async function measure(p, n) {
  // Exit 2 (pending units) is expected in (a): status follows reconcile's exit codes.
  const status = () => retryKilled('status', () => nyl(p, ['status', '-e', 'dev'], { check: false }));
  await status();
  const runs = await repeat(n, status);
  const codes = [...new Set(runs.map((r) => r.code))];
  if (codes.some((c) => c !== 0 && c !== 2)) throw new Error(`nyl status exited ${codes.join(',')}: ${runs[0].stderr.slice(-2000)}`);
  return { wall: summary(runs.map((r) => r.ms)), cpu: cpuMedian(runs), stats: runs[runs.length - 1].stats, codes, lines: runs[0].stdout.split('\n').length };
}

export async function run() {
  const n = reps(5, 3);
  const fresh = await measure(await thousandUnits({ reconciled: false }), n);
  const current = await measure(await thousandUnits({ reconciled: true }), n);
  return {
    metrics: [
      { name: '(a) no receipts: wall', value: fresh.wall.median, unit: 'ms', cpu: fresh.cpu, spread: fresh.wall },
      { name: '(a) no receipts: git processes', value: fresh.stats?.processes, unit: 'count' },
      { name: '(b) all current: wall', value: current.wall.median, unit: 'ms', cpu: current.cpu, spread: current.wall },
      { name: '(b) all current: git processes', value: current.stats?.processes, unit: 'count' },
    ],
    notes: [`median of ${n} runs after one warm-up; exit codes (a) ${fresh.codes.join(',')}, (b) ${current.codes.join(',')}`],
    details: { fresh: fresh.stats, current: current.stats },
  };
}
