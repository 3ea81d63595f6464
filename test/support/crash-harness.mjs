// Crash-safety harness: a project of Command units that count their executions, a state
// repository whose refs are recorded after every command, ways to kill `nyl` at a protocol step
// (fault points, while a unit runs, at a random moment), the operator's two recovery paths, and
// the invariants every crash must keep.
//
// Invariants checked by assertCrashInvariants():
// - no receipt lost: a receipt checkpoint of a dead run is imported (observed receipt.run is that run);
// - no unit silently forgotten: every unit is current, uncertain/failed with a condition naming a
//   dead run, or waits (transitively) for such a unit;
// - no state ref force-moved: every recorded value of the desired/observed ref is an ancestor of
//   its final value;
// - no unit executed twice unless it was uncertain in between: between two executions (log lines)
//   the state recorded the first one's run as uncertain/failed, or the re-executing run's commit
//   lists the unit as recovered;
// - a readable history: every commit on the state branches has a `nyl: ` headline and a
//   `Nyl-Operation:` trailer; each lease break is recorded by exactly one operation;
// - no lease or run ref left; evidence refs only for units still uncertain.
//
// Every `nyl` started here runs in its own process group. A crash is SIGKILL of nyl alone, after
// which the harness waits for the git processes of that group (a push in flight finishes or fails
// on its own, as on a remote), so that no late push races the recovery. Tools run detached by nyl
// itself: a crash gives each of them SIGTERM at once and SIGKILL after its unit's
// terminationGracePeriod (30 s unless the unit says otherwise); the units here end on SIGTERM, and
// a tool a test keeps running (a gated one) is killed through the pid it writes.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import YAML from 'yaml';
import { addRecoveryEvidence, commitBody } from './commit-evidence.mjs';
import { procStat } from './proc.mjs';

export { commitBody, trailer } from './commit-evidence.mjs';
import { NYL, checkJsonOutput, cliEnv, command, environment, nylYaml, waitForFile } from './cli.mjs';
import { git, hermeticEnv, installProtectHook, makeBareRepo, makeProject, tempDir, trackProcessGroup } from './git-fixtures.mjs';
import { startGitHttp } from './git-http.mjs';

/** The states of `nyl status` that may list waits: a unit that waits for dependencies, or is blocked by them. */
const WAITING_STATES = ['pending', 'outdated', 'awaiting-dependencies', 'failed', 'uncertain', 'blocked'];

export const ENV = 'dev';
export const DESIRED = 'refs/heads/nyl/dev/desired';
export const OBSERVED = 'refs/heads/nyl/dev/observed';
export const LEASE = 'refs/nyl/dev/lease';
export const RUNS = 'refs/nyl/dev/runs/';
export const EVIDENCE = 'refs/nyl/dev/evidence/';

/** Six Command units in three waves; converge and manual (the Command default) mixed. */
export const UNITS = [
  { name: 'base', recovery: 'converge', dependsOn: [], wave: 1 },
  { name: 'config', dependsOn: [], wave: 1 },
  { name: 'db', recovery: 'converge', dependsOn: ['base'], wave: 2 },
  { name: 'migrate', dependsOn: ['config'], wave: 2 },
  { name: 'app', recovery: 'converge', dependsOn: ['db', 'migrate'], wave: 3 },
  { name: 'report', dependsOn: ['db'], wave: 3 },
];

/**
 * Bugs found by this suite and still open. Each is the `todo` of a subtest that asserts the
 * correct behaviour, so that the suite stays green until it is fixed. (Fixed ones are plain
 * assertions now.)
 */
export const BUG_START_AFTER_DEADLINE =
  'bug: a holder whose renewals fail because the state repository is unreachable keeps starting units after its lease deadline, when an importer may already have taken over';
export const BUG_EVIDENCE_ACCEPTABLE_STALE =
  'bug: the evidence listing of `recover --unit` marks a receipt acceptable by the desired document in state while --accept refuses it with NYL-RECOVER-KEY-MISMATCH because the source changed';

/**
 * Fault points of `nyl reconcile`, in protocol order; "while-unit-runs" is the harness's own.
 * Checkpoints are pushed by group commit (as soon as a unit ends), so a checkpoint point is
 * addressed by the unit whose push it is, while the wave's other unit still runs:
 * - before-checkpoint-push: the wave's first unit ended, its checkpoint not pushed;
 * - after-checkpoint-push: the wave's first unit's checkpoint landed, its sibling still runs.
 * (A wave's last checkpoints may ride on the next wave's started markers; for "the first wave
 * checkpointed, nothing else started", crash a run of `units: [...]` before its transition.)
 */
export const RECONCILE_POINTS = [
  'lease-acquired',
  'after-started-push',
  'before-checkpoint-push',
  'after-checkpoint-push',
  'before-transition-push',
  'after-transition-push',
  'while-unit-runs',
];

/** Points reached once per wave: the harness can crash at the n-th wave by pausing through the others. */
const PER_WAVE = new Set(['after-started-push']);

