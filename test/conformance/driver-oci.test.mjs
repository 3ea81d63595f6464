// The OciImage driver (src/drivers/oci-image) against the Driver contract, as
// test/conformance/driver.test.mjs holds the Command driver to it: first with real podman
// (NodeProcessRunner, SystemClock, the busybox test image of test/support/oci-images.mjs), the
// scenarios concurrent, skipped with the reason where podman cannot run containers; then on
// FakeProcessRunner with a fake podman (virtual time, no podman needed): the exact command lines,
// the choice of runtime, the resolution of images and the stopping of a container.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { containerName, leftoverContainers, ociImageDriver } from '../../dist/drivers/oci-image/index.js';
import { NodeProcessRunner } from '../../dist/exec/process.js';
import { SystemClock } from '../../dist/util/clock.js';
import { ManualClock } from '../fakes/clock.mjs';
import { assertOutcome, assertReason } from '../support/driver-outcomes.mjs';
import { FakeProcessRunner, exitWith } from '../fakes/process-runner.mjs';
import { TEST_IMAGE, TEST_IMAGE_NOBODY, podmanAvailable, sh } from '../support/oci-images.mjs';

const GRACE = 200;
const OUT = { a: 1, b: 'x', nested: { list: [1, 2] } };
const OUT_JSON = JSON.stringify(OUT);
const RECEIPT_OUT = Object.fromEntries(Object.entries(OUT).map(([k, v]) => [k, { value: v, sensitive: false }]));
const SECRET = 's3cr3t value with spaces';

// Before any test or hook is registered: the runner must not see the file as done while it waits.
const podman = await podmanAvailable();
const real = { skip: podman.ok ? false : podman.reason };

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nyl-driver-oci-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A runner that records every argv it is given, then runs it with `inner`. */
class RecordingRunner {
  argvs = [];
  constructor(inner) {
    this.inner = inner;
  }
  get started() {
    return this.argvs.length;
  }
  run(argv, options) {
    this.argvs.push([...argv]);
    return this.inner.run(argv, options);
  }
}

let seq = 0;
/** A DriverContext as execute-wave builds one; scratchDir is one directory, made on first call. */
function context({ unit, rendering, runner, clock, cancel = new AbortController().signal, baseEnv = { ...process.env }, environment = 'dev' }) {
  const root = fs.mkdtempSync(path.join(tmp, `${unit}-${++seq}-`));
  const scratch = path.join(root, 'scratch');
  const lines = [];
  const waiters = [];
  lines.when = (text) => (lines.includes(text) ? Promise.resolve() : new Promise((resolve) => waiters.push({ text, resolve })));
  fs.mkdirSync(path.join(root, 'source'));
  const ctx = {
    environment,
    unit,
    uid: `uid-${unit}`,
    run: `0190a0b1-c2d3-7e4f-8a9b-${String(seq).padStart(12, '0')}`,
    kind: 'OciImage',
    rendering,
    projectDir: path.join(root, 'source'),
    scratchDir: () => (fs.mkdirSync(scratch, { recursive: true, mode: 0o700 }), scratch),
    outputsPath: path.join(root, `${unit}.outputs.json`),
    runner,
    clock,
    baseEnv,
    cancel,
    killGraceMs: GRACE,
    toolOutput: ({ text }) => {
      lines.push(text);
      for (const w of waiters.filter((x) => x.text === text)) w.resolve();
    },
  };
  return { ctx, lines, scratch };
}

test('descriptor: OciImage, ociimage/1, manual recovery, no shell text; prepare, apply, teardown, check, no plan', () => {
  const d = ociImageDriver;
  assert.equal(d.kind, 'OciImage');
  assert.equal(d.version, 'ociimage/1');
  assert.equal(d.defaultRecovery, 'manual');
  assert.deepEqual(d.shellTextFields, []);
  assert.equal(d.spec.type, 'object');
  for (const phase of ['prepare', 'apply', 'teardown', 'check']) assert.equal(typeof d[phase], 'function', phase);
  assert.equal(d.plan, undefined);
});

test('containerName: nyl_ENV_UNIT_RUN, unambiguous (names hold no "_") and valid for podman', () => {
  assert.equal(containerName('dev', 'seed-db', '0190a0b1-c2d3'), 'nyl_dev_seed-db_0190a0b1-c2d3');
  assert.notEqual(containerName('a-b', 'c', 'r'), containerName('a', 'b-c', 'r'));
  assert.match(containerName('Odd Env', 'u/x', 'r:1'), /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/);
});

