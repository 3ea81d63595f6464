// An in-process world for protocol tests: one state repository in memory (MemoryRepository),
// one virtual clock (ManualClock), one scripted driver (fakeDriver) that records every execution,
// and any number of simulated `nyl` processes, each with its own runtime, store view, cancellation
// and fault points. The operations under test are the real ones (reconcileOpened, recoverOpened,
// ...), fed an OpenedEnvironment built here instead of from a Git checkout.
//
// A process can crash: from then on every store call, clock sleep and fault point of that process
// never settles, so it stops at its next I/O exactly as a SIGKILL stops a real one (a write
// already handed to the store lands, as a push already sent does). Nothing of it ever runs again;
// its promises are simply abandoned.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withDrivers } from '../../dist/drivers/registry.js';
import { NylError } from '../../dist/errors/diagnostic.js';
import { exitCodeOf } from '../../dist/report/exit-code.js';
import { loadProject } from '../../dist/project/load.js';
import { leaseBreakOpened } from '../../dist/commands/recover/lease-break.js';
import { holdOpened } from '../../dist/commands/hold/hold.js';
import { reconcileOpened } from '../../dist/commands/reconcile/reconcile.js';
import { recoverOpened } from '../../dist/commands/recover/recover.js';
import { resealOpened } from '../../dist/commands/state/reseal.js';
import { resumeOpened } from '../../dist/commands/hold/resume.js';
import { teardownCancelOpened } from '../../dist/commands/reconcile/teardown-cancel.js';
import { stateInitOpened } from '../../dist/commands/state/state-init.js';
import { stateRestoreOpened } from '../../dist/commands/state/state-restore.js';
import { statusOpened } from '../../dist/commands/inspect/status.js';
import { LocalState } from '../../dist/state/local-state.js';
import YAML from 'yaml';
import { ManualClock } from '../fakes/clock.mjs';
import { fakeDriver, receipt } from '../fakes/driver.mjs';
import { memoryLayout } from '../fakes/memory-local.mjs';
import { MemoryRepository, MemoryStateStore, memoryLocation } from '../fakes/memory-store.mjs';
import { FakeProcessRunner } from '../fakes/process-runner.mjs';
import { memoryTree } from '../support/memory-tree.mjs';
import { withoutFormat, workingObserved } from '../support/unit-docs.mjs';

export const T0 = Date.parse('2026-11-30T12:00:00.000Z');
export const ENV = 'dev';
export const AUTHOR = { name: 'Alice', email: 'alice@example.com' };

/** The six units of the end-to-end crash suite: three waves, converge and manual mixed. */
export const SIX_UNITS = [
  { name: 'base', recovery: 'converge', dependsOn: [] },
  { name: 'config', dependsOn: [] },
  { name: 'db', recovery: 'converge', dependsOn: ['base'] },
  { name: 'migrate', dependsOn: ['config'] },
  { name: 'app', recovery: 'converge', dependsOn: ['db', 'migrate'] },
  { name: 'report', dependsOn: ['db'] },
];

const never = () => new Promise(() => {});

// Runs unpack nothing here, but make a scratch directory per run; a crashed run leaves its own.
// One temporary root per test process holds them all.
const TMP_ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'nyl-world-'));
process.env.TMPDIR = TMP_ROOT;

/** A fixed 32-byte AES key (base64) for the processes of a world. */
export const TEST_SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');
process.on('exit', () => fs.rmSync(TMP_ROOT, { recursive: true, force: true }));

