// Helpers for the `nyl hold` / `nyl resume` end-to-end tests: running hold and resume,
// reading the desired and observed documents of a unit, the commits of the desired branch with
// their YAML bodies, the coordination refs (lease, runs, signals), the status table, and unit
// scripts that wait for a gate file so that a test decides when a unit finishes.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { gitResult, git } from './git-fixtures.mjs';
import { nyl, nylAsync } from './cli.mjs';
import { withoutFormat, workingObserved } from './unit-docs.mjs';

export const DESIRED = 'refs/heads/nyl/dev/desired';
export const OBSERVED = 'refs/heads/nyl/dev/observed';
export const LEASE = 'refs/nyl/dev/lease';
export const RUNS = 'refs/nyl/dev/runs/';
export const SIGNALS = 'refs/nyl/dev/signals/';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `nyl hold -e dev --unit U --reason R ...extra`. */
export function hold(project, unit, { reason = 'incident 4711', args = [], env = {} } = {}) {
  return nyl(project, ['hold', '-e', 'dev', '--unit', unit, '--reason', reason, ...args], { env });
}

/** `nyl hold` started in the background: { child, done }. */
export function holdAsync(project, unit, { reason = 'incident 4711', args = [], env = {} } = {}) {
  return nylAsync(project, ['hold', '-e', 'dev', '--unit', unit, '--reason', reason, ...args], { env });
}

/** `nyl resume -e dev --unit U --reason R ...extra`. */
export function resume(project, unit, { reason = 'incident 4711 resolved', args = [], env = {} } = {}) {
  return nyl(project, ['resume', '-e', 'dev', '--unit', unit, '--reason', reason, ...args], { env });
}

/** `nyl status -e dev ...args`. */
export function status(project, args = []) {
  return nyl(project, ['status', '-e', 'dev', ...args]);
}

/** Pause-at-a-fault-point environment for a nyl process. */
export function pauseAt(points, marker) {
  return { NYL_FAULT_AT: [].concat(points).join(','), NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: marker };
}

/** The parsed YAML of rev:file in repo, or undefined when it does not exist. */
export function readYaml(repo, rev, file) {
  const r = gitResult(repo, 'show', `${rev}:${file}`);
  if (r.status !== 0) return undefined;
  return YAML.parse(r.stdout);
}

export function desiredDoc(repo, unit, rev = DESIRED) {
  return withoutFormat(readYaml(repo, rev, `units/${unit}.yaml`));
}

/** A unit's observed document as Nyl works with it: a receipt's reference to its desired document (form 2) read back from the blob. */
export function observedDoc(repo, unit, rev = OBSERVED) {
  return workingObserved(readYaml(repo, rev, `units/${unit}.yaml`), (blob) => gitResult(repo, 'cat-file', 'blob', blob).stdout);
}

/** The tip of a ref in repo, or undefined. */
export function tip(repo, ref) {
  const r = gitResult(repo, 'rev-parse', '--verify', '-q', `${ref}^{commit}`);
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** { refname: oid } of the refs under prefix. */
export function refsUnder(repo, prefix) {
  const out = git(repo, 'for-each-ref', '--format=%(refname) %(objectname)', prefix);
  return Object.fromEntries(
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' ')),
  );
}

export function signalRefs(repo) {
  return Object.keys(refsUnder(repo, SIGNALS));
}

/** Every ref under refs/nyl/dev/ (lease, runs, signals, evidence). */
export function coordinationRefs(repo) {
  return Object.keys(refsUnder(repo, 'refs/nyl/dev/'));
}

/**
 * Splits a state commit message into { headline, body (parsed YAML), trailers: {key: [values]} }.
 */
export function parseMessage(text) {
  const lines = text.replace(/\n+$/, '').split('\n');
  const headline = lines[0];
  let end = lines.length;
  const trailers = {};
  while (end > 1 && /^[A-Z][A-Za-z-]+: /.test(lines[end - 1])) end--;
  for (const l of lines.slice(end)) {
    const i = l.indexOf(': ');
    (trailers[l.slice(0, i)] ??= []).push(l.slice(i + 2));
  }
  const bodyText = lines.slice(1, end).join('\n').trim();
  let body = {};
  if (bodyText) body = YAML.parse(bodyText) ?? {};
  return { headline, body, trailers, text };
}