test('teardown: incomplete (a one-shot container leaves nothing to remove), and nothing runs; check: drift unknown', async () => {
  const runner = new FakeProcessRunner();
  const { ctx } = context({ unit: 'job', rendering: { image: TEST_IMAGE }, runner, clock: new ManualClock(0) });
  const down = await ociImageDriver.teardown(ctx);
  assertOutcome('teardown', down);
  assert.equal(down.result, 'incomplete');
  assert.match(down.reason, /one-shot container/);
  const checked = await ociImageDriver.check(ctx);
  assertOutcome('check', checked);
  assert.equal(checked.result, 'checked');
  assert.equal(checked.drift, 'unknown');
  assert.equal(runner.started, 0);
});

// --- with real podman -----------------------------------------------------------------------------

describe('OciImage driver with podman', { ...real, concurrency: true }, () => {
  /** The image as prepare resolved it, once for every scenario. */
  let prepared;
  const resolved = async () => {
    prepared ??= ociImageDriver.prepare(
      context({ unit: 'prep', rendering: { image: TEST_IMAGE }, runner: new NodeProcessRunner(), clock: new SystemClock() }).ctx,
    );
    const outcome = await prepared;
    assert.equal(outcome.result, 'prepared');
    return outcome.rendering.image;
  };

  async function apply(unit, spec, extra = {}) {
    const runner = new RecordingRunner(new NodeProcessRunner());
    const { ctx, lines, scratch } = context({ unit, rendering: { image: await resolved(), ...spec }, runner, clock: new SystemClock(), ...extra });
    const outcome = await ociImageDriver.apply(ctx);
    assertOutcome('apply', outcome);
    return { outcome, lines, ctx, runner, scratch };
  }

  async function containersNamed(name) {
    const ps = await sh(['podman', 'ps', '-a', '--filter', `name=^${name}$`, '--format', '{{.Names}}']);
    assert.equal(ps.code, 0, ps.stderr);
    return ps.stdout.split('\n').filter(Boolean);
  }

  test('prepare: a tag resolves to REPOSITORY@sha256:<digest>, which podman finds as the same image; the rest of the rendering is kept', async () => {
    const runner = new RecordingRunner(new NodeProcessRunner());
    const { ctx } = context({ unit: 'prep-tag', rendering: { image: TEST_IMAGE, args: ['x'], network: 'none' }, runner, clock: new SystemClock() });
    const outcome = await ociImageDriver.prepare(ctx);
    assertOutcome('prepare', outcome);
    assert.equal(outcome.result, 'prepared');
    assert.match(outcome.rendering.image, /^localhost\/nyl-test-busybox@sha256:[0-9a-f]{64}$/);
    assert.deepEqual({ ...outcome.rendering, image: undefined }, { image: undefined, args: ['x'], network: 'none' });
    const ids = await Promise.all([TEST_IMAGE, outcome.rendering.image].map((i) => sh(['podman', 'image', 'inspect', '--format', '{{.Id}}', i])));
    assert.equal(ids[0].stdout, ids[1].stdout);
    assert.ok(
      runner.argvs.every((a) => a[1] === 'image'),
      'prepare runs no container',
    );
  });

  test('prepare: a digest reference is kept as written, with nothing run', async () => {
    const image = await resolved();
    const runner = new RecordingRunner(new NodeProcessRunner());
    const { ctx } = context({ unit: 'prep-digest', rendering: { image }, runner, clock: new SystemClock() });
    assert.deepEqual(await ociImageDriver.prepare(ctx), { result: 'prepared', rendering: { image } });
    assert.equal(runner.started, 0);
  });

  test('prepare: a tag not present locally is absent, with the failure (retryable, NYL-IMAGE-UNRESOLVED) of a unit that must execute: the image and how to make it present', async () => {
    const { ctx } = context({
      unit: 'prep-missing',
      rendering: { image: 'localhost/nyl-no-such-image:7' },
      runner: new NodeProcessRunner(),
      clock: new SystemClock(),
    });
    const outcome = await ociImageDriver.prepare(ctx);
    assertOutcome('prepare', outcome);
    assert.equal(outcome.result, 'absent');
    const { failure } = outcome;
    assert.equal(failure.retryable, true);
    assert.equal(failure.code, 'NYL-IMAGE-UNRESOLVED');
    assert.match(failure.reason.split('\n')[0], /^image localhost\/nyl-no-such-image:7 is not present locally/);
    assert.match(failure.reason, /podman pull localhost\/nyl-no-such-image:7/);
    assert.match(failure.reason, /podman load/);
  });

  test("apply: the outputs file read back as a receipt, with a Command's rules", async () => {
    const { outcome } = await apply('outputs', { command: ['/bin/sh', '-c', `printf '%s' '${OUT_JSON}' > "$NYL_OUTPUTS"`] });
    assert.deepEqual(outcome, { result: 'receipt', outputs: RECEIPT_OUT });
    const invalid = (await apply('invalid', { command: ['/bin/sh', '-c', 'printf "{not json" > "$NYL_OUTPUTS"'] })).outcome;
    assert.equal(invalid.result, 'failed');
    assert.equal(invalid.retryable, true);
    assert.match(invalid.reason, /^NYL_OUTPUTS holds invalid JSON/);
  });

  test("apply: no outputs (the image's own command) is an empty receipt", async () => {
    const { outcome, runner } = await apply('no-outputs', {});
    assert.deepEqual(outcome, { result: 'receipt', outputs: {} });
    assert.ok(!runner.argvs[0].includes('--entrypoint'));
  });

  test('apply: a container user that is not root writes the outputs file', async () => {
    const { outcome } = await apply('nobody', { image: TEST_IMAGE_NOBODY, command: ['/bin/sh', '-c', 'printf \'{"uid":"%s"}\' "$(id -u)" > "$NYL_OUTPUTS"'] });
    assert.deepEqual(outcome, { result: 'receipt', outputs: { uid: { value: '65534', sensitive: false } } });
  });

  test('apply: a failing container is a retryable failure with its exit code; its output reaches toolOutput', async () => {
    const { outcome, lines } = await apply('fails', { command: ['/bin/sh', '-c', 'echo "bad things happened" >&2; echo "on two lines" >&2; exit 3'] });
    assert.equal(outcome.result, 'failed');
    assert.equal(outcome.retryable, true);
    assert.equal(outcome.acknowledgementRequired, undefined);
    assert.equal(outcome.reason, 'container exited with code 3');
    assert.deepEqual(lines.slice(), ['bad things happened', 'on two lines']);
  });

  test('apply: a timeout stops the container: a failure that is not retryable and needs an acknowledgement', async () => {
    const began = Date.now();
    const { outcome, ctx } = await apply('timeout', { command: ['/bin/sleep', '30'], timeout: '1s' });
    assert.equal(outcome.result, 'failed');
    assert.equal(outcome.retryable, false);
    assert.equal(outcome.acknowledgementRequired, true);
    assert.match(outcome.reason, /timed out after 1s/);
    // 1 s, then the stop's grace (1 s) before SIGKILL (the image's PID 1 ignores SIGTERM): far from 30 s.
    assert.ok(Date.now() - began < 10_000, 'the container was stopped, not waited for');
    assert.deepEqual(await containersNamed(containerName(ctx.environment, ctx.unit, ctx.run)), []);
  });

  test('apply: cancellation while the container runs stops it and ends uncertain; the container is gone', async () => {
    const ac = new AbortController();
    const image = await resolved();
    const { ctx, lines } = context({
      unit: 'cancel',
      rendering: { image, command: ['/bin/sh', '-c', 'echo started; exec sleep 30'] },
      runner: new NodeProcessRunner(),
      clock: new SystemClock(),
      cancel: ac.signal,
    });
    const began = Date.now();
    const applying = ociImageDriver.apply(ctx);
    await lines.when('started');
    ac.abort('SIGTERM');
    const outcome = await applying;
    assertOutcome('apply', outcome);
    assert.equal(outcome.result, 'uncertain');
    assert.match(outcome.reason, /cancel/);
    assert.ok(Date.now() - began < 10_000);
    assert.deepEqual(await containersNamed(containerName(ctx.environment, ctx.unit, ctx.run)), []);
  });

  test('apply: env reaches the container (declared, as text, and NYL_*), never a command line; the env file is removed', async () => {
    const probe =
      'printf \'{"greeting":"%s","count":"%s","secret":"%s","environment":"%s","unit":"%s","run":"%s","uid":"%s","outputs":"%s"}\' "$GREETING" "$COUNT" "$SECRET" "$NYL_ENVIRONMENT" "$NYL_UNIT" "$NYL_RUN" "$NYL_UID" "$NYL_OUTPUTS" > "$NYL_OUTPUTS"';
    const { outcome, ctx, runner, scratch } = await apply('env', { command: ['/bin/sh', '-c', probe], env: { GREETING: 'hello world', COUNT: 3, SECRET } });
    assert.equal(outcome.result, 'receipt');
    const got = Object.fromEntries(Object.entries(outcome.outputs).map(([k, v]) => [k, v.value]));
    assert.deepEqual(got, {
      greeting: 'hello world',
      count: '3',
      secret: SECRET,
      environment: 'dev',
      unit: 'env',
      run: ctx.run,
      uid: 'uid-env',
      outputs: '/nyl/outputs.json',
    });
    for (const argv of runner.argvs)
      for (const arg of argv) assert.ok(!arg.includes('s3cr3t') && !arg.includes('hello world'), `no value on a command line: ${arg}`);
    assert.ok(runner.argvs[0].includes('--env-file'));
    assert.deepEqual(fs.readdirSync(scratch), [], 'the env file is gone');
  });

  test('apply: the env file is gone as soon as the container exists, while it still runs (a killed Nyl leaves no value in it)', async () => {
    const image = await resolved();
    const { ctx, lines, scratch } = context({
      unit: 'env-early',
      rendering: { image, command: ['/bin/sh', '-c', 'echo "started $SECRET"; exec sleep 4'], env: { SECRET } },
      runner: new NodeProcessRunner(),
      clock: new SystemClock(),
    });
    let ended = false;
    const applying = ociImageDriver.apply(ctx).then((o) => ((ended = true), o));
    await lines.when(`started ${SECRET}`);
    const envFile = path.join(scratch, 'container.env');
    for (const until = Date.now() + 2000; fs.existsSync(envFile) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    assert.equal(fs.existsSync(envFile), false, 'the env file was removed once the container was created');
    assert.equal(ended, false, 'the container still runs');
    assert.equal((await applying).result, 'receipt');
    assert.deepEqual(fs.readdirSync(scratch), [], 'nothing is left in the scratch directory');
  });

  test('apply: a value the env file cannot carry (a newline) fails before anything runs, naming the variable, not its value', async () => {
    const { outcome, runner } = await apply('newline', { command: ['/bin/true'], env: { PEM: `-----BEGIN-----\n${SECRET}\n-----END-----` } });
    assert.equal(outcome.result, 'failed');
    assert.equal(outcome.retryable, true);
    assert.match(outcome.reason, /^the environment variable PEM contains a newline/);
    assert.ok(!outcome.reason.includes('s3cr3t'));
    assert.equal(runner.started, 0);
  });

  test('apply: an image that is not present (a digest prepare did not resolve here): failed, retryable, how to make it present', async () => {
    const image = `localhost/nyl-no-such-image@sha256:${'0'.repeat(64)}`;
    const runner = new NodeProcessRunner();
    const { ctx } = context({ unit: 'absent', rendering: { image }, runner, clock: new SystemClock() });
    assert.deepEqual(await ociImageDriver.prepare(ctx), { result: 'prepared', rendering: { image } });
    const outcome = await ociImageDriver.apply(ctx);
    assertOutcome('apply', outcome);
    assert.equal(outcome.result, 'failed');
    assert.equal(outcome.retryable, true);
    assert.match(outcome.reason, /^image localhost\/nyl-no-such-image@sha256:0+ is not present locally/);
    assert.equal(outcome.code, 'NYL-IMAGE-UNRESOLVED');
  });

  test('apply: podman that cannot start (not on PATH): failed, retryable', async () => {
    const { outcome } = await apply('no-podman', { runtime: 'podman', command: ['/bin/true'] }, { baseEnv: { PATH: path.join(tmp, 'empty-path') } });
    assert.equal(outcome.result, 'failed');
    assert.equal(outcome.retryable, true);
    assert.match(outcome.reason, /^cannot start podman: ENOENT/);
  });

  /** Starts a detached container of the test image labelled as the driver labels a unit's container. */
  const startLabelled = (environment, unit, run, command) =>
    sh([
      'podman',
      'run',
      '-d',
      '--pull=never',
      '--network=none',
      '--runtime',
      'runc',
      '--ulimit',
      'nofile=4096:4096',
      '--ulimit',
      'nproc=4096:4096',
      '--name',
      containerName(environment, unit, run),
      '--label',
      `nyl.environment=${environment}`,
      '--label',
      `nyl.unit=${unit}`,
      '--label',
      `nyl.run=${run}`,
      TEST_IMAGE,
      ...command,
    ]);

  test('leftoverContainers: lists the containers an environment left (unit, run, state)', async () => {
    const environment = `leftover-${process.pid}`;
    const name = containerName(environment, 'seed', 'r1');
    const started = await startLabelled(environment, 'seed', 'r1', ['/bin/sleep', '30']);
    assert.equal(started.code, 0, started.stderr);
    try {
      const listed = await leftoverContainers(new NodeProcessRunner(), environment);
      assert.equal(listed.ok, true);
      assert.equal(listed.containers.length, 1);
      assert.deepEqual({ ...listed.containers[0], id: undefined }, { id: undefined, name, unit: 'seed', run: 'r1', state: 'running' });
      assert.deepEqual(await leftoverContainers(new NodeProcessRunner(), `${environment}-none`), { ok: true, containers: [] });
    } finally {
      await sh(['podman', 'rm', '-f', '-t', '0', name]);
    }
  });

  test('reap: removes the containers of the dead runs it is given, and only those', async () => {
    const environment = `reap-${process.pid}`;
    const start = (unit, run) => startLabelled(environment, unit, run, ['/bin/sh', '-c', 'trap "exit 143" TERM; sleep 30 & wait']);
    for (const [unit, run] of [
      ['seed', 'dead'],
      ['other', 'alive'],
    ])
      assert.equal((await start(unit, run)).code, 0);
    try {
      const outcome = await ociImageDriver.reap({ environment, runs: ['dead'], runner: new NodeProcessRunner(), baseEnv: process.env });
      assert.deepEqual(outcome, { ended: [{ unit: 'seed', run: 'dead', what: `container ${containerName(environment, 'seed', 'dead')} (running)` }] });
      const left = await leftoverContainers(new NodeProcessRunner(), environment);
      assert.deepEqual(
        left.containers.map((c) => c.run),
        ['alive'],
        'the container of a run not given stays',
      );
      const none = await ociImageDriver.reap({
        environment,
        runs: ['dead'],
        runner: new NodeProcessRunner(),
        baseEnv: { ...process.env, PATH: path.join(tmp, 'empty-path') },
      });
      assert.deepEqual(none.ended, []);
      assert.match(none.problem, /^cannot start podman: ENOENT/);
    } finally {
      await sh(['podman', 'rm', '--ignore', '-f', '-t', '0', containerName(environment, 'seed', 'dead'), containerName(environment, 'other', 'alive')]);
    }
  });
});

// --- with FakeProcessRunner: a fake podman --------------------------------------------------------

const IMAGE_ID = 'a'.repeat(64);
const DIGEST = `sha256:${'d'.repeat(64)}`;

/**
 * A fake podman: `run` starts a "container" (its behaviour a function of argv and io) registered
 * by --name until it ends or is stopped; `stop`/`kill` end it (143/137), `rm` forgets it;
 * `image inspect` answers from `images` (reference -> inspect row). Every call is in runner.calls.
 */
function fakePodman({ images = {}, container = async () => 0, runtime = 'podman' } = {}) {
  const clock = new ManualClock(Date.parse('2024-05-01T12:00:00Z'), { autoAdvance: true });
  const containers = new Map();
  const noSuch = (name) => ({ code: 125, stderr: `Error: no container with name or ID "${name}" found: no such container\n` });
  const answer = async (io, { code, stdout = '', stderr = '' }) => (io.stdout(stdout), io.stderr(stderr), { code });
  const handlers = {
    run: async (argv, options, io) => {
      const name = argv[argv.indexOf('--name') + 1];
      const stopped = new AbortController();
      containers.set(name, stopped);
      const ran = Promise.resolve(container(argv, io, options));
      const code = await Promise.race([ran, new Promise((r) => stopped.signal.addEventListener('abort', () => r(stopped.signal.reason)))]);
      containers.delete(name);
      return { code };
    },
    stop: async (argv, _o, io) =>
      containers.has(argv.at(-1))
        ? (containers.get(argv.at(-1)).abort(137), answer(io, { code: 0, stdout: `${argv.at(-1)}\n` }))
        : answer(io, noSuch(argv.at(-1))),
    kill: async (argv, _o, io) =>
      containers.has(argv.at(-1)) ? (containers.get(argv.at(-1)).abort(137), answer(io, { code: 0 })) : answer(io, noSuch(argv.at(-1))),
    rm: async (argv, _o, io) =>
      answer(
        io,
        containers.delete(argv.at(-1)) ? { code: 0 } : { code: 1, stderr: `Error: no container with ID or name "${argv.at(-1)}" found: no such container\n` },
      ),
    image: async (argv, _o, io) => {
      const row = images[argv.at(-1)];
      return answer(
        io,
        row ? { code: 0, stdout: JSON.stringify([row]) } : { code: 125, stdout: '[]\n', stderr: `Error: inspecting object: ${argv.at(-1)}: image not known\n` },
      );
    },
  };
  const runner = new FakeProcessRunner({ clock, programs: { [runtime]: (argv, options, io) => handlers[argv[1]](argv, options, io) } });
  return { runner, clock, containers, calls: (verb) => runner.calls.filter((c) => c.argv[1] === verb) };
}

describe('OciImage driver on FakeProcessRunner (a fake podman)', () => {
  const fakeContext = (fake, unit, rendering, extra = {}) =>
    context({ unit, rendering: { runtime: 'podman', ...rendering }, runner: fake.runner, clock: fake.clock, ...extra });

  test('apply: the whole podman run command line, with a command and args', async () => {
    let seen;
    const fake = fakePodman({
      container: async (argv, io) => {
        const envFile = argv[argv.indexOf('--env-file') + 1];
        seen = {
          env: fs.readFileSync(envFile, 'utf8'),
          envMode: fs.statSync(envFile).mode & 0o777,
          outputsMode: fs.statSync(argv[argv.indexOf('-v') + 1].split(':')[0]).mode & 0o777,
        };
        io.stdout('hello\n');
        return 0;
      },
    });
    const { ctx, lines, scratch } = fakeContext(fake, 'job', {
      image: `localhost/app@${DIGEST}`,
      command: ['/bin/seed', '--fast'],
      args: ['--db', 'x y'],
      env: { GREETING: 'hi', COUNT: 3, OBJ: { b: 1 } },
      network: 'bridge',
    });
    assert.deepEqual(await ociImageDriver.apply(ctx), { result: 'receipt', outputs: {} });
    const [run] = fake.calls('run');
    assert.deepEqual(run.argv, [
      'podman',
      'run',
      '--rm',
      '--pull=never',
      '--network=bridge',
      '--runtime',
      'runc',
      '--ulimit',
      'nofile=4096:4096',
      '--ulimit',
      'nproc=4096:4096',
      '--name',
      `nyl_dev_job_${ctx.run}`,
      '--label',
      'nyl.environment=dev',
      '--label',
      'nyl.unit=job',
      '--label',
      `nyl.run=${ctx.run}`,
      '-v',
      `${ctx.outputsPath}:/nyl/outputs.json`,
      '--env-file',
      path.join(scratch, 'container.env'),
      '--cidfile',
      path.join(scratch, 'container.id'),
      '--entrypoint',
      '/bin/seed',
      `localhost/app@${DIGEST}`,
      '--fast',
      '--db',
      'x y',
    ]);
    assert.equal(run.options.group, true);
    assert.equal(
      seen.env,
      `GREETING=hi\nCOUNT=3\nOBJ={"b":1}\nNYL_ENVIRONMENT=dev\nNYL_UNIT=job\nNYL_RUN=${ctx.run}\nNYL_UID=uid-job\nNYL_OUTPUTS=/nyl/outputs.json\n`,
    );
    assert.equal(seen.envMode, 0o600);
    assert.equal(seen.outputsMode, 0o666);
    assert.deepEqual(lines.slice(), ['hello']);
    assert.equal(fake.runner.calls.length, 1, 'a run that ended by itself needs no stop or rm');
  });

  test('apply: without a command no --entrypoint, args after the image; network none by default', async () => {
    const fake = fakePodman();
    const { ctx } = fakeContext(fake, 'job', { image: 'localhost/app:1', args: ['a'] });
    await ociImageDriver.apply(ctx);
    const argv = fake.calls('run')[0].argv;
    assert.ok(!argv.includes('--entrypoint'));
    assert.ok(argv.includes('--network=none'));
    assert.deepEqual(argv.slice(-2), ['localhost/app:1', 'a']);
  });

  test("apply: exit 125 names podman's own error; an image that reads as an option, values the env file cannot carry: refused before anything runs", async () => {
    const fake = fakePodman({ container: async (_argv, io) => (io.stderr('Error: some podman problem\n'), 125) });
    const failed125 = await ociImageDriver.apply(fakeContext(fake, 'job', { image: 'localhost/app:1' }).ctx);
    assert.deepEqual(failed125, { result: 'failed', reason: 'podman could not run the container (exit 125): Error: some podman problem', retryable: true });
    const refused = fakePodman();
    const cases = [
      [{ image: '--privileged' }, /^image --privileged starts with "-"/],
      [{ image: 'x:1', env: { A: 'one\ntwo' } }, /^the environment variable A contains a newline/],
      [{ image: 'x:1', env: { A: 'dos\r' } }, /^the environment variable A ends with a carriage return/],
      [{ image: 'x:1', env: { A: 'n\0ul' } }, /^the environment variable A contains a NUL byte/],
      [{ image: 'x:1', env: { A: 'x'.repeat(65_534) } }, /^the environment variable A is longer than the 65535 bytes/],
    ];
    for (const [rendering, reason] of cases) {
      const outcome = await ociImageDriver.apply(fakeContext(refused, 'job', rendering).ctx);
      assertOutcome('apply', outcome);
      assert.equal(outcome.result, 'failed');
      assert.equal(outcome.retryable, true);
      assert.match(outcome.reason, reason);
    }
    assert.equal(refused.runner.started, 0);
    const longest = await ociImageDriver.apply(fakeContext(refused, 'job', { image: 'x:1', env: { A: 'x'.repeat(65_533) } }).ctx);
    assert.equal(longest.result, 'receipt', 'a line of 65535 bytes is carried');
  });

  test('apply: a timeout (virtual time) stops the container with the grace in seconds: not retryable, acknowledgement', async () => {
    const fake = fakePodman({ container: async (_argv, io) => (await io.sleep(600_000), 0) });
    const outcome = await ociImageDriver.apply(fakeContext(fake, 'slow', { image: 'x:1', timeout: '1m' }).ctx);
    assert.deepEqual(outcome, {
      result: 'failed',
      reason: 'timed out after 1m and the container was stopped',
      retryable: false,
      acknowledgementRequired: true,
    });
    assert.deepEqual(fake.calls('stop')[0].argv.slice(1, 4), ['stop', '-t', '1']);
    assert.deepEqual(fake.calls('kill'), [], 'the stop worked');
    assert.equal(fake.calls('run')[0].signals.length, 0, 'the client was not signalled: it ended with its container');
  });

  test('apply: cancelled before the container exists: the stop finds nothing, kill neither; the client is signalled, then rm -f; uncertain', async () => {
    const fake = fakePodman();
    let started;
    const gate = new Promise((r) => (started = r));
    // A client still creating its container: no container under the name yet, and it never ends by itself.
    fake.runner.register(
      (argv) => argv[0] === 'podman' && argv[1] === 'run',
      async (_argv, _o, io) => (started(), await io.sleep(3_600_000), 0),
    );
    const ac = new AbortController();
    const { ctx } = fakeContext(fake, 'early', { image: 'x:1' }, { cancel: ac.signal });
    const applying = ociImageDriver.apply(ctx);
    await gate;
    ac.abort('SIGINT');
    const outcome = await applying;
    assertOutcome('apply', outcome);
    assert.equal(outcome.result, 'uncertain');
    assert.match(outcome.reason, /cancelled while the container ran; it was stopped \(podman ended by SIGTERM/);
    assert.deepEqual(
      fake.runner.calls.map((c) => c.argv[1]),
      ['run', 'stop', 'kill', 'rm'],
    );
    assert.deepEqual(fake.calls('rm')[0].argv.slice(1), ['rm', '-f', '-t', '1', `nyl_dev_early_${ctx.run}`]);
  });

  test('apply: already cancelled: nothing starts', async () => {
    const fake = fakePodman();
    const ac = new AbortController();
    ac.abort('SIGTERM');
    const outcome = await ociImageDriver.apply(fakeContext(fake, 'job', { image: 'x:1' }, { cancel: ac.signal }).ctx);
    assert.deepEqual(outcome, { result: 'failed', reason: 'cancelled before the container started', retryable: true });
    assert.equal(fake.runner.started, 0);
  });

  test("prepare: REPOSITORY@digest for the reference's repository (a short name included), once podman finds it; else the image ID", async () => {
    const row = { Id: IMAGE_ID, Digest: DIGEST, RepoDigests: [`docker.io/library/other@sha256:${'e'.repeat(64)}`, `docker.io/library/busybox@${DIGEST}`] };
    const fake = fakePodman({
      images: {
        'busybox:1.36': row,
        [`docker.io/library/busybox@${DIGEST}`]: row,
        'local:1': { Id: IMAGE_ID, RepoDigests: [] },
        'moved:1': { ...row, RepoDigests: [`localhost/moved@${DIGEST}`] },
        [`localhost/moved@${DIGEST}`]: { Id: 'b'.repeat(64) },
      },
    });
    const prepare = async (image) => (await ociImageDriver.prepare(fakeContext(fake, 'p', { image }).ctx)).rendering.image;
    assert.equal(await prepare('busybox:1.36'), `docker.io/library/busybox@${DIGEST}`);
    assert.deepEqual(
      fake.calls('image').map((c) => c.argv.slice(1)),
      [
        ['image', 'inspect', 'busybox:1.36'],
        ['image', 'inspect', `docker.io/library/busybox@${DIGEST}`],
      ],
    );
    assert.equal(await prepare('local:1'), `sha256:${IMAGE_ID}`, 'no repo digest: the image ID');
    assert.equal(await prepare('moved:1'), `sha256:${IMAGE_ID}`, 'a repo digest that finds another image is not recorded');
  });

  test('prepare: an image the runtime does not know is absent; any other error of inspect is a failure', async () => {
    const fake = fakePodman();
    const absent = await ociImageDriver.prepare(fakeContext(fake, 'p', { image: 'gone:1' }).ctx);
    assertOutcome('prepare', absent);
    assert.equal(absent.result, 'absent');
    assert.match(absent.failure.reason, /^image gone:1 is not present locally/);
    fake.runner.register((argv) => argv[1] === 'image', exitWith(125, { stderr: 'Error: database is locked\n' }));
    const broken = await ociImageDriver.prepare(fakeContext(fake, 'p', { image: 'other:1' }).ctx);
    assertOutcome('prepare', broken);
    assert.equal(broken.result, 'failed');
    assert.match(broken.reason, /image inspect other:1 failed \(exit 125\): .*database is locked/);
  });

  test('prepare: units of one run that share an image ask podman once; another run asks again', async () => {
    const fake = fakePodman({ images: { 'local:1': { Id: IMAGE_ID, RepoDigests: [] } } });
    const first = fakeContext(fake, 'a', { image: 'local:1' }).ctx;
    const sameRun = { ...fakeContext(fake, 'b', { image: 'local:1' }).ctx, run: first.run };
    const [a, b] = await Promise.all([ociImageDriver.prepare(first), ociImageDriver.prepare(sameRun)]);
    assert.deepEqual([a.rendering.image, b.rendering.image], [`sha256:${IMAGE_ID}`, `sha256:${IMAGE_ID}`]);
    assert.equal(fake.calls('image').length, 1);
    await ociImageDriver.prepare(fakeContext(fake, 'a', { image: 'local:1' }).ctx);
    assert.equal(fake.calls('image').length, 2, 'a new run: the tag may point elsewhere now');
  });

  test('runtime: the first of podman and docker on PATH, docker only when its engine answers; neither is a clear failure', async () => {
    const bin = fs.mkdtempSync(path.join(tmp, 'bin-'));
    const empty = fs.mkdtempSync(path.join(tmp, 'empty-'));
    fs.writeFileSync(path.join(bin, 'docker'), '#!/bin/sh\n', { mode: 0o755 });
    const row = { Id: `sha256:${IMAGE_ID}`, RepoDigests: [] };
    const docker = fakePodman({ runtime: 'docker', images: { 'app:1': row } });
    docker.runner.register((argv) => argv[0] === 'docker' && argv[1] === 'info', exitWith(0));
    const withDocker = await ociImageDriver.prepare(
      context({ unit: 'p', rendering: { image: 'app:1' }, runner: docker.runner, clock: docker.clock, baseEnv: { PATH: bin } }).ctx,
    );
    assert.deepEqual(withDocker, { result: 'prepared', rendering: { image: `sha256:${IMAGE_ID}` } }, 'docker ids carry sha256: already');
    const down = fakePodman({ runtime: 'docker' });
    down.runner.register((argv) => argv[1] === 'info', exitWith(1));
    const noEngine = await ociImageDriver.apply(
      context({ unit: 'a', rendering: { image: 'app:1' }, runner: down.runner, clock: down.clock, baseEnv: { PATH: bin } }).ctx,
    );
    assert.equal(noEngine.result, 'failed');
    assert.match(noEngine.reason, /docker info/);
    const none = await ociImageDriver.apply(
      context({ unit: 'a', rendering: { image: 'app:1' }, runner: down.runner, clock: down.clock, baseEnv: { PATH: empty } }).ctx,
    );
    assert.equal(none.result, 'failed');
    assert.equal(none.retryable, true);
    assert.match(none.reason, /^no container runtime: neither podman nor docker is on PATH/);
  });

  test("leftoverContainers: podman's JSON array and docker's JSON lines; a failing ps is a reason", async () => {
    const podmanRows = [{ Id: 'c1', Names: ['nyl_dev_u_r'], Labels: { 'nyl.environment': 'dev', 'nyl.unit': 'u', 'nyl.run': 'r' }, State: 'exited' }];
    const dockerRows = [{ ID: 'c2', Names: 'nyl_dev_v_s', Labels: 'nyl.environment=dev,nyl.unit=v,nyl.run=s', State: 'running' }];
    const runner = new FakeProcessRunner({
      programs: {
        podman: exitWith(0, { stdout: JSON.stringify(podmanRows) }),
        docker: exitWith(0, { stdout: dockerRows.map((r) => JSON.stringify(r)).join('\n') }),
      },
    });
    assert.deepEqual(await leftoverContainers(runner, 'dev'), {
      ok: true,
      containers: [{ id: 'c1', name: 'nyl_dev_u_r', unit: 'u', run: 'r', state: 'exited' }],
    });
    assert.deepEqual(runner.calls[0].argv, ['podman', 'ps', '-a', '--filter', 'label=nyl.environment=dev', '--format', 'json']);
    assert.deepEqual(await leftoverContainers(runner, 'dev', { runtime: 'docker' }), {
      ok: true,
      containers: [{ id: 'c2', name: 'nyl_dev_v_s', unit: 'v', run: 's', state: 'running' }],
    });
    const failing = new FakeProcessRunner({ programs: { podman: exitWith(125, { stderr: 'Error: database is locked\n' }) } });
    assert.deepEqual(await leftoverContainers(failing, 'dev'), { ok: false, reason: 'podman ps failed (exit 125): Error: database is locked' });
  });
});
