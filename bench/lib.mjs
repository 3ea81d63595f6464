// Shared helpers of the Nyl benchmarks: temp repositories, project generation, timing, medians,
// git statistics (NYL_GIT_STATS) and a git daemon. Node built-ins only.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(BENCH_DIR, '..');
export const NYL = join(ROOT, 'bin', 'nyl');
export const QUICK = process.env.BENCH_QUICK === '1' || process.env.BENCH_QUICK === 'true';
export const AUTHOR = 'Bench <bench@example.com>';

/** Repetitions: `full` normally, `quick` with BENCH_QUICK=1. */
export function reps(full, quick) {
  return QUICK ? quick : full;
}

// ---------------------------------------------------------------- temp dirs

const tempDirs = [];

/** A fresh temporary directory, removed by cleanup() (unless BENCH_KEEP=1). */
export function tempDir(label) {
  const dir = mkdtempSync(join(tmpdir(), `nyl-bench-${label}-`));
  tempDirs.push(dir);
  return dir;
}

export function cleanup() {
  if (process.env.BENCH_KEEP === '1') {
    if (tempDirs.length) process.stderr.write(`bench: kept ${tempDirs.length} temp dirs (BENCH_KEEP=1)\n`);
    return;
  }
  while (tempDirs.length) rmSync(tempDirs.pop(), { recursive: true, force: true });
}

// ---------------------------------------------------------------- timing

export function nowMs() {
  return Number(process.hrtime.bigint()) / 1e6;
}

export function median(values) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Median of the cpuMs of results (undefined when unknown). */
export function cpuMedian(results) {
  const v = results.map((r) => r.cpuMs).filter((x) => typeof x === 'number');
  return v.length ? median(v) : undefined;
}

export function summary(values) {
  const s = [...values].sort((a, b) => a - b);
  return { median: median(s), min: s[0], max: s[s.length - 1], n: s.length };
}

/**
 * CPU time (user + sys, ms) of the bench's reaped children and their reaped descendants, from
 * /proc/self/stat (Linux; 10 ms ticks). Children run one at a time, so the difference around one
 * run is that run's CPU, git and drivers included: a figure less sensitive to other load on the
 * machine than wall time. Undefined where /proc is missing.
 */