function projectYaml(units, lease, driftRepair) {
  const docs = [
    [
      'apiVersion: nyl.io/v1',
      'kind: Environment',
      `metadata: {name: ${ENV}}`,
      'spec:',
      `  lease: {duration: ${lease}}`,
      ...(driftRepair ? [`  driftRepair: ${driftRepair}`] : []),
    ],
    ...units.map((u) => [
      'apiVersion: nyl.io/v1',
      'kind: Command',
      `metadata: {name: ${u.name}}`,
      'spec:',
      ...(u.recovery ? [`  recovery: ${u.recovery}`] : []),
      ...(u.policy ? [`  deletionPolicy: ${u.policy}`] : []),
      ...(u.dependsOn?.length ? [`  dependsOn: [${u.dependsOn.join(', ')}]`] : []),
      ...(u.env ? [`  env: ${JSON.stringify(u.env)}`] : []),
      ...(u.inputs ? [`  inputs: ${JSON.stringify(u.inputs)}`] : []),
      ...(u.triggers ? [`  triggers: ${JSON.stringify(u.triggers)}`] : []),
      ...(u.approval ? [`  approval: ${JSON.stringify(u.approval)}`] : []),
      u.run !== undefined ? `  run: ${JSON.stringify(u.run)}` : `  run: [${u.name}${u.version ? `, "${u.version}"` : ''}]`,
    ]),
  ];
  return `${docs.map((d) => d.join('\n')).join('\n---\n')}\n`;
}

/**
 * A clock of one process: the world's time plus an offset. Once the process died its sleeps never
 * end, and they leave the world's clock (a dead process's timer must not make time jump).
 */
class ProcessClock {
  constructor(world, offsetMs, isDead, death) {
    this.world = world;
    this.offsetMs = offsetMs;
    this.isDead = isDead;
    this.death = death;
  }

  now() {
    return this.world.clock.now() + this.offsetMs;
  }

  async sleep(ms, signal) {
    if (this.isDead()) return never();
    await this.world.clock.sleep(ms, signal ? AbortSignal.any([signal, this.death]) : this.death);
    if (this.isDead()) return never();
  }

  /** The world's time without the offset: one monotonic clock for every process of the world, as one boot has. */
  monotonicMs() {
    return this.world.clock.now();
  }
}

/**
 * A view of the store that stops answering once its process died. It also counts the process's
 * writes in flight at once (`stats.maxWritesInFlight`): the protocol allows one at a time. With
 * `network`, no cheap look tells whether refs exist (mayHaveRefsUnder answers undefined), as
 * for a state repository over the network: a run then reads its signals at every look.
 */
function killableStore(store, isDead, stats, network = false) {
  const guard =
    (fn) =>
    async (...args) => {
      if (isDead()) return never();
      const result = await fn(...args);
      if (isDead()) return never();
      return result;
    };
  const write = guard(async (updates) => {
    stats.inFlight++;
    stats.maxWritesInFlight = Math.max(stats.maxWritesInFlight, stats.inFlight);
    try {
      return await store.write(updates);
    } finally {
      stats.inFlight--;
      stats.writes++;
    }
  });
  const reader = {
    read: guard((s) => store.reader.read(s)),
    readMany: guard((s) => store.reader.readMany(s)),
    readTree: guard((s) => store.reader.readTree(s)),
  };
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'reader') return reader;
      if (prop === 'write') return write;
      if (prop === 'mayHaveRefsUnder' && network) return () => undefined;
      const value = Reflect.get(target, prop);
      if (typeof value !== 'function' || prop === 'mayHaveRefsUnder' || prop === 'close') return typeof value === 'function' ? value.bind(target) : value;
      return guard(value.bind(target));
    },
  });
}

/**
 * Fault points of one process: `crashAt(point, {unit, nth})` kills the process when it reaches the
 * point the nth time (counting only reaches that concern `unit`, when given); `pauseAt` holds it
 * there until the returned release() is called.
 */
class ScriptedFaults {
  constructor(proc) {
    this.proc = proc;
    this.rules = [];
    this.reached = [];
  }

  add(point, { unit, nth = 1, action }) {
    const rule = { point, unit, nth, action, seen: 0 };
    this.rules.push(rule);
    return rule;
  }

