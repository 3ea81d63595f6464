// 10. plan-verify: (a) `nyl plan -e dev` of 1,000 Command units against `nyl status -e dev` of
// the same environment, with no receipts and with every unit current (target: plan within 1.2x
// of status: both resolve every unit, plan writes not even the clone's known branches); (b)
// `nyl verify -e dev` of 500 reconciled Command units whose check is `true` (one process per
// unit, four at once, and one observed commit).
import { AUTHOR_ARGS, cpuMedian, makeProject, nyl, repeat, reps, retryKilled, spawnMany, summary, thousandUnits } from '../lib.mjs';

export const id = 'plan-verify';
export const title = 'nyl plan of 1,000 units against nyl status; nyl verify of 500 units';

/** Median wall of a command that exits 0 or 2 (something would change, or drifted). */
async function timed(p, args, n) {
  const once = () => retryKilled(args[0], () => nyl(p, args, { check: false }));
  await once();
  const runs = await repeat(n, once);
  const codes = [...new Set(runs.map((r) => r.code))];
  if (codes.some((c) => c !== 0 && c !== 2)) throw new Error(`nyl ${args.join(' ')} exited ${codes.join(',')}: ${runs[0].stderr.slice(-2000)}`);
  return { wall: summary(runs.map((r) => r.ms)), cpu: cpuMedian(runs), codes };
}

async function planAgainstStatus(reconciled, n) {
  const p = await thousandUnits({ reconciled });
  const status = await timed(p, ['status', '-e', 'dev'], n);
  const plan = await timed(p, ['plan', '-e', 'dev'], n);
  return { status, plan, ratio: plan.wall.median / status.wall.median };
}

async function verify500(n) {
  const p = await makeProject({ units: 500, waves: 1, label: 'v500', unitSpec: ['check: {run: ["true"]}'] });
  await nyl(p, ['state', 'init', '-e', 'dev', ...AUTHOR_ARGS]);
  await nyl(p, ['reconcile', '-e', 'dev', ...AUTHOR_ARGS]);
  const verify = await timed(p, ['verify', '-e', 'dev', ...AUTHOR_ARGS], n);
  const spawn = await spawnMany(['true'], 500, 4);
  return { verify, spawn, overhead: (verify.wall.median - spawn) / 500 };
}

export async function run() {
  const n = reps(5, 2);
  const fresh = await planAgainstStatus(false, n);
  const current = await planAgainstStatus(true, n);
  const v = await verify500(reps(3, 1));
  return {
    metrics: [
      { name: '(a) no receipts: plan wall', value: fresh.plan.wall.median, unit: 'ms', cpu: fresh.plan.cpu, spread: fresh.plan.wall },
      { name: '(a) no receipts: status wall', value: fresh.status.wall.median, unit: 'ms', cpu: fresh.status.cpu, spread: fresh.status.wall },
      { name: '(a) no receipts: plan / status', value: fresh.ratio, unit: 'x', target: { op: '<=', value: 1.2 } },
      { name: '(b) all current: plan wall', value: current.plan.wall.median, unit: 'ms', cpu: current.plan.cpu, spread: current.plan.wall },
      { name: '(b) all current: status wall', value: current.status.wall.median, unit: 'ms', cpu: current.status.cpu, spread: current.status.wall },
      { name: '(b) all current: plan / status', value: current.ratio, unit: 'x', target: { op: '<=', value: 1.2 } },
      { name: 'verify 500 units (check: true) wall', value: v.verify.wall.median, unit: 'ms', cpu: v.verify.cpu, spread: v.verify.wall },
      { name: 'verify overhead per unit over spawning `true` (info)', value: v.overhead, unit: 'ms' },
    ],
    notes: [
      `median of ${n} runs after one warm-up (verify: ${reps(3, 1)}); exit codes plan ${fresh.plan.codes.join(',')} / ${current.plan.codes.join(',')}, verify ${v.verify.codes.join(',')}`,
    ],
  };
}
