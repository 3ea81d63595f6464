// Regression tests for bugs of the core that the rewrite fixes. Each test asserts the correct
// behaviour and fails on the code before the fix:
// 1. a non-retryable failure whose unit reverts to the rendering of its receipt stays failed;
// 2. a NUL byte in argv or env is refused at validation; one that arrives at run time (through a
//    reference to a producer's outputs) fails its unit alone, and never lets the run release the
//    lease while a sibling runs (which led to a double execution);
// 3. a unit's checkpoint is pushed when it finishes, not after the slowest unit of its wave;
// 4. lease deadlines keep their milliseconds.
// Real processes and real Git repositories (a bare state repository over file://). Tools run in
// their own process groups; every tool a test starts writes its pid and is killed through it.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { cleanupAll, git, tempDir, trackProcessGroup } from '../support/git-fixtures.mjs';
import { NYL, checkJsonOutput, cliEnv, nyl, waitForFile } from '../support/cli.mjs';
import { changeUnits, logLines, reconcile, refsUnder, results, setup, sleep } from '../support/reconcile-helpers.mjs';
import { ENV, LEASE, RUNS, Scenario, describeResult, gitShow, killPid } from '../support/crash-harness.mjs';
import { isRunning } from '../support/proc.mjs';
import { createHash } from 'node:crypto';

after(cleanupAll);

/** Where a run ref keeps a unit's record: units/<first two hex digits of sha1(name)>/<name>.yaml. */
function runUnitFile(name) {
  return `units/${createHash('sha1').update(name).digest('hex').slice(0, 2)}/${name}.yaml`;
}

/** The pids listed in a file, one a line ([] when it does not exist). */
function pidsIn(file) {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number) : [];
}

/** Waits (polling) until none of the pids listed in file runs; false when the deadline passed. */
async function pidsGone(file, timeoutMs = 20000) {
  const until = Date.now() + timeoutMs;
  while (pidsIn(file).some(isRunning)) {
    if (Date.now() > until) return false;
    await sleep(50);
  }
  return true;
}

/**
 * Starts `nyl args...` in cwd in its own process group, tracked so that it never outlives the test
 * process. Returns {child, pid, done, exitedAt (Date.now() at its exit), onExit (set to run code
 * synchronously at its exit)}. done rejects when a -o json run breaks the contract of JSON output
 * (checkJsonOutput of cli.mjs).
 */
