// 11. state-move: `nyl state move` of an environment with 500 units and about 1,000 state commits
// between two repositories of one `git daemon` (issue 14). Each measurement gets a fresh fixture:
// a git daemon (receive-pack enabled, 127.0.0.1) serving old.git and new.git; a project whose
// Environment dev keeps its state in old.git, with 500 Command units in 10 waves of 50;
// `nyl state init`, one `nyl reconcile` (500 receipts); then 500 synthetic transition-like
// commits on each state branch, written by `git fast-import` in old.git itself (one stream per
// ref), each rewriting one unit file with a harmless change: on observed the receipt's
// `finishedAt`, on desired the `source` commit (the planner compares desired documents apart from
// their source). A second checkout with its own cache checks that `nyl status -e dev` still exits
// 0 with every unit current, so the measured project's cache and clone stay as the reconcile
// left them (the move fetches the 1,000 new commits itself). Then a commit of nyl.yaml points dev
// at new.git, and `nyl state move -e dev --from <old.git URL>` is measured, checked (result done;
// new.git's tips descend from old.git's marked tips; old.git's desired state.yaml says
// `status: moved`), followed by a `nyl reconcile -e dev` at the new location that must execute
// nothing (its wall is reported for information). BENCH_NO_DAEMON=1 skips the scenario.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AUTHOR,
  AUTHOR_ARGS,
  bareRepo,
  cpuMedian,
  git,
  makeProject,
  median,
  nowMs,
  nyl,
  repeat,
  reps,
  retryKilled,
  startGitDaemon,
  summary,
  tempDir,
} from '../lib.mjs';

export const id = 'state-move';
export const title = 'nyl state move of 500 units and ~1,000 state commits between two git daemon repositories';

const UNITS = 500;
const WAVES = 10;
/** Synthetic commits per state branch. */
const PER_REF = 500;
const DESIRED = 'refs/heads/nyl/dev/desired';
const OBSERVED = 'refs/heads/nyl/dev/observed';

function isoSeconds(seconds) {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Splits `git cat-file --batch` output into bodies, in request order. */
function batchBodies(buf) {
  const out = [];
  let at = 0;
  while (at < buf.length) {
    const nl = buf.indexOf(0x0a, at);
    const header = buf.subarray(at, nl).toString();
    const size = Number(header.split(' ')[2]);
    if (!Number.isFinite(size)) throw new Error(`cat-file --batch: ${header}`);
    out.push(buf.subarray(nl + 1, nl + 1 + size).toString());
    at = nl + 1 + size + 1;
  }
  return out;
}

/**
 * Appends `count` commits to `ref` of the bare repository at repo with one `git fast-import`
 * stream: commit j rewrites the unit file names[j % n] with rewrite(text, j), a child of the
 * previous commit. Returns the new tip.
 */
async function appendCommits(repo, ref, count, rewrite) {
  const tip = (await git(repo, ['rev-parse', '--verify', `${ref}^{commit}`])).stdout.trim();
  const ls = await git(repo, ['ls-tree', '--name-only', `${tip}:units`]);
  const names = ls.stdout.split('\n').filter(Boolean);
  if (names.length !== UNITS) throw new Error(`${ref} of ${repo} holds ${names.length} unit files, expected ${UNITS}`);
  const batch = await git(repo, ['cat-file', '--batch'], { input: names.map((n) => `${tip}:units/${n}\n`).join('') });
  const texts = batchBodies(Buffer.from(batch.stdout));
  const op = 'reconcile';
  const now = Math.floor(Date.now() / 1000);
  const chunks = [];
  const data = (text) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  for (let j = 0; j < count; j++) {
    const i = j % names.length;
    const unit = names[i].replace(/\.yaml$/, '');
    const next = rewrite(texts[i], j);
    if (next === texts[i]) throw new Error(`synthetic commit ${j} of ${ref} would not change units/${names[i]}`);
    texts[i] = next;
    const run = createHash('sha1').update(`run-${ref}-${j}`).digest('hex').slice(0, 32);
    const message = [
      `nyl: ${op} dev (${unit})`,
      '',
      `operation: ${op}`,
      `run: ${run}`,
      'units:',
      `  ${unit}: executed`,
      '',
      `Nyl-Operation: ${op}`,
      `Nyl-Run: ${run}`,
      `Nyl-Requested-By: ${AUTHOR}`,
      '',
    ].join('\n');
    chunks.push(
      `commit ${ref}\n`,
      `author ${AUTHOR} ${now} +0000\n`,
      `committer ${AUTHOR} ${now} +0000\n`,
      data(message),
      j === 0 ? `from ${tip}\n` : '',
      `M 100644 inline units/${names[i]}\n`,
      data(next),
    );
  }
  chunks.push('done\n');
  await git(repo, ['fast-import', '--quiet', '--done'], { input: chunks.join('') });
  return (await git(repo, ['rev-parse', ref])).stdout.trim();
}

/** Observed: the receipt's finishedAt moves (same format), a day before now plus j seconds. */
function observedRewrite(base) {
  return (text, j) => text.replace(/^( {2}finishedAt: ).*$/m, `$1${isoSeconds(base + j)}`);
}

/** Desired: the source commit the document was rendered from (ignored by the planner's comparison). */
function desiredRewrite(text, j) {
  return text.replace(/^source: [0-9a-f]{40}$/m, `source: ${createHash('sha1').update(`bench-source-${j}`).digest('hex')}`);
}

function parseJson(r, what) {
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw new Error(`${what}: no JSON report\n${r.stderr.slice(-2000)}\n${r.stdout.slice(0, 2000)}`);
  }
}

