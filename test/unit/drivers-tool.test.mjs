// What the drivers share (src/drivers/tool.ts): the classification of a tool's end, whose order
// decides outcomes for every kind (a cancelled tool that exited 0 succeeded; a cancellation wins
// over a timeout; a spawn error wins over everything), the NYL_* variables, how rendered values
// become text, and runTool's line streams.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asProcessText, classifyEnd, declaredEnv, nylEnv, runTool, seconds } from '../../dist/drivers/tool.js';

/** A process result as the runner returns it, with the fields a case sets. */
function result(fields = {}) {
  return {
    argv: ['tool'],
    code: 0,
    signal: null,
    stdout: Buffer.alloc(0),
    stderr: Buffer.alloc(0),
    timedOut: false,
    cancelled: false,
    durationMs: 1234,
    ...fields,
  };
}

const TEXTS = {
  program: 'tool',
  cancelledWhile: 'while running',
  timedOut: () => ({ result: 'failed', reason: 'timed out', retryable: false, acknowledgementRequired: true }),
  exited: (done) => ({ result: 'failed', reason: `exited ${done.code} ${done.signal}`, retryable: true }),
};

test('classifyEnd: exit 0 is a success, and so is any code the driver names', () => {
  assert.equal(classifyEnd(result(), TEXTS), undefined);
  assert.equal(classifyEnd(result({ code: 1 }), TEXTS, [0, 1]), undefined);
  assert.equal(classifyEnd(result({ code: 2 }), TEXTS, [0, 1]).reason, 'exited 2 null');
});

test('classifyEnd: a program that cannot start is retryable, with the hint the driver adds', () => {
  const spawnError = Object.assign(new Error('spawn tool ENOENT'), { code: 'ENOENT' });
  const texts = { ...TEXTS, startHint: () => ' (install it)' };
  assert.deepEqual(classifyEnd(result({ code: null, spawnError, cancelled: true, timedOut: true }), texts), {
    result: 'failed',
    reason: 'cannot start tool: ENOENT (install it)',
    retryable: true,
  });
  assert.equal(classifyEnd(result({ code: null, spawnError: new Error('bad argument') }), TEXTS).reason, 'cannot start tool: bad argument');
});

test('classifyEnd: a cancelled tool ends uncertain, unless it exited 0; the cancellation wins over a timeout', () => {
  assert.deepEqual(classifyEnd(result({ code: null, signal: 'SIGTERM', cancelled: true, timedOut: true }), { ...TEXTS, endedBy: 'podman ' }), {
    result: 'uncertain',
    reason: 'cancelled while running (podman ended by SIGTERM after 1.2s)',
  });
  assert.equal(classifyEnd(result({ code: 3, cancelled: true }), TEXTS).reason, 'cancelled while running (exit 3 after 1.2s)');
  assert.equal(classifyEnd(result({ code: 0, cancelled: true }), TEXTS), undefined);
});

test("classifyEnd: a timeout is the driver's own failure, even when the tool exited 0 as it stopped", () => {
  assert.equal(classifyEnd(result({ code: 0, timedOut: true }), TEXTS).reason, 'timed out');
});

test("classifyEnd: any other end is the driver's exited failure, a signal included", () => {
  assert.equal(classifyEnd(result({ code: null, signal: 'SIGKILL' }), TEXTS).reason, 'exited null SIGKILL');
});

test('nylEnv names the environment, unit, run and execution; declared values become text', () => {
  assert.deepEqual(nylEnv({ environment: 'dev', unit: 'db', run: 'r1', uid: 'u1', kind: 'Command' }), {
    NYL_ENVIRONMENT: 'dev',
    NYL_UNIT: 'db',
    NYL_RUN: 'r1',
    NYL_UID: 'u1',
  });
  assert.deepEqual(declaredEnv({ A: 'x', B: 3, C: { d: [true] }, D: null }), { A: 'x', B: '3', C: '{"d":[true]}', D: 'null' });
  assert.deepEqual(declaredEnv(undefined), {});
  assert.equal(asProcessText('as is'), 'as is');
  assert.equal(seconds(61_250), '61.3s');
  assert.equal(seconds(0), '0.0s');
});

test("runTool: a process group, the run's cancellation unless told otherwise, and output cut into lines", async () => {
  const seen = [];
  const cancel = new AbortController().signal;
  const runner = {
    async run(argv, options) {
      seen.push({ argv, options });
      options.onStdout?.(Buffer.from('one\ntw'));
      options.onStdout?.(Buffer.from('o'));
      options.onStderr(Buffer.from('err\n'));
      return result({ argv });
    },
  };
  const out = [];
  const err = [];
  await runTool({ runner, cancel, killGraceMs: 7 }, ['tool', 'x'], {
    cwd: '/w',
    env: { A: '1' },
    timeoutMs: 5,
    stdout: (l) => out.push(l.text),
    stderr: (l) => err.push(l.text),
  });
  assert.deepEqual(out, ['one', 'two']);
  assert.deepEqual(err, ['err']);
  const { options } = seen[0];
  assert.equal(options.group, true);
  assert.equal(options.cancel, cancel);
  assert.equal(options.timeoutMs, 5);
  assert.equal(options.killGraceMs, 7);
  assert.equal('stopSignal' in options, false);

  const own = new AbortController().signal;
  await runTool({ runner, cancel, killGraceMs: 7 }, ['tool'], { cwd: '/w', env: {}, cancel: own, stopSignal: 'SIGINT', stderr: () => {} });
  assert.equal(seen[1].options.cancel, own);
  assert.equal(seen[1].options.stopSignal, 'SIGINT');
  assert.equal(seen[1].options.onStdout, undefined, 'without a stdout reader, stdout is captured');
  assert.equal('timeoutMs' in seen[1].options, false);
});