/** Points of one unit's checkpoint push: the harness holds the wave's other unit running. */
const PER_PUSH = new Set(['before-checkpoint-push', 'after-checkpoint-push']);

/**
 * The script of every unit. It appends its run to logs/UNIT.log (one line per execution), and
 * with CRASH_SLOW_UNIT naming it, writes its pid, touches CRASH_SLOW_DIR/running and waits while
 * CRASH_SLOW_DIR/gate exists. CRASH_UNIT_SLEEP makes every unit take that long. Behaviour comes
 * from the environment so that the execution key does not change between invocations.
 */
export function unitScript(logDir) {
  return [
    `echo "$NYL_RUN" >> "${logDir}/$NYL_UNIT.log"`,
    'if [ "${CRASH_SLOW_UNIT:-}" = "$NYL_UNIT" ]; then',
    '  echo $$ > "$CRASH_SLOW_DIR/pid"',
    '  touch "$CRASH_SLOW_DIR/running"',
    '  while [ -e "$CRASH_SLOW_DIR/gate" ]; do sleep 0.05; done',
    'fi',
    'if [ -n "${CRASH_UNIT_SLEEP:-}" ]; then sleep "$CRASH_UNIT_SLEEP"; fi',
    'printf \'{"unit":"%s"}\' "$NYL_UNIT" > "$NYL_OUTPUTS"',
  ].join('\n');
}

function unitYaml(u, script) {
  const lines = [];
  if (u.recovery) lines.push(`recovery: ${u.recovery}`);
  if (u.dependsOn?.length) lines.push(`dependsOn: [${u.dependsOn.join(', ')}]`);
  if (u.timeout) lines.push(`timeout: ${u.timeout}`);
  if (u.terminationGracePeriod) lines.push(`terminationGracePeriod: ${u.terminationGracePeriod}`);
  lines.push('script: |');
  for (const l of (u.script ?? script).split('\n')) lines.push(`  ${l}`);
  return command(u.name, lines.join('\n'));
}

export function projectYaml({ url, publishURL, lease, units, logDir }) {
  const envSpec = [`state:\n  repository: {repoURL: "${url}"${publishURL ? `, publishURL: "${publishURL}"` : ''}}`];
  if (lease) envSpec.push(`lease: {duration: ${lease}}`);
  const script = unitScript(logDir);
  return nylYaml(
    environment(ENV, envSpec.join('\n')),
    ...units.map((u) => unitYaml({ ...u, script: typeof u.script === 'function' ? u.script(logDir) : u.script }, script)),
  );
}

/**
 * A state repository reachable over file:// (transport 'file'), or served by `server` ({base,
 * url(repo)}: a git daemon for 'daemon', a smart-HTTP server for 'http' and 'http-faults').
 * A served one is protected like a Git host's: deletions and non-fast-forward updates of state
 * branches are refused.
 */
export function stateRepo(transport, server, name = 'state', publishServer = undefined) {
  if (transport === 'file') {
    const bare = makeBareRepo();
    return { bare, url: pathToFileURL(bare).href };
  }
  const base = server.base;
  const repo = `${name}-${path.basename(tempDir('nyl-daemon-repo-'))}.git`;
  const bare = makeBareRepo(path.join(base, repo));
  installProtectHook(bare);
  return { bare, url: server.url(repo), ...(publishServer ? { publishURL: publishServer.url(repo) } : {}) };
}

/**
 * The faults of the 'http-faults' transport: a push (receive-pack) is answered 503 with
 * probability push503, a fetch or ls-remote (upload-pack) with fetch503, at positions drawn from
 * the scenario's seed, never more than maxInARow requests in a row and then at least `cooldown`
 * answered: transient faults, which the retries (0.5, 1, 2, 4 s for writes; 0.5, 1, 2 s for
 * fetches) must ride out.
 */
export const HTTP_FAULTS = { push503: 0.3, fetch503: 0.1, maxInARow: 2, cooldown: 3 };

/**
 * Starts a smart-HTTP server of its own over a new base directory, with `faults` (see
 * git-http.mjs withFaults) when given. Returns {base, url(repo), port, stop(), counts()}: counts()
 * is what the server injected ({requests, injected, silenced, inFlight}), or undefined without
 * faults.
 */
export async function startHttpServer(faults) {
  const base = tempDir('nyl-crash-http-');
  const server = await startGitHttp(base, faults ? { faults } : {});
  const counts = async () => (faults ? (await fetch(`http://127.0.0.1:${server.port}/__faults`)).json() : undefined);
  return { base, url: server.url, port: server.port, stop: server.stop, counts };
}

/** Kills a process group (or process) by pid, ignoring one that is gone. */
export function killPid(pid, signal = 'SIGKILL') {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* gone */
    }
  }
}

function parseResult(code, signal, stdout, stderr) {
  const out = { code, signal, stdout, stderr };
  try {
    out.json = JSON.parse(stdout);
  } catch {
    out.json = undefined;
  }
  return out;
}

