// One unit's execution (src/run/unit-execution.ts) and its output (src/run/unit-output.ts): a
// driver that throws is contained, and the processes it left running end before its outcome is
// known; outputs beyond the limits of any driver fail the unit; writing a unit's output never
// throws, whatever happens to the log directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { executeUnit } from '../../dist/run/unit-execution.js';
import { UnitOutput } from '../../dist/run/unit-output.js';
import { ManualClock } from '../fakes/clock.mjs';
import { FakeProcessRunner, blockUntil } from '../fakes/process-runner.mjs';

function contextFor(runner, clock) {
  return { kind: 'Command', unit: 'u', runner, clock, cancel: new AbortController().signal, killGraceMs: 1000 };
}

test('a driver that throws while its tool runs: the tool is terminated and waited for, and the unit is uncertain', async () => {
  const clock = new ManualClock(0, { autoAdvance: true });
  const runner = new FakeProcessRunner({ clock, programs: { tool: blockUntil(new Promise(() => {})) } });
  let toolResult;
  const driver = {
    async apply(ctx) {
      ctx.runner.run(['tool'], { cancel: ctx.cancel, killGraceMs: ctx.killGraceMs }).then((r) => (toolResult = r));
      await runner.waitForCall(1);
      throw new Error('bug after the tool started');
    },
  };
  const outcome = await executeUnit(driver, contextFor(runner, clock));
  assert.equal(outcome.result, 'uncertain');
  assert.match(outcome.reason, /bug after the tool started/);
  assert.equal(runner.running, 0, 'no process of the unit outlives its outcome');
  await Promise.resolve();
  assert.equal(toolResult?.signal, 'SIGTERM', 'the tool was asked to stop first');
});

test('a driver that throws before any process started: failed and retryable', async () => {
  const clock = new ManualClock(0, { autoAdvance: true });
  const runner = new FakeProcessRunner({ clock });
  const outcome = await executeUnit(
    {
      apply: async () => {
        throw new Error('early');
      },
    },
    contextFor(runner, clock),
  );
  assert.deepEqual(outcome, { result: 'failed', reason: 'the Command driver failed: early', retryable: true });
});

test('a unit log that cannot be written is reported once; output goes on and nothing throws', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nyl-output-'));
  try {
    writeFileSync(join(dir, 'dev'), 'a file where the log directory should be');
    const lines = [];
    const output = new UnitOutput('dev', { quiet: false, logDir: dir }, (line) => lines.push(line));
    output.event('u', 'starting');
    output.tool('u', { bytes: Buffer.from('hello\n'), text: 'hello' });
    output.event('u', 'executed');
    assert.equal(lines.filter((l) => l.includes('cannot write unit logs')).length, 1, lines.join('\n'));
    assert.deepEqual(
      lines.filter((l) => !l.includes('cannot write')),
      ['[dev/u] starting', '  [dev/u] hello', '[dev/u] executed'],
    );
    const closed = new UnitOutput('dev', { quiet: false }, () => {
      throw new Error('EPIPE');
    });
    assert.doesNotThrow(() => closed.tool('u', { bytes: Buffer.from('x\n'), text: 'x' }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function deepValue(levels) {
  let v = 'bottom';
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

test('outputs of any driver nested deeper than 100 levels: failed (retryable), naming the output and the limit', async () => {
  const clock = new ManualClock(0, { autoAdvance: true });
  const runner = new FakeProcessRunner({ clock });
  const receipt = (outputs) => ({ apply: async () => ({ result: 'receipt', outputs }) });
  const deep = await executeUnit(receipt({ ok: { value: 1, sensitive: false }, tree: { value: deepValue(101), sensitive: true } }), contextFor(runner, clock));
  assert.equal(deep.result, 'failed', JSON.stringify(deep).slice(0, 300));
  assert.equal(deep.retryable, true);
  assert.match(deep.reason, /output tree nests deeper than 100 levels/);
  const edge = await executeUnit(receipt({ tree: { value: deepValue(100), sensitive: false } }), contextFor(runner, clock));
  assert.equal(edge.result, 'receipt');
});

test('outputs of any driver over 1 MiB as JSON, sensitive ones counted: failed (retryable), naming the size and the limit', async () => {
  const clock = new ManualClock(0, { autoAdvance: true });
  const runner = new FakeProcessRunner({ clock });
  const half = 'x'.repeat(600 * 1024);
  const outcome = await executeUnit(
    { apply: async () => ({ result: 'receipt', outputs: { a: { value: half, sensitive: false }, b: { value: half, sensitive: true } } }) },
    contextFor(runner, clock),
  );
  assert.equal(outcome.result, 'failed');
  assert.equal(outcome.retryable, true);
  assert.match(outcome.reason, /the outputs take \d+ bytes as JSON, more than the 1 MiB a unit may record/);
  assert.ok(outcome.reason.length < 300, 'the reason does not carry the outputs');
});

test('outputs no JSON can hold (a BigInt, a cycle: a driver bug): failed, never a throw out of executeUnit', async () => {
  const clock = new ManualClock(0, { autoAdvance: true });
  const runner = new FakeProcessRunner({ clock });
  const apply = (value) => ({ apply: async () => ({ result: 'receipt', outputs: { n: { value, sensitive: false } } }) });
  const big = await executeUnit(apply(10n), contextFor(runner, clock));
  assert.equal(big.result, 'failed');
  assert.match(big.reason, /cannot be written as JSON/);
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  const cycle = await executeUnit(apply(cyclic), contextFor(runner, clock));
  assert.equal(cycle.result, 'failed', 'a cycle nests without end');
});
