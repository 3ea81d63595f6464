// 14. ui-pages: the read-only web view (`nyl ui`) on the 1,000-unit fixture of status-1000 (10
// waves of 100, every unit current): the server's start, one GET of each page, and the first
// read of /version (one read of the refs' version, what each poll costs while a page is
// open), against `nyl status -e dev` of the same fixture, which the environment page mirrors.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { NYL, cpuMedian, log, nowMs, nyl, reps, retryKilled, summary, thousandUnits } from '../lib.mjs';

export const id = 'ui-pages';
export const title = 'nyl ui: start, pages and a version read of the web view, 1,000 units, against nyl status';

const UNIT = 'u0550'; // wave 6 of 10: a unit with a dependency and a dependent
const PAGES = [
  { key: 'overview', path: '/', name: '`/`' },
  { key: 'environment', path: '/environments/dev', name: '`/environments/dev`' },
  { key: 'unit', path: `/environments/dev/units/${UNIT}`, name: `\`/environments/dev/units/${UNIT}\`` },
  { key: 'history', path: '/environments/dev/history', name: '`/environments/dev/history`' },
];
const URL_LINE = /^nyl ui: serving .* at (http:\/\/127\.0\.0\.1:\d+\/) \(read-only; Ctrl-C stops it\)$/m;
const START_TIMEOUT_MS = 30_000;
/** The server's --poll-interval: how long a version read stays cached. */
const POLL_MS = 100;
const REQUEST_TIMEOUT_MS = 60_000;

/** CPU time (user + sys, ms) of a live process and its reaped children, from /proc/PID/stat (10 ms ticks). */
function cpuOfPid(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[14 - 3]) + Number(f[15 - 3]) + Number(f[16 - 3]) + Number(f[17 - 3])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Starts `nyl ui --listen 127.0.0.1:0` in the project; `ui.ready` resolves when it printed its URL
 * line, with the wall from spawn to that line (the process is in `ui.child` from the start, so a
 * caller can kill it whatever happens). `--poll-interval ${POLL_MS}ms`: a cached version is that old at
 * most, so a /version asked later is read. No page polls here: the server reads only when asked.
 */
function startUi(p, statsFile) {
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NYL_'))),
    NYL_CACHE_DIR: p.cache,
    NYL_GIT_STATS: statsFile,
  };
  const began = nowMs();
  const child = spawn(process.execPath, [NYL, 'ui', '--listen', '127.0.0.1:0', '--poll-interval', `${POLL_MS}ms`, p.src], {
    cwd: p.src,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ui = { child, stdout: '', stderr: '', exit: undefined };
  const onBenchExit = () => child.kill('SIGKILL');
  process.once('exit', onBenchExit);
  ui.exited = new Promise((resolveExit) =>
    child.on('exit', (code, signal) => {
      ui.exit = { code, signal };
      process.removeListener('exit', onBenchExit);
      resolveExit(ui.exit);
    }),
  );
  child.stderr.on('data', (b) => (ui.stderr += b));
  ui.ready = new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => reject(new Error(`nyl ui printed no URL within ${START_TIMEOUT_MS} ms\n${ui.stderr.slice(-2000)}`)), START_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.stdout.on('data', (b) => {
      ui.stdout += b;
      const m = URL_LINE.exec(ui.stdout);
      if (m && ui.url === undefined) {
        ui.startMs = nowMs() - began;
        ui.url = m[1];
        clearTimeout(timer);
        resolveStart(ui);
      }
    });
    ui.exited.then(({ code, signal }) => {
      clearTimeout(timer);
      if (ui.url === undefined)
        reject(new Error(`nyl ui exited ${code ?? signal} before printing its URL\n${ui.stderr.slice(-2000)}${ui.stdout.slice(-1000)}`));
    });
  });
  return ui;
}

/** SIGINT, then the exit code, which must be 0 (SIGKILL and an error after 10 s). */
async function stopUi(ui) {
  if (ui.exit) throw new Error(`nyl ui exited ${ui.exit.code ?? ui.exit.signal} before it was stopped\n${ui.stderr.slice(-2000)}`);
  ui.child.kill('SIGINT');
  const timeout = new Promise((resolveTimeout) => setTimeout(() => resolveTimeout('timeout'), 10_000).unref());
  if ((await Promise.race([ui.exited, timeout])) === 'timeout') {
    ui.child.kill('SIGKILL');
    throw new Error(`nyl ui did not exit within 10 s of SIGINT\n${ui.stderr.slice(-2000)}`);
  }
  if (ui.exit.code !== 0) throw new Error(`nyl ui exited ${ui.exit.code ?? ui.exit.signal} on SIGINT, not 0\n${ui.stderr.slice(-2000)}`);
}

/** Kills the server if it still runs (the scenario threw). */
async function killUi(ui) {
  if (ui.exit) return;
  ui.child.kill('SIGKILL');
  await ui.exited;
}