function startNyl(cwd, args, { env = {} } = {}) {
  const child = spawn(process.execPath, [NYL, ...args], { cwd, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  trackProcessGroup(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => (stdout += b));
  child.stderr.on('data', (b) => (stderr += b));
  const handle = { child, pid: child.pid, exitedAt: undefined, onExit: undefined };
  child.once('exit', () => {
    handle.exitedAt = Date.now();
    handle.onExit?.();
  });
  handle.done = new Promise((resolve, reject) =>
    child.on('close', (code, signal) => {
      let json;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      try {
        resolve(checkJsonOutput(args, { code, signal, stdout, stderr, json }, { env }));
      } catch (error) {
        reject(error);
      }
    }),
  );
  return handle;
}

/** The commits of a ref in the state repository, oldest first ([] when it does not exist). */
function chainOf(bare, ref) {
  try {
    return git(bare, 'rev-list', '--reverse', ref, '--').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

describe('1. a non-retryable failure does not become current', () => {
  test('a timed-out unit reverted to the rendering of its receipt stays failed; the new unit b executes; exit 3', async () => {
    const dir = tempDir('nyl-regress-');
    const pids = path.join(dir, 'pids');
    const s1 = (log) => `script: 'echo a >> ${log}'`;
    const s2 = (log) => `timeout: 1s\nscript: 'echo $$ >> ${pids}; echo a-slow >> ${log}; sleep 5'`;
    const ctx = setup((log) => ({ a: s1(log) }));
    try {
      const first = reconcile(ctx.project, ['-o', 'json']);
      assert.equal(first.code, 0, describeResult(first));
      assert.deepEqual(results(first.json), { a: 'executed' });

      changeUnits(ctx, (log) => ({ a: s2(log) }), 'a: S2, times out');
      const timedOut = reconcile(ctx.project, ['-o', 'json']);
      assert.equal(timedOut.code, 3, describeResult(timedOut));
      assert.equal(timedOut.json.units.a.result, 'failed');
      const failed = YAML.parse(git(ctx.bare, 'show', 'refs/heads/nyl/dev/observed:units/a.yaml'));
      assert.equal(failed.condition?.type, 'failed', JSON.stringify(failed));
      assert.equal(failed.condition?.retryable, false, 'a timeout needs nyl recover --retry --reason');
      assert.ok(await pidsGone(pids), 'the timed-out tool was killed');

      // Back to S1 exactly (the rendering of a's receipt), and an unrelated new unit b.
      changeUnits(ctx, (log) => ({ a: s1(log), b: `script: 'echo b >> ${log}'` }), 'a: back to S1; add b');
      logLines(ctx.log, { clear: true });
      const r = reconcile(ctx.project, ['-o', 'json']);
      assert.ok(r.json, describeResult(r));
      assert.deepEqual(results(r.json), { a: 'failed', b: 'executed' }, `a keeps its non-retryable failure: ${JSON.stringify(r.json.units.a)}`);
      assert.equal(r.code, 3, describeResult(r));
      assert.equal(r.json.units.a.dispatched, false, 'a is not retried without nyl recover');
      assert.deepEqual(logLines(ctx.log), ['b']);

      const observed = YAML.parse(git(ctx.bare, 'show', 'refs/heads/nyl/dev/observed:units/a.yaml'));
      assert.equal(observed.condition?.type, 'failed', `the observed state of a keeps its condition: ${JSON.stringify(observed)}`);
      assert.equal(observed.condition?.retryable, false);

      const status = nyl(ctx.project, ['status', '-e', 'dev', '-o', 'json']);
      assert.equal(status.json?.units?.a?.state, 'failed', `status: ${JSON.stringify(status.json?.units?.a)}`);
      assert.equal(status.code, 3, describeResult(status));
    } finally {
      for (const pid of pidsIn(pids)) killPid(pid);
    }
  });
});

describe('2. a NUL byte in argv or env', () => {
  test('2a: a unit whose env gets a NUL byte from a producer fails alone, while its sibling of the same wave runs; the sibling executes once', async () => {
    const dir = tempDir('nyl-regress-');
    const pids = path.join(dir, 'slow.pids');
    // The producer's outputs hold a NUL byte (JSON \u0000): the source is valid, the value is not.
    const producer = 'run: ["sh", "-c", "printf \'%s\' \'{\\"v\\":\\"x\\\\u0000y\\"}\' > \\"$NYL_OUTPUTS\\""]';
    // converge: an uncertain slow would run again in the next takeover, as its double execution showed.
    const slow = (log) => `recovery: converge\ndependsOn: [p]\nscript: 'echo $$ >> ${pids}; echo slow >> ${log}; sleep 3'`;
    const ctx = setup((log) => ({ p: producer, bad: 'env: {X: "${{ units.p.outputs.v }}"}\nrun: ["true"]', slow: slow(log) }));
    const handles = [];
    try {
      const first = startNyl(ctx.project, ['reconcile', '-e', 'dev', '-o', 'json']);
      handles.push(first);
      let aliveAtExit = [];
      first.onExit = () => (aliveAtExit = pidsIn(pids).filter(isRunning));
      // While slow runs, its run must hold the lease. (A lease read, then slow seen still running:
      // it ran at the time of the read.)
      const unleased = [];
      for (const until = Date.now() + 60000; first.exitedAt === undefined; ) {
        assert.ok(Date.now() < until, 'the first reconcile ends within 60 s');
        if (pidsIn(pids).length > 0) {
          const held = Object.keys(refsUnder(ctx.bare, 'refs/nyl/')).includes(LEASE);
          if (!held && pidsIn(pids).some(isRunning) && first.exitedAt === undefined) unleased.push(Date.now());
        }
        await sleep(50);
      }
      const r1 = await first.done;
      const second = startNyl(ctx.project, ['reconcile', '-e', 'dev', '-o', 'json']);
      handles.push(second);
      const r2 = await second.done;
      assert.ok(await pidsGone(pids), 'every slow process ended');

      const runs = logLines(ctx.log).filter((l) => l === 'slow').length;
      assert.ok(
        runs <= 1,
        `slow executed ${runs} times; first reconcile: exit ${r1.code} ${JSON.stringify(r1.json?.errors?.map((e) => e.code))}, second: exit ${r2.code} slow ${r2.json?.units?.slow?.result}`,
      );
      assert.deepEqual(aliveAtExit, [], 'the first reconcile did not exit while slow was still running');
      assert.equal(r1.json?.units?.bad?.result, 'failed', describeResult(r1));
      assert.match(r1.json.units.bad.detail, /environment variable X contains a NUL byte/);
      assert.equal(r1.json.units.slow.result, 'executed');
      assert.deepEqual(unleased, [], `the run held the lease while slow ran; it was gone ${unleased.length} time(s) while slow ran`);
    } finally {
      for (const h of handles) if (h.exitedAt === undefined) killPid(h.pid);
      for (const pid of pidsIn(pids)) killPid(pid);
    }
  });

  for (const [where, spec, pointer] of [
    ['argv (run)', 'run: ["echo", "x\\0y"]', '/spec/run/1'],
    ['an env value', 'run: ["echo", "ok"]\nenv: {NAME: "x\\0y"}', '/spec/env/NAME'],
  ]) {
    test(`2b: a NUL byte in ${where} is NYL-SOURCE-INVALID at nyl.yaml:<line> ${pointer}; exit 1; state unchanged`, () => {
      const ctx = setup(() => ({ bad: 'run: ["echo", "ok"]' }));
      changeUnits(ctx, () => ({ bad: spec }), `bad: a NUL byte in ${where}`);
      const text = fs.readFileSync(path.join(ctx.project, 'nyl.yaml'), 'utf8');
      const line = text.split('\n').findIndex((l) => l.includes('x\\0y')) + 1;
      assert.ok(line > 0);
      const before = refsUnder(ctx.bare);
      const r = reconcile(ctx.project, ['-o', 'json']);
      assert.ok(r.json, describeResult(r));
      const invalid = r.json.errors.filter((e) => e.code === 'NYL-SOURCE-INVALID');
      const d = invalid.find((e) => e.location?.pointer === pointer);
      assert.ok(
        d,
        `NYL-SOURCE-INVALID at ${pointer}; errors: ${JSON.stringify(r.json.errors.map((e) => ({ code: e.code, message: e.message.split('\n')[0], location: e.location })))}`,
      );
      assert.equal(d.location.file, 'nyl.yaml');
      assert.equal(d.location.line, line, `the line of the value in nyl.yaml: ${JSON.stringify(d.location)}`);
      assert.equal(r.code, 1, describeResult(r));
      assert.deepEqual(refsUnder(ctx.bare), before, 'nothing written to state');
    });
  }
});

describe('3. checkpoints do not wait for siblings', () => {
  test('a finished unit is checkpointed within 1 s while its sibling runs (30 s); a takeover imports it; it ran once', async (t) => {
    // The issue's bound; measured 24-66 ms on this 2-core machine under test load (slow runs 30 s,
    // which is what the checkpoint waited for before the fix).
    const CHECKPOINT_MS = 1000;
    const POLL_MS = 10000;
    const units = [
      {
        name: 'fast',
        recovery: 'converge', // without a checkpoint, the takeover would run it again
        dependsOn: [],
        script: (logDir) =>
          [`echo "$NYL_RUN" >> "${logDir}/$NYL_UNIT.log"`, `printf '{"unit":"fast"}' > "$NYL_OUTPUTS"`, `touch "${logDir}/fast.done"`].join('\n'),
      },
      {
        name: 'slow',
        dependsOn: [],
        script: (logDir) => [`echo $$ > "${logDir}/slow.pid"`, `echo "$NYL_RUN" >> "${logDir}/$NYL_UNIT.log"`, 'sleep 30'].join('\n'),
      },
    ];
    const sc = new Scenario({ units });
    const slowPid = path.join(sc.logDir, 'slow.pid');
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      const h = sc.start(['reconcile', '-e', ENV, '-o', 'json']);
      const ended = h.done.then((r) => {
        throw new Error(`reconcile ended early: ${describeResult(r)}`);
      });
      await Promise.race([waitForFile(path.join(sc.logDir, 'fast.done'), 30000), ended]);
      const finished = Date.now();
      let checkpointAfter;
      let run;
      for (;;) {
        run ??= sc.runRefs()[0];
        const text = run && gitShow(sc.bare, `${RUNS}${run}:${runUnitFile('fast')}`);
        if (text && YAML.parse(text)?.checkpoint?.result === 'receipt') {
          checkpointAfter = Date.now() - finished;
          break;
        }
        if (Date.now() - finished > POLL_MS || h.exited) break;
        await sleep(20);
      }
      t.diagnostic(`fast's receipt checkpoint: ${checkpointAfter === undefined ? `not within ${POLL_MS} ms` : `${checkpointAfter} ms`} after fast finished`);
      await Promise.race([waitForFile(slowPid, 30000), ended]);
      sc.toolPids.push(...pidsIn(slowPid));
      ended.catch(() => undefined);

      const crashed = await h.crash();
      assert.equal(crashed.signal, 'SIGKILL', describeResult(crashed));
      for (const pid of pidsIn(slowPid)) killPid(pid);
      await sc.leaseBreak('test');
      const takeover = await sc.ok(['reconcile', '-e', ENV, '-o', 'json'], [0, 2, 3, 4]);
      const fast = takeover.json?.units?.fast;

      assert.ok(
        checkpointAfter !== undefined && checkpointAfter <= CHECKPOINT_MS,
        `fast's receipt checkpoint reached ${RUNS}${run}: ${checkpointAfter === undefined ? `not within ${POLL_MS} ms` : `after ${checkpointAfter} ms`} (limit ${CHECKPOINT_MS} ms); the takeover then reported fast ${fast?.result} (${fast?.detail})`,
      );
      assert.equal(fast?.result, 'imported', `the takeover imports fast's receipt: ${describeResult(takeover)}`);
      assert.equal(sc.observedDoc('fast')?.receipt?.run, run, "the receipt is the dead run's");
      assert.equal(sc.executionCounts().fast, 1, 'fast ran once');
    } finally {
      for (const pid of pidsIn(slowPid)) killPid(pid);
      await sc.cleanup();
    }
  });
});

describe('4. lease deadlines keep their milliseconds', () => {
  test('a 2s lease taken at a pinned instant lasts at least 2 s from it: lease and run ref deadlines >= start + 2000 ms', async () => {
    const sc = new Scenario({ units: [{ name: 'gated', dependsOn: [] }], lease: '2s' });
    const gate = fs.mkdtempSync(path.join(sc.dir, 'slow-'));
    (sc.slowDirs ??= []).push(gate);
    fs.writeFileSync(path.join(gate, 'gate'), '');
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      // Just past a whole second: the lease is taken within the same second (nyl takes ~0.1-0.3 s
      // from its clock's start to the lease), so a deadline floored to seconds is short of start + 2 s.
      const pinned = Math.floor(Date.now() / 1000) * 1000 + 50;
      const h = sc.start(['reconcile', '-e', ENV, '-o', 'json'], {
        env: { NYL_TEST_NOW: new Date(pinned).toISOString(), CRASH_SLOW_UNIT: 'gated', CRASH_SLOW_DIR: gate },
      });
      await Promise.race([
        waitForFile(path.join(gate, 'running'), 30000),
        h.done.then((r) => {
          throw new Error(`reconcile ended before gated ran: ${describeResult(r)}`);
        }),
      ]);
      const leases = chainOf(sc.bare, LEASE).map((c) => YAML.parse(gitShow(sc.bare, `${c}:lease.yaml`)));
      const [run] = sc.runRefs();
      const runDocs = chainOf(sc.bare, `${RUNS}${run}`).map((c) => YAML.parse(gitShow(sc.bare, `${c}:run.yaml`) ?? 'null'));
      fs.rmSync(path.join(gate, 'gate'), { force: true });
      const done = await h.done;

      assert.ok(leases.length > 0, 'the run holds the lease');
      const [acquired] = leases;
      const tip = leases[leases.length - 1];
      const start = new Date(pinned).toISOString();
      assert.ok(
        Date.parse(acquired.deadline) >= pinned + 2000,
        `the lease as acquired: deadline ${acquired.deadline}, acquiredAt ${acquired.acquiredAt}, clock started at ${start}`,
      );
      assert.ok(Date.parse(tip.deadline) >= pinned + 2000, `${LEASE}:lease.yaml: deadline ${tip.deadline}, clock started at ${start}`);
      const [created] = runDocs;
      assert.ok(created?.deadline, `the run ref carries a deadline: ${JSON.stringify(runDocs)}`);
      assert.ok(Date.parse(created.deadline) >= pinned + 2000, `${RUNS}${run} as created: deadline ${created.deadline}, clock started at ${start}`);
      assert.equal(done.code, 0, describeResult(done));
    } finally {
      await sc.cleanup();
    }
  });
});