export function childrenCpuMs() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command name: state is field 3; cutime and cstime are fields 16 and 17.
    return ((Number(fields[16 - 3]) + Number(fields[17 - 3])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Runs argv to completion (asynchronously, so that a git daemon or other helper started by this
 * process keeps being served) and measures its wall time with process.hrtime.
 */
export function exec(argv, { cwd, env, input, check = true } = {}) {
  return new Promise((resolvePromise, reject) => {
    const cpuBefore = childrenCpuMs();
    const began = nowMs();
    const child = spawn(argv[0], argv.slice(1), { cwd, env: env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (b) => out.push(b));
    child.stderr.on('data', (b) => err.push(b));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const ms = nowMs() - began;
      const cpuAfter = childrenCpuMs();
      const cpuMs = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
      const result = { code, signal, ms, cpuMs, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
      if (check && code !== 0) {
        const e = new Error(`${argv.join(' ')} exited ${code ?? signal} in ${cwd ?? process.cwd()}\n${result.stderr}${result.stdout}`.slice(0, 4000));
        e.result = result;
        reject(e);
      } else resolvePromise(result);
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input ?? '');
  });
}

/** Times `fn` (which returns a ms figure or a promise of one) n times; returns the ms values. */
export async function repeat(n, fn) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await fn(i));
  return out;
}

/** Spawns argv `count` times with at most `limit` at once, like the engine's pool and driver. */
export function spawnMany(argv, count, limit) {
  return new Promise((resolvePromise, reject) => {
    const cpuBefore = childrenCpuMs();
    const began = nowMs();
    let started = 0;
    let finished = 0;
    const next = () => {
      if (started >= count) return;
      started++;
      const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      child.stdout.resume();
      child.stderr.resume();
      child.on('error', reject);
      child.on('close', () => {
        finished++;
        if (finished === count) {
          const ms = nowMs() - began;
          const cpuAfter = childrenCpuMs();
          spawnMany.lastCpuMs = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
          resolvePromise(ms);
        } else next();
      });
    };
    for (let i = 0; i < Math.min(limit, count); i++) next();
  });
}

// ---------------------------------------------------------------- git

export function gitEnv(extra = {}) {
  return {
    ...process.env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    LC_ALL: 'C',
    ...extra,
  };
}

export async function git(cwd, args, options = {}) {
  return exec(['git', ...args], { ...options, cwd, env: gitEnv(options.env) });
}

/** An empty bare repository at dir. */
export async function bareRepo(dir) {
  mkdirSync(dir, { recursive: true });
  await git(dir, ['init', '-q', '--bare']);
  return dir;
}

export function fileUrl(path) {
  return pathToFileURL(path).href;
}

// ---------------------------------------------------------------- projects

/**
 * The nyl.yaml text of one environment `dev` whose state lives at stateUrl, and `units` Command
 * units (`run: ["true"]`) arranged in `waves` waves: unit i of wave k depends on unit i of wave
 * k-1, so the engine executes the environment in exactly `waves` waves. `unitSpec` lists extra
 * lines of every unit's spec (e.g. `deletionPolicy: Teardown`); with `units: 0`, the Environment alone.
 */
export function projectYaml({ stateUrl, units, waves = 1, env = 'dev', unitSpec = [] }) {
  const perWave = Math.ceil(units / waves);
  const name = (n) => `u${String(n).padStart(4, '0')}`;
  const docs = [
    [
      'apiVersion: nyl.io/v1',
      'kind: Environment',
      `metadata: {name: ${env}}`,
      'spec:',
      '  state:',
      `    repository: {repoURL: ${JSON.stringify(stateUrl)}}`,
    ].join('\n'),
  ];
  for (let n = 0; n < units; n++) {
    const wave = Math.floor(n / perWave);
    const lines = ['apiVersion: nyl.io/v1', 'kind: Command', `metadata: {name: ${name(n)}}`, 'spec:'];
    if (wave > 0) lines.push(`  dependsOn: [${name(n - perWave)}]`);
    lines.push('  run: ["true"]');
    for (const line of unitSpec) lines.push(`  ${line}`);
    docs.push(lines.join('\n'));
  }
  return `${docs.join('\n---\n')}\n`;
}

/**
 * A project checkout (git repo with nyl.yaml committed) under base/src, a state repository URL,
 * and a cache dir. `stateUrl` defaults to a fresh empty bare repo base/state.git over file://.
 */
export async function makeProject({ units, waves = 1, stateUrl, label = 'proj', unitSpec = [] } = {}) {
  const base = tempDir(label);
  const src = join(base, 'src');
  let statePath;
  if (!stateUrl) {
    statePath = await bareRepo(join(base, 'state.git'));
    stateUrl = fileUrl(statePath);
  }
  mkdirSync(src, { recursive: true });
  await git(src, ['init', '-q']);
  await git(src, ['config', 'user.name', 'Bench']);
  await git(src, ['config', 'user.email', 'bench@example.com']);
  writeFileSync(join(src, 'nyl.yaml'), projectYaml({ stateUrl, units, waves, unitSpec }));
  await git(src, ['add', 'nyl.yaml']);
  await git(src, ['commit', '-q', '-m', 'bench project']);
  return { base, src, stateUrl, statePath, cache: join(base, 'cache'), units, waves };
}

// ---------------------------------------------------------------- nyl

let statsSeq = 0;

/**
 * Runs `nyl ...args` in the project, with NYL_GIT_STATS pointed at a fresh file; returns the wall
 * time and the git statistics the process appended ({processes, pushes, fetches, byCommand}).
 * `nodeArgs` go to node before bin/nyl; `wrap` is an argv prefix that starts node; `bin` another
 * build's bin/nyl (a before-and-after comparison in one run).
 */
export async function nyl(project, args, { check = true, extraEnv = {}, nodeArgs = [], wrap = [], bin = NYL } = {}) {
  const statsFile = join(project.base, `stats-${process.pid}-${++statsSeq}.jsonl`);
  const env = {
    // No NYL_* setting of the caller (fault injection, a clock, a cache) leaks into a measurement.
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NYL_'))),
    NYL_CACHE_DIR: project.cache,
    NYL_GIT_STATS: statsFile,
    ...extraEnv,
  };
  // `wrap` is an argv prefix (e.g. /usr/bin/time -o FILE -f %M) that runs the node process.
  const r = await exec([...wrap, process.execPath, ...nodeArgs, bin, ...args], { cwd: project.src, env, check: false });
  let stats;
  if (existsSync(statsFile)) {
    const lines = readFileSync(statsFile, 'utf8').trim().split('\n').filter(Boolean);
    stats = lines.length ? JSON.parse(lines[lines.length - 1]) : undefined;
    rmSync(statsFile, { force: true });
  }
  if (r.signal) {
    // Nothing in the bench signals nyl; on a shared machine another session's crash tests may
    // kill `nyl reconcile` processes by name. retryKilled() redoes the measurement.
    const e = new Error(`nyl ${args.join(' ')} was killed by ${r.signal} from outside the bench`);
    e.killedOutside = true;
    throw e;
  }
  if (check && r.code !== 0) {
    throw new Error(`nyl ${args.join(' ')} exited ${r.code ?? r.signal}\n${r.stderr.slice(-3000)}\n${r.stdout.slice(-2000)}`);
  }
  return { ...r, stats };
}

export const AUTHOR_ARGS = ['--author', AUTHOR];

/** How many measurements were redone because a nyl process was killed from outside. */
export const retries = { count: 0, what: [] };

/**
 * Runs fn (which must build whatever state it needs afresh) and runs it again, up to `tries`
 * times in all, when a nyl process it started was killed by a signal the bench did not send.
 */
export async function retryKilled(label, fn, tries = 3) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (!error.killedOutside || attempt >= tries) throw error;
      retries.count++;
      retries.what.push(`${label}: ${error.message}`);
      log(`bench: ${label}: ${error.message}; measuring again`);
    }
  }
}

