// 6. takeover-200: importing a dead run of 200 checkpoints. Each measurement gets a fresh fixture:
// 200 independent Command units (`run: ["true"]`), `nyl state init -e dev`, then
// `nyl reconcile -e dev --concurrency 8` killed by its own fault point `before-transition-push`
// (every checkpoint pushed, no transition commit), checked in the state repository, then
// `nyl lease break`. Measured: the takeover `nyl reconcile -e dev -o json` (200 units imported,
// nothing executed, no run or lease ref left) and, on other fixtures, `nyl recover -e dev` as the
// alternative import path. Over file://, then over a local `git daemon` with receive-pack enabled
// (BENCH_NO_DAEMON=1 skips it).
import { join } from 'node:path';
import {
  AUTHOR_ARGS,
  NYL,
  bareRepo,
  cpuMedian,
  exec,
  git,
  log,
  makeProject,
  median,
  nyl,
  repeat,
  reps,
  retryKilled,
  startGitDaemon,
  summary,
  tempDir,
} from '../lib.mjs';

export const id = 'takeover-200';
export const title = 'takeover of a dead run with 200 checkpoints (nyl reconcile, nyl recover)';

const UNITS = 200;
const CONCURRENCY = 8;
const FAULT = 'before-transition-push';

/** The coordination refs of dev in the state repository at statePath: lease oid and run refs. */
async function coordinationRefs(statePath) {
  const r = await git(statePath, ['for-each-ref', '--format=%(refname)', 'refs/nyl/dev/']);
  const refs = r.stdout.split('\n').filter(Boolean);
  return { lease: refs.includes('refs/nyl/dev/lease'), runs: refs.filter((ref) => ref.startsWith('refs/nyl/dev/runs/')) };
}

/** Splits `git cat-file --batch` output into {header, body} records. */
function parseBatch(buf) {
  const out = [];
  let at = 0;
  while (at < buf.length) {
    const nl = buf.indexOf(0x0a, at);
    const header = buf.subarray(at, nl).toString();
    const size = Number(header.split(' ')[2]);
    if (!Number.isFinite(size)) throw new Error(`cat-file --batch: ${header}`);
    out.push({ header, body: buf.subarray(nl + 1, nl + 1 + size).toString() });
    at = nl + 1 + size + 1;
  }
  return out;
}

/**
 * Runs the reconcile that kills itself at FAULT (no retry of the bench's own signal: it is the
 * point of the fixture), then checks that the state repository holds the lease and exactly one run
 * ref whose tree has UNITS files under units/, each with `checkpoint:` ... `result: receipt`.
 * A kill before that (another session killing `nyl reconcile` by name) reads as killedOutside.
 */
async function killedReconcile(p, statePath) {
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NYL_'))),
    NYL_CACHE_DIR: p.cache,
    NYL_FAULT_AT: FAULT,
    NYL_FAULT_ACTION: 'kill',
  };
  const argv = ['reconcile', '-e', 'dev', '--concurrency', String(CONCURRENCY), ...AUTHOR_ARGS];
  const r = await exec([process.execPath, NYL, ...argv], { cwd: p.src, env, check: false });
  if (r.signal !== 'SIGKILL') {
    throw new Error(`nyl ${argv.join(' ')} with NYL_FAULT_AT=${FAULT} exited ${r.code ?? r.signal}, not by SIGKILL\n${r.stderr.slice(-2000)}`);
  }
  const refs = await coordinationRefs(statePath);
  const problems = [];
  if (!refs.lease) problems.push('no refs/nyl/dev/lease');
  if (refs.runs.length !== 1) problems.push(`${refs.runs.length} run refs (${refs.runs.join(', ')})`);
  let files = [];
  if (refs.runs.length === 1) {
    const run = refs.runs[0];
    const ls = await git(statePath, ['ls-tree', '-r', '--name-only', run, 'units/']);
    files = ls.stdout.split('\n').filter(Boolean);
    if (files.length !== UNITS) problems.push(`${files.length} files under units/ of ${run}, expected ${UNITS}`);
    const batch = await git(statePath, ['cat-file', '--batch'], { input: files.map((f) => `${run}:${f}\n`).join('') });
    const blobs = parseBatch(Buffer.from(batch.stdout));
    const receipts = blobs.filter((b) => /^checkpoint:\n(?: .*\n)*? {2}result: receipt\n/m.test(b.body)).length;
    if (receipts !== UNITS) problems.push(`${receipts} of ${files.length} unit files hold a checkpoint with result: receipt`);
  }
  if (problems.length) {
    const e = new Error(`after the reconcile killed at ${FAULT}: ${problems.join('; ')}\n${r.stderr.slice(-1500)}`);
    // No run ref, or one with fewer unit files: killed before its fault point, not by itself
    // (retryKilled() builds a new fixture). Anything else is a finding, not a retry.
    e.killedOutside = refs.runs.length === 0 || (refs.runs.length === 1 && files.length < UNITS);
    throw e;
  }
  return { ms: r.ms, run: refs.runs[0] };
}

/** A fresh fixture: project, state init, the killed reconcile (checked), the lease broken. */
async function deadRun(makeState) {
  const { stateUrl, statePath: served } = makeState ? await makeState() : {};
  const p = await makeProject({ units: UNITS, stateUrl, label: 'tk200' });
  const statePath = served ?? p.statePath;
  await nyl(p, ['state', 'init', '-e', 'dev', ...AUTHOR_ARGS]);
  const killed = await killedReconcile(p, statePath);
  const broken = await nyl(p, ['lease', 'break', '-e', 'dev', '--reason', 'bench', ...AUTHOR_ARGS]);
  return { p, statePath, killed, breakMs: broken.ms };
}