  async reach(point, units = []) {
    this.reached.push({ point, units: [...units] });
    for (const rule of this.rules) {
      if (rule.point !== point || (rule.unit && !units.includes(rule.unit))) continue;
      if (++rule.seen !== rule.nth) continue;
      await rule.action();
    }
    if (this.proc.dead) return never();
  }
}

/**
 * One simulated `nyl` process. Options: offsetMs (its clock's lead on the world's), author,
 * unreachable(call) (the memory store's: which of its calls cannot reach the repository), and
 * network (no cheap look at refs, as over a network: see killableStore).
 */
export class Proc {
  constructor(world, name, { offsetMs = 0, author = AUTHOR, unreachable, network = false } = {}) {
    this.world = world;
    this.name = name;
    this.dead = false;
    this.author = author;
    this.lines = [];
    this.controller = new AbortController();
    this.died = new Promise((resolve) => (this.markDied = resolve));
    const isDead = () => this.dead;
    this.death = new AbortController();
    this.clock = new ProcessClock(world, offsetMs, isDead, this.death.signal);
    this.faults = new ScriptedFaults(this);
    this.stats = { inFlight: 0, maxWritesInFlight: 0, writes: 0 };
    const storeOptions = { ...world.storeOptions, ...(unreachable ? { unreachable } : {}) };
    this.store = killableStore(new MemoryStateStore(world.repo, world.loc, storeOptions), isDead, this.stats, network);
    // A simulated process keeps no branches of the state beside the store (the layout of a clone
    // location): the local state service finds nothing local to sync, judge or move.
    this.local = new LocalState(memoryLayout('clone', world.loc));
    this.rt = {
      git: undefined,
      runner: new FakeProcessRunner({ clock: world.clock }),
      clock: this.clock,
      env: { ...world.processEnv },
      cancel: this.controller.signal,
      faults: this.faults,
      log: (line) => this.lines.push(line),
    };
  }

  opened() {
    return {
      project: this.world.project,
      env: this.world.env,
      sourceCommit: this.world.sourceCommit,
      sourceOverride: false,
      loc: this.world.loc,
      store: this.store,
      local: this.local,
      drivers: this.world.drivers,
      author: this.author,
      materialize: async (dest) => {
        fs.mkdirSync(dest, { recursive: true });
        return dest;
      },
      close: () => {},
    };
  }

  /** Kills the process (SIGKILL): it never does anything again, and its tools die with it. */
  kill() {
    this.rt.runner.killHost();
    this.dead = true;
    this.death.abort();
    this.markDied();
  }

  /** SIGTERM: the run stops starting units and ends as cancelled. */
  cancel(reason = 'SIGTERM') {
    this.controller.abort(reason);
  }

  crashAt(point, options = {}) {
    this.faults.add(point, { ...options, action: () => this.kill() });
    return this;
  }

  /** Pauses at a point; resolves `reached` when there, continues on release(). */
  pauseAt(point, options = {}) {
    let release;
    let reachedResolve;
    const reached = new Promise((r) => (reachedResolve = r));
    const gate = new Promise((r) => (release = r));
    this.faults.add(point, {
      ...options,
      action: async () => {
        reachedResolve();
        await gate;
      },
    });
    return { reached, release };
  }

  /**
   * Starts an operation: {done} settles with {report, error, code} like the CLI's exit code;
   * if the process dies first, `done` never settles and `died` does.
   */
  start(operation, options = {}) {
    const run = OPERATIONS[operation];
    assert.ok(run, `no operation ${operation}`);
    const done = run(this.rt, this.opened(), options).then(
      (report) => ({ report, code: exitCodeOf(report, report.errors, operation) }),
      (error) => {
        if (!(error instanceof NylError)) throw error;
        return { error, codes: error.diagnostics.map((d) => d.code), code: exitCodeOf(undefined, error.diagnostics, operation) };
      },
    );
    return { done, outcome: Promise.race([done, this.died.then(() => ({ died: true }))]) };
  }

