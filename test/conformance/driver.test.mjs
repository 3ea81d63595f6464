// The Driver contract (src/drivers/contract.ts): one suite every driver passes, run against the
// Command driver with real processes (NodeProcessRunner, SystemClock, a temp project directory),
// the Command driver on FakeProcessRunner (virtual time: its timeouts take no real time), and
// the scripted fakeDriver. Then the Command driver's own rules, the fake driver's test API, and
// the engine's containment helper executeUnit.

import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { commandDriver } from '../../dist/drivers/command/index.js';
import { BUILTIN_DRIVERS, withDrivers } from '../../dist/drivers/registry.js';
import { NodeProcessRunner } from '../../dist/exec/process.js';
import { executeUnit } from '../../dist/run/unit-execution.js';
import { SystemClock } from '../../dist/util/clock.js';
import { ManualClock } from '../fakes/clock.mjs';
import { assertOutcome, assertReason } from '../support/driver-outcomes.mjs';
import { fakeDriver, failed, receipt, secret, uncertain } from '../fakes/driver.mjs';
import { FakeProcessRunner, exitWith, ignoring, sleepFor, writeOutputs } from '../fakes/process-runner.mjs';

/** A plan-bound approval's gate that any plan passes: the path where a driver plans first. */
const ANY_PLAN = { digestOf: () => 'sha256:any', approved: 'sha256:any' };

const GRACE = 200;
/** The Command driver as the engine gets it (the registry may decorate the implementation). */
const COMMAND = BUILTIN_DRIVERS.driver('Command');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nyl-driver-conformance-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

let seq = 0;
/** A project directory (with a `sub` directory) and a DriverContext as execute-wave builds one. */
function context({ unit, rendering, runner, clock, kind = 'Command', cancel = new AbortController().signal, projectDir }) {
  const root = fs.mkdtempSync(path.join(tmp, `${unit}-${++seq}-`));
  const dir = projectDir ?? path.join(root, 'source');
  fs.mkdirSync(path.join(dir, 'sub'), { recursive: true });
  const lines = [];
  /** The bytes of every line, as the driver passed them. */
  lines.bytes = [];
  const lineWaiters = [];
  /** Resolves (in a microtask, before virtual time can move) once `text` was a line of output. */
  lines.when = (text) => (lines.includes(text) ? Promise.resolve() : new Promise((resolve) => lineWaiters.push({ text, resolve })));
  const ctx = {
    environment: 'dev',
    unit,
    uid: `uid-${unit}`,
    run: 'r-20240501-120000-abcd',
    kind,
    rendering,
    projectDir: dir,
    scratchDir: () => fs.mkdtempSync(path.join(root, `${unit}-`)),
    outputsPath: path.join(root, `${unit}.outputs.json`),
    runner,
    clock,
    baseEnv: { ...process.env },
    cancel,
    killGraceMs: GRACE,
    toolOutput: ({ bytes, text }) => {
      lines.push(text);
      lines.bytes.push(bytes);
      for (const w of lineWaiters.filter((x) => x.text === text)) w.resolve();
    },
  };
  return { ctx, lines };
}