export function allCodes(r) {
  if (!r.json) return [...`${r.stdout}\n${r.stderr}`.matchAll(/^(?:error|warning|note) (NYL-[A-Z0-9-]+)/gm)].map((m) => m[1]);
  return [...(r.json.errors ?? []), ...(r.json.warnings ?? []), ...(r.json.notes ?? [])].map((d) => d.code);
}

export function errorCodes(r) {
  return (r.json?.errors ?? []).map((d) => d.code);
}

export function describeResult(r) {
  return `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}\nstdout: ${r.stdout?.slice(0, 3000)}\nstderr: ${r.stderr?.slice(-3000)}`;
}

/**
 * One project, one state repository and the record of every command run against them.
 */
export class Scenario {
  /**
   * transport 'file', 'daemon' (with daemon {base, url(repo)}), or 'http' / 'http-faults' (with
   * server {base, url(repo)}, or use Scenario.open(), which starts one); publishDaemon: a second
   * server of the same base, used as the state repository's publishURL (pushes go there); env:
   * the environment of every nyl it starts (NYL_GIT_TIMEOUT, say).
   */
  constructor({ transport = 'file', daemon, server = daemon, publishDaemon, units = UNITS, lease, env = {} } = {}) {
    this.dir = tempDir('nyl-crash-');
    this.logDir = path.join(this.dir, 'logs');
    fs.mkdirSync(this.logDir);
    this.tmp = path.join(this.dir, 'tmp');
    fs.mkdirSync(this.tmp);
    /** Tool processes (their pids) to kill at cleanup: tools run detached from nyl. */
    this.toolPids = [];
    const { bare, url, publishURL } = stateRepo(transport, server, 'state', publishDaemon);
    this.transport = transport;
    /** Environment of every nyl this scenario starts (a command's own env comes on top). */
    this.env = env;
    this.bare = bare;
    this.url = url;
    this.units = units;
    this.unitNames = units.map((u) => u.name);
    this.project = makeProject({ 'nyl.yaml': projectYaml({ url, publishURL, lease, units, logDir: this.logDir }) });
    /** [{label, refs}] after every command. */
    this.history = [];
    /** Dead runs: run id -> {units: Map name -> run unit doc} as the crash left them. */
    this.deadRuns = new Map();
    /** Lease breaks that broke something: [{run}] */
    this.breaks = [];
    this.live = new Set();
    this.record('created');
  }

  /**
   * A scenario whose 'http' or 'http-faults' transport has a server of its own, stopped by
   * cleanup(): its faults (HTTP_FAULTS for 'http-faults', with `seed`, then `faults`) hit this
   * scenario's requests only, so a seed replays the same faults at the same request positions.
   * Other transports: as `new Scenario(opts)`.
   */
  static async open({ transport = 'file', seed = 1, faults, ...opts } = {}) {
    if (!transport.startsWith('http') || opts.server || opts.daemon) return new Scenario({ transport, ...opts });
    const spec = transport === 'http-faults' ? { ...HTTP_FAULTS, seed, ...faults } : faults && { seed, ...faults };
    const server = await startHttpServer(spec);
    try {
      const sc = new Scenario({ transport, server, ...opts });
      sc.ownServer = server;
      sc.seed = spec?.seed;
      return sc;
    } catch (error) {
      await server.stop();
      throw error;
    }
  }

  /** What this scenario's own server injected: {requests, injected, silenced, inFlight}, or undefined. */
  async faultCounts() {
    return this.ownServer?.counts();
  }

  /** "TRANSPORT seed S: I of R requests answered 503 (P pushes, F fetches)[, N left unanswered]", for assertion messages; '' without faults. */
  async faultNote() {
    const c = await this.faultCounts().catch(() => undefined);
    if (!c) return '';
    return `${this.transport} seed ${this.seed}: ${c.injected} of ${c.requests} requests answered 503 (${c.pushes503} pushes, ${c.fetches503} fetches)${c.silenced ? `, ${c.silenced} left unanswered` : ''}`;
  }

  /**
   * Runs fn; an error it throws says the transport's seed and the faults injected so far, so
   * that a failure over 'http-faults' can be replayed.
   */
  async noting(fn) {
    try {
      return await fn();
    } catch (error) {
      const note = await this.faultNote();
      if (note && error instanceof Error) {
        error.message = `${error.message}\n[${note}]`;
        error.stack = `[${note}]\n${error.stack}`;
      }
      throw error;
    }
  }

  /**
   * Waits until this scenario's own server has no request in flight (up to timeoutMs): a push of
   * a killed nyl that its server still handles must not land while the recovery runs.
   */
  async settle(timeoutMs = 15000) {
    if (!this.ownServer?.counts || !(await this.faultCounts())) return;
    for (const until = Date.now() + timeoutMs; Date.now() < until; await sleep(20)) {
      const c = await this.faultCounts();
      if (c.inFlight === 0) return;
    }
  }