  /** Runs an operation to its end, driving virtual time; refuses if the process dies meanwhile. */
  async run(operation, options = {}) {
    const result = await this.start(operation, options).outcome;
    assert.ok(!result.died, `${this.name} died during ${operation}`);
    return result;
  }
}

const OPERATIONS = {
  'state init': (rt, opened, o) => stateInitOpened(rt, opened, { fresh: false, ...o }),
  reconcile: (rt, opened, o) => reconcileOpened(rt, opened, { failFast: false, concurrency: 4, ...o }),
  recover: (rt, opened, o) => recoverOpened(rt, opened, { retry: false, ...o }),
  'lease break': (rt, opened, o) => leaseBreakOpened(rt, opened, { reason: 'the runner was killed', ...o }),
  hold: (rt, opened, o) => holdOpened(rt, opened, o),
  resume: (rt, opened, o) => resumeOpened(rt, opened, o),
  'teardown cancel': (rt, opened, o) => teardownCancelOpened(rt, opened, o),
  status: (rt, opened) => statusOpened(rt, opened),
  'state restore': (rt, opened, o) => stateRestoreOpened(rt, opened, o),
  'state reseal': (rt, opened, o) => resealOpened(rt, opened, o),
};

export class World {
  /**
   * units: [{name, recovery?, policy?, dependsOn?, version?, run?, env?, inputs?, triggers?, approval?}] (policy: deletionPolicy; run: the Command's run; env: a Command's env, where
   * `${{ units.NAME.outputs.KEY }}` references go); lease: a duration; apply: the fake driver's
   * answers ({[unit]: Answer}, default a receipt {unit: name}); delayMs: how long units run;
   * files: more files of the source commit besides nyl.yaml (what `inputs` read); processEnv: the
   * environment every process sees (default: a secrets key, so sensitive outputs can be sealed);
   * driftRepair: the Environment's (default converge).
   */
  static async create({
    units = SIX_UNITS,
    lease = '5m',
    apply = {},
    delayMs = 10,
    driver = {},
    storeOptions = {},
    autoAdvance = true,
    files = {},
    processEnv = { NYL_SECRETS_KEY: TEST_SECRETS_KEY },
    driftRepair,
  } = {}) {
    const world = new World();
    world.driftRepair = driftRepair;
    // A cache of its own: what a process observed of the lease counts for the world's later processes.
    world.cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nyl-world-cache-'));
    world.processEnv = { NYL_CACHE_DIR: world.cacheDir, ...processEnv };
    world.units = units;
    world.leaseText = lease;
    world.repo = new MemoryRepository('state');
    world.clock = new ManualClock(T0, { autoAdvance });
    world.loc = memoryLocation(ENV);
    world.storeOptions = storeOptions;
    world.sourceCommit = 'c0ffee0000000000000000000000000000000001';
    world.project = await loadProject('/project', memoryTree({ ...files, 'nyl.yaml': projectYaml(units, lease, driftRepair) }));
    world.env = world.project.environments.get(ENV);
    world.driver = fakeDriver({ apply: { default: (ctx) => receipt({ unit: ctx.unit }), ...apply }, delayMs, ...driver });
    world.drivers = withDrivers(world.driver);
    world.processes = [];
    return world;
  }

  process(name = `p${this.processes.length + 1}`, options) {
    const p = new Proc(this, name, options);
    this.processes.push(p);
    return p;
  }

  /** Changes the project, as a new commit of source would. */
  async setUnits(units, files = {}) {
    this.units = units;
    this.project = await loadProject('/project', memoryTree({ ...files, 'nyl.yaml': projectYaml(units, this.leaseText ?? '5m', this.driftRepair) }));
    this.env = this.project.environments.get(ENV);
  }

  cleanup() {
    for (const p of this.processes) p.kill();
    fs.rmSync(this.cacheDir, { recursive: true, force: true });
  }

