// remote-latency: what round trips cost on a network remote (issue 33). A smart-HTTP state
// repository (git http-backend behind a small Node CGI host) is reached through a TCP proxy that
// delays every chunk by RTT/2 each way (BENCH_RTT_MS, default 100). For each command of a small
// project's life (20 Command units in 4 waves): wall time, network git calls (fetch, push,
// ls-remote from NYL_GIT_STATS), TCP connections through the proxy and HTTP requests served.
// BENCH_NYL_BEFORE=<another build's bin/nyl> measures that build too, on fixtures of its own,
// alternating with this one in the same run.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AUTHOR_ARGS,
  bareRepo,
  exec,
  git,
  gitEnv,
  log,
  makeProject,
  NYL,
  nyl,
  projectYaml,
  repeat,
  reps,
  startGitHttp,
  startLatencyProxy,
  summary,
  tempDir,
} from '../lib.mjs';

export const id = 'remote-latency';
export const title = 'state commands over smart HTTP behind a proxy adding RTT (20 units, 4 waves)';

const RTT_MS = Number(process.env.BENCH_RTT_MS ?? 100);

/** The steps measured, in order, each on the state the ones before left. */
const STEPS = [
  { key: 'init', label: 'state init', args: ['state', 'init', '-e', 'dev'] },
  { key: 'first', label: 'reconcile, first run', args: ['reconcile', '-e', 'dev'] },
  { key: 'one-new', label: 'reconcile of 1 new unit', args: ['reconcile', '-e', 'dev'], before: addUnit },
  { key: 'hold', label: 'hold', args: ['hold', '-e', 'dev', '--unit', 'u0000', '--reason', 'bench'] },
  { key: 'resume', label: 'resume', args: ['resume', '-e', 'dev', '--unit', 'u0000', '--reason', 'bench'] },
  { key: 'noop', label: 'no-op reconcile', args: ['reconcile', '-e', 'dev'] },
];

/** Adds one independent unit to the project (a commit), so that the next reconcile executes it alone. */
async function addUnit(p) {
  const extra = ['apiVersion: nyl.io/v1', 'kind: Command', 'metadata: {name: added}', 'spec:', '  run: ["true"]'].join('\n');
  writeFileSync(join(p.src, 'nyl.yaml'), `${projectYaml({ stateUrl: p.stateUrl, units: 20, waves: 4 })}---\n${extra}\n`);
  await git(p.src, ['commit', '-q', '-am', 'one more unit']);
}

/** Fetches, pushes and ls-remotes to the remote (a build without the `remote` count: all of them, local fetches included). */
function networkCalls(stats) {
  if (typeof stats?.remote === 'number') return stats.remote;
  const by = stats?.byCommand ?? {};
  return (by.fetch ?? 0) + (by.push ?? 0) + (by['ls-remote'] ?? 0);
}

/** One life of a fresh project with the given build: each step's wall, calls, connections, requests. */
async function life(server, proxy, served, bin, seq) {
  const name = `state-${seq}.git`;
  await bareRepo(join(served, name));
  const p = await makeProject({ units: 20, waves: 4, stateUrl: `http://127.0.0.1:${proxy.port}/${name}`, label: 'latency' });
  const out = {};
  for (const step of STEPS) {
    if (step.before) await step.before(p);
    const c0 = proxy.counts.connections;
    const r0 = server.counts.requests;
    const r = await nyl(p, [...step.args, ...AUTHOR_ARGS], { bin });
    out[step.key] = { ms: r.ms, calls: networkCalls(r.stats), connections: proxy.counts.connections - c0, requests: server.counts.requests - r0 };
  }
  return out;
}

/** The floor: one ls-remote, and one push of a new commit to a new ref, through the same proxy. */
async function floors(server, proxy, served) {
  const url = `http://127.0.0.1:${proxy.port}/floor.git`;
  await bareRepo(join(served, 'floor.git'));
  const src = tempDir('floor');
  await git(src, ['init', '-q']);
  await git(src, ['-c', 'user.name=B', '-c', 'user.email=b@example.com', 'commit', '-q', '--allow-empty', '-m', 'x']);
  const env = gitEnv();
  const lsRemote = await repeat(reps(5, 3), async () => (await exec(['git', 'ls-remote', url], { env, cwd: src })).ms);
  const push = await repeat(reps(5, 3), async (i) => (await exec(['git', 'push', '-q', url, `HEAD:refs/heads/b${i}`], { env, cwd: src })).ms);
  return { lsRemote: summary(lsRemote), push: summary(push) };
}

function medianOf(lives, key, field) {
  return summary(lives.map((l) => l[key][field])).median;
}

export async function run() {
  const n = reps(3, 1);
  const served = tempDir('latency-served');
  const server = await startGitHttp(served);
  const proxy = await startLatencyProxy(server.port, RTT_MS);
  const before = process.env.BENCH_NYL_BEFORE;
  const builds = [{ tag: '', bin: NYL }, ...(before ? [{ tag: 'before ', bin: before }] : [])];
  const metrics = [];
  const details = { rttMs: RTT_MS, lives: {} };
  try {
    const floor = await floors(server, proxy, served);
    metrics.push(
      { name: 'floor: git ls-remote', value: floor.lsRemote.median, unit: 'ms', spread: floor.lsRemote },
      { name: 'floor: git push', value: floor.push.median, unit: 'ms', spread: floor.push },
    );
    const lives = new Map(builds.map((b) => [b.tag, []]));
    let seq = 0;
    // Alternating builds, so that both see the same machine load.
    for (let i = 0; i < n; i++) {
      for (const b of builds) {
        log(`remote-latency: ${b.tag || 'this build '}life ${i + 1}/${n}`);
        lives.get(b.tag).push(await life(server, proxy, served, b.bin, seq++));
      }
    }
    for (const step of STEPS) {
      for (const b of builds) {
        const l = lives.get(b.tag);
        const target =
          step.key === 'one-new' ? { op: '<=', value: 4, label: 'issue 33' } : ['hold', 'resume'].includes(step.key) ? { op: '<=', value: 2 } : undefined;
        metrics.push(
          { name: `${b.tag}${step.label}: wall`, value: medianOf(l, step.key, 'ms'), unit: 'ms', spread: summary(l.map((x) => x[step.key].ms)) },
          {
            name: `${b.tag}${step.label}: network git calls`,
            value: medianOf(l, step.key, 'calls'),
            unit: 'count',
            ...(b.tag ? {} : target ? { target } : {}),
          },
          { name: `${b.tag}${step.label}: connections`, value: medianOf(l, step.key, 'connections'), unit: 'count' },
          { name: `${b.tag}${step.label}: requests`, value: medianOf(l, step.key, 'requests'), unit: 'count' },
        );
      }
    }
    for (const [tag, l] of lives) details.lives[tag || 'this'] = l;
  } finally {
    await proxy.stop();
    await server.stop();
  }
  const notes = [
    `RTT ${RTT_MS} ms added by a TCP proxy (RTT/2 per chunk each way); median of ${n} fresh projects per build`,
    ...(before ? [`before: ${before}`] : ['set BENCH_NYL_BEFORE=<bin/nyl of another build> to measure it beside this one']),
    'connections: TCP connections through the proxy; requests: HTTP requests the server answered',
  ];
  return { metrics, notes, details };
}
