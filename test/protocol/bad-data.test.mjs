// Bad data fails one unit, never the run (issue 9, items 5 and 8): outputs nested thousands of
// levels deep, outputs larger than the per-unit limit, a NUL byte that reaches argv or env through
// another unit's outputs, an output named __proto__. In process: the real Command driver and the
// real engine on FakeProcessRunner programs, the state in memory, on virtual time. Each case has a
// sibling in the same wave that must keep its receipt, and the run must end as a run (a report
// with an exit code), not with NYL-INTERNAL.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { BUILTIN_DRIVERS } from '../../dist/drivers/registry.js';
import { loadProject } from '../../dist/project/load.js';
import { exitWith } from '../fakes/process-runner.mjs';
import { memoryTree } from '../support/memory-tree.mjs';
import { ENV, World } from './world.mjs';

const MiB = 1024 * 1024;

/** nyl.yaml: the environment and Command units given as {name: spec lines}. */
function projectYaml(units) {
  const env = ['apiVersion: nyl.io/v1', 'kind: Environment', `metadata: {name: ${ENV}}`, 'spec:', '  lease: {duration: 5m}'].join('\n');
  const docs = Object.entries(units).map(([name, lines]) =>
    ['apiVersion: nyl.io/v1', 'kind: Command', `metadata: {name: ${name}}`, 'spec:', ...lines.map((l) => `  ${l}`)].join('\n'),
  );
  return `${[env, ...docs].join('\n---\n')}\n`;
}

/** A program that writes `text` to NYL_OUTPUTS, as a tool would. */
function writesOutputs(text) {
  return async (_argv, _options, io) => {
    fs.writeFileSync(io.env.NYL_OUTPUTS, text);
    return { code: 0 };
  };
}

/** A world whose units are Command units run by the real Command driver on these fake programs. */
async function commandWorld(units, programs) {
  const world = await World.create({ units: Object.keys(units).map((name) => ({ name })) });
  world.project = await loadProject('/project', memoryTree({ 'nyl.yaml': projectYaml(units) }));
  world.env = world.project.environments.get(ENV);
  world.drivers = BUILTIN_DRIVERS;
  await world.process('init').run('state init');
  const reconcile = async () => {
    const p = world.process();
    for (const [name, handler] of Object.entries(programs)) p.rt.runner.register(name, handler);
    const result = await p.run('reconcile');
    return { ...result, runner: p.rt.runner };
  };
  return { world, reconcile };
}

/** The reconcile ended as a run: a report, no NYL-INTERNAL. */
function assertRunEnded(result) {
  assert.ok(result.report, `a report, not an error: ${result.error?.stack ?? JSON.stringify(result.codes)}`);
  const codes = result.report.errors.map((d) => d.code);
  assert.ok(!codes.includes('NYL-INTERNAL'), `no NYL-INTERNAL: ${JSON.stringify(result.report.errors)}`);
}

/** Every file on every ref of the state repository: [ref, path, text]. */
function allFiles(world) {
  const out = [];
  for (const [ref, oid] of world.repo.refs()) for (const [file, text] of world.repo.filesAt(oid)) out.push([ref, file, text]);
  return out;
}

const nested = (levels) => `{"deep":${'['.repeat(levels)}1${']'.repeat(levels)}}`;