// ---------------------------------------------------------------- shared fixtures

const fixtures = new Map();

/** Memoizes an async fixture for the whole bench process (scenarios may share an expensive one). */
export function fixture(key, make) {
  if (!fixtures.has(key)) fixtures.set(key, make());
  return fixtures.get(key);
}

/**
 * A 1,000-unit project (10 waves of 100), state initialized. With reconciled: true, after one full
 * reconcile (every unit current). Both variants share nothing, so the order of scenarios is free.
 */
export function thousandUnits({ reconciled }) {
  return fixture(`1000:${reconciled}`, () =>
    retryKilled(`1,000-unit fixture`, async () => {
      const p = await makeProject({ units: 1000, waves: 10, label: reconciled ? 'k-reconciled' : 'k-init' });
      await nyl(p, ['state', 'init', '-e', 'dev', ...AUTHOR_ARGS]);
      if (reconciled) {
        p.fullReconcile = await nyl(p, ['reconcile', '-e', 'dev', ...AUTHOR_ARGS]);
      }
      return p;
    }),
  );
}

// ---------------------------------------------------------------- node start-up reference

/** Median wall time of `node -e 0` (memoized; scenarios startup and noop-1000 share it). */
export function nodeStartup() {
  return fixture('node-startup', async () => {
    const runs = await repeat(reps(20, 7), () => exec([process.execPath, '-e', '0']));
    return { ...summary(runs.map((r) => r.ms)), cpu: cpuMedian(runs) };
  });
}

// ---------------------------------------------------------------- git daemon

export function freePort() {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePromise(port));
    });
  });
}

/**
 * Starts `git daemon` serving every repository under baseDir with receive-pack enabled. Returns
 * {url(name), stop()}; stop() kills exactly the daemon this call started.
 */
export async function startGitDaemon(baseDir) {
  const port = await freePort();
  const child = spawn(
    'git',
    ['daemon', '--reuseaddr', '--export-all', '--enable=receive-pack', `--base-path=${baseDir}`, '--listen=127.0.0.1', `--port=${port}`, baseDir],
    // Its own process group: `git daemon` runs git-daemon as a child, and stop() ends both.
    { stdio: ['ignore', 'ignore', 'pipe'], env: gitEnv(), detached: true },
  );
  let stderr = '';
  child.stderr.on('data', (b) => (stderr += b));
  let exited = false;
  const killGroup = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      /* already gone */
    }
  };
  const onExit = () => killGroup('SIGKILL');
  process.once('exit', onExit);
  child.on('exit', () => {
    exited = true;
    process.removeListener('exit', onExit);
    killGroup('SIGTERM'); // a git-daemon child left behind
  });
  const url = (name) => `git://127.0.0.1:${port}/${name}`;
  const stop = () =>
    new Promise((resolvePromise) => {
      if (exited) return resolvePromise();
      child.once('exit', () => resolvePromise());
      killGroup('SIGTERM');
      setTimeout(() => {
        if (!exited) killGroup('SIGKILL');
      }, 2000).unref();
    });
  // Wait until it answers.
  const probe = join(baseDir, '.probe.git');
  await bareRepo(probe);
  const deadline = nowMs() + 10000;
  for (;;) {
    if (exited) throw new Error(`git daemon exited: ${stderr}`);
    const r = await exec(['git', 'ls-remote', url('.probe.git')], { env: gitEnv(), check: false });
    if (r.code === 0) break;
    if (nowMs() > deadline) {
      await stop();
      throw new Error(`git daemon did not answer on port ${port}: ${stderr}${r.stderr}`);
    }
    await new Promise((r2) => setTimeout(r2, 50));
  }
  return { port, url, stop, pid: child.pid };
}