  /** The refs of the state repository: {refname: oid}. */
  refs() {
    const out = git(this.bare, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/');
    return Object.fromEntries(
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' ')),
    );
  }

  record(label) {
    const refs = this.refs();
    this.history.push({ label, refs });
    return refs;
  }

  stateRefs() {
    const r = this.refs();
    return { desired: r[DESIRED], observed: r[OBSERVED] };
  }

  runRefs(refs = this.refs()) {
    return Object.keys(refs)
      .filter((r) => r.startsWith(RUNS))
      .map((r) => r.slice(RUNS.length))
      .sort();
  }

  /**
   * Runs `nyl args...` in the project and waits (asynchronously, so that tests of a file can run
   * concurrently); records the refs afterwards.
   */
  async nyl(args, { env = {}, label, validateJson } = {}) {
    const r = await this.start(args, { env, validateJson }).done;
    this.record(label ?? args.join(' '));
    return r;
  }

  /** Like nyl(), asserting the exit code (one or a list). */
  async ok(args, expected = 0, opts = {}) {
    const r = await this.nyl(args, opts);
    const allowed = Array.isArray(expected) ? expected : [expected];
    assert.ok(allowed.includes(r.code), `nyl ${args.join(' ')}: expected exit ${allowed.join('|')}, got ${describeResult(r)}`);
    return r;
  }

  /**
   * Starts `nyl args...` in its own process group without waiting. Its TMPDIR is the scenario's,
   * so that the scratch directories of a killed run are cleaned up with the scenario.
   * Returns {child, pid, done, exited, kill(signal) (the whole group), signal(sig) (nyl alone), crash()}.
   * done rejects when a -o json run that finished broke the contract of JSON output (cli.mjs,
   * checkJsonOutput); validateJson: false opts out.
   */
  start(args, { env = {}, validateJson = true } = {}) {
    const runEnv = { TMPDIR: this.tmp, ...this.env, ...env };
    const child = spawn(process.execPath, [NYL, ...args], { cwd: this.project, env: cliEnv(runEnv), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    trackProcessGroup(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    const done = new Promise((resolve, reject) =>
      child.on('close', (code, signal) => {
        try {
          resolve(checkJsonOutput(args, parseResult(code, signal, stdout, stderr), { env: runEnv, validateJson }));
        } catch (error) {
          reject(error);
        }
      }),
    );
    const handle = {
      child,
      pid: child.pid,
      done,
      exited: false,
      kill: (signal = 'SIGKILL') => killPid(child.pid, signal),
      signal: (signal) => child.kill(signal),
      /**
       * SIGKILL of nyl alone, as when its runner dies: git processes it started (a push in flight)
       * finish on their own, as a remote's receive-pack would; resolves once they are gone, so that
       * no late push races the recovery.
       */
      crash: async () => {
        child.kill('SIGKILL');
        const result = await done;
        await groupGone(child.pid);
        await this.settle();
        return result;
      },
    };
    this.live.add(handle);
    const exited = () => {
      handle.exited = true;
      this.live.delete(handle);
    };
    // Both ways: a rejected done (a broken JSON contract) is the test's to see, through done.
    done.then(exited, exited);
    return handle;
  }

  /** Executions per unit: the runs that started it, in order. */
  executions() {
    const out = new Map();
    for (const name of this.unitNames) {
      const file = path.join(this.logDir, `${name}.log`);
      out.set(name, fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
    }
    return out;
  }

  executionCounts() {
    return Object.fromEntries([...this.executions()].map(([n, runs]) => [n, runs.length]));
  }

  /** Reads a run (or evidence) commit: {run: run.yaml, units: Map name -> doc}. */
  readRunCommit(oid) {
    const run = YAML.parse(gitShow(this.bare, `${oid}:run.yaml`) ?? 'null');
    const units = new Map();
    // units/BB/NAME.yaml: the records are spread over directories.
    const listed = spawnSync('git', ['ls-tree', '-r', '--name-only', `${oid}:units`], { cwd: this.bare, encoding: 'utf8', env: hermeticEnv() });
    const names = listed.status === 0 ? listed.stdout.split('\n').filter(Boolean) : [];
    const docs = catFiles(
      this.bare,
      names.map((n) => `${oid}:units/${n}`),
    );
    names.forEach((n, i) => units.set(path.basename(n, '.yaml'), YAML.parse(docs[i])));
    return { run, units };
  }

  /** Remembers the run refs that exist now and were not known as dead before: the crash's runs. */
  noteDeadRuns() {
    const found = [];
    for (const run of this.runRefs()) {
      if (this.deadRuns.has(run)) continue;
      const oid = this.refs()[`${RUNS}${run}`];
      this.deadRuns.set(run, this.readRunCommit(oid));
      found.push(run);
    }
    return found;
  }

  leaseDoc() {
    const oid = this.refs()[LEASE];
    return oid ? YAML.parse(gitShow(this.bare, `${oid}:lease.yaml`)) : undefined;
  }

  observedDoc(unit, rev = OBSERVED) {
    const text = gitShow(this.bare, `${rev}:units/${unit}.yaml`);
    return text === undefined ? undefined : YAML.parse(text);
  }

  /** `nyl lease break`; records a break when it broke something. */
  async leaseBreak(reason = 'the runner was killed') {
    const r = await this.ok(['lease', 'break', '-e', ENV, '--reason', reason, '-o', 'json']);
    if (r.json?.result === 'done') this.breaks.push({ run: r.json.details.run });
    return r;
  }

  /** Kills every nyl this scenario started and still runs, and the tools of its crashes; stops its own server. */
  async cleanup() {
    for (const h of this.live) h.kill('SIGKILL');
    for (const pid of this.toolPids) killPid(pid);
    for (const dir of this.slowDirs ?? []) {
      const pid = readPid(dir);
      if (pid) killPid(pid);
    }
    await this.ownServer?.stop();
  }
}

/** Pids of the processes in process group pgid (Linux /proc). */
function groupMembers(pgid) {
  const out = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat?.pgid === pgid && stat.state !== 'Z') out.push(Number(entry));
  }
  return out;
}

/** Waits until no process of group pgid is left (up to timeoutMs), then kills what remains. */
export async function groupGone(pgid, timeoutMs = 15000) {
  const until = Date.now() + timeoutMs;
  while (groupMembers(pgid).length > 0 && Date.now() < until) await sleep(20);
  killPid(pgid);
}

function readPid(dir) {
  try {
    return Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8').trim()) || undefined;
  } catch {
    return undefined;
  }
}

/** The content of REV (`git cat-file -p`) in repo, or undefined when it does not exist. */
export function gitShow(repo, rev) {
  const r = spawnSync('git', ['cat-file', '-p', rev], { cwd: repo, encoding: 'utf8', env: hermeticEnv() });
  return r.status === 0 ? r.stdout : undefined;
}

/** Reads many blobs in one `git cat-file --batch`; a missing one is undefined. */
export function catFiles(repo, revs) {
  if (revs.length === 0) return [];
  const r = spawnSync('git', ['cat-file', '--batch'], { cwd: repo, env: hermeticEnv(), input: `${revs.join('\n')}\n`, maxBuffer: 256 << 20 });
  const buf = r.stdout;
  const out = [];
  let pos = 0;
  for (let i = 0; i < revs.length; i++) {
    const nl = buf.indexOf(0x0a, pos);
    const header = buf.subarray(pos, nl).toString();
    pos = nl + 1;
    if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
      out.push(undefined);
      continue;
    }
    const size = Number(header.split(' ')[2]);
    out.push(buf.subarray(pos, pos + size).toString());
    pos += size + 1;
  }
  return out;
}