/** One GET on a new connection (Host names 127.0.0.1 with the port, as Node sets it): wall until the body ended, the server's CPU. */
function fetchPage(ui, path) {
  return new Promise((resolvePage, reject) => {
    const cpuBefore = cpuOfPid(ui.child.pid);
    const began = nowMs();
    const req = get(new URL(path, ui.url), { agent: false }, (res) => {
      const chunks = [];
      res.on('data', (b) => chunks.push(b));
      res.on('error', reject);
      res.on('end', () => {
        const ms = nowMs() - began;
        const cpuAfter = cpuOfPid(ui.child.pid);
        const body = Buffer.concat(chunks).toString();
        if (res.statusCode !== 200) return reject(new Error(`GET ${path} answered ${res.statusCode}: ${body.slice(0, 500)}\n${ui.stderr.slice(-2000)}`));
        resolvePage({ ms, cpuMs: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore, bytes: Buffer.byteLength(body), body });
      });
    });
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`GET ${path}: no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
  });
}

/**
 * One read of the refs' version, as an open page's poll costs it: GET /version once the server's
 * cached version is older than its --poll-interval (POLL_MS), so that the answer is read, not cached.
 */
async function firstVersion(ui) {
  await new Promise((r) => setTimeout(r, 2 * POLL_MS));
  const answer = await fetchPage(ui, '/version');
  if (!/^[0-9a-f]+$/.test(answer.body)) throw new Error(`GET /version answered ${JSON.stringify(answer.body.slice(0, 200))}`);
  return { ms: answer.ms, cpuMs: answer.cpuMs, version: answer.body };
}

/** The environment page must list the 1,000 units and draw the graph. */
function checkEnvironmentPage(body, units) {
  const rows = body.split('<tr data-unit=').length - 1;
  if (rows !== units) throw new Error(`the environment page has ${rows} <tr data-unit= rows, not ${units}`);
  if (!body.includes('<svg class="graph"')) throw new Error('the environment page has no <svg class="graph"');
}

export async function run() {
  const n = reps(7, 3);
  const p = await thousandUnits({ reconciled: true });
  const status = () => retryKilled('status', () => nyl(p, ['status', '-e', 'dev']));
  await status(); // warm-up (the cache as the pages find it)

  // Starts: n servers one after another, each stopped with SIGINT (exit 0 checked), but the last,
  // which serves the pages.
  const statsFile = join(p.base, `ui-stats-${process.pid}.jsonl`);
  const starts = [];
  const launched = [];
  let ui;
  let stats;
  const results = Object.fromEntries([...PAGES.map((pg) => [pg.key, []]), ['version', []], ['status', []]]);
  let versions;
  try {
    for (let i = 0; i < n; i++) {
      ui = startUi(p, statsFile);
      launched.push(ui);
      await ui.ready;
      starts.push(ui.startMs);
      if (i < n - 1) await stopUi(ui);
    }
    log(`bench: ui-pages: serving at ${ui.url}`);

    // One warm-up request of each page and of /version, then n rounds: each page, one version read,
    // and one `nyl status -e dev` (the server idle meanwhile), so that all see the same load.
    for (const pg of PAGES) {
      const r = await fetchPage(ui, pg.path);
      if (pg.key === 'environment') checkEnvironmentPage(r.body, p.units);
    }
    versions = new Set([(await firstVersion(ui)).version]);
    for (let i = 0; i < n; i++) {
      for (const pg of PAGES) {
        const r = await fetchPage(ui, pg.path);
        if (pg.key === 'environment') checkEnvironmentPage(r.body, p.units);
        delete r.body;
        results[pg.key].push(r);
      }
      const e = await firstVersion(ui);
      versions.add(e.version);
      results.version.push(e);
      results.status.push(await status());
    }
    await stopUi(ui);
  } finally {
    for (const u of launched) await killUi(u);
  }
  if (versions.size !== 1) throw new Error(`the refs' version changed while nothing wrote state: ${[...versions].join(', ')}`);
  if (existsSync(statsFile)) {
    const lines = readFileSync(statsFile, 'utf8').trim().split('\n').filter(Boolean);
    stats = lines.length ? JSON.parse(lines[lines.length - 1]) : undefined;
    rmSync(statsFile, { force: true });
  }

  const wall = (key) => summary(results[key].map((r) => r.ms));
  const start = summary(starts);
  const walls = Object.fromEntries(Object.keys(results).map((k) => [k, wall(k)]));
  const envKb = results.environment[0].bytes / 1024;
  const pageMetrics = PAGES.map((pg) => ({
    name: `GET ${pg.name}: wall (server cpu)`,
    value: walls[pg.key].median,
    unit: 'ms',
    cpu: cpuMedian(results[pg.key]),
    spread: walls[pg.key],
  }));
  return {
    metrics: [
      { name: 'start: spawn to URL line', value: start.median, unit: 'ms', spread: start },
      ...pageMetrics,
      { name: "/version: one read of the refs' version", value: walls.version.median, unit: 'ms', cpu: cpuMedian(results.version), spread: walls.version },
      {
        name: '`nyl status -e dev` (new process: Node start-up included)',
        value: walls.status.median,
        unit: 'ms',
        cpu: cpuMedian(results.status),
        spread: walls.status,
      },
      { name: 'ratio environment page / status', value: walls.environment.median / walls.status.median, unit: 'x', target: { op: '<=', value: 1 } },
    ],
    notes: [
      `median of ${n} after one warm-up request each (start: ${n} servers); 1,000 units in 10 waves of 100, all current; unit page ${UNIT}; each round GETs every page on a new connection, then /version (after the cached version expired), then one nyl status, so all see the same load`,
      `environment page ${envKb.toFixed(1)} KB (checked: 200, 1,000 <tr data-unit= rows, <svg class="graph"); history ${(results.history[0].bytes / 1024).toFixed(1)} KB, unit ${(results.unit[0].bytes / 1024).toFixed(1)} KB, / ${(results.overview[0].bytes / 1024).toFixed(1)} KB`,
      `page cpu = the server process's user+sys (and its git children's) during the request, from /proc; status cpu includes Node start-up; the server ran with --poll-interval ${POLL_MS}ms (pages do not poll here; /version waited for its cache to expire) and exited 0 on SIGINT; git processes of the whole serving session: ${stats?.processes ?? '-'}`,
    ],
    details: {
      starts: start,
      pages: walls,
      bytes: Object.fromEntries(PAGES.map((pg) => [pg.key, results[pg.key][0].bytes])),
      stats,
      fullReconcileMs: p.fullReconcile?.ms,
    },
  };
}
