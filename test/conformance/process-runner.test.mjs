// The ProcessRunner port (src/exec/process.ts): one suite of its contract, run against
// NodeProcessRunner (real processes: small `sh -c` scripts) and FakeProcessRunner (registered
// programs that behave the same, on a ManualClock with autoAdvance), once as given and once with
// group: true on every run (a process in its own group must look exactly the same to its caller:
// exit code, signal, streams, environment, spawn errors). Then the process-group rules, among
// them what happens when the runner's host (the Nyl process) dies: the process gets SIGTERM at
// once and SIGKILL killGraceMs later, and what it prints meanwhile is read (and dropped), so that
// it can save its state; the real runner runs in a host process the test kills
// (test/support/runner-host.mjs). Then FakeProcessRunner's own test API.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { NodeProcessRunner } from '../../dist/exec/process.js';
import { ManualClock } from '../fakes/clock.mjs';
import { FakeProcessRunner, blockUntil, dieBy, exitWith, ignoring, inTurn, sleepFor, writeOutputs } from '../fakes/process-runner.mjs';
import { isRunning } from '../support/proc.mjs';

const HOST = fileURLToPath(new URL('../support/runner-host.mjs', import.meta.url));

const GRACE = 200;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nyl-runner-conformance-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

// --- the behaviours, as real scripts and as fake programs -------------------------------------

const LOOP = 'while :; do sleep 0.05 </dev/null >/dev/null 2>&1; done';
const REAL = {
  exit3: ['sh', '-c', 'exit 3'],
  killSelf: ['sh', '-c', 'kill -TERM $$'],
  outErr: ['sh', '-c', 'printf out1; printf err1 >&2; printf out2; printf err2 >&2'],
  cat: ['cat'],
  printEnv: ['sh', '-c', 'printf "%s|%s" "${NYL_PROBE-unset}" "${NYL_CONFORMANCE_INHERITED-unset}"'],
  pwd: ['sh', '-c', 'pwd -P'],
  /** Prints ready, then ends with the first signal it gets (exec: no shell in between). */
  readySleep: ['sh', '-c', 'echo ready; exec sleep 5'],
  /** Exits 7 on SIGTERM. */
  graceful: ['sh', '-c', `trap 'exit 7' TERM; echo ready; ${LOOP}`],
  /** Ignores SIGTERM and SIGINT: only SIGKILL ends it. */
  stubborn: ['sh', '-c', `trap '' TERM INT; echo ready; ${LOOP}`],
  /** Starts a grandchild (its pid on stdout), then waits. */
  family: ['sh', '-c', 'sleep 30 </dev/null >/dev/null 2>&1 & echo $!; wait'],
  /** The same, printing its own pid and the grandchild's on one line. */
  familyPids: ['sh', '-c', 'sleep 30 </dev/null >/dev/null 2>&1 & echo $$ $!; wait'],
  /** Ignores SIGTERM and SIGINT, prints its pid and the pid of a grandchild, and waits. */
  stubbornPids: ['sh', '-c', `trap '' TERM INT; sleep 30 </dev/null >/dev/null 2>&1 & echo $$ $!; ${LOOP}`],
  /** Prints its whole environment as JSON. */
  envJson: [process.execPath, '-e', 'process.stdout.write(JSON.stringify(process.env))'],
  /** Exits at once, leaving a background child that holds its stdout for 3 s. */
  detach: ['sh', '-c', 'echo started; sleep 3 & exit 0'],
  /**
   * Prints its pid, then waits. On SIGTERM it saves its state: prints a line every 50 ms for half
   * a second, then 1 MB at once (more than a pipe holds), then writes $MARKER and exits 0.
   */
  saver: [
    'sh',
    '-c',
    `trap 'i=0; while [ $i -lt 10 ]; do echo saving; sleep 0.05; i=$((i+1)); done; yes | head -c 1000000; echo saved > "$MARKER"; exit 0' TERM; echo $$; ${LOOP}`,
  ],
  /** Prints its pid; dies of SIGTERM (as a provider plugin does); on SIGINT writes $MARKER and exits 0. */
  intSaver: ['sh', '-c', `trap 'echo saved > "$MARKER"; exit 0' INT; echo $$; ${LOOP}`],
};