/** The commits of a ref, newest first: [{oid, subject, message}]. */
export function commitsOf(repo, ref) {
  const out = git(repo, 'log', '--format=%H%x00%B%x1e', ref);
  return out
    .split('\x1e')
    .map((s) => s.replace(/^\n/, ''))
    .filter(Boolean)
    .map((s) => {
      const [oid, message] = s.split('\0');
      return { oid, subject: message.split('\n')[0], message };
    });
}

// ---------------------------------------------------------------------------------------------
// Crashing nyl reconcile

/**
 * Runs `nyl reconcile` and kills it at `point`: a fault point (at its `wave`-th occurrence for the
 * per-wave points), or 'while-unit-runs' (SIGKILL of nyl's process group once `slowUnit` runs,
 * then of the tool). Returns {result, deadRuns}.
 */
export async function crashReconcile(sc, point, { wave = 1, slowUnit = 'migrate', env = {}, units } = {}) {
  const args = ['reconcile', '-e', ENV, '-o', 'json', ...(units ? ['--units', units.join(',')] : [])];
  let result;
  if (point === 'while-unit-runs') {
    result = await crashWhileUnitRuns(sc, args, slowUnit, env);
  } else if (PER_PUSH.has(point)) {
    result = await crashAtCheckpointPush(sc, args, point, wave, slowUnit, env);
  } else if (!PER_WAVE.has(point) || wave === 1) {
    const h = sc.start(args, { env: { ...env, NYL_FAULT_AT: point, NYL_FAULT_ACTION: 'kill' } });
    result = await h.done;
    await groupGone(h.pid);
    await sc.settle();
  } else {
    const marker = path.join(sc.dir, `fault-${point}-${Date.now()}`);
    const h = sc.start(args, { env: { ...env, NYL_FAULT_AT: point, NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: marker } });
    for (let n = 1; ; n++) {
      await Promise.race([
        waitForFile(marker, 30000),
        h.done.then((r) => {
          throw new Error(`reconcile ended before wave ${wave} reached ${point}: ${describeResult(r)}`);
        }),
      ]);
      if (n === wave) break;
      fs.rmSync(marker);
    }
    result = await h.crash();
  }
  sc.record(`reconcile killed at ${point}${PER_WAVE.has(point) || PER_PUSH.has(point) ? ` (wave ${wave})` : ''}`);
  assert.equal(result.signal, 'SIGKILL', `reconcile should die at ${point}: ${describeResult(result)}`);
  return { result, deadRuns: sc.noteDeadRuns() };
}