/** `nyl status -e dev -o json` in a second checkout with its own cache: every unit current. */
async function checkStatus(p) {
  const check = { ...p, src: join(p.base, 'check'), cache: join(p.base, 'check-cache') };
  await git(p.base, ['clone', '-q', p.src, check.src]);
  const r = await nyl(check, ['status', '-e', 'dev', '-o', 'json']);
  const report = parseJson(r, 'status');
  const units = Object.values(report.units ?? {});
  const current = units.filter((u) => u.state === 'current').length;
  if (units.length !== UNITS || current !== UNITS) {
    const states = [...new Set(units.map((u) => u.state))].join(', ');
    throw new Error(`status after the synthetic commits: ${current} of ${units.length} units current (${states})`);
  }
}

/** One fixture, the measured move, and its checks. */
async function once() {
  return retryKilled('state-move', async () => {
    const served = tempDir('move-daemon');
    const oldPath = await bareRepo(join(served, 'old.git'));
    const newPath = await bareRepo(join(served, 'new.git'));
    const daemon = await startGitDaemon(served);
    try {
      const oldUrl = daemon.url('old.git');
      const newUrl = daemon.url('new.git');
      const p = await makeProject({ units: UNITS, waves: WAVES, stateUrl: oldUrl, label: 'move' });
      await nyl(p, ['state', 'init', '-e', 'dev', ...AUTHOR_ARGS]);
      const first = await nyl(p, ['reconcile', '-e', 'dev', ...AUTHOR_ARGS]);

      const t0 = nowMs();
      const base = Math.floor(Date.now() / 1000) - 86400;
      await appendCommits(oldPath, OBSERVED, PER_REF, observedRewrite(base));
      await appendCommits(oldPath, DESIRED, PER_REF, desiredRewrite);
      const syntheticMs = nowMs() - t0;
      const oldCommits = Number((await git(oldPath, ['rev-list', '--count', DESIRED, OBSERVED])).stdout.trim());
      await checkStatus(p);

      // dev now lives in new.git.
      const yamlPath = join(p.src, 'nyl.yaml');
      const yaml = readFileSync(yamlPath, 'utf8');
      const moved = yaml.replace(JSON.stringify(oldUrl), JSON.stringify(newUrl));
      if (moved === yaml) throw new Error(`nyl.yaml does not name ${oldUrl}`);
      writeFileSync(yamlPath, moved);
      await git(p.src, ['commit', '-q', '-am', 'bench: dev state moves to new.git']);

      const move = await nyl(p, ['state', 'move', '-e', 'dev', '--from', oldUrl, ...AUTHOR_ARGS, '-o', 'json']);
      const report = parseJson(move, 'state move');
      if (report.result !== 'done') throw new Error(`state move: result ${report.result}, not done\n${move.stdout.slice(0, 2000)}`);

      // Checks: new tips descend from old.git's marked tips; old.git says moved.
      for (const ref of [DESIRED, OBSERVED]) {
        const oldTip = (await git(oldPath, ['rev-parse', ref])).stdout.trim();
        const newTip = (await git(newPath, ['rev-parse', '--verify', '-q', ref], { check: false })).stdout.trim();
        if (!newTip) throw new Error(`new.git has no ${ref} after the move`);
        const anc = await git(newPath, ['merge-base', '--is-ancestor', oldTip, newTip], { check: false });
        if (anc.code !== 0) throw new Error(`${ref}: old.git's tip ${oldTip} is not an ancestor of new.git's ${newTip} (exit ${anc.code})`);
      }
      const oldState = (await git(oldPath, ['show', `${DESIRED}:state.yaml`])).stdout;
      if (!/^status: moved$/m.test(oldState)) throw new Error(`old.git's desired state.yaml does not say status: moved\n${oldState}`);
      const count = async (...refs) => Number((await git(newPath, ['rev-list', '--count', ...refs])).stdout.trim());
      const commits = { both: await count(DESIRED, OBSERVED), desired: await count(DESIRED), observed: await count(OBSERVED), old: oldCommits };

      const after = await nyl(p, ['reconcile', '-e', 'dev', '-o', 'json', ...AUTHOR_ARGS]);
      const rec = parseJson(after, 'reconcile after the move');
      const units = Object.entries(rec.units ?? {});
      const notCurrent = units.filter(([, u]) => u.result !== 'current' || u.dispatched);
      if (units.length !== UNITS || notCurrent.length) {
        const results = [...new Set(units.map(([, u]) => u.result))].join(', ');
        throw new Error(
          `reconcile after the move: ${units.length} units, ${notCurrent.length} not current (results: ${results})\n${after.stdout.slice(0, 1500)}`,
        );
      }
      return { ...move, commits, after, firstMs: first.ms, syntheticMs };
    } finally {
      await daemon.stop();
    }
  });
}

