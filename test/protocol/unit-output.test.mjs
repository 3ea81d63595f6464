// What an operator sees of a unit's tool in process: a failed or uncertain unit's condition keeps
// the last lines the tool printed (masked, cut, without terminal control characters), through the
// run record's checkpoint into an import too; and a long-running unit reports its progress on the
// run's clock: a line every interval, or a live status line on a terminal.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { failed, receipt, secret, uncertain } from '../fakes/driver.mjs';
import { World } from './world.mjs';
import { Journal } from './invariants.mjs';

const SECRET = 'hunter2-s3cr3t-value';
const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });
const consumer = (name) => unit(name, { dependsOn: ['s'], env: { TOKEN: '${{ units.s.outputs.token }}' } });

/** 25 lines of tool output: the secret, a colour, a redrawn progress bar, an over-long line among them. */
const TOOL_LINES = [
  ...Array.from({ length: 20 }, (_, i) => `line ${i + 1}`),
  `connecting with token ${SECRET}`,
  '\x1b[31mError:\x1b[0m migration 7 failed',
  'progress 10%\rprogress 90%',
  'x'.repeat(1000),
  'last words',
];

/** Every Git object of the world that holds the secret. */
function leaks(world) {
  return [...world.repo.objects].filter(([, obj]) => obj.content.includes(SECRET)).map(([oid, obj]) => `${obj.type} ${oid}`);
}

function assertTail(output) {
  assert.equal(output.length, 20, JSON.stringify(output));
  assert.equal(output[0], 'line 6', 'the first lines fell out: only the last 20 are kept');
  assert.equal(output[15], 'connecting with token ***', 'masked before it reaches Git');
  assert.equal(output[16], 'Error: migration 7 failed', 'no terminal escape sequences');
  assert.equal(output[17], 'progress 90%', 'what a terminal shows of a redrawn line');
  assert.equal(output[18], `${'x'.repeat(300)}...`, 'an over-long line is cut');
  assert.equal(output[19], 'last words');
}

async function world(apply, units = [unit('s'), consumer('c'), unit('slow')]) {
  const w = await World.create({ units, apply: { s: receipt({ token: secret(SECRET) }), ...apply }, driver: { toolOutput: { c: TOOL_LINES } } });
  await w.process('init').run('state init');
  return w;
}

describe("a failed unit's condition keeps the tool's last lines", () => {
  test('failed in the run: the condition has them, masked, and the stderr lines are masked too', async () => {
    const w = await world({ c: failed('exited with code 1') });
    try {
      const p = w.process('p');
      const r = await p.run('reconcile');
      assert.equal(r.code, 3);
      const condition = w.observedDoc('c').condition;
      assert.equal(condition.reason, 'exited with code 1');
      assertTail(condition.output);
      assert.equal(w.observedDoc('slow').condition, undefined);
      assert.deepEqual(leaks(w), [], 'no Git object holds the secret');
      assert.ok(
        p.lines.some((l) => l === '  [dev/c] connecting with token ***'),
        p.lines.join('\n'),
      );
      assert.ok(!p.lines.some((l) => l.includes(SECRET)));
      // The document passes its shape check when read back (a field the shape lacked would be damage).
      const st = await w.process('st').run('status');
      assert.equal(st.code, 3, JSON.stringify(st.error?.diagnostics ?? st.report?.errors));
      assert.deepEqual(
        [...st.report.errors, ...st.report.warnings].map((d) => d.code).filter((c) => /DAMAGE|CORRUPT/.test(c)),
        [],
      );
      assert.equal(st.report.units.c.state, 'failed');
    } finally {
      w.cleanup();
    }
  });

  test('a unit that becomes current loses them with its condition', async () => {
    const w = await world({ c: [failed('exited with code 1'), receipt({})] });
    try {
      assert.equal((await w.process('p1').run('reconcile')).code, 3);
      assert.equal((await w.process('p2').run('reconcile')).code, 0);
      assert.equal(w.observedDoc('c').condition, undefined, 'a unit that becomes current loses its condition');
    } finally {
      w.cleanup();
    }
  });

  test('an uncertain checkpoint of a dead run keeps them through the import', async () => {
    const w = await world({ c: uncertain('cancelled while running') }, [unit('s'), consumer('c'), unit('slow', { dependsOn: ['s'] })]);
    try {
      const journal = new Journal(w);
      const releaseSlow = w.driver.hold('slow');
      const victim = w.process('victim');
      const run = victim.start('reconcile');
      await w.until(() => w.runRefs().some((ref) => w.runRecords(ref).get('c')?.checkpoint), "c's checkpoint");
      const [ref] = w.runRefs();
      assertTail(w.runRecords(ref).get('c').checkpoint.output);
      victim.kill();
      await run.outcome;
      releaseSlow();
      journal.noteDeadRuns();
      await journal.leaseBreak(w.process('operator'));
      const take = await w.process('takeover').run('reconcile');
      assert.equal(take.report.units.c.result, 'recovered', JSON.stringify(take.report.units.c));
      const condition = w.observedDoc('c').condition;
      assert.equal(condition.type, 'uncertain');
      assertTail(condition.output);
      assert.deepEqual(leaks(w), []);
    } finally {
      w.cleanup();
    }
  });
});

