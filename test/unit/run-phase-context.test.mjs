// The grace of a unit's tools (src/run/phase-context.ts): how long they may take to stop after
// SIGTERM (a cancellation, a timeout, Nyl's death) before SIGKILL. A unit's own
// terminationGracePeriod, else 30 s; NYL_TEST_KILL_GRACE_MS shortens either, never lengthens it;
// and phaseContext hands it to the driver, which passes it to the process runner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { killGraceMs, phaseContext } from '../../dist/run/phase-context.js';

test("the grace of a unit's tools is its terminationGracePeriod, else 30 s", () => {
  assert.equal(killGraceMs({}), 30_000);
  assert.equal(killGraceMs({}, {}), 30_000);
  assert.equal(killGraceMs({}, { terminationGracePeriod: '2s' }), 2000);
  assert.equal(killGraceMs({}, { terminationGracePeriod: '5m' }), 300_000, 'longer than the default too');
  assert.equal(killGraceMs({}, { terminationGracePeriod: '0s' }), 0, 'SIGKILL right after SIGTERM');
});

test('NYL_TEST_KILL_GRACE_MS shortens the grace, whichever it is, and never lengthens it', () => {
  const env = { NYL_TEST_KILL_GRACE_MS: '1000' };
  assert.equal(killGraceMs(env), 1000);
  assert.equal(killGraceMs(env, { terminationGracePeriod: '5m' }), 1000);
  assert.equal(killGraceMs(env, { terminationGracePeriod: '500ms' }), 500, 'a shorter grace of the unit stays');
  for (const ignored of ['0', '-5', '1.5', 'x', '', '30001']) {
    assert.equal(killGraceMs({ NYL_TEST_KILL_GRACE_MS: ignored }, { terminationGracePeriod: '45s' }), 45_000, JSON.stringify(ignored));
  }
});

test("phaseContext gives the driver the grace of its unit's rendering", () => {
  const scope = {
    rt: { runner: {}, clock: {}, env: {}, cancel: new AbortController().signal },
    environment: 'dev',
    run: 'r1',
    workspace: { scratchDir: () => '/scratch', outputsPath: () => '/scratch/u.outputs.json' },
    output: { tool: () => {} },
  };
  const subject = (rendering) => ({ name: 'u', kind: 'Command', uid: 'x', rendering });
  assert.equal(phaseContext(scope, subject({ script: 'x', terminationGracePeriod: '3s' }), '/project').killGraceMs, 3000);
  assert.equal(phaseContext(scope, subject({ script: 'x' }), '/project').killGraceMs, 30_000);
  const capped = { ...scope, rt: { ...scope.rt, env: { NYL_TEST_KILL_GRACE_MS: '200' } } };
  assert.equal(phaseContext(capped, subject({ script: 'x', terminationGracePeriod: '3s' }), '/project').killGraceMs, 200);
});