/** The commits of ref in repo, newest first: [{ oid, headline, body, trailers, text }]. */
export function commits(repo, ref = DESIRED, range) {
  if (!tip(repo, ref)) return [];
  const out = git(repo, 'log', '--format=%H%x00%B%x1e', range ?? ref);
  return out
    .split('\x1e')
    .map((s) => s.replace(/^\n/, ''))
    .filter((s) => s.includes('\x00'))
    .map((s) => {
      const [oid, msg] = s.split('\x00');
      return { oid, ...parseMessage(msg) };
    });
}

/** The commit message of rev parsed. */
export function commitAt(repo, rev) {
  return { oid: git(repo, 'rev-parse', rev), ...parseMessage(git(repo, 'log', '-1', '--format=%B', rev)) };
}

/**
 * The commits of the desired branch that record a hold of unit: a `nyl: hold` commit whose units
 * list it with action hold, or any transition that lists it under `held`.
 */
export function holdCommitsOf(repo, unit) {
  return commits(repo, DESIRED).filter((c) => {
    const units = c.body?.units ?? {};
    const viaHold = c.body?.operation === 'hold' && units[unit]?.action === 'hold';
    const listed = Array.isArray(c.body?.held) && c.body.held.includes(unit);
    return viaHold || listed;
  });
}

/**
 * The status table: { rows: { unit: [unit, kind, state, receipt, lastRun, detail?] } }, columns
 * split on runs of two or more spaces (LAST RUN and DETAIL keep their single spaces).
 */
export function statusTable(stdout) {
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => /^UNIT\s+KIND\s+STATE\s+RECEIPT/.test(l));
  const rows = {};
  const raw = {};
  if (start === -1) return { rows, raw };
  for (let i = start + 1; i < lines.length && lines[i].trim() !== ''; i++) {
    const cells = lines[i].trimEnd().split(/ {2,}/);
    rows[cells[0]] = cells;
    raw[cells[0]] = lines[i];
  }
  return { rows, raw };
}

/** Lines of a log file ([] when missing). */
export function logLines(file) {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/**
 * A `script:` value (YAML single-quoted) that appends `start NAME` to log, waits while gate does
 * not exist (at most ~30 s, so a broken test cannot hang), then appends `end NAME`.
 */
export function gatedScript(log, gate, name = '$NYL_UNIT') {
  return `script: 'echo start ${name} >> ${log}; n=0; while [ ! -e ${gate} ] && [ $n -lt 1500 ]; do sleep 0.02; n=$((n+1)); done; echo end ${name} >> ${log}'`;
}

/** A `script:` that appends start/end lines to log around a short sleep. */
export function loggedScript(log, seconds = 0, name = '$NYL_UNIT') {
  return `script: 'echo start ${name} >> ${log};${seconds ? ` sleep ${seconds};` : ''} echo end ${name} >> ${log}'`;
}

/** A script that writes outputs {v: value} and logs its name. */
export function outputScript(log, value, name = '$NYL_UNIT') {
  return `script: 'echo ${name} ${value} >> ${log}; printf "{\\"v\\":\\"${value}\\"}" > $NYL_OUTPUTS'`;
}

/** Polls fn until it returns a truthy value (returned), up to timeoutMs. */
export async function waitUntil(fn, timeoutMs = 15000, what = 'condition') {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(15);
  }
}

/** Waits until the log has a line equal to `line`. */
export function waitForLine(file, line, timeoutMs = 15000) {
  return waitUntil(() => logLines(file).includes(line), timeoutMs, `"${line}" in ${file}`);
}

/** Notes, warnings and errors of a JSON report, by code. */
export function allCodes(r) {
  const j = r.json;
  if (!j) return [...`${r.stdout}\n${r.stderr}`.matchAll(/^\s*(?:error|warning|note) (NYL-[A-Z0-9-]+)/gm)].map((m) => m[1]);
  return [...(j.errors ?? []), ...(j.warnings ?? []), ...(j.notes ?? [])].map((d) => d.code);
}

export function describe(r) {
  return `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}\nstdout: ${String(r.stdout).slice(0, 4000)}\nstderr: ${String(r.stderr).slice(-4000)}`;
}

/** The desired document without lifecycle and hold (what a hold keeps of the decision). */
export function decision(doc) {
  if (!doc) return doc;
  const { lifecycle: _l, hold: _h, ...rest } = doc;
  return rest;
}

/** Creates the gate file (a unit waiting on it finishes). */
export function openGate(gate) {
  fs.mkdirSync(path.dirname(gate), { recursive: true });
  fs.writeFileSync(gate, '');
}