async function eventually(predicate, ms = 3000) {
  const until = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

// --- the implementations ----------------------------------------------------------------------

const OUT = { a: 1, b: 'x', nested: { list: [1, 2] } };
const OUT_JSON = JSON.stringify(OUT);
const LOOP = 'while :; do sleep 0.05; done';
/** An outputs file with the sensitive form, its look-alikes, and a plain value. */
const SENSITIVE_JSON = JSON.stringify({
  token: { value: 't0k3n', sensitive: true },
  shown: { value: 'x', sensitive: false },
  extra: { value: 'y', sensitive: true, note: 'not the form: a third key' },
  notBool: { value: 'z', sensitive: 'yes' },
  url: 'https://db',
});

/** Command renderings for real processes. */
const REAL_RENDERINGS = {
  outputs: { script: `printf '%s' '${OUT_JSON}' > "$NYL_OUTPUTS"` },
  noOutputs: { script: 'true' },
  invalidJson: { script: `printf '{not json\\n' > "$NYL_OUTPUTS"` },
  notObject: { script: `printf '[1,2]' > "$NYL_OUTPUTS"` },
  bigFile: { script: 'head -c 1100000 /dev/zero > "$NYL_OUTPUTS"' },
  protoOutput: { script: `printf '{"__proto__":{"x":1}}' > "$NYL_OUTPUTS"` },
  sensitiveOutputs: { script: `printf '%s' '${SENSITIVE_JSON}' > "$NYL_OUTPUTS"` },
  fails: { script: 'echo "bad things happened" >&2; echo "on two lines" >&2; exit 3' },
  cannotStart: { run: ['nyl-conformance-no-such-tool'] },
  missingDir: { script: 'true', workingDir: 'no/such/dir' },
  timeout: { run: ['sleep', '5'], timeout: '1s' },
  cancel: { script: 'echo started; exec sleep 5' },
  cancelStubborn: { script: `trap '' TERM INT; echo started; ${LOOP}` },
  probeEnv: {
    run: [
      process.execPath,
      '-e',
      'const e=process.env;require("fs").writeFileSync(e.NYL_OUTPUTS,JSON.stringify({unit:e.NYL_UNIT,run:e.NYL_RUN,uid:e.NYL_UID,environment:e.NYL_ENVIRONMENT,greeting:e.GREETING,count:e.COUNT,cwd:require("fs").realpathSync(process.cwd())}))',
    ],
    env: { GREETING: 'hello world', COUNT: 3 },
    workingDir: 'sub',
  },
  teardownOk: { script: 'true', teardown: { script: 'echo removing; exit 0' } },
  teardownFails: { script: 'true', teardown: { script: 'exit 2' } },
  noTeardown: { script: 'true' },
  checkInSync: { script: 'true', check: { script: 'exit 0' } },
  checkDrifted: { script: 'true', check: { script: 'exit 1' } },
  checkError: { script: 'true', check: { script: 'exit 2' } },
  noCheck: { script: 'true' },
  checkInherits: {
    script: 'true',
    env: { GREETING: 'hi' },
    workingDir: 'sub',
    check: { script: 'test "$GREETING" = hi && test "${PWD##*/}" = sub || exit 1' },
  },
};

/** The same for the Command driver on FakeProcessRunner: argv of registered programs. */
const FAKE_RUNNER_PROGRAMS = {
  'write-outputs': writeOutputs(OUT),
  'write-invalid': writeOutputs('{not json\n'),
  'write-array': writeOutputs([1, 2]),
  'write-big': writeOutputs('\0'.repeat(1_100_000)),
  'write-proto': writeOutputs('{"__proto__":{"x":1}}'),
  'write-sensitive': writeOutputs(SENSITIVE_JSON),
  fail3: exitWith(3, { stderr: 'bad things happened\non two lines\n' }),
  ok: exitWith(0),
  exit1: exitWith(1),
  exit2: exitWith(2),
  slow: sleepFor(60_000),
  'started-sleep': async (argv, options, io) => {
    io.stdout('started\n');
    return sleepFor(5000)(argv, options, io);
  },
  stubborn: ignoring(['SIGTERM', 'SIGINT'], async (argv, options, io) => {
    io.stdout('started\n');
    return sleepFor(60_000)(argv, options, io);
  }),
  'probe-env': async (_argv, _options, io) => {
    const e = io.env;
    fs.writeFileSync(
      e.NYL_OUTPUTS,
      JSON.stringify({
        unit: e.NYL_UNIT,
        run: e.NYL_RUN,
        uid: e.NYL_UID,
        environment: e.NYL_ENVIRONMENT,
        greeting: e.GREETING,
        count: e.COUNT,
        cwd: fs.realpathSync(io.cwd),
      }),
    );
    return { code: 0 };
  },
};
const FAKE_RUNNER_RENDERINGS = {
  outputs: { run: ['write-outputs'] },
  noOutputs: { run: ['ok'] },
  invalidJson: { run: ['write-invalid'] },
  notObject: { run: ['write-array'] },
  bigFile: { run: ['write-big'] },
  protoOutput: { run: ['write-proto'] },
  sensitiveOutputs: { run: ['write-sensitive'] },
  fails: { run: ['fail3'] },
  cannotStart: { run: ['nyl-conformance-no-such-tool'] },
  missingDir: { run: ['ok'], workingDir: 'no/such/dir' },
  timeout: { run: ['slow'], timeout: '1s' },
  cancel: { run: ['started-sleep'] },
  cancelStubborn: { run: ['stubborn'] },
  probeEnv: { run: ['probe-env'], env: { GREETING: 'hello world', COUNT: 3 }, workingDir: 'sub' },
  teardownOk: { run: ['ok'], teardown: { run: ['ok'] } },
  teardownFails: { run: ['ok'], teardown: { run: ['exit2'] } },
  noTeardown: { run: ['ok'] },
  checkInSync: { run: ['ok'], check: { run: ['ok'] } },
  checkDrifted: { run: ['ok'], check: { run: ['exit1'] } },
  checkError: { run: ['ok'], check: { run: ['exit2'] } },
  noCheck: { run: ['ok'] },
};

/** The fake driver, scripted per unit (unit name = scenario) to answer as a Command would. */
function scriptedFake() {
  const driver = fakeDriver({
    defaultRecovery: 'converge',
    apply: {
      outputs: receipt({ ...OUT, token: secret('t0k3n') }),
      noOutputs: receipt({}),
      fails: failed('command exited with code 3'),
      timeout: failed('timed out after 1s and was killed', { retryable: false, acknowledgementRequired: true }),
    },
    teardown: {
      teardownFails: failed('command exited with code 2'),
      noTeardown: { result: 'incomplete', reason: 'noTeardown declares no teardown: action, so nothing can claim its removal' },
    },
    check: {
      checkDrifted: { result: 'checked', drift: 'drifted' },
      checkError: failed('command exited with code 2'),
      noCheck: { result: 'checked', drift: 'unknown', detail: 'noCheck declares no check: action' },
    },
  });
  driver.hold('cancel');
  return driver;
}

const IMPLS = [
  {
    name: 'Command driver, NodeProcessRunner',
    command: true,
    real: true,
    make: () => ({
      driver: COMMAND,
      runner: new NodeProcessRunner(),
      clock: new SystemClock(),
      rendering: (s) => REAL_RENDERINGS[s],
      running: (_driver, _unit, lines) => lines.when('started'),
    }),
    outputs: Object.fromEntries(Object.entries(OUT).map(([k, v]) => [k, { value: v, sensitive: false }])),
  },
  {
    name: 'Command driver, FakeProcessRunner',
    command: true,
    make: () => {
      const clock = new ManualClock(Date.parse('2024-05-01T12:00:00Z'), { autoAdvance: true });
      return {
        driver: COMMAND,
        runner: new FakeProcessRunner({ clock, programs: FAKE_RUNNER_PROGRAMS }),
        clock,
        rendering: (s) => FAKE_RUNNER_RENDERINGS[s],
        running: (_driver, _unit, lines) => lines.when('started'),
      };
    },
    outputs: Object.fromEntries(Object.entries(OUT).map(([k, v]) => [k, { value: v, sensitive: false }])),
  },
  {
    name: 'fakeDriver',
    command: false,
    make: () => {
      const clock = new ManualClock(Date.parse('2024-05-01T12:00:00Z'), { autoAdvance: true });
      return {
        driver: scriptedFake(),
        runner: new FakeProcessRunner({ clock }),
        clock,
        rendering: (s) => ({ scenario: s }),
        running: (driver, unit) => driver.whenCalled(unit),
      };
    },
    outputs: { ...Object.fromEntries(Object.entries(OUT).map(([k, v]) => [k, { value: v, sensitive: false }])), token: { value: 't0k3n', sensitive: true } },
  },
];

// --- the contract -------------------------------------------------------------------------------

for (const impl of IMPLS) {
  describe(`Driver contract: ${impl.name}`, () => {
    /** Runs one phase of one scenario; the unit is named after the scenario. */
    async function phase(name, scenario, extra = {}) {
      const env = impl.make();
      const { ctx, lines } = context({ unit: scenario, rendering: env.rendering(scenario), runner: env.runner, clock: env.clock, ...extra });
      const outcome = await env.driver[name](ctx);
      assertOutcome(name, outcome);
      return { outcome, lines, ctx, env };
    }

    test('descriptor: kind, version kind/N, defaultRecovery, shellTextFields', () => {
      const { driver } = impl.make();
      assert.equal(typeof driver.kind, 'string');
      assert.ok(driver.kind.length > 0);
      assert.match(driver.version, /^[a-z-]+\/\d+$/);
      assert.ok(['converge', 'manual'].includes(driver.defaultRecovery));
      assert.ok(Array.isArray(driver.shellTextFields));
      for (const pointer of driver.shellTextFields) assert.match(pointer, /^(\/[^/]+)+$/, 'a JSON pointer');
      assert.equal(typeof driver.apply, 'function');
      if (driver.spec !== undefined) assert.equal(driver.spec.type, 'object', 'spec, when set, is an object schema');
      for (const optional of ['prepare', 'plan', 'teardown', 'check'])
        assert.ok(driver[optional] === undefined || typeof driver[optional] === 'function', optional);
    });

    test('apply: a receipt whose outputs are { value, sensitive }', async () => {
      const { outcome } = await phase('apply', 'outputs');
      assert.equal(outcome.result, 'receipt');
      assert.deepEqual(outcome.outputs, impl.outputs);
    });

    test('apply: no outputs is an empty receipt', async () => {
      const { outcome } = await phase('apply', 'noOutputs');
      assert.deepEqual(outcome, { result: 'receipt', outputs: {} });
    });

    test('apply: a failing tool is a retryable failure with a one-line reason, never a throw', async () => {
      const { outcome } = await phase('apply', 'fails');
      assert.equal(outcome.result, 'failed');
      assert.equal(outcome.retryable, true);
      assert.equal(outcome.acknowledgementRequired, undefined);
      assert.match(outcome.reason, /code 3/);
    });

    test('apply: a timeout is a failure that is not retryable and needs an acknowledgement', async () => {
      const began = Date.now();
      const { outcome } = await phase('apply', 'timeout');
      assert.equal(outcome.result, 'failed');
      assert.equal(outcome.retryable, false);
      assert.equal(outcome.acknowledgementRequired, true);
      assert.match(outcome.reason, /timed out after 1s/);
      assert.ok(Date.now() - began < 4000, 'the tool was stopped, not waited for');
    });

    test('apply: cancellation while the tool runs ends uncertain', async () => {
      const env = impl.make();
      const ac = new AbortController();
      const { ctx, lines } = context({ unit: 'cancel', rendering: env.rendering('cancel'), runner: env.runner, clock: env.clock, cancel: ac.signal });
      const applying = env.driver.apply(ctx);
      await env.running(env.driver, 'cancel', lines);
      ac.abort('SIGTERM');
      const outcome = await applying;
      assertOutcome('apply', outcome);
      assert.equal(outcome.result, 'uncertain');
      assert.match(outcome.reason, /cancel/);
    });

    test('teardown (when the driver has one): removed, incomplete when nothing can claim the removal, or a failure as data', async (t) => {
      const { driver } = impl.make();
      if (!driver.teardown) return t.skip('no teardown phase');
      assert.equal((await phase('teardown', 'teardownOk')).outcome.result, 'removed');
      const fails = (await phase('teardown', 'teardownFails')).outcome;
      assert.equal(fails.result, 'failed');
      assert.equal(fails.retryable, true);
      const none = await phase('teardown', 'noTeardown');
      assert.equal(none.outcome.result, 'incomplete', 'a removal nothing can claim is not claimed');
      assert.equal(none.lines.length, 0, 'and nothing ran for it');
    });

    test('check (when the driver has one): in-sync, drifted, unknown, or a failure', async (t) => {
      const { driver } = impl.make();
      if (!driver.check) return t.skip('no check phase');
      assert.deepEqual((await phase('check', 'checkInSync')).outcome, { result: 'checked', drift: 'in-sync' });
      assert.deepEqual((await phase('check', 'checkDrifted')).outcome, { result: 'checked', drift: 'drifted' });
      const error = (await phase('check', 'checkError')).outcome;
      assert.equal(error.result, 'failed');
      const none = (await phase('check', 'noCheck')).outcome;
      assert.equal(none.result, 'checked');
      assert.equal(none.drift, 'unknown');
    });

    test("a Command's check runs with the unit's env and workingDir, as its teardown does", async (t) => {
      if (!impl.real) return t.skip('shell semantics: the real runner only');
      assert.deepEqual((await phase('check', 'checkInherits')).outcome, { result: 'checked', drift: 'in-sync' });
    });
  });
}

// --- the Command driver's own rules -------------------------------------------------------------

for (const impl of IMPLS.filter((i) => i.command)) {
  describe(`Command driver rules: ${impl.name}`, () => {
    async function apply(scenario, extra = {}) {
      const env = impl.make();
      const { ctx, lines } = context({ unit: scenario, rendering: env.rendering(scenario), runner: env.runner, clock: env.clock, ...extra });
      const outcome = await env.driver.apply(ctx);
      assertOutcome('apply', outcome);
      return { outcome, lines, ctx, env };
    }

    test('descriptor: command/1, manual recovery, the script fields are shell text', () => {
      for (const d of [COMMAND, commandDriver]) {
        assert.equal(d.kind, 'Command');
        assert.equal(d.version, 'command/1');
        assert.equal(d.defaultRecovery, 'manual');
        assert.deepEqual([...d.shellTextFields].sort(), ['/check/script', '/script', '/teardown/script']);
        assert.equal(d.prepare, undefined);
        assert.equal(d.plan, undefined);
        assert.equal(d.apply, commandDriver.apply);
      }
    });

    test('NYL_OUTPUTS with invalid JSON: failed, retryable, one line', async () => {
      const { outcome } = await apply('invalidJson');
      assert.equal(outcome.result, 'failed');
      assert.equal(outcome.retryable, true);
      assert.match(outcome.reason, /^NYL_OUTPUTS holds invalid JSON/);
    });

    test('NYL_OUTPUTS with JSON that is not an object: failed, retryable', async () => {
      const { outcome } = await apply('notObject');
      assert.equal(outcome.result, 'failed');
      assert.equal(outcome.retryable, true);
      assert.match(outcome.reason, /JSON object/);
    });

    test('NYL_OUTPUTS larger than 1 MiB: failed, retryable, not read; an output named __proto__: failed', async () => {
      const big = (await apply('bigFile')).outcome;
      assert.equal(big.result, 'failed');
      assert.equal(big.retryable, true);
      assert.match(big.reason, /^NYL_OUTPUTS is 1100000 bytes, more than the 1 MiB .* it was not read$/);
      const proto = (await apply('protoOutput')).outcome;
      assert.equal(proto.result, 'failed');
      assert.match(proto.reason, /__proto__/);
    });

    test('a tool that cannot start, a workingDir that does not exist: failed, retryable', async () => {
      const missing = (await apply('cannotStart')).outcome;
      assert.equal(missing.result, 'failed');
      assert.equal(missing.retryable, true);
      assert.match(missing.reason, /cannot start nyl-conformance-no-such-tool: ENOENT/);
      const noDir = (await apply('missingDir')).outcome;
      assert.equal(noDir.result, 'failed');
      assert.equal(noDir.retryable, true);
      assert.match(noDir.reason, /workingDir no\/such\/dir does not exist/);
    });

    test('a workingDir that leaves the source tree (a rendered "..", an absolute path, a committed symlink) fails before anything runs', async () => {
      const outside = fs.mkdtempSync(path.join(tmp, 'outside-'));
      const program = impl.name.includes('Fake') ? { run: ['ok'] } : { script: 'true' };
      for (const [workingDir, link] of [
        ['../..', undefined],
        ['sub/../..', undefined],
        [outside, undefined],
        ['escape', outside],
        ['sub/escape/x', outside],
        ['inside', 'sub'],
      ]) {
        const env = impl.make();
        const { ctx } = context({ unit: 'escaping', rendering: { ...program, workingDir }, runner: env.runner, clock: env.clock });
        if (link)
          fs.symlinkSync(
            link === 'sub' ? path.join(ctx.projectDir, 'sub') : link,
            path.join(ctx.projectDir, workingDir.startsWith('sub/') ? 'sub/escape' : workingDir),
          );
        if (workingDir === 'sub/escape/x') fs.mkdirSync(path.join(outside, 'x'), { recursive: true });
        const outcome = await env.driver.apply(ctx);
        assertOutcome('apply', outcome);
        if (workingDir === 'inside') {
          assert.equal(outcome.result, 'receipt', 'a symlink that stays inside the source tree is fine');
          continue;
        }
        assert.equal(outcome.result, 'failed', workingDir);
        assert.equal(outcome.retryable, true);
        assert.match(outcome.reason, /workingDir .* leaves the source tree/);
        assert.equal(env.runner.started, 0, `nothing ran for workingDir ${workingDir}`);
      }
    });

    if (impl.real) {
      test('a script over 128 KiB, which the system cannot pass as one argument (E2BIG): failed, retryable, saying why and what to do', async () => {
        const env = impl.make();
        const script = `true # ${'x'.repeat(140 * 1024)}`;
        const { ctx } = context({ unit: 'e2big', rendering: { script }, runner: env.runner, clock: env.clock });
        const outcome = await env.driver.apply(ctx);
        assertOutcome('apply', outcome);
        assert.equal(outcome.result, 'failed');
        assert.equal(outcome.retryable, true);
        assert.match(outcome.reason, /E2BIG/);
        assert.match(outcome.reason, /too large/);
        assert.match(outcome.reason, /file/, 'the fix: put the script in a file of the source');
        assert.ok(outcome.reason.length < 400, 'the reason does not carry the script');
      });
    }

    test('the tool gets NYL_* variables and the declared env (as text), and runs in workingDir', async () => {
      const { outcome, ctx } = await apply('probeEnv');
      assert.equal(outcome.result, 'receipt');
      const got = Object.fromEntries(Object.entries(outcome.outputs).map(([k, v]) => [k, v.value]));
      assert.deepEqual(got, {
        unit: 'probeEnv',
        run: ctx.run,
        uid: 'uid-probeEnv',
        environment: 'dev',
        greeting: 'hello world',
        count: '3',
        cwd: fs.realpathSync(path.join(ctx.projectDir, 'sub')),
      });
    });

    test('an output written as {"value", "sensitive"} (exactly those keys, a boolean flag) is that value, sensitive as flagged; anything else is a plain value', async () => {
      const { outcome } = await apply('sensitiveOutputs');
      assert.equal(outcome.result, 'receipt');
      assert.deepEqual(outcome.outputs, {
        token: { value: 't0k3n', sensitive: true },
        shown: { value: 'x', sensitive: false },
        extra: { value: { value: 'y', sensitive: true, note: 'not the form: a third key' }, sensitive: false },
        notBool: { value: { value: 'z', sensitive: 'yes' }, sensitive: false },
        url: { value: 'https://db', sensitive: false },
      });
    });

    test('tool output reaches toolOutput line by line, as text and as the bytes written', async () => {
      const { lines } = await apply('fails');
      assert.deepEqual([...lines], ['bad things happened', 'on two lines']);
      assert.equal(Buffer.concat(lines.bytes).toString('latin1'), 'bad things happened\non two lines\n');
    });

    test('cancellation of a tool that ignores the signal: SIGKILL after the grace period, uncertain', async () => {
      const env = impl.make();
      const ac = new AbortController();
      const { ctx, lines } = context({
        unit: 'cancelStubborn',
        rendering: env.rendering('cancelStubborn'),
        runner: env.runner,
        clock: env.clock,
        cancel: ac.signal,
      });
      const applying = env.driver.apply(ctx);
      await env.running(env.driver, 'cancelStubborn', lines);
      ac.abort('SIGINT');
      const outcome = await applying;
      assertOutcome('apply', outcome);
      assert.equal(outcome.result, 'uncertain');
      assert.match(outcome.reason, /ended by SIGKILL/);
    });
  });
}

// --- fakeDriver's test API ----------------------------------------------------------------------

describe('fakeDriver: test API', () => {
  const manual = () => new ManualClock(1_000_000);
  const ctxFor = (unit, extra = {}) => context({ unit, rendering: { n: unit }, runner: new FakeProcessRunner(), clock: manual(), ...extra }).ctx;

  test('defaults: kind Command, fake/1, manual, no shell text, only apply; withDrivers replaces the Command driver', () => {
    const driver = fakeDriver();
    assert.equal(driver.kind, 'Command');
    assert.equal(driver.version, 'fake/1');
    assert.equal(driver.defaultRecovery, 'manual');
    assert.deepEqual(driver.shellTextFields, []);
    for (const p of ['prepare', 'plan', 'teardown', 'check']) assert.equal(driver[p], undefined);
    const set = withDrivers(driver);
    assert.equal(set.driver('Command'), driver);
    assert.equal(set.descriptor('Command').version, 'fake/1');
    assert.equal(BUILTIN_DRIVERS.driver('Command').version, 'command/1', 'the shipped set is untouched');
    const tf = fakeDriver({ kind: 'Terraform', defaultRecovery: 'converge' });
    const both = withDrivers(tf);
    assert.equal(both.driver('Terraform'), tf);
    assert.equal(both.descriptor('Terraform').version, 'fake/1');
    assert.equal(both.driver('Command').version, 'command/1');
  });

  test('records calls (unit, phase, rendering, uid, run, at); answers arrays one attempt at a time', async () => {
    const driver = fakeDriver({ apply: { u: [failed('first'), receipt({ n: 1 })] } });
    const ctx = ctxFor('u');
    assert.equal((await driver.apply(ctx)).result, 'failed');
    assert.deepEqual(await driver.apply(ctx), receipt({ n: 1 }));
    assert.deepEqual(await driver.apply(ctx), receipt({ n: 1 }), 'the last answer repeats');
    assert.equal((await driver.apply(ctxFor('other'))).result, 'receipt', 'unlisted units get a receipt');
    assert.equal(driver.callsOf('u').length, 3);
    const [call] = driver.calls;
    assert.deepEqual(
      { unit: call.unit, phase: call.phase, rendering: call.rendering, uid: call.uid, run: call.run, at: call.at },
      { unit: 'u', phase: 'apply', rendering: { n: 'u' }, uid: 'uid-u', run: ctx.run, at: 1_000_000 },
    );
    assert.equal(call.outcome.reason, 'first');
  });

  test('delayMs sleeps on ctx.clock; a cancellation during the delay ends uncertain', async () => {
    const driver = fakeDriver({ delayMs: { slow: 5000 } });
    const clock = manual();
    let outcome;
    driver.apply(ctxFor('slow', { clock })).then((o) => (outcome = o));
    await clock.advance(4999);
    assert.equal(outcome, undefined);
    await clock.advance(1);
    assert.equal(outcome?.result, 'receipt');
    const ac = new AbortController();
    const pending = driver.apply(ctxFor('slow', { clock, cancel: ac.signal }));
    await clock.advance(100);
    ac.abort('SIGINT');
    assert.equal((await pending).result, 'uncertain');
  });

  test('hold / whenCalled / onCall: a unit stays running until released', async () => {
    const seen = [];
    const driver = fakeDriver({ onCall: async (call) => seen.push(`${call.phase}:${call.unit}`), check: true });
    const release = driver.hold('a');
    let outcome;
    driver.apply(ctxFor('a')).then((o) => (outcome = o));
    const call = await driver.whenCalled('a');
    assert.equal(call.unit, 'a');
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(outcome, undefined, 'held');
    release();
    await eventually(() => outcome !== undefined);
    assert.equal(outcome.result, 'receipt');
    await driver.check(ctxFor('b'));
    assert.deepEqual(seen, ['apply:a', 'check:b']);
  });

  test('startProcess runs through ctx.runner with the unit environment; throws contains nothing itself', async () => {
    const runner = new FakeProcessRunner({ programs: { tool: writeOutputs({ from: 'tool' }) } });
    const driver = fakeDriver({ startProcess: { u: ['tool', '--go'] }, throws: { u: 'driver bug' } });
    const ctx = ctxFor('u', { runner });
    await assert.rejects(driver.apply(ctx), /driver bug/);
    assert.deepEqual(runner.calls[0].argv, ['tool', '--go']);
    assert.equal(runner.calls[0].env.NYL_UNIT, 'u');
    assert.equal(runner.calls[0].cwd, ctx.projectDir);
    assert.deepEqual(JSON.parse(fs.readFileSync(ctx.outputsPath, 'utf8')), { from: 'tool' });
    assert.equal(driver.calls[0].process.code, 0);
    assert.ok(driver.calls[0].threw instanceof Error);
  });

  test('optional phases: true gives defaults, maps and functions answer per unit', async () => {
    const driver = fakeDriver({
      prepare: true,
      plan: { p: failed('no plan') },
      teardown: true,
      check: (ctx) => ({ result: 'checked', drift: ctx.unit === 'd' ? 'drifted' : 'in-sync' }),
    });
    const ctx = ctxFor('x');
    const prepared = await driver.prepare(ctx);
    assertOutcome('prepare', prepared);
    assert.deepEqual(prepared.rendering, ctx.rendering);
    const planned = await driver.plan(ctx);
    assertOutcome('plan', planned);
    assert.equal((await driver.plan(ctxFor('p'))).result, 'failed');
    assert.equal((await driver.teardown(ctx)).result, 'removed');
    assert.equal((await driver.check(ctxFor('d'))).drift, 'drifted');
    assert.equal((await driver.check(ctx)).drift, 'in-sync');
  });
});

// --- the engine's containment: executeUnit ------------------------------------------------------

describe('executeUnit (dist/run/unit-execution.js) with the fake driver', () => {
  const ctxFor = (unit, runner = new FakeProcessRunner({ programs: { tool: exitWith(0) } })) =>
    context({ unit, rendering: { n: unit }, runner, clock: new ManualClock(0, { autoAdvance: true }) }).ctx;

  test('a driver that throws before starting a process: failed, retryable, its whole message after the kind', async () => {
    const driver = fakeDriver({ throws: { u: 'driver bug\n  at somewhere\n' } });
    const outcome = await executeUnit(driver, ctxFor('u'));
    assert.deepEqual(outcome, { result: 'failed', reason: 'the Command driver failed: driver bug\n  at somewhere', retryable: true });
  });

  test('a driver that throws after starting a process: uncertain', async () => {
    const driver = fakeDriver({ startProcess: ['tool'], throws: 'lost track' });
    const outcome = await executeUnit(driver, ctxFor('u'));
    assert.equal(outcome.result, 'uncertain');
    assertReason(outcome.reason);
    assert.match(outcome.reason, /lost track/);
  });

  test('a driver that throws after a process that could not start: nothing started, so failed (retryable)', async () => {
    const driver = fakeDriver({ startProcess: ['nyl-no-such-tool'], throws: 'gave up' });
    const outcome = await executeUnit(driver, ctxFor('u'));
    assert.equal(outcome.result, 'failed');
  });

  test('a driver that throws a non-Error, or in plan: still a failure', async () => {
    const driver = fakeDriver({
      apply: {
        s: () => {
          throw 'just a string';
        },
      },
      plan: {
        p: () => {
          throw new Error('plan bug');
        },
      },
    });
    const s = await executeUnit(driver, ctxFor('s'));
    assert.deepEqual(s, { result: 'failed', reason: 'the Command driver failed: just a string', retryable: true });
    const p = await executeUnit(driver, ctxFor('p'), ANY_PLAN);
    assert.equal(p.result, 'failed');
    assert.match(p.reason, /plan bug/);
    assert.equal(driver.callsOf('p', 'apply').length, 0);
  });

  test('no driver: failed with a reason naming the kind', async () => {
    const ctx = { ...ctxFor('tf'), kind: 'Terraform' };
    const outcome = await executeUnit(undefined, ctx);
    assert.equal(outcome.result, 'failed');
    assert.match(outcome.reason, /Terraform/);
    assertReason(outcome.reason);
  });

  test('without a plan-bound approval, apply alone: the driver plans and applies in one step', async () => {
    const driver = fakeDriver({});
    assert.equal((await executeUnit(driver, ctxFor('free'))).result, 'receipt');
    assert.equal(driver.callsOf('free', 'plan').length, 0);
    assert.equal(driver.callsOf('free', 'apply')[0].plan, undefined);
  });

  test('with a plan-bound approval, plan then apply: apply gets the plan; a plan failure skips apply', async () => {
    const driver = fakeDriver({ plan: { bad: failed('cannot plan\nat all') } });
    const good = await executeUnit(driver, ctxFor('good'), ANY_PLAN);
    assert.equal(good.result, 'receipt');
    const [planCall] = driver.callsOf('good', 'plan');
    const [applyCall] = driver.callsOf('good', 'apply');
    assert.deepEqual(applyCall.plan, planCall.outcome.plan);
    const bad = await executeUnit(driver, ctxFor('bad'), ANY_PLAN);
    assert.deepEqual(bad, { result: 'failed', reason: 'cannot plan\nat all', retryable: true });
    assert.equal(driver.callsOf('bad', 'apply').length, 0);
  });

  test('outcomes pass through, multi-line reasons kept whole and tidied; siblings are unaffected by a throw', async () => {
    const driver = fakeDriver({
      apply: {
        f: failed('line one  \r\nline two', { retryable: false, acknowledgementRequired: true }),
        q: uncertain('maybe\n'),
        ok: receipt({ k: secret('v') }),
      },
      throws: { boom: 'kaboom' },
    });
    const [f, q, ok, boom] = await Promise.all(['f', 'q', 'ok', 'boom'].map((u) => executeUnit(driver, ctxFor(u))));
    assert.deepEqual(f, { result: 'failed', reason: 'line one\nline two', retryable: false, acknowledgementRequired: true });
    assert.deepEqual(q, { result: 'uncertain', reason: 'maybe' });
    assert.deepEqual(ok, { result: 'receipt', outputs: { k: { value: 'v', sensitive: true } } });
    assert.equal(boom.result, 'failed');
  });
});
