// Helpers for the reconcile end-to-end tests: a project with Command units and a file:// state
// repository, a log file the units append to (what ran, in what order, how many times), source
// edits as new commits, and readers for refs, commits and the text table.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { git, makeBareRepo, makeProject, tempDir } from './git-fixtures.mjs';
import { command, environment, nyl, nylYaml } from './cli.mjs';

/** A new bare state repository: { bare, url } with url a file:// URL. */
export function stateRepo() {
  const bare = makeBareRepo();
  return { bare, url: pathToFileURL(bare).href };
}

/** A fresh scratch directory and the path of a log file in it (not created yet). */
export function scratch() {
  const dir = tempDir('nyl-scratch-');
  return { dir, log: path.join(dir, 'log') };
}

/** A `script:` line that appends `entry` to the log, then runs `then` (shell text, optional). */
export function logs(log, entry, then = '') {
  return `script: 'echo ${entry} >> ${log}${then ? `; ${then}` : ''}'`;
}

/** nyl.yaml text: the environment dev with state in `url`, then the given unit documents. */
export function projectYaml(url, units, envExtra = '') {
  const envSpec = `state:\n  repository: {repoURL: "${url}"}${envExtra ? `\n${envExtra}` : ''}`;
  return nylYaml(environment('dev', envSpec), ...Object.entries(units).map(([name, spec]) => command(name, spec)));
}

/**
 * Creates a project whose environment dev keeps state in a new file:// bare repository (or `url`)
 * with Command units `units` ({name: specLines}, or a function (log) -> that map), and runs
 * `nyl state init -e dev` unless init is false.
 * envExtra: more lines of the Environment's spec. Returns { project, bare, url, dir, log, envExtra }.
 */
export function setup(units, { url, bare, init = true, envExtra = '' } = {}) {
  const s = scratch();
  let state = { bare, url };
  if (!url) state = stateRepo();
  const map = typeof units === 'function' ? units(s.log) : units;
  const project = makeProject({ 'nyl.yaml': projectYaml(state.url, map, envExtra) });
  if (init) {
    const r = nyl(project, ['state', 'init', '-e', 'dev']);
    if (r.code !== 0) throw new Error(`state init failed (${r.code}): ${r.stdout}${r.stderr}`);
  }
  return { project, ...state, ...s, envExtra };
}

/** Rewrites nyl.yaml of a setup() project with these units and commits it; returns the new HEAD. */
export function changeUnits(ctx, units, message = 'change units') {
  const map = typeof units === 'function' ? units(ctx.log) : units;
  return commitFiles(ctx.project, { 'nyl.yaml': projectYaml(ctx.url, map, ctx.envExtra) }, message);
}

/** Writes files (relative paths) into the checkout and commits them; returns the new HEAD. */
export function commitFiles(project, files, message = 'change') {
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(project, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
  git(project, 'add', '-A');
  git(project, 'commit', '-q', '-m', message);
  return git(project, 'rev-parse', 'HEAD');
}

/** `nyl reconcile -e dev ...args` in the project. */
export function reconcile(project, args = [], opts = {}) {
  return nyl(project, ['reconcile', '-e', 'dev', ...args], opts);
}

/** The lines of the log file ([] when no unit wrote one), then empties it when clear is set. */
export function logLines(log, { clear = false } = {}) {
  const lines = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
  if (clear) fs.rmSync(log, { force: true });
  return lines;
}

/** Number of commits reachable from ref (0 when it does not exist). */
export function commitCount(repo, ref) {
  try {
    return Number(git(repo, 'rev-list', '--count', ref, '--'));
  } catch {
    return 0;
  }
}

/** The two state branches' commit counts in repo: { desired, observed }. */
export function stateCounts(repo) {
  return { desired: commitCount(repo, 'refs/heads/nyl/dev/desired'), observed: commitCount(repo, 'refs/heads/nyl/dev/observed') };
}

/** { refname: oid } of every ref under prefix in repo. */
export function refsUnder(repo, prefix = 'refs/') {
  const out = git(repo, 'for-each-ref', '--format=%(refname) %(objectname)', prefix);
  return Object.fromEntries(
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' ')),
  );
}

/** The full message of a commit. */
export function message(repo, rev) {
  return git(repo, 'log', '-1', '--format=%B', rev);
}

/** The value(s) of a trailer of a commit as Git's trailer parser sees them. */
export function trailer(repo, rev, key) {
  return git(repo, 'log', '-1', `--format=%(trailers:key=${key},valueonly,unfold)`, rev).split('\n').filter(Boolean);
}

/** { result } per unit of a JSON ReconcileReport: { name: result }. */
export function results(report) {
  return Object.fromEntries(Object.entries(report.units).map(([n, u]) => [n, u.result]));
}

/**
 * The table of a text reconcile report: { header: [..], rows: [[unit, kind, result, detail]] },
 * columns split on runs of two or more spaces (the detail keeps its single spaces).
 */
export function table(stdout) {
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => /^UNIT\s+KIND\s+RESULT/.test(l));
  if (start === -1) return { header: [], rows: [], lines: [] };
  const body = [];
  for (let i = start + 1; i < lines.length && lines[i].trim() !== ''; i++) body.push(lines[i]);
  const split = (l) => {
    const cells = l.split(/ {2,}/);
    if (cells.length > 4) return [...cells.slice(0, 3), cells.slice(3).join('  ')];
    return cells;
  };
  return { header: split(lines[start]), rows: body.map(split), lines: [lines[start], ...body] };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Waits until the log has at least n lines (up to timeoutMs). */
export async function waitForLog(log, n = 1, timeoutMs = 15000) {
  const until = Date.now() + timeoutMs;
  while (logLines(log).length < n) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${n} line(s) in ${log}`);
    await sleep(20);
  }
}