/** Starts the reconcile with `slow` waiting on a gate; returns its handle and the gate's directory. */
function startGated(sc, args, slow, env) {
  const slowDir = fs.mkdtempSync(path.join(sc.dir, 'slow-'));
  (sc.slowDirs ??= []).push(slowDir);
  fs.writeFileSync(path.join(slowDir, 'gate'), '');
  const h = sc.start(args, { env: { ...env, CRASH_SLOW_UNIT: slow, CRASH_SLOW_DIR: slowDir } });
  return { h, slowDir };
}

function releaseGated(slowDir) {
  killPid(readPid(slowDir));
  fs.rmSync(path.join(slowDir, 'gate'), { force: true });
}

/** The receipt checkpoints the live run ref holds now. */
function receiptsInLiveRun(sc) {
  const refs = sc.refs();
  return sc
    .runRefs(refs)
    .flatMap((run) => [...sc.readRunCommit(refs[`${RUNS}${run}`]).units].filter(([, d]) => d.checkpoint?.result === 'receipt').map(([n]) => n));
}

/**
 * Kills nyl while `slowUnit` runs, once the other units of its wave ended and (group commit)
 * their checkpoints reached the run ref: "one unit still running, its siblings' results durable".
 */
async function crashWhileUnitRuns(sc, args, slowUnit, env) {
  const slowWave = sc.units.find((u) => u.name === slowUnit)?.wave;
  const siblings = sc.units.filter((u) => u.wave === slowWave && u.name !== slowUnit).map((u) => u.name);
  const { h, slowDir } = startGated(sc, args, slowUnit, env);
  await Promise.race([
    waitForFile(path.join(slowDir, 'running'), 30000),
    h.done.then((r) => {
      throw new Error(`reconcile ended before ${slowUnit} ran: ${describeResult(r)}`);
    }),
  ]);
  for (const until = Date.now() + 10000; siblings.some((n) => !receiptsInLiveRun(sc).includes(n)) && Date.now() < until; ) await sleep(20);
  const result = await h.crash();
  releaseGated(slowDir);
  return result;
}

/**
 * Kills nyl at a checkpoint push of the wave's first unit while its sibling still runs. Paused
 * there, nyl is killed once the sibling's tool runs: on a loaded machine the first unit may end
 * and reach its push before the sibling's tool has even started.
 */
async function crashAtCheckpointPush(sc, args, point, wave, slowUnit, env) {
  const members = sc.units
    .filter((u) => u.wave === wave)
    .map((u) => u.name)
    .sort();
  const slow = members.includes(slowUnit) ? slowUnit : members[members.length - 1];
  const first = members.find((n) => n !== slow) ?? slow;
  const marker = path.join(sc.dir, `fault-${point}-${Date.now()}`);
  const { h, slowDir } = startGated(sc, args, slow, { ...env, NYL_FAULT_AT: `${point}@${first}`, NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: marker });
  const reached = [waitForFile(marker, 30000), ...(first !== slow ? [waitForFile(path.join(slowDir, 'running'), 30000)] : [])];
  await Promise.race([
    Promise.all(reached),
    h.done.then((r) => {
      throw new Error(`reconcile ended before ${point} of ${first}: ${describeResult(r)}`);
    }),
  ]);
  const result = await h.crash();
  releaseGated(slowDir);
  return result;
}

/** Path (a): `nyl lease break`, then `nyl reconcile` takes over. */
export async function takeoverPath(sc) {
  const broke = await sc.leaseBreak();
  const reconcile = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], [0, 2, 4]);
  return { broke, reconcile };
}

/**
 * Path (b): `nyl lease break`, `nyl recover -e`, `nyl recover --unit U --retry --reason` for every
 * unit left uncertain, then `nyl reconcile`.
 */
export async function recoverPath(sc) {
  const broke = await sc.leaseBreak();
  const broken = broke.json.result === 'done';
  const recover = await sc.nyl(['recover', '-e', ENV, '-o', 'json']);
  if (broken) assert.equal(recover.code, 0, `recover imports the broken run: ${describeResult(recover)}`);
  else {
    assert.equal(recover.code, 1, describeResult(recover));
    assert.deepEqual(errorCodes(recover), ['NYL-RECOVER-NOTHING']);
  }
  const status = await sc.nyl(['status', '-e', ENV, '-o', 'json']);
  const uncertain = Object.values(status.json.units)
    .filter((u) => u.condition?.type === 'uncertain')
    .map((u) => u.name);
  const retries = [];
  for (const u of uncertain) retries.push(await sc.ok(['recover', '-e', ENV, '--unit', u, '--retry', '--reason', 'checked: safe to run again', '-o', 'json']));
  const reconcile = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], 0);
  return { broke, recover, uncertain, retries, reconcile };
}

// ---------------------------------------------------------------------------------------------
// Invariants