async function afterImport(statePath, what) {
  const refs = await coordinationRefs(statePath);
  if (refs.lease || refs.runs.length) {
    throw new Error(`${what} left ${[refs.lease ? 'refs/nyl/dev/lease' : '', ...refs.runs].filter(Boolean).join(', ')}`);
  }
}

function parseReport(r, what) {
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw new Error(`${what}: no JSON report\n${r.stderr.slice(-2000)}\n${r.stdout.slice(0, 2000)}`);
  }
}

/** The takeover: `nyl reconcile -e dev -o json` after the lease break. */
async function takeover(makeState) {
  return retryKilled('takeover-200 reconcile', async () => {
    const f = await deadRun(makeState);
    const r = await nyl(f.p, ['reconcile', '-e', 'dev', '-o', 'json', ...AUTHOR_ARGS]);
    const report = parseReport(r, 'takeover reconcile');
    const units = Object.entries(report.units ?? {});
    const imported = units.filter(([, u]) => u.result === 'imported' && !u.dispatched).length;
    const executed = units.filter(([, u]) => u.dispatched || u.result === 'executed').length;
    if (units.length !== UNITS || imported !== UNITS || executed > 0 || (report.details?.imported ?? []).length !== UNITS) {
      const results = [...new Set(units.map(([, u]) => u.result))].join(', ');
      throw new Error(`takeover: ${units.length} units, ${imported} imported, ${executed} dispatched (results: ${results})\n${r.stdout.slice(0, 2000)}`);
    }
    await afterImport(f.statePath, 'the takeover reconcile');
    return { ...r, killedMs: f.killed.ms, breakMs: f.breakMs };
  });
}

/** The alternative import path: `nyl recover -e dev --reason bench` after the lease break. */
async function recover(makeState) {
  return retryKilled('takeover-200 recover', async () => {
    const f = await deadRun(makeState);
    const r = await nyl(f.p, ['recover', '-e', 'dev', '--reason', 'bench', '-o', 'json', ...AUTHOR_ARGS]);
    const report = parseReport(r, 'recover');
    const imported = report.details?.imported ?? [];
    if (report.result !== 'done' || imported.length !== UNITS || (report.details?.recovered ?? []).length > 0) {
      throw new Error(`recover imported ${imported.length} of ${UNITS} units\n${r.stdout.slice(0, 2000)}`);
    }
    await afterImport(f.statePath, 'recover');
    return { ...r, killedMs: f.killed.ms, breakMs: f.breakMs };
  });
}

function figures(label, runs) {
  const wall = summary(runs.map((r) => r.ms));
  const stats = runs[runs.length - 1].stats;
  return {
    metrics: [
      { name: `${label} wall`, value: wall.median, unit: 'ms', cpu: cpuMedian(runs), spread: wall },
      { name: `${label} git processes`, value: stats?.processes, unit: 'count' },
      { name: `${label} pushes`, value: stats?.pushes, unit: 'count' },
      { name: `${label} fetches`, value: stats?.fetches, unit: 'count' },
    ],
    stats,
  };
}

export async function run() {
  const n = reps(3, 1);
  const metrics = [];
  const details = {};
  const all = [];

  const fileTakeover = await repeat(n, () => takeover());
  const fileRecover = await repeat(n, () => recover());
  all.push(...fileTakeover, ...fileRecover);
  for (const [label, runs, key] of [
    ['file:// takeover reconcile', fileTakeover, 'fileTakeover'],
    ['file:// recover', fileRecover, 'fileRecover'],
  ]) {
    const f = figures(label, runs);
    metrics.push(...f.metrics);
    details[key] = f.stats;
  }
  const notes = [
    `median of ${n} per path, each on a fresh fixture: ${UNITS} units, state init, reconcile --concurrency ${CONCURRENCY} killed at ${FAULT} (lease + 1 run ref of ${UNITS} receipt checkpoints checked), lease break`,
  ];

  if (process.env.BENCH_NO_DAEMON !== '1') {
    let daemon;
    try {
      const served = tempDir('tk200-daemon');
      daemon = await startGitDaemon(served);
      let seq = 0;
      const makeState = async () => {
        const name = `state-${seq++}.git`;
        const statePath = await bareRepo(join(served, name));
        return { stateUrl: daemon.url(name), statePath };
      };
      const daemonTakeover = await repeat(n, () => takeover(makeState));
      const daemonRecover = await repeat(n, () => recover(makeState));
      all.push(...daemonTakeover, ...daemonRecover);
      for (const [label, runs, key] of [
        ['git daemon takeover reconcile', daemonTakeover, 'daemonTakeover'],
        ['git daemon recover', daemonRecover, 'daemonRecover'],
      ]) {
        const f = figures(label, runs);
        metrics.push(...f.metrics);
        details[key] = f.stats;
      }
    } catch (error) {
      if (!/git daemon/.test(error.message)) throw error;
      log(`takeover-200: git daemon variant skipped: ${error.message.split('\n')[0]}`);
      notes.push(`git daemon variant skipped: ${error.message.split('\n')[0]}`);
    } finally {
      if (daemon) await daemon.stop();
    }
  }

  const killed = median(all.map((r) => r.killedMs));
  const broken = median(all.map((r) => r.breakMs));
  notes.push(
    `fixture steps (not measured figures): killed reconcile ${killed.toFixed(0)} ms, lease break ${broken.toFixed(0)} ms (medians over ${all.length} fixtures)`,
  );
  return { metrics, notes, details };
}