export async function run() {
  if (process.env.BENCH_NO_DAEMON === '1') return { metrics: [], notes: ['skipped (BENCH_NO_DAEMON=1): the scenario runs over a git daemon'], details: {} };
  const n = reps(3, 1);
  const runs = await repeat(n, () => once());
  const wall = summary(runs.map((r) => r.ms));
  const afterWall = summary(runs.map((r) => r.after.ms));
  const stats = runs[runs.length - 1].stats;
  const commits = runs[runs.length - 1].commits;
  const byCommand = Object.entries(stats?.byCommand ?? {})
    .sort((a, b) => b[1] - a[1])
    .map(([c, k]) => `${c} ${k}`)
    .join(', ');
  const metrics = [
    { name: 'move wall', value: wall.median, unit: 'ms', cpu: cpuMedian(runs), spread: wall },
    { name: 'move git processes', value: stats?.processes, unit: 'count' },
    { name: 'move pushes', value: stats?.pushes, unit: 'count' },
    { name: 'move fetches', value: stats?.fetches, unit: 'count' },
    { name: 'commits of both refs in new.git', value: commits.both, unit: 'count' },
    { name: 'first reconcile after the move wall', value: afterWall.median, unit: 'ms', cpu: cpuMedian(runs.map((r) => r.after)), spread: afterWall },
  ];
  const notes = [
    `median of ${n}, each on a fresh fixture: git daemon with old.git and new.git, ${UNITS} units in ${WAVES} waves, state init, reconcile, ${PER_REF} synthetic commits per state branch (fast-import); target: none (information)`,
    `commits in new.git: desired ${commits.desired}, observed ${commits.observed}, both ${commits.both} (old.git before the move: ${commits.old})`,
    `git processes of the move by command: ${byCommand}`,
    `reconcile after the move executed nothing: git processes ${runs[runs.length - 1].after.stats?.processes}, pushes ${runs[runs.length - 1].after.stats?.pushes}, fetches ${runs[runs.length - 1].after.stats?.fetches}`,
    `fixture steps (not measured figures): first reconcile ${median(runs.map((r) => r.firstMs)).toFixed(0)} ms, synthetic commits ${median(runs.map((r) => r.syntheticMs)).toFixed(0)} ms`,
  ];
  const details = {
    move: stats,
    after: runs[runs.length - 1].after.stats,
    commits,
    runs: runs.map((r) => ({ ms: r.ms, cpuMs: r.cpuMs, stats: r.stats, afterMs: r.after.ms, commits: r.commits })),
  };
  return { metrics, notes, details };
}