/** Every unit's observed document in every commit of the observed ref's history: [{oid, message, docs}]. */
export function observedHistory(sc) {
  const commits = commitsOf(sc.bare, OBSERVED);
  const revs = commits.flatMap((c) => sc.unitNames.map((n) => `${c.oid}:units/${n}.yaml`));
  const blobs = catFiles(sc.bare, revs);
  return commits.map((c, i) => ({
    ...c,
    docs: new Map(sc.unitNames.map((n, j) => [n, blobs[i * sc.unitNames.length + j] ? YAML.parse(blobs[i * sc.unitNames.length + j]) : undefined])),
  }));
}

/**
 * Checks the crash invariants on the scenario as it stands. Options:
 * - allCurrent: every unit must be current;
 * - superseded: units whose source changed after a dead run checkpointed them (not imported).
 * Returns a summary {counts, stuck}.
 */
export async function assertCrashInvariants(sc, { allCurrent = false, superseded = [] } = {}) {
  const refs = sc.refs();
  const final = { desired: refs[DESIRED], observed: refs[OBSERVED] };

  // No lease or run ref left.
  assert.equal(refs[LEASE], undefined, `no lease is left: ${JSON.stringify(sc.leaseDoc())}`);
  assert.deepEqual(sc.runRefs(refs), [], 'no run ref is left');

  // No state ref force-moved: every recorded value is an ancestor of the final one.
  for (const [key, ref] of [
    ['desired', DESIRED],
    ['observed', OBSERVED],
  ]) {
    const seen = [...new Set(sc.history.map((h) => h.refs[ref]).filter(Boolean))];
    for (const oid of seen) {
      const r = spawnSync('git', ['merge-base', '--is-ancestor', oid, final[key]], { cwd: sc.bare, env: hermeticEnv() });
      assert.equal(
        r.status,
        0,
        `${ref} was force-moved: ${oid} (seen after "${sc.history.find((h) => h.refs[ref] === oid).label}") is not an ancestor of ${final[key]}`,
      );
    }
  }

  // A readable history.
  const desiredCommits = commitsOf(sc.bare, DESIRED);
  const observedCommits = commitsOf(sc.bare, OBSERVED);
  for (const c of [...desiredCommits, ...observedCommits]) {
    assert.match(c.subject, /^nyl: \S+ dev/, `commit ${c.oid} has a nyl headline: ${c.message}`);
    assert.match(c.message, /^Nyl-Operation: \S+$/m, `commit ${c.oid} has a Nyl-Operation trailer: ${c.message}`);
  }

  // Each lease break is recorded by exactly one operation (under leaseBroken, or under
  // leaseBrokenEarlier when the importer that took it over died), naming the broken run.
  const recordedBreaks = new Map();
  for (const c of [...desiredCommits, ...observedCommits]) {
    const body = commitBody(c.message);
    const breaks = [...(body.leaseBrokenEarlier ?? []), ...(body.leaseBroken ? [body.leaseBroken] : [])];
    if (breaks.length) recordedBreaks.set(c.message, breaks);
  }
  const allBreaks = [...recordedBreaks.values()].flat();
  assert.deepEqual(allBreaks.map((b) => b.run).sort(), sc.breaks.map((b) => b.run).sort(), `each break is recorded once: ${JSON.stringify(allBreaks)}`);

  // Unit states.
  const status = await sc.nyl(['status', '-e', ENV, '-o', 'json']);
  assert.ok(status.json, describeResult(status));
  const units = status.json.units;
  const dead = new Set(sc.deadRuns.keys());
  const stuck = new Set();
  for (const [name, u] of Object.entries(units)) {
    if ((u.state === 'uncertain' || u.state === 'failed') && u.condition && dead.has(u.condition.run)) stuck.add(name);
  }
  const waiting = new Set();
  for (let changed = true; changed; ) {
    changed = false;
    for (const [name, u] of Object.entries(units)) {
      if (waiting.has(name) || stuck.has(name) || !WAITING_STATES.includes(u.state) || !u.waits?.length) continue;
      if (u.waits.every((w) => stuck.has(w.unit) || waiting.has(w.unit))) {
        waiting.add(name);
        changed = true;
      }
    }
  }
  for (const name of sc.unitNames) {
    const u = units[name];
    assert.ok(u, `status lists ${name}`);
    if (allCurrent) assert.equal(u.state, 'current', `${name} is current: ${JSON.stringify(u)}`);
    else
      assert.ok(
        u.state === 'current' || stuck.has(name) || waiting.has(name),
        `${name} is current, uncertain naming a dead run, or waits for one: ${JSON.stringify(u)}`,
      );
  }

  // Evidence refs only for units still uncertain, and for late checkpoints (evidence/UNIT/late/RUN),
  // which are kept whatever the unit is now.
  for (const ref of Object.keys(refs).filter((r) => r.startsWith(EVIDENCE))) {
    const [unit, late] = ref.slice(EVIDENCE.length).split('/');
    if (late === 'late') continue;
    assert.equal(units[unit]?.condition?.type, 'uncertain', `${ref} is kept only while ${unit} is uncertain: ${JSON.stringify(units[unit])}`);
  }

  // No receipt lost: a receipt checkpoint of a dead run became the unit's receipt.
  const observedNow = new Map(sc.unitNames.map((n) => [n, sc.observedDoc(n)]));
  for (const [run, rec] of sc.deadRuns) {
    for (const [name, doc] of rec.units) {
      // A receipt for an execution key the unit no longer resolves to is not imported (NYL-RUN-SUPERSEDED).
      if (doc.checkpoint?.result !== 'receipt' || superseded.includes(name)) continue;
      assert.equal(observedNow.get(name)?.receipt?.run, run, `the receipt ${run} checkpointed for ${name} is kept: ${JSON.stringify(observedNow.get(name))}`);
    }
  }

  // No unit executed twice unless it was uncertain in between.
  const history = observedHistory(sc);
  const conditionRuns = new Map(sc.unitNames.map((n) => [n, new Set()]));
  const recoveredBy = new Map(sc.unitNames.map((n) => [n, new Set()]));
  for (const c of history) {
    for (const [name, doc] of c.docs) if (doc?.condition?.run) conditionRuns.get(name).add(doc.condition.run);
  }
  // A takeover that re-ran the unit in the same run; or an import of broken runs that made it
  // uncertain (and maybe cleared it in the same commit: recover --unit U --retry).
  addRecoveryEvidence([...desiredCommits, ...observedCommits], conditionRuns, recoveredBy);
  const executions = sc.executions();
  for (const [name, runs] of executions) {
    for (let i = 0; i + 1 < runs.length; i++) {
      assert.notEqual(runs[i], runs[i + 1], `${name} executed twice in run ${runs[i]}`);
      const between = conditionRuns.get(name).has(runs[i]) || recoveredBy.get(name).has(runs[i + 1]);
      assert.ok(between, `${name} executed again by ${runs[i + 1]} without being uncertain after ${runs[i]}: executions ${runs.join(', ')}`);
    }
  }
  return { counts: sc.executionCounts(), stuck: [...stuck], waiting: [...waiting], status };
}

