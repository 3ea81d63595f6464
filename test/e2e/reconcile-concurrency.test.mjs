// End-to-end: concurrency inside one `nyl reconcile`: --concurrency bounds the units running at
// once (measured from timestamps the units log), names break ties, and a unit starts when its own
// dependencies have ended, not when an unrelated sibling does (the ready queue).
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { cleanupAll } from '../support/git-fixtures.mjs';
import { logLines, logs, reconcile, results, setup } from '../support/reconcile-helpers.mjs';

/** A unit that logs "start NAME <ns>", sleeps, then logs "end NAME <ns>". */
function timed(log, name, seconds) {
  return `script: 'echo "start ${name} $(date +%s%N)" >> ${log}; sleep ${seconds}; echo "end ${name} $(date +%s%N)" >> ${log}'`;
}

/** From the log of timed units: { span (s), maxRunning, starts: [names in start order] }. */
function timing(log) {
  const events = logLines(log).map((l) => {
    const [what, name, ns] = l.split(' ');
    return { what, name, t: Number(BigInt(ns) / 1000n) / 1000 };
  });
  const starts = events.filter((e) => e.what === 'start').sort((a, b) => a.t - b.t);
  const ends = events.filter((e) => e.what === 'end');
  const span = (Math.max(...ends.map((e) => e.t)) - Math.min(...starts.map((e) => e.t))) / 1000;
  let running = 0;
  let maxRunning = 0;
  // Ends sort before starts at the same instant.
  const sweep = [...events].sort((a, b) => a.t - b.t || (a.what === 'end' ? -1 : 1));
  for (const e of sweep) {
    running += e.what === 'start' ? 1 : -1;
    maxRunning = Math.max(maxRunning, running);
  }
  const at = Object.fromEntries(events.map((e) => [`${e.what} ${e.name}`, e.t]));
  return { span, maxRunning, starts: starts.map((e) => e.name), count: starts.length, ended: ends.length, at };
}

after(cleanupAll);

describe('--concurrency', () => {
  const four = (log) => Object.fromEntries(['w1', 'w2', 'w3', 'w4'].map((n) => [n, timed(log, n, 0.5)]));

  test('4 units of 0.5 s with --concurrency 2 take about 1 s, at most 2 at once', () => {
    const ctx = setup(four);
    const r = reconcile(ctx.project, ['--concurrency', '2', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const t = timing(ctx.log);
    assert.equal(t.count, 4);
    assert.equal(t.ended, 4);
    assert.equal(t.maxRunning, 2, JSON.stringify(t));
    assert.ok(t.span >= 0.9 && t.span < 1.8, `span ${t.span}s`);
    assert.deepEqual(t.starts.slice(0, 2).sort(), ['w1', 'w2'], 'names first');
    assert.deepEqual(results(r.json), { w1: 'executed', w2: 'executed', w3: 'executed', w4: 'executed' });
  });

  test('the default runs 4 at once; --concurrency 1 runs them one after another', () => {
    const parallel = setup(four);
    const r4 = reconcile(parallel.project, ['-o', 'json']);
    assert.equal(r4.code, 0, r4.stderr);
    const t4 = timing(parallel.log);
    assert.equal(t4.maxRunning, 4, JSON.stringify(t4));
    assert.ok(t4.span >= 0.45 && t4.span < 1.0, `span ${t4.span}s`);

    const serial = setup(four);
    const r1 = reconcile(serial.project, ['--concurrency', '1', '-o', 'json']);
    assert.equal(r1.code, 0, r1.stderr);
    const t1 = timing(serial.log);
    assert.equal(t1.maxRunning, 1, JSON.stringify(t1));
    assert.ok(t1.span >= 1.9 && t1.span < 3.5, `span ${t1.span}s`);
    assert.deepEqual(t1.starts, ['w1', 'w2', 'w3', 'w4']);
  });

  test('with --concurrency 1, independent units start in name order', () => {
    const ctx = setup((log) => ({
      delta: logs(log, 'delta'),
      alpha: logs(log, 'alpha'),
      charlie: logs(log, 'charlie'),
      bravo: logs(log, 'bravo'),
    }));
    const r = reconcile(ctx.project, ['--concurrency', '1', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(logLines(ctx.log), ['alpha', 'bravo', 'charlie', 'delta']);
    assert.deepEqual(r.json.unitOrder, ['alpha', 'bravo', 'charlie', 'delta']);
    const starts = r.stderr
      .split('\n')
      .filter((l) => / starting /.test(l))
      .map((l) => l.split(/[/\]]/)[1]);
    assert.deepEqual(starts, ['alpha', 'bravo', 'charlie', 'delta']);
  });

  test('names break ties within a later wave too: units that become ready together start in name order', () => {
    // Wave 1: a, zz. Wave 2: b (after zz) and z (after a), ready together: b starts first,
    // although the dependency order (a, zz, z, b) lists z first.
    const ctx = setup((log) => ({
      a: logs(log, 'a'),
      zz: logs(log, 'zz'),
      z: `dependsOn: [a]\n${logs(log, 'z')}`,
      b: `dependsOn: [zz]\n${logs(log, 'b')}`,
    }));
    const r = reconcile(ctx.project, ['--concurrency', '1', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(logLines(ctx.log), ['a', 'zz', 'b', 'z']);
    assert.deepEqual(r.json.unitOrder, ['a', 'zz', 'b', 'z']);
  });

  test("the name order does not depend on the user's locale", () => {
    // Under Danish collation "aa" sorts after "z", under Lithuanian "y" before "k"; names are
    // ref and path components, so their order must be the same on every machine.
    for (const locale of ['da_DK.UTF-8', 'lt_LT.UTF-8']) {
      const ctx = setup((log) => Object.fromEntries(['z', 'y', 'k', 'b', 'aa'].map((n) => [n, logs(log, n)])));
      const r = reconcile(ctx.project, ['--concurrency', '1', '-o', 'json'], { env: { LC_ALL: locale, LANG: locale } });
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(logLines(ctx.log), ['aa', 'b', 'k', 'y', 'z'], locale);
      assert.deepEqual(r.json.unitOrder, ['aa', 'b', 'k', 'y', 'z'], locale);
    }
  });
});

describe('the ready queue', () => {
  test('c, whose only dependency a takes 0.1 s, starts when a ends, while the unrelated b sleeps 5 s', (t) => {
    const ctx = setup((log) => ({ a: timed(log, 'a', 0.1), b: timed(log, 'b', 5), c: `dependsOn: [a]\n${timed(log, 'c', 0.1)}` }));
    const r = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const { at } = timing(ctx.log);
    const gap = at['start c'] - at['end a'];
    t.diagnostic(`c started ${gap.toFixed(0)} ms after a ended`);
    // The target is 100 ms; the bound is generous for a loaded machine (the barrier it replaces cost 4.9 s).
    assert.ok(gap >= 0 && gap < 1500, `c started ${gap.toFixed(0)} ms after a ended`);
    assert.ok(at['start c'] < at['end b'], 'c started before b ended');
    assert.deepEqual(r.json.unitOrder, ['a', 'b', 'c'], 'dispatch order');
  });
});