describe('outputs that no document could hold fail their unit alone', () => {
  test('outputs nested 4,000 levels deep: that unit fails (retryable) naming the depth limit; its sibling keeps its receipt; every retry the same', async () => {
    const { world, reconcile } = await commandWorld(
      { deep: ['run: [deep]'], ok: ['run: [ok]'] },
      { deep: writesOutputs(nested(4000)), ok: writesOutputs('{"v":1}') },
    );
    for (const round of [1, 2]) {
      const r = await reconcile();
      assertRunEnded(r);
      assert.equal(r.code, 3, `round ${round}: exit 3 (a unit failed)`);
      const deep = r.report.units.deep;
      assert.equal(deep.result, 'failed', JSON.stringify(deep));
      assert.match(deep.detail, /nest.*deeper than 100 levels/);
      assert.equal(world.observedDoc('deep').condition.retryable, true);
      assert.equal(world.observedDoc('deep').receipt, undefined);
    }
    assert.deepEqual(world.observedDoc('ok').receipt.outputs, { v: 1 });
    assert.ok(
      allFiles(world).every(([, , text]) => !text.includes('[[[[')),
      'nothing of the deep outputs is in state',
    );
  });

  test('outputs nested exactly 100 levels deep are recorded', async () => {
    const { world, reconcile } = await commandWorld({ edge: ['run: [edge]'] }, { edge: writesOutputs(nested(100)) });
    const r = await reconcile();
    assertRunEnded(r);
    assert.equal(r.report.units.edge.result, 'executed', JSON.stringify(r.report.units.edge));
    let v = world.observedDoc('edge').receipt.outputs.deep;
    let depth = 0;
    while (Array.isArray(v)) [v, depth] = [v[0], depth + 1];
    assert.equal(depth, 100);
  });

  test('outputs over 1 MiB: that unit fails naming the limit and nothing of them is committed; the sibling keeps its receipt', async () => {
    const big = JSON.stringify({ blob: 'x'.repeat(MiB) });
    const { world, reconcile } = await commandWorld({ big: ['run: [big]'], ok: ['run: [ok]'] }, { big: writesOutputs(big), ok: writesOutputs('{"v":1}') });
    const r = await reconcile();
    assertRunEnded(r);
    assert.equal(r.code, 3);
    assert.equal(r.report.units.big.result, 'failed', JSON.stringify(r.report.units.big));
    assert.match(r.report.units.big.detail, /1 MiB/);
    assert.equal(world.observedDoc('big').receipt, undefined);
    assert.deepEqual(world.observedDoc('ok').receipt.outputs, { v: 1 });
    const largest = Math.max(...allFiles(world).map(([, , text]) => text.length));
    assert.ok(largest < 64 * 1024, `no state file holds the outputs (largest: ${largest} bytes)`);
  });

  test('outputs whose JSON is 1 MiB exactly are recorded; one byte more is refused', async () => {
    const exactly = (size) => JSON.stringify({ blob: 'x'.repeat(size - '{"blob":""}'.length) });
    assert.equal(exactly(MiB).length, MiB);
    const { world, reconcile } = await commandWorld(
      { at: ['run: [at]'], over: ['run: [over]'] },
      { at: writesOutputs(exactly(MiB)), over: writesOutputs(exactly(MiB + 1)) },
    );
    const r = await reconcile();
    assertRunEnded(r);
    assert.equal(r.report.units.at.result, 'executed', JSON.stringify(r.report.units.at));
    assert.equal(world.observedDoc('at').receipt.outputs.blob.length, MiB - '{"blob":""}'.length);
    assert.equal(r.report.units.over.result, 'failed');
  });

  test('an outputs file of 50 MiB is refused without being parsed; the run goes on', async () => {
    const { world, reconcile } = await commandWorld(
      { huge: ['run: [huge]'], ok: ['run: [ok]'] },
      {
        huge: async (_argv, _options, io) => {
          const fd = fs.openSync(io.env.NYL_OUTPUTS, 'w');
          fs.ftruncateSync(fd, 50 * MiB);
          fs.closeSync(fd);
          return { code: 0 };
        },
        ok: exitWith(0),
      },
    );
    const r = await reconcile();
    assertRunEnded(r);
    assert.equal(r.report.units.huge.result, 'failed');
    assert.match(r.report.units.huge.detail, /50(\.0)? MiB.*1 MiB/);
    assert.equal(r.report.units.ok.result, 'executed');
    assert.equal(world.observedDoc('huge').receipt, undefined);
  });

  test('an output named __proto__ fails its unit instead of vanishing', async () => {
    const { world, reconcile } = await commandWorld({ proto: ['run: [proto]'] }, { proto: writesOutputs('{"__proto__":{"polluted":1},"a":1}') });
    const r = await reconcile();
    assertRunEnded(r);
    assert.equal(r.report.units.proto.result, 'failed', JSON.stringify(r.report.units.proto));
    assert.match(r.report.units.proto.detail, /__proto__/);
    assert.equal({}.polluted, undefined);
    assert.equal(world.observedDoc('proto').receipt, undefined);
  });
});

describe("a NUL byte from another unit's outputs fails the consumer alone", () => {
  for (const [where, lines] of [
    ['env', ['env: {X: "${{ units.p.outputs.v }}"}', 'run: [consumer]']],
    ['argv', ['run: [consumer, "${{ units.p.outputs.v }}"]']],
  ]) {
    test(`through ${where}: the consumer fails (retryable) naming the NUL byte, no process starts; its wave's sibling executes`, async () => {
      const { world, reconcile } = await commandWorld(
        { p: ['run: [p]'], consumer: lines, sibling: ['dependsOn: [p]', 'run: [sibling]'] },
        { p: writesOutputs('{"v":"a\\u0000b"}'), consumer: exitWith(0), sibling: exitWith(0) },
      );
      const r = await reconcile();
      assertRunEnded(r);
      assert.equal(r.report.units.consumer.result, 'failed', JSON.stringify(r.report.units.consumer));
      assert.match(r.report.units.consumer.detail, /NUL byte/);
      assert.equal(world.observedDoc('consumer').condition.retryable, true);
      assert.equal(r.report.units.sibling.result, 'executed');
      assert.equal(r.runner.calls.filter((c) => c.argv[0] === 'consumer').length, 0, 'the consumer never started');
    });
  }
});