// ---------------------------------------------------------------------------------------------
// A run that loses its lease while a unit runs

/**
 * Starts `nyl reconcile` with `unit` waiting at its gate; while it runs, breaks the lease and lets
 * `nyl recover -e` import the run (the unit becomes uncertain); then opens the gate, so that the
 * run finishes the unit after losing its lease. Returns {run, lost (its result), imported (the
 * recover result), stateAfterImport}.
 */
export async function lostLeaseRun(sc, unit, { importer = ['recover', '-e', ENV, '-o', 'json'] } = {}) {
  const slowDir = fs.mkdtempSync(path.join(sc.dir, 'slow-'));
  (sc.slowDirs ??= []).push(slowDir);
  fs.writeFileSync(path.join(slowDir, 'gate'), '');
  const h = sc.start(['reconcile', '-e', ENV, '-o', 'json'], { env: { CRASH_SLOW_UNIT: unit, CRASH_SLOW_DIR: slowDir } });
  await Promise.race([
    waitForFile(path.join(slowDir, 'running'), 30000),
    h.done.then((r) => {
      throw new Error(`reconcile ended before ${unit} ran: ${describeResult(r)}`);
    }),
  ]);
  const [run] = sc.noteDeadRuns();
  assert.ok(run, 'the running run has a run ref');
  await sc.leaseBreak('the runner looked dead');
  const imported = await sc.ok(importer, [0, 2, 4]);
  const stateAfterImport = sc.stateRefs();
  fs.rmSync(path.join(slowDir, 'gate'), { force: true });
  const lost = await h.done;
  sc.record('the run that lost its lease ended');
  return { run, lost, imported, stateAfterImport };
}

/**
 * Installs a pre-receive hook in a local bare repository that holds every push made with
 * CRASH_HOOK_DIR=<dir> in its environment while <dir>/gate exists (file:// pushes pass the
 * pusher's environment to the hook). The ref compare-and-swap happens after the hook, so a push
 * held here decided on refs that may change meanwhile. Returns {dir, entered(), open()}.
 */
export function installGateHook(bare, parent) {
  const dir = fs.mkdtempSync(path.join(parent, 'hook-'));
  fs.writeFileSync(path.join(dir, 'gate'), '');
  const hook = path.join(bare, 'hooks', 'pre-receive');
  fs.mkdirSync(path.dirname(hook), { recursive: true });
  fs.writeFileSync(
    hook,
    [
      '#!/bin/sh',
      '# Installed by test/support/crash-harness.mjs: holds pushes of one process at a gate.',
      'cat >/dev/null',
      'if [ -n "${CRASH_HOOK_DIR:-}" ] && [ -e "$CRASH_HOOK_DIR/gate" ]; then',
      '  touch "$CRASH_HOOK_DIR/entered"',
      '  while [ -e "$CRASH_HOOK_DIR/gate" ]; do sleep 0.02; done',
      'fi',
      'exit 0',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return {
    dir,
    entered: () => waitForFile(path.join(dir, 'entered'), 30000),
    open: () => fs.rmSync(path.join(dir, 'gate'), { force: true }),
  };
}