  // --- what the state repository holds ----------------------------------------------------

  refs() {
    return Object.fromEntries(this.repo.refs());
  }

  get leaseRef() {
    return `refs/nyl/${ENV}/lease`;
  }

  runRefs() {
    return Object.keys(this.refs())
      .filter((r) => r.startsWith(`refs/nyl/${ENV}/runs/`))
      .map((r) => r.slice(`refs/nyl/${ENV}/runs/`.length));
  }

  evidenceRefs() {
    return Object.keys(this.refs()).filter((r) => r.startsWith(`refs/nyl/${ENV}/evidence/`));
  }

  stateRefs() {
    const r = this.refs();
    return { desired: r[this.loc.desiredRef], observed: r[this.loc.observedRef] };
  }

  doc(ref, file) {
    const oid = this.repo.refs().get(ref);
    if (!oid) return undefined;
    const text = this.repo.filesAt(oid).get(file);
    return text === undefined ? undefined : YAML.parse(text);
  }

  /** A unit's desired document as Nyl works with it (its stored form's formatVersion left out). */
  desiredDoc(unit) {
    return withoutFormat(this.doc(this.loc.desiredRef, `units/${unit}.yaml`));
  }

  /** A unit's observed document as Nyl works with it: a receipt's reference to its desired document read back. */
  observedDoc(unit) {
    return workingObserved(this.doc(this.loc.observedRef, `units/${unit}.yaml`), (blob) => this.repo.object(blob).content.toString());
  }

  leaseDoc() {
    return this.doc(this.leaseRef, 'lease.yaml');
  }

  /** run.yaml of a run ref (the only one there, by default). */
  runDoc(run = this.runRefs()[0]) {
    return this.doc(`refs/nyl/${ENV}/runs/${run}`, 'run.yaml');
  }

  /** A run ref's unit records: Map unit -> doc. */
  runRecords(run) {
    const oid = this.repo.refs().get(`refs/nyl/${ENV}/runs/${run}`);
    const files = oid ? this.repo.filesAt(oid, 'units') : new Map();
    return new Map([...files].map(([file, text]) => [path.basename(file, '.yaml'), YAML.parse(text)]));
  }

  /** The text of a file of a ref's commit, as stored. */
  text(ref, file) {
    const oid = this.repo.refs().get(ref);
    return oid ? this.repo.filesAt(oid).get(file) : undefined;
  }

  /**
   * Changes files of a ref's commit behind Nyl's back, as a hand edit or a broken tool would: a
   * child commit (a new root when the ref is absent) with the files set, and the ref moved to it.
   * Returns the new commit.
   */
  edit(ref, files, { message = 'hand edit\n', parent = this.repo.refs().get(ref) } = {}) {
    const spec = { changes: new Map(Object.entries(files)), message, author: { name: 'Mallory', email: 'mallory@example.com' }, timeMs: this.clock.now() };
    const [oid] = this.repo.writeCommits([parent ? { ...spec, parent } : spec]);
    this.repo.setRef(ref, oid);
    return oid;
  }

  receiptsIn(run) {
    return [...this.runRecords(run)]
      .filter(([, d]) => d.checkpoint?.result === 'receipt')
      .map(([n]) => n)
      .sort();
  }

  /** Executions per unit, by the run that executed them (the fake driver's apply calls). */
  executions() {
    return Object.fromEntries(this.units.map((u) => [u.name, this.driver.callsOf(u.name).map((c) => c.run)]));
  }

  counts() {
    return Object.fromEntries(Object.entries(this.executions()).map(([n, runs]) => [n, runs.length]));
  }

  /** Waits (driving time) until predicate() holds. */
  async until(predicate, what = 'a condition') {
    for (let i = 0; i < 20000; i++) {
      if (predicate()) return;
      await new Promise((r) => setImmediate(r));
    }
    assert.fail(`timed out waiting for ${what}`);
  }
}
