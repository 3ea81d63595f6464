// What every driver outcome must look like (src/drivers/contract.ts), for the driver conformance
// suites: data of the phase's shapes, reasons tidy (every line kept, `\n` endings, nothing blank
// around), outputs as { value, sensitive }, a plan's digest and one-line summary.

import assert from 'node:assert/strict';

export function assertOneLine(text) {
  assert.equal(typeof text, 'string');
  assert.ok(text.length > 0, 'a text is given');
  assert.ok(!/[\r\n]/.test(text), `one line: ${JSON.stringify(text)}`);
  assert.equal(text, text.trim());
}

/** A reason keeps every line, tidied: `\n` line ends, no trailing blanks, nothing blank around it. */
export function assertReason(reason) {
  assert.equal(typeof reason, 'string');
  assert.ok(reason.length > 0, 'a reason is given');
  assert.ok(!/\r|[ \t]\n/.test(reason), `tidy lines: ${JSON.stringify(reason)}`);
  assert.equal(reason, reason.trim());
}

export function assertFailureShape(o) {
  assertReason(o.reason);
  assert.equal(typeof o.retryable, 'boolean');
  if ('acknowledgementRequired' in o) assert.equal(o.acknowledgementRequired, true);
}

export const SHAPES = {
  apply: ['receipt', 'failed', 'uncertain'],
  teardown: ['removed', 'incomplete', 'failed', 'uncertain'],
  check: ['checked', 'failed'],
  plan: ['planned', 'failed'],
  prepare: ['prepared', 'absent', 'failed'],
  readOutputs: ['read', 'failed'],
};

/** Any outcome of a phase: data of the right shape, reasons tidy, a plan's summary on one line. */
export function assertOutcome(phase, o) {
  assert.ok(o && typeof o === 'object', 'an outcome object');
  assert.ok(SHAPES[phase].includes(o.result), `${phase} outcome ${o.result}`);
  if (o.result === 'failed') assertFailureShape(o);
  if (o.result === 'uncertain' || o.result === 'incomplete') assertReason(o.reason);
  if (o.result === 'receipt' || o.result === 'read') {
    assert.ok(o.outputs && typeof o.outputs === 'object' && !Array.isArray(o.outputs));
    for (const [name, out] of Object.entries(o.outputs)) {
      assert.deepEqual(Object.keys(out).sort(), ['sensitive', 'value'], `output ${name}`);
      assert.equal(typeof out.sensitive, 'boolean');
    }
  }
  if (o.result === 'checked') {
    assert.ok(['in-sync', 'drifted', 'unknown'].includes(o.drift));
    if ('detail' in o) assert.equal(typeof o.detail, 'string');
  }
  if (o.result === 'planned') {
    // The digest is computed when asked for (PlanOptions.digest).
    if (o.plan.digest !== undefined) assert.match(o.plan.digest, /^sha256:[0-9a-f]{64}$/);
    assertOneLine(o.plan.summary);
    assert.ok(['none', 'some', 'unknown'].includes(o.plan.changes));
  }
  if (o.result === 'prepared') assert.ok(o.rendering && typeof o.rendering === 'object');
  if (o.result === 'absent') {
    assert.equal(o.failure?.result, 'failed', 'an absent input carries the failure of a unit that must execute');
    assertFailureShape(o.failure);
  }
}
