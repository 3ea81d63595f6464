// 12. multi-env: a reconcile of 20 environments x 50 units with nothing to do (issue 15), as one
// multi-environment command (`-l fleet=bench`, each environment its own run), against 20
// single-environment no-op reconciles one after another; and with --environment-concurrency 4.
// Shape: env00 holds shared infrastructure, env01..env19 depend on it; all 20 share one state
// repository over file:// (each its own refs) and render the same 50 Command units.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AUTHOR_ARGS, cpuMedian, exec, gitEnv, makeProject, nyl, repeat, reps, retryKilled, summary } from '../lib.mjs';

export const id = 'multi-env';
export const title = 'no-op reconcile of 20 environments x 50 units: one multi-environment command against 20 single runs';

const ENVIRONMENTS = Array.from({ length: 20 }, (_, i) => `env${String(i).padStart(2, '0')}`);
const UNITS = 50;

/** nyl.yaml: 20 labelled Environments on one state repository, and 50 independent Command units. */
function fleetYaml(stateUrl) {
  const env = (name, i) =>
    [
      'apiVersion: nyl.io/v1',
      'kind: Environment',
      `metadata: {name: ${name}, labels: {fleet: bench}}`,
      'spec:',
      ...(i > 0 ? ['  dependsOn: [env00]'] : []),
      `  state: {repository: {repoURL: ${JSON.stringify(stateUrl)}}}`,
    ].join('\n');
  const unit = (n) => ['apiVersion: nyl.io/v1', 'kind: Command', `metadata: {name: u${String(n).padStart(4, '0')}}`, 'spec:', '  run: ["true"]'].join('\n');
  return `${[...ENVIRONMENTS.map(env), ...Array.from({ length: UNITS }, (_, n) => unit(n))].join('\n---\n')}\n`;
}

async function fleet() {
  const p = await makeProject({ units: 0, label: 'fleet' });
  writeFileSync(join(p.src, 'nyl.yaml'), fleetYaml(p.stateUrl));
  await exec(['git', 'commit', '-q', '-am', 'fleet'], { cwd: p.src, env: gitEnv() });
  for (const env of ENVIRONMENTS) await nyl(p, ['state', 'init', '-e', env, ...AUTHOR_ARGS]);
  const first = await nyl(p, ['reconcile', '-l', 'fleet=bench', '--environment-concurrency', '4', ...AUTHOR_ARGS]);
  return { ...p, firstMs: first.ms };
}

/** A multi-environment no-op: exit 0, nothing executed, no state ref moved. */
async function multiNoop(p, extra) {
  const before = (await exec(['git', 'ls-remote', p.stateUrl], { env: gitEnv() })).stdout;
  const r = await retryKilled('multi no-op', () => nyl(p, ['reconcile', '-l', 'fleet=bench', ...extra, ...AUTHOR_ARGS, '-o', 'json']));
  const report = JSON.parse(r.stdout);
  const executed = Object.values(report.environments)
    .flatMap((e) => Object.values(e.units))
    .filter((u) => u.result !== 'current');
  if (report.environmentOrder.length !== ENVIRONMENTS.length || executed.length > 0)
    throw new Error(`not a no-op of ${ENVIRONMENTS.length} environments: ${r.stdout.slice(0, 2000)}`);
  const after = (await exec(['git', 'ls-remote', p.stateUrl], { env: gitEnv() })).stdout;
  if (after !== before) throw new Error('a no-op multi-environment reconcile moved state refs');
  return r;
}

/** 20 single-environment no-op reconciles one after another: their summed wall and cpu. */
async function singles(p) {
  let ms = 0;
  let cpuMs = 0;
  for (const env of ENVIRONMENTS) {
    const r = await retryKilled('single no-op', () => nyl(p, ['reconcile', '-e', env, ...AUTHOR_ARGS]));
    ms += r.ms;
    cpuMs += r.cpuMs ?? 0;
  }
  return { ms, cpuMs };
}

export async function run() {
  const n = reps(3, 1);
  const p = await fleet();
  await multiNoop(p, []); // warm-up
  const one = await repeat(n, () => multiNoop(p, []));
  const four = await repeat(n, () => multiNoop(p, ['--environment-concurrency', '4']));
  const twenty = await repeat(n, () => singles(p));
  const [oneWall, fourWall, twentyWall] = [one, four, twenty].map((runs) => summary(runs.map((r) => r.ms)));
  const stats = one[one.length - 1].stats;
  return {
    metrics: [
      { name: 'multi no-op, concurrency 1', value: oneWall.median, unit: 'ms', cpu: cpuMedian(one), spread: oneWall },
      { name: 'multi no-op, --environment-concurrency 4', value: fourWall.median, unit: 'ms', cpu: cpuMedian(four), spread: fourWall },
      { name: '20 single no-op reconciles (sum)', value: twentyWall.median, unit: 'ms', cpu: cpuMedian(twenty), spread: twentyWall },
      { name: 'ratio multi (1) / 20 singles', value: oneWall.median / twentyWall.median, unit: 'x', target: { op: '<=', value: 1 } },
      { name: 'ratio multi (4) / 20 singles', value: fourWall.median / twentyWall.median, unit: 'x' },
      { name: 'git processes (multi, 1)', value: stats?.processes, unit: 'count' },
      { name: 'pushes (multi, 1)', value: stats?.pushes, unit: 'count' },
      { name: 'fetches (multi, 1)', value: stats?.fetches, unit: 'count' },
    ],
    notes: [
      `median of ${n}; ${ENVIRONMENTS.length} environments (env01..env19 depend on env00) x ${UNITS} units on one file:// state repository; state refs checked unchanged and every unit current`,
      `the fixture's first multi-environment reconcile (1,000 executions, --environment-concurrency 4) took ${Math.round(p.firstMs)} ms`,
    ],
    details: { stats },
  };
}