const ready = (io) => io.stdout('ready\n');
const FAKE_PROGRAMS = {
  exit3: exitWith(3),
  killSelf: dieBy('SIGTERM'),
  outErr: async (_argv, _options, io) => {
    io.stdout('out1');
    io.stderr('err1');
    io.stdout('out2');
    io.stderr('err2');
    return { code: 0 };
  },
  cat: async (_argv, _options, io) => {
    if (io.stdin) io.stdout(io.stdin);
    return { code: 0 };
  },
  printEnv: async (_argv, _options, io) => {
    io.stdout(`${io.env.NYL_PROBE ?? 'unset'}|${io.env.NYL_CONFORMANCE_INHERITED ?? 'unset'}`);
    return { code: 0 };
  },
  pwd: async (_argv, _options, io) => {
    io.stdout(fs.realpathSync(io.cwd ?? process.cwd()));
    return { code: 0 };
  },
  readySleep: async (argv, options, io) => {
    ready(io);
    return sleepFor(5000)(argv, options, io);
  },
  graceful: async (_argv, _options, io) => {
    io.trap('SIGTERM');
    ready(io);
    await Promise.race([io.nextSignal(), io.sleep(60_000)]);
    return { code: 7 };
  },
  stubborn: ignoring(['SIGTERM', 'SIGINT'], async (argv, options, io) => {
    ready(io);
    return sleepFor(60_000)(argv, options, io);
  }),
  family: async (_argv, _options, io) => {
    io.stdout(`${io.spawnChild()}\n`);
    await io.sleep(30_000);
    return { code: 0 };
  },
  familyPids: async (_argv, _options, io) => {
    io.stdout(`${io.pid} ${io.spawnChild()}\n`);
    await io.sleep(30_000);
    return { code: 0 };
  },
  stubbornPids: ignoring(['SIGTERM', 'SIGINT'], async (_argv, _options, io) => {
    io.stdout(`${io.pid} ${io.spawnChild()}\n`);
    await io.sleep(60_000);
    return { code: 0 };
  }),
  envJson: async (_argv, _options, io) => {
    io.stdout(JSON.stringify(io.env));
    return { code: 0 };
  },
  detach: async (_argv, _options, io) => {
    io.stdout('started\n');
    io.spawnChild();
    return { code: 0 };
  },
  intSaver: async (_argv, _options, io) => {
    io.trap('SIGINT');
    io.stdout(`${io.pid}\n`);
    await io.nextSignal();
    fs.writeFileSync(io.env.MARKER, 'saved\n');
    return { code: 0 };
  },
  saver: async (_argv, _options, io) => {
    io.trap('SIGTERM');
    io.stdout(`${io.pid}\n`);
    await io.nextSignal();
    for (let i = 0; i < 10; i++) {
      io.stdout('saving\n');
      await io.sleep(50);
    }
    io.stdout(Buffer.alloc(1_000_000, 'y'));
    fs.writeFileSync(io.env.MARKER, 'saved\n');
    return { code: 0 };
  },
};