describe('masking what the tool printed, on stderr and in the kept tail', () => {
  /** c consumes s's sensitive `value`, prints `lines` and fails, so that its condition keeps them. */
  async function maskWorld(value, lines) {
    const w = await World.create({
      units: [unit('s'), consumer('c')],
      apply: { s: receipt({ token: secret(value) }), c: failed('exited with code 1') },
      driver: { toolOutput: { c: lines } },
    });
    await w.process('init').run('state init');
    const p = w.process('p');
    assert.equal((await p.run('reconcile')).code, 3);
    return { w, p, tail: w.observedDoc('c').condition.output };
  }

  test('a sensitive value of several lines: each of its lines of 3 characters or more is masked, on stderr and in the tail', async () => {
    const { w, p, tail } = await maskWorld('first-line-abc\nsecond-line-def\nxy', ['key begins first-line-abc', 'then second-line-def here', 'xy stays']);
    try {
      const ours = p.lines.filter((l) => l.startsWith('  [dev/c] '));
      assert.deepEqual(ours, ['  [dev/c] key begins ***', '  [dev/c] then *** here', '  [dev/c] xy stays'], p.lines.join('\n'));
      assert.deepEqual(tail, ['key begins ***', 'then *** here', 'xy stays']);
      assert.ok(!p.lines.some((l) => l.includes('first-line-abc') || l.includes('second-line-def')));
    } finally {
      w.cleanup();
    }
  });

  test('a secret split by a terminal escape sequence is masked in the tail once the control characters are gone', async () => {
    const { w, tail } = await maskWorld(SECRET, [`token hunter2-\x1b[1ms3cr3t-value!`, 'after']);
    try {
      assert.deepEqual(tail, ['token ***!', 'after']);
      assert.deepEqual(leaks(w), [], 'no Git object holds the secret');
    } finally {
      w.cleanup();
    }
  });
});

describe('a unit that runs long says so, on the run clock', () => {
  const units = [unit('long'), unit('other')];

  test('without a terminal: a line every 30 s from its start until it ends, none for a short unit', async () => {
    const w = await World.create({ units, delayMs: { long: 100_000, other: 10 } });
    try {
      await w.process('init').run('state init');
      const p = w.process('p');
      assert.equal((await p.run('reconcile')).code, 0);
      const ours = p.lines.filter((l) => /still running|^\[dev\/long\] (starting|executed)/.test(l));
      assert.deepEqual(
        ours.map((l) => l.replace(/: .*/, '')),
        [
          '[dev/long] starting Command (reconcile)',
          '[dev/long] still running (30s)',
          '[dev/long] still running (1m00s)',
          '[dev/long] still running (1m30s)',
          '[dev/long] executed in 100.0s',
        ],
      );
      assert.ok(!p.lines.some((l) => l.startsWith('[dev/other] still running')));
    } finally {
      w.cleanup();
    }
  });

  test('NYL_TEST_PROGRESS_INTERVAL_MS shortens the interval (and cannot lengthen it)', async () => {
    for (const [value, expected] of [
      ['20000', ['20s', '40s']],
      ['3600000', ['30s']],
      ['abc', ['30s']],
    ]) {
      const w = await World.create({ units, delayMs: { long: 45_000, other: 10 }, processEnv: { NYL_TEST_PROGRESS_INTERVAL_MS: value } });
      try {
        await w.process('init').run('state init');
        const p = w.process('p');
        assert.equal((await p.run('reconcile')).code, 0);
        const times = p.lines.filter((l) => l.includes('still running')).map((l) => l.match(/\((.*)\)/)[1]);
        assert.deepEqual(times, expected, value);
      } finally {
        w.cleanup();
      }
    }
  });

  test('on a terminal: one status line of every running unit, redrawn every second and taken away at the end; no still-running lines', async () => {
    const w = await World.create({ units, delayMs: { long: 3500, other: 1500 } });
    try {
      await w.process('init').run('state init');
      const p = w.process('p');
      const shown = [];
      p.rt.liveStatus = { set: (key, text) => shown.push([key, text]) };
      assert.equal((await p.run('reconcile')).code, 0);
      const texts = shown.map(([, t]) => t);
      assert.ok(shown.every(([key]) => key === 'dev'));
      for (const t of ['long 0s, other 0s', 'long 1s, other 1s', 'long 1s', 'long 2s', 'long 3s'])
        assert.ok(texts.includes(t), `${t} in ${JSON.stringify(texts)}`);
      assert.ok(texts.indexOf('long 1s') > texts.indexOf('long 1s, other 1s'), 'other ended after 1.5 s');
      assert.equal(texts.at(-1), undefined, 'the line is taken away once no unit runs');
      assert.ok(!p.lines.some((l) => l.includes('still running')));
    } finally {
      w.cleanup();
    }
  });
});