// ---------------------------------------------------------------- formatting

export function fmtMs(ms) {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return '-';
  if (ms >= 10000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  return `${ms.toFixed(1)} ms`;
}

export function log(line) {
  process.stderr.write(`${line}\n`);
}

// ---------------------------------------------------------------- smart HTTP and a latency proxy

/**
 * Serves the bare repositories under root over smart HTTP on 127.0.0.1: a tiny CGI host that runs
 * `git http-backend` for each request (pushes accepted). In process: the bench runs nyl and git
 * asynchronously, so the server keeps answering. `requests` counts the HTTP requests served.
 */
export async function startGitHttp(root) {
  const http = await import('node:http');
  const backend = join(spawnSync('git', ['--exec-path'], { encoding: 'utf8' }).stdout.trim(), 'git-http-backend');
  const counts = { requests: 0 };
  const server = http.createServer((req, res) => {
    counts.requests++;
    const url = new URL(req.url, 'http://127.0.0.1');
    const env = gitEnv({
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      // http-backend refuses receive-pack without an authenticated user unless it is enabled.
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.receivepack',
      GIT_CONFIG_VALUE_0: 'true',
      GATEWAY_INTERFACE: 'CGI/1.1',
      REMOTE_USER: 'bench',
      REMOTE_ADDR: '127.0.0.1',
      REQUEST_METHOD: req.method,
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.replace(/^\?/, ''),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      ...(req.headers['content-length'] !== undefined ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
      ...(req.headers['content-encoding'] !== undefined ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
      ...(req.headers['git-protocol'] !== undefined ? { GIT_PROTOCOL: req.headers['git-protocol'] } : {}),
    });
    const child = spawn(backend, [], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    child.stdin.on('error', () => {});
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    const onData = (chunk) => {
      head = Buffer.concat([head, chunk]);
      const crlf = head.indexOf('\r\n\r\n');
      const lf = head.indexOf('\n\n');
      if (crlf < 0 && lf < 0) return;
      const [end, skip] = crlf >= 0 && (lf < 0 || crlf < lf) ? [crlf, 4] : [lf, 2];
      child.stdout.removeListener('data', onData);
      for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
        const i = line.indexOf(':');
        if (i <= 0) continue;
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (name.toLowerCase() === 'status') res.statusCode = Number(value.slice(0, 3));
        else res.setHeader(name, value);
      }
      res.write(head.subarray(end + skip));
      child.stdout.pipe(res);
    };
    child.stdout.on('data', onData);
    child.stdout.on('end', () => {
      if (!res.headersSent) {
        res.statusCode = 502;
        res.end();
      }
    });
  });
  await new Promise((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
  const { port } = server.address();
  const stop = () => new Promise((resolvePromise) => server.close(() => resolvePromise()) && server.closeAllConnections?.());
  return { port, counts, url: (name) => `http://127.0.0.1:${port}/${name}`, stop };
}

/**
 * A TCP proxy on 127.0.0.1 in front of `targetPort` that delays every chunk by rttMs / 2 in each
 * direction (no root, no netns: timers, in order, since every chunk waits the same time). A
 * request and its answer thus take one RTT more; a new connection's handshake is not delayed
 * (the kernel answers it), but nothing flows on it before a delayed chunk. `counts.connections`
 * counts the connections accepted.
 */
export async function startLatencyProxy(targetPort, rttMs) {
  const net = await import('node:net');
  const half = rttMs / 2;
  const counts = { connections: 0 };
  const sockets = new Set();
  const delayed = (from, to) => {
    from.on('data', (chunk) => setTimeout(() => to.destroyed || to.write(chunk), half));
    from.on('end', () => setTimeout(() => to.end(), half));
    from.on('error', () => to.destroy());
    from.on('close', () => setTimeout(() => to.destroy(), half));
  };
  const server = net.createServer((client) => {
    counts.connections++;
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    delayed(client, upstream);
    delayed(upstream, client);
  });
  await new Promise((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
  const { port } = server.address();
  const stop = () =>
    new Promise((resolvePromise) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolvePromise());
    });
  return { port, counts, stop };
}