/** Runs argv in a host process (a stand-in for Nyl) that the test then kills. */
function realHost(argv, options) {
  const child = spawn(process.execPath, [HOST, JSON.stringify(options), ...argv], { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  const line = new Promise((resolve) => {
    child.stdout.on('data', (b) => {
      text += b;
      if (text.includes('\n')) resolve(text.split('\n')[0]);
    });
    // A host that died before its program printed a line answers an empty one, rather than none ever.
    child.on('close', () => resolve(''));
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return { line, kill: (signal = 'SIGKILL') => child.kill(signal), exited, isAlive: isRunning, wait: (ms) => new Promise((r) => setTimeout(r, ms)) };
}

/**
 * The same for the fake: a runner of its own whose clock stands still (a grace period never ends
 * by itself: wait(ms) advances it); its host dies with killHost(), and a signal to the host
 * cancels the run.
 */
function fakeHost(argv, options) {
  const clock = new ManualClock(0);
  const runner = new FakeProcessRunner({ clock, programs: FAKE_PROGRAMS });
  const cancel = new AbortController();
  const run = startStreaming(runner, argv, { ...options, cancel: cancel.signal });
  return {
    line: run.ready,
    kill: (signal = 'SIGKILL') => (signal === 'SIGKILL' ? runner.killHost() : cancel.abort(signal)),
    exited: Promise.resolve(),
    isAlive: (pid) => runner.isAlive(pid),
    wait: (ms) => clock.advance(ms),
  };
}

const IMPLS = [
  {
    name: 'NodeProcessRunner',
    real: true,
    make: () => ({ runner: new NodeProcessRunner(), argv: (key) => [...REAL[key]], isAlive: isRunning, host: (key, options) => realHost(REAL[key], options) }),
  },
  {
    name: 'FakeProcessRunner',
    real: false,
    make: () => {
      const runner = new FakeProcessRunner({ programs: FAKE_PROGRAMS });
      return { runner, argv: (key) => [key], isAlive: (pid) => runner.isAlive(pid), host: (key, options) => fakeHost([key], options) };
    },
  },
];

/** The same implementation with group: true on every run that does not say otherwise. */
function grouped(impl) {
  return {
    ...impl,
    name: `${impl.name}, group: true`,
    make: () => {
      const made = impl.make();
      const inner = made.runner;
      const runner = Object.create(inner);
      runner.run = (argv, options = {}) => inner.run(argv, { group: true, ...options });
      return { ...made, runner };
    },
  };
}

// --- helpers ----------------------------------------------------------------------------------

/** Starts argv with stdout streamed; resolves `ready` when the program has printed its first line. */
function startStreaming(runner, argv, options = {}) {
  let text = '';
  let markReady;
  const ready = new Promise((resolve) => (markReady = resolve));
  const done = runner.run(argv, {
    ...options,
    onStdout: (chunk) => {
      text += chunk.toString();
      if (text.includes('\n')) markReady(text.split('\n')[0]);
    },
  });
  done.then(() => markReady(undefined));
  return { ready, done, text: () => text };
}

/** Polls predicate every 10 ms (of `wait`: real time by default) for up to ms; false when it never held. */
async function eventually(predicate, ms = 2000, wait = (t) => new Promise((r) => setTimeout(r, t))) {
  for (let waited = 0; !predicate(); waited += 10) {
    if (waited > ms) return false;
    await wait(10);
  }
  return true;
}

function assertResultShape(result, argv) {
  assert.deepEqual(result.argv, argv);
  assert.ok(Buffer.isBuffer(result.stdout) && Buffer.isBuffer(result.stderr));
  assert.equal(typeof result.timedOut, 'boolean');
  assert.equal(typeof result.cancelled, 'boolean');
  assert.ok(typeof result.durationMs === 'number' && result.durationMs >= 0);
}

function assertNotStarted(result, code) {
  assert.ok(result.spawnError, 'spawnError is set');
  assert.equal(result.spawnError.code, code);
  assert.equal(result.signal, null);
  assert.equal(result.timedOut, false);
  assert.equal(result.cancelled, false);
  assert.equal(result.stdout.length + result.stderr.length, 0);
}

/** Calls run() and checks it neither threw synchronously nor returned something other than a promise. */
function runSafely(runner, argv, options) {
  let p;
  assert.doesNotThrow(() => {
    p = runner.run(argv, options);
  });
  assert.ok(p instanceof Promise || typeof p?.then === 'function');
  return p;
}

// --- the suite --------------------------------------------------------------------------------

for (const impl of [...IMPLS, ...IMPLS.map(grouped)]) {
  describe(`ProcessRunner contract: ${impl.name}`, () => {
    test('exit code, empty streams, flags false, argv echoed', async () => {
      const { runner, argv } = impl.make();
      const result = await runner.run(argv('exit3'));
      assertResultShape(result, argv('exit3'));
      assert.equal(result.code, 3);
      assert.equal(result.signal, null);
      assert.equal(result.timedOut, false);
      assert.equal(result.cancelled, false);
      assert.equal(result.spawnError, undefined);
    });

    test('a process killed by a signal: code null, the signal named', async () => {
      const { runner, argv } = impl.make();
      const result = await runner.run(argv('killSelf'));
      assert.equal(result.code, null);
      assert.equal(result.signal, 'SIGTERM');
      assert.equal(result.timedOut, false);
      assert.equal(result.cancelled, false);
    });

    test('stdout and stderr are captured separately when no callback takes them', async () => {
      const { runner, argv } = impl.make();
      const result = await runner.run(argv('outErr'));
      assert.equal(result.code, 0);
      assert.equal(result.stdout.toString(), 'out1out2');
      assert.equal(result.stderr.toString(), 'err1err2');
    });

    test('onStdout / onStderr take their stream (Buffer chunks, in order); the result buffer stays empty', async () => {
      const { runner, argv } = impl.make();
      const out = [];
      const onlyOut = await runner.run(argv('outErr'), { onStdout: (b) => out.push(b) });
      assert.ok(out.every((b) => Buffer.isBuffer(b)));
      assert.equal(Buffer.concat(out).toString(), 'out1out2');
      assert.equal(onlyOut.stdout.length, 0);
      assert.equal(onlyOut.stderr.toString(), 'err1err2', 'the other stream is still captured');
      const err = [];
      const both = await runner.run(argv('outErr'), { onStdout: () => {}, onStderr: (b) => err.push(b) });
      assert.equal(Buffer.concat(err).toString(), 'err1err2');
      assert.equal(both.stdout.length + both.stderr.length, 0);
    });

    test('input reaches stdin (string or Buffer, large too); without input stdin is at EOF', async () => {
      const { runner, argv } = impl.make();
      assert.equal((await runner.run(argv('cat'), { input: 'hello\nworld\n' })).stdout.toString(), 'hello\nworld\n');
      const big = Buffer.alloc(256 * 1024, 'x');
      const echoed = await runner.run(argv('cat'), { input: big });
      assert.equal(echoed.code, 0);
      assert.ok(echoed.stdout.equals(big));
      const none = await runner.run(argv('cat'), { timeoutMs: 5000 });
      assert.equal(none.code, 0);
      assert.equal(none.timedOut, false, 'cat saw EOF instead of waiting on an open stdin');
      assert.equal(none.stdout.length, 0);
    });

    test('env is exactly the given environment (nothing inherited); without env the process inherits ours', async () => {
      const { runner, argv } = impl.make();
      process.env.NYL_CONFORMANCE_INHERITED = 'leaked';
      try {
        const probe = `a b $HOME "q" 'x' \\ ü`;
        const given = await runner.run(argv('printEnv'), { env: { PATH: process.env.PATH, NYL_PROBE: probe } });
        assert.equal(given.stdout.toString(), `${probe}|unset`);
        const inherited = await runner.run(argv('printEnv'));
        assert.equal(inherited.stdout.toString(), 'unset|leaked');
      } finally {
        delete process.env.NYL_CONFORMANCE_INHERITED;
      }
    });

    test('without group, env reaches the process exactly: names a shell drops or sets (A.B, IFS, PWD, SHLVL, _) stay as given', async () => {
      const { runner, argv } = impl.make();
      const env = {
        PATH: process.env.PATH,
        'A.B': 'dotted',
        'A-B': 'dashed',
        '1X': 'digit',
        IFS: 'x',
        PWD: '/nowhere',
        SHLVL: '7',
        _: 'underscore',
        MULTI: 'line 1\nline 2',
        EMPTY: '',
      };
      const result = await runner.run(argv('envJson'), { env, cwd: tmp, group: false });
      assert.equal(result.code, 0, result.stderr.toString());
      assert.deepEqual(JSON.parse(result.stdout.toString()), env);
    });

    test('cwd is the working directory', async () => {
      const { runner, argv } = impl.make();
      const dir = fs.mkdtempSync(path.join(tmp, 'cwd-'));
      const result = await runner.run(argv('pwd'), { cwd: dir });
      assert.equal(result.stdout.toString().trim(), fs.realpathSync(dir));
    });

    test('a missing program: spawnError ENOENT, no exception', async () => {
      const { runner } = impl.make();
      const argv = ['nyl-conformance-no-such-program', 'x'];
      const result = await runSafely(runner, argv);
      assertResultShape(result, argv);
      assertNotStarted(result, 'ENOENT');
    });

    test('a missing program, a missing cwd, a file that is not executable: code is null', async () => {
      const { runner, argv } = impl.make();
      const plain = path.join(tmp, 'not-executable');
      fs.writeFileSync(plain, '#!/bin/sh\nexit 0\n', { mode: 0o644 });
      const missing = await runner.run(['nyl-conformance-no-such-program']);
      const noCwd = await runner.run(argv('exit3'), { cwd: path.join(tmp, 'no-such-dir') });
      const notExec = await runner.run([plain]);
      assertNotStarted(noCwd, 'ENOENT');
      assertNotStarted(notExec, 'EACCES');
      for (const r of [missing, noCwd, notExec]) assert.equal(r.code, null, `${r.spawnError?.code}: code ${r.code}`);
    });

    test('a NUL byte in argv or in the environment: spawnError ERR_INVALID_ARG_VALUE, code null, no exception', async () => {
      const { runner, argv } = impl.make();
      const env = { PATH: process.env.PATH };
      const cases = [
        [[...argv('exit3'), 'a\0b'], undefined],
        [['sh\0x', '-c', 'exit 0'], undefined],
        [argv('exit3'), { env: { ...env, BAD: 'x\0y' } }],
        [argv('exit3'), { env: { ...env, ['B\0AD']: 'x' } }],
      ];
      for (const [a, options] of cases) {
        const result = await runSafely(runner, a, options);
        assertResultShape(result, a);
        assertNotStarted(result, 'ERR_INVALID_ARG_VALUE');
        assert.equal(result.code, null);
        assert.match(result.spawnError.message, /null bytes/);
      }
    });

    test('run() never rejects, whatever it is given', async () => {
      const { runner, argv } = impl.make();
      const bad = [
        [[], undefined],
        [[''], undefined],
        [['nyl-conformance-no-such-program'], { timeoutMs: 10, cancel: AbortSignal.abort('SIGINT') }],
        [[...argv('exit3'), '\0'], { cancel: AbortSignal.abort() }],
        [argv('exit3'), { env: { X: '\0' }, input: 'x' }],
        [argv('exit3'), { cwd: path.join(tmp, 'nope') }],
      ];
      const settled = await Promise.allSettled(bad.map(([a, o]) => runSafely(runner, a, o)));
      for (const [i, s] of settled.entries()) {
        assert.equal(s.status, 'fulfilled', `case ${i}: ${s.reason}`);
        assert.ok(s.value.spawnError, `case ${i} has a spawnError`);
      }
    });

    test('timeout: SIGTERM ends a process that honours it; timedOut true, no SIGKILL', async () => {
      const { runner, argv } = impl.make();
      const result = await runner.run(argv('readySleep'), { timeoutMs: 150, killGraceMs: 2000 });
      assert.equal(result.timedOut, true);
      assert.equal(result.cancelled, false);
      assert.equal(result.code, null);
      assert.equal(result.signal, 'SIGTERM');
      assert.ok(result.durationMs >= 140 && result.durationMs < 2000, `took ${result.durationMs} ms`);
    });

    test('timeout: a process that handles SIGTERM keeps its own exit code; timedOut true', async () => {
      const { runner, argv } = impl.make();
      const result = await runner.run(argv('graceful'), { timeoutMs: 150, killGraceMs: 2000 });
      assert.equal(result.timedOut, true);
      assert.equal(result.code, 7);
      assert.equal(result.signal, null);
    });

    test('timeout: a process that ignores SIGTERM gets SIGKILL killGraceMs later', async () => {
      const { runner, argv } = impl.make();
      const result = await runner.run(argv('stubborn'), { timeoutMs: 150, killGraceMs: GRACE });
      assert.equal(result.timedOut, true);
      assert.equal(result.cancelled, false);
      assert.equal(result.code, null);
      assert.equal(result.signal, 'SIGKILL');
      assert.ok(result.durationMs >= 150 + GRACE - 10, `took ${result.durationMs} ms`);
    });

    test('a process that ends in time: timedOut false, its cancel listener removed', async () => {
      const { runner, argv } = impl.make();
      const ac = new AbortController();
      const result = await runner.run(argv('exit3'), { timeoutMs: 5000, cancel: ac.signal, killGraceMs: GRACE });
      assert.equal(result.code, 3);
      assert.equal(result.timedOut, false);
      assert.equal(result.cancelled, false);
      assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
      ac.abort('SIGINT'); // after the end: nothing to signal, nothing thrown
    });

    test("cancel with reason 'SIGINT' forwards SIGINT; cancelled true", async () => {
      const { runner, argv } = impl.make();
      const ac = new AbortController();
      const run = startStreaming(runner, argv('readySleep'), { cancel: ac.signal, killGraceMs: 2000 });
      assert.equal(await run.ready, 'ready');
      ac.abort('SIGINT');
      const result = await run.done;
      assert.equal(result.cancelled, true);
      assert.equal(result.timedOut, false);
      assert.equal(result.code, null);
      assert.equal(result.signal, 'SIGINT');
    });

    for (const [label, reason] of [
      ['no reason', undefined],
      ["'SIGTERM'", 'SIGTERM'],
      ['an Error', new Error('stop')],
    ]) {
      test(`cancel with ${label} as the reason forwards SIGTERM`, async () => {
        const { runner, argv } = impl.make();
        const ac = new AbortController();
        const run = startStreaming(runner, argv('readySleep'), { cancel: ac.signal, killGraceMs: 2000 });
        await run.ready;
        ac.abort(reason);
        const result = await run.done;
        assert.equal(result.cancelled, true);
        assert.equal(result.signal, 'SIGTERM');
      });
    }

    test('cancel: a process that ignores the signal gets SIGKILL killGraceMs later', async () => {
      const { runner, argv } = impl.make();
      const ac = new AbortController();
      const run = startStreaming(runner, argv('stubborn'), { cancel: ac.signal, killGraceMs: GRACE });
      await run.ready;
      ac.abort('SIGINT');
      const result = await run.done;
      assert.equal(result.cancelled, true);
      assert.equal(result.code, null);
      assert.equal(result.signal, 'SIGKILL');
    });

    test('cancel already aborted before run(): the process is stopped at once; cancelled true', async () => {
      const { runner, argv } = impl.make();
      const result = await runner.run(argv('readySleep'), { cancel: AbortSignal.abort('SIGINT'), killGraceMs: GRACE });
      assert.equal(result.cancelled, true);
      assert.equal(result.code, null);
      assert.ok(['SIGINT', 'SIGKILL'].includes(result.signal), result.signal);
      assert.ok(result.durationMs < 2000);
    });

    test('started counts runs', async () => {
      const { runner, argv } = impl.make();
      const before = runner.started;
      await runner.run(argv('exit3'));
      await Promise.all([runner.run(argv('exit3')), runner.run(argv('exit3'))]);
      assert.equal(runner.started - before, 3);
    });
  });
}

// --- process groups, and the death of the host ----------------------------------------------------

/** The pids a host's program printed on its first line; fails the test when it printed none. */
function pidsOf(line) {
  const pids = line.split(' ').map(Number);
  assert.ok(
    pids.every((p) => Number.isInteger(p) && p > 0),
    `the program printed its pids, not ${JSON.stringify(line)}`,
  );
  return pids;
}

function killQuietly(pid) {
  // Never 0 or a negative number: those would signal the test's own process group.
  if (!(pid > 0)) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone */
  }
}

for (const impl of IMPLS) {
  describe(`ProcessRunner contract, process groups: ${impl.name}`, () => {
    test('group: true signals the whole process group: a child of the child ends too', async () => {
      const { runner, argv, isAlive } = impl.make();
      const ac = new AbortController();
      const run = startStreaming(runner, argv('family'), { cancel: ac.signal, killGraceMs: GRACE, group: true });
      const grandchild = Number(await run.ready);
      assert.ok(grandchild > 0 && isAlive(grandchild), 'the grandchild runs');
      ac.abort('SIGTERM');
      const result = await run.done;
      assert.equal(result.cancelled, true);
      assert.ok(await eventually(() => !isAlive(grandchild)), `grandchild ${grandchild} is gone`);
    });

    test('without group, the same grandchild outlives the cancelled process (so the test above means something)', async () => {
      const { runner, argv, isAlive } = impl.make();
      const ac = new AbortController();
      const run = startStreaming(runner, argv('family'), { cancel: ac.signal, killGraceMs: GRACE });
      const grandchild = Number(await run.ready);
      ac.abort('SIGTERM');
      const result = await run.done;
      try {
        assert.equal(result.cancelled, true);
        assert.equal(isAlive(grandchild), true);
      } finally {
        if (impl.real) {
          try {
            process.kill(grandchild, 'SIGKILL');
          } catch {
            /* gone */
          }
        }
      }
    });

    test('a program that exits while a background child still holds its output has ended: no false timeout', async () => {
      const { runner, argv } = impl.make();
      const result = await runner.run(argv('detach'), { timeoutMs: 1500, killGraceMs: GRACE, group: true });
      assert.equal(result.code, 0);
      assert.equal(result.timedOut, false);
      assert.match(result.stdout.toString(), /started/);
      assert.ok(result.durationMs < 1500, `${result.durationMs} ms`);
    });

    test('stopSignal SIGINT: a timeout and a cancellation by SIGTERM send SIGINT (a tool that stops on SIGINT, as Terraform does)', async () => {
      const { runner, argv } = impl.make();
      const timed = await runner.run(argv('readySleep'), { timeoutMs: 300, killGraceMs: 5000, stopSignal: 'SIGINT' });
      assert.deepEqual([timed.timedOut, timed.signal], [true, 'SIGINT']);
      const ac = new AbortController();
      const run = startStreaming(runner, argv('readySleep'), { cancel: ac.signal, killGraceMs: 5000, stopSignal: 'SIGINT' });
      await run.ready;
      ac.abort('SIGTERM');
      const cancelled = await run.done;
      assert.deepEqual([cancelled.cancelled, cancelled.signal], [true, 'SIGINT']);
    });

    test('group: true: when the host (the Nyl process) dies by SIGKILL, the process and its child get SIGTERM at once: one that ends on it is gone at once', async () => {
      const h = impl.make().host('familyPids', { group: true, killGraceMs: 30_000 });
      const [pid, grandchild] = pidsOf(await h.line);
      const isAlive = h.isAlive;
      assert.ok(isAlive(pid) && isAlive(grandchild), 'the process and its child run');
      h.kill('SIGKILL');
      await h.exited;
      const gone = await eventually(() => !isAlive(pid) && !isAlive(grandchild), 2000, h.wait);
      try {
        assert.ok(gone, `process ${pid} and its child ${grandchild} end within 2 s of the host's death, not after the 30 s grace`);
      } finally {
        if (impl.real) for (const p of [pid, grandchild]) killQuietly(p);
      }
    });

    test('group: true: a process that ignores SIGTERM, and its child, are killed killGraceMs after the host died, not before', async () => {
      const h = impl.make().host('stubbornPids', { group: true, killGraceMs: 1000 });
      const [pid, grandchild] = pidsOf(await h.line);
      const isAlive = h.isAlive;
      h.kill('SIGKILL');
      await h.exited;
      const died = Date.now();
      await h.wait(500);
      try {
        assert.ok(isAlive(pid) && isAlive(grandchild), 'both still run halfway through the grace');
        assert.ok(
          await eventually(() => !isAlive(pid) && !isAlive(grandchild), 3000, h.wait),
          `process ${pid} and its child ${grandchild} end once the grace is over`,
        );
        if (impl.real) assert.ok(Date.now() - died >= 900, `not before the grace is over (${Date.now() - died} ms)`);
      } finally {
        if (impl.real) for (const p of [pid, grandchild]) killQuietly(p);
      }
    });

    /** Runs `program` (which writes $MARKER once it saved its state) in a host, kills the host: the process saves and ends by itself. */
    async function savesAfterHostDeath(program, options = {}) {
      const marker = path.join(fs.mkdtempSync(path.join(tmp, 'saver-')), 'saved');
      const h = impl.make().host(program, { group: true, killGraceMs: 30_000, ...options, env: { PATH: process.env.PATH, MARKER: marker } });
      const [pid] = pidsOf(await h.line);
      h.kill('SIGKILL');
      await h.exited;
      try {
        assert.ok(await eventually(() => fs.existsSync(marker), 10_000, h.wait), 'the process saved its state');
        assert.ok(await eventually(() => !h.isAlive(pid), 2000, h.wait), `process ${pid} ended by itself`);
      } finally {
        if (impl.real) killQuietly(pid);
      }
    }

    test('group: true: a process that saves its state on SIGTERM after the host died prints (1 MB too) and finishes: what it prints is read, not refused', () =>
      savesAfterHostDeath('saver'));

    test("group: true with stopSignal SIGINT: a dead host's watchdog sends SIGINT, not SIGTERM (which would kill a Terraform provider plugin)", () =>
      savesAfterHostDeath('intSaver', { stopSignal: 'SIGINT' }));

    if (impl.real) {
      test("group: true: a process's watchdog that someone killed is replaced; the process still gets SIGTERM when its host dies", async () => {
        const h = impl.make().host('familyPids', { group: true, killWatchdog: true });
        const [pid, grandchild] = pidsOf(await h.line);
        h.kill('SIGKILL');
        await h.exited;
        const gone = await eventually(() => !h.isAlive(pid) && !h.isAlive(grandchild), 2000);
        try {
          assert.ok(gone, `process ${pid} and its child ${grandchild} end within 2 s of the host's death`);
        } finally {
          for (const p of [pid, grandchild]) killQuietly(p);
        }
      });
    }

    test("group: true: a program named with '=' starts as without group", async () => {
      const { runner } = impl.make();
      const dir = fs.mkdtempSync(path.join(tmp, 'eq-'));
      const program = path.join(dir, 'a=b');
      fs.writeFileSync(program, '#!/bin/sh\nexit 4\n', { mode: 0o755 });
      if (!impl.real) runner.register('a=b', exitWith(4));
      assert.equal((await runSafely(runner, [program], { group: true })).code, 4);
      assert.equal((await runner.run([program])).code, 4);
    });

    // The environment goes through exec's environment, never through argv (/proc/PID/cmdline is
    // world-readable): what a POSIX shell cannot pass on is left out, the same whatever /bin/sh is.
    test('group: true: env reaches the process as given for every shell name; other names, IFS, OPTIND, PPID and _ are left out, PWD is the working directory', async () => {
      const { runner, argv } = impl.make();
      const given = { PATH: process.env.PATH, SECRET: 'line 1\nline 2 $HOME `x`', SHLVL: '7', EMPTY: '' };
      const env = { ...given, 'A.B': 'dotted', 'A-B': 'dashed', '1X': 'digit', IFS: 'x', OPTIND: '3', PPID: '5', _: 'underscore', PWD: '/nowhere' };
      const result = await runner.run(argv('envJson'), { env, cwd: tmp, group: true });
      assert.equal(result.code, 0, result.stderr.toString());
      assert.deepEqual(JSON.parse(result.stdout.toString()), { ...given, PWD: tmp });
    });

    test('without group, the same process outlives its dead host (so the tests above mean something)', async () => {
      const h = impl.make().host('familyPids', { group: false });
      const [pid, grandchild] = pidsOf(await h.line);
      const isAlive = h.isAlive;
      h.kill('SIGKILL');
      await h.exited;
      await new Promise((r) => setTimeout(r, 300));
      try {
        assert.ok(isAlive(pid) && isAlive(grandchild), 'both still run');
      } finally {
        if (impl.real) for (const p of [pid, grandchild]) killQuietly(p);
      }
    });
  });
}

// --- FakeProcessRunner's own test API -----------------------------------------------------------

describe('FakeProcessRunner: test API', () => {
  test('records every call with argv, cwd and env; programs by name, basename or predicate; later wins', async () => {
    const runner = new FakeProcessRunner({ programs: { tool: exitWith(1) } });
    runner.register('tool', exitWith(2));
    runner.register((argv) => argv[0] === 'any' && argv[1] === '--special', exitWith(9));
    runner.register('any', exitWith(4));
    assert.equal((await runner.run(['tool'])).code, 2);
    assert.equal((await runner.run(['/usr/local/bin/tool'])).code, 2);
    assert.equal((await runner.run(['any', '--special'], { cwd: tmp, env: { A: '1', B: undefined } })).code, 4, 'the later registration wins');
    assert.equal(runner.calls.length, 3);
    assert.deepEqual(runner.calls[2].argv, ['any', '--special']);
    assert.equal(runner.calls[2].cwd, tmp);
    assert.deepEqual(runner.calls[2].env, { A: '1' });
    assert.equal(runner.calls[2].result.code, 4);
    assert.equal(runner.started, 3);
  });

  test('a handler that throws ends its process with code 1 and the error on stderr, kept in handlerErrors', async () => {
    const runner = new FakeProcessRunner({
      programs: {
        broken: async () => {
          throw new Error('handler bug');
        },
      },
    });
    const result = await runner.run(['broken']);
    assert.equal(result.code, 1);
    assert.match(result.stderr.toString(), /handler bug/);
    assert.equal(runner.handlerErrors.length, 1);
  });

  test('writeOutputs writes NYL_OUTPUTS (JSON, or a string as it is)', async () => {
    const file = path.join(tmp, 'outputs.json');
    const runner = new FakeProcessRunner({ programs: { good: writeOutputs({ a: 1 }), raw: writeOutputs('{not json', { code: 0 }) } });
    assert.equal((await runner.run(['good'], { env: { NYL_OUTPUTS: file } })).code, 0);
    assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { a: 1 });
    await runner.run(['raw'], { env: { NYL_OUTPUTS: file } });
    assert.equal(fs.readFileSync(file, 'utf8'), '{not json');
    assert.equal((await runner.run(['good'], { env: {} })).code, 2, 'no NYL_OUTPUTS: a tool error');
  });

  test('blockUntil holds a process running until released; running and waitForCall follow it', async () => {
    let release;
    const gate = new Promise((r) => (release = r));
    const runner = new FakeProcessRunner({ programs: { hold: blockUntil(gate) } });
    const done = runner.run(['hold', 'x']);
    const call = await runner.waitForCall(1);
    assert.deepEqual(call.argv, ['hold', 'x']);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(runner.running, 1);
    assert.equal(call.result, undefined);
    release();
    assert.equal((await done).code, 0);
    assert.equal(runner.running, 0);
    assert.equal(runner.isAlive(call.pid), false);
  });

  test('with a ManualClock without autoAdvance, timeouts and grace periods follow advance()', async () => {
    const clock = new ManualClock(0);
    const runner = new FakeProcessRunner({ clock, programs: { stubborn: ignoring('SIGTERM', sleepFor(60_000)) } });
    let result;
    runner.run(['stubborn'], { timeoutMs: 1000, killGraceMs: 500 }).then((r) => (result = r));
    await clock.advance(999);
    assert.deepEqual(runner.calls[0].signals, []);
    await clock.advance(1);
    assert.deepEqual(runner.calls[0].signals, ['SIGTERM']);
    assert.equal(result, undefined, 'SIGTERM is ignored');
    await clock.advance(499);
    assert.equal(result, undefined);
    await clock.advance(1);
    assert.equal(result?.signal, 'SIGKILL');
    assert.equal(result.timedOut, true);
    assert.equal(result.durationMs, 1500);
    assert.equal(clock.sleepers(), 0, 'no timer left behind');
  });

  test('io: trap + nextSignal observe cancellation; output after death is dropped; inTurn answers calls in turn', async () => {
    const seen = [];
    const runner = new FakeProcessRunner({
      programs: {
        watcher: async (_argv, _options, io) => {
          io.trap('SIGINT', (s) => seen.push(`trapped ${s}`));
          const signal = await io.nextSignal();
          seen.push(`next ${signal}`);
          io.stdout('cleaning up\n');
          return { code: 130 };
        },
        flaky: inTurn(exitWith(1), exitWith(0)),
        late: async (_argv, _options, io) => {
          await io.sleep(10_000);
          io.stdout('too late');
          return { code: 0 };
        },
      },
    });
    const ac = new AbortController();
    const watching = runner.run(['watcher'], { cancel: ac.signal });
    await runner.waitForCall(1);
    ac.abort('SIGINT');
    const result = await watching;
    assert.equal(result.code, 130);
    assert.equal(result.cancelled, true);
    assert.equal(result.stdout.toString(), 'cleaning up\n');
    assert.deepEqual(seen.sort(), ['next SIGINT', 'trapped SIGINT']);
    assert.deepEqual([(await runner.run(['flaky'])).code, (await runner.run(['flaky'])).code, (await runner.run(['flaky'])).code], [1, 0, 0]);
    const late = await runner.run(['late'], { timeoutMs: 100 });
    assert.equal(late.signal, 'SIGTERM');
    assert.equal(late.stdout.length, 0);
  });
});
