// Deletion policies end to end through the CLI against a file:// remote: Retain keeps a
// tombstone, Release drops the desired file and keeps a record, Teardown waits for
// --allow-teardown and then runs the Command's teardown: action consumers first; a Command
// without teardown: needs --allow-incomplete; tombstones that cite a unit block its teardown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { changeUnits, commitFiles, logLines, reconcile, results, setup, stateCounts } from '../support/reconcile-helpers.mjs';
import { commitAt, desiredDoc, observedDoc, status } from '../support/hold-helpers.mjs';

const DESIRED = 'refs/heads/nyl/dev/desired';
const OBSERVED = 'refs/heads/nyl/dev/observed';
const show = (r) => `exit ${r.code}\n${r.stdout}\n${r.stderr}`;
const codes = (r) => [...r.json.errors, ...r.json.warnings].map((d) => d.code);

/** A unit that logs `NAME` when it runs and `-NAME` when torn down (with the receipt's outputs file content). */
function unit(log, name, { policy, dependsOn, teardown = true, outputs = false } = {}) {
  const lines = [];
  if (policy) lines.push(`deletionPolicy: ${policy}`);
  if (dependsOn) lines.push(`dependsOn: [${dependsOn.join(', ')}]`);
  lines.push(`env: {WHO: ${name}}`);
  lines.push(outputs ? `script: 'echo ${name} >> ${log}; echo "{\\"id\\": \\"${name}-1\\"}" > $NYL_OUTPUTS'` : `script: 'echo ${name} >> ${log}'`);
  if (teardown) lines.push(`teardown: {script: 'echo "-$WHO $(cat $NYL_RECEIPT_OUTPUTS)" >> ${log}'}`);
  return lines.join('\n');
}

test('Retain (the default): a tombstone keeps the receipt; the next run changes nothing', () => {
  const ctx = setup((log) => ({ a: unit(log, 'a'), b: unit(log, 'b') }));
  assert.equal(reconcile(ctx.project).code, 0);
  const receipt = observedDoc(ctx.bare, 'b').receipt;
  changeUnits(ctx, (log) => ({ a: unit(log, 'a') }));
  logLines(ctx.log, { clear: true });
  const r = reconcile(ctx.project, ['-o', 'json']);
  assert.equal(r.code, 0, show(r));
  assert.deepEqual(results(r.json), { b: 'retained', a: 'current' });
  assert.deepEqual(r.json.unitOrder, ['b', 'a'], 'the leaving section first');
  assert.equal(r.json.units.b.leaving, true);
  assert.ok(codes(r).includes('NYL-PLAN-UNITS-LEAVING'), show(r));
  assert.deepEqual(logLines(ctx.log), [], 'nothing ran: Retain touches no resource');
  const tomb = desiredDoc(ctx.bare, 'b');
  assert.equal(tomb.lifecycle.state, 'retained');
  assert.ok(tomb.rendering, 'the tombstone keeps its last rendering');
  assert.deepEqual(observedDoc(ctx.bare, 'b').receipt, receipt, 'the receipt is kept');
  assert.deepEqual(commitAt(ctx.bare, DESIRED).body.retained, ['b']);
  const text = reconcile(ctx.project);
  assert.equal(text.code, 0, show(text));
  const counts = stateCounts(ctx.bare);
  assert.equal(reconcile(ctx.project).code, 0);
  assert.deepEqual(stateCounts(ctx.bare), counts, 'a tombstone costs no commit');
  const st = status(ctx.project, ['-o', 'json']);
  assert.equal(st.code, 0, show(st));
  assert.equal(st.json.units.b.state, 'retained');
});

test('Release: the desired file goes, an observed record stays; NYL-UNIT-RELEASED', () => {
  const ctx = setup((log) => ({ a: unit(log, 'a'), b: unit(log, 'b', { policy: 'Release' }) }));
  assert.equal(reconcile(ctx.project).code, 0);
  changeUnits(ctx, (log) => ({ a: unit(log, 'a') }));
  logLines(ctx.log, { clear: true });
  const r = reconcile(ctx.project, ['-o', 'json']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.json.units.b.result, 'released');
  assert.ok(codes(r).includes('NYL-UNIT-RELEASED'), show(r));
  assert.deepEqual(logLines(ctx.log), []);
  assert.equal(desiredDoc(ctx.bare, 'b'), undefined, 'the desired file is gone');
  const record = observedDoc(ctx.bare, 'b');
  assert.equal(record.released.run, r.json.run);
  assert.match(record.released.by, /</);
  assert.deepEqual(commitAt(ctx.bare, OBSERVED).body.released, ['b']);
  const st = status(ctx.project, ['-o', 'json']);
  assert.equal(st.code, 0, show(st));
  assert.equal(st.json.units.b.state, 'released');
});

test('Teardown: pending-teardown (exit 2) until --allow-teardown; then the teardown: action runs with the run environment and the receipt outputs', () => {
  const ctx = setup((log) => ({ a: unit(log, 'a'), b: unit(log, 'b', { policy: 'Teardown', outputs: true }) }));
  assert.equal(reconcile(ctx.project).code, 0);
  changeUnits(ctx, (log) => ({ a: unit(log, 'a') }));
  logLines(ctx.log, { clear: true });
  const waits = reconcile(ctx.project, ['-o', 'json']);
  assert.equal(waits.code, 2, show(waits));
  assert.equal(waits.json.units.b.result, 'pending-teardown');
  assert.ok(codes(waits).includes('NYL-TEARDOWN-PENDING'), show(waits));
  const pending = waits.json.warnings.find((w) => w.code === 'NYL-TEARDOWN-PENDING');
  assert.match(pending.fix, /nyl reconcile -e dev --allow-teardown/);
  assert.equal(desiredDoc(ctx.bare, 'b').lifecycle.state, 'pending-teardown');
  const st = status(ctx.project, ['-o', 'json']);
  assert.equal(st.code, 2, show(st));
  assert.equal(st.json.units.b.state, 'pending-teardown');
  const again = reconcile(ctx.project);
  assert.equal(again.code, 2, 'still waiting, and no new commit');

  const r = reconcile(ctx.project, ['--allow-teardown', '-o', 'json']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.json.units.b.result, 'removed');
  assert.equal(r.json.units.b.dispatched, true);
  assert.deepEqual(logLines(ctx.log), ['-b {"id":"b-1"}'], 'the teardown ran with WHO and NYL_RECEIPT_OUTPUTS');
  assert.equal(desiredDoc(ctx.bare, 'b'), undefined);
  assert.equal(observedDoc(ctx.bare, 'b'), undefined);
  const body = commitAt(ctx.bare, DESIRED).body;
  assert.deepEqual(body.removed, ['b']);
  assert.equal(body.units.b, 'removed');
  assert.match(r.stderr, /\[dev\/b\] starting Command \(teardown\)/);
  assert.match(r.stderr, /\[dev\/b\] removed in/);
});

test('consumers first: a diamond of four units is torn down top, then left and right, then base', () => {
  const td = { policy: 'Teardown' };
  const all = (log) => ({
    base: unit(log, 'base', td),
    left: unit(log, 'left', { ...td, dependsOn: ['base'] }),
    right: unit(log, 'right', { ...td, dependsOn: ['base'] }),
    top: unit(log, 'top', { ...td, dependsOn: ['left', 'right'] }),
    keep: unit(log, 'keep'),
  });
  const ctx = setup(all);
  assert.equal(reconcile(ctx.project).code, 0);
  changeUnits(ctx, (log) => ({ keep: all(log).keep }));
  logLines(ctx.log, { clear: true });
  const r = reconcile(ctx.project, ['--allow-teardown', '--concurrency', '1', '-o', 'json']);
  assert.equal(r.code, 0, show(r));
  const order = logLines(ctx.log).map((l) => l.split(' ')[0]);
  assert.equal(order[0], '-top');
  assert.deepEqual(order.slice(1, 3).sort(), ['-left', '-right']);
  assert.equal(order[3], '-base');
  assert.deepEqual(r.json.unitOrder.slice(0, 4), ['top', 'left', 'right', 'base'], 'the table lists teardowns consumers first');
  assert.deepEqual([...commitAt(ctx.bare, DESIRED).body.removed].sort(), ['base', 'left', 'right', 'top']);
});

test('a Command without teardown: fails NYL-TEARDOWN-INCOMPLETE (exit 3) until --allow-incomplete removes it', () => {
  const ctx = setup((log) => ({ a: unit(log, 'a'), b: unit(log, 'b', { policy: 'Teardown', teardown: false }) }));
  assert.equal(reconcile(ctx.project).code, 0);
  changeUnits(ctx, (log) => ({ a: unit(log, 'a') }));
  const r = reconcile(ctx.project, ['--allow-teardown', '-o', 'json']);
  assert.equal(r.code, 3, show(r));
  assert.equal(r.json.units.b.result, 'failed');
  assert.ok(codes(r).includes('NYL-TEARDOWN-INCOMPLETE'), show(r));
  assert.equal(desiredDoc(ctx.bare, 'b').lifecycle.state, 'deleting', 'its teardown started: it goes on without --allow-teardown');
  const done = reconcile(ctx.project, ['--allow-incomplete', '-o', 'json']);
  assert.equal(done.code, 0, show(done));
  assert.equal(done.json.units.b.result, 'removed');
  assert.equal(done.json.units.b.incomplete, true);
  assert.deepEqual(commitAt(ctx.bare, DESIRED).body.incomplete, ['b']);
  assert.equal(desiredDoc(ctx.bare, 'b'), undefined);
});

test('a retained tombstone that cites a unit blocks its teardown (NYL-TEARDOWN-HAS-DEPENDENTS) unless --allow-dependents', () => {
  const ctx = setup((log) => ({ base: unit(log, 'base', { policy: 'Teardown' }), user: unit(log, 'user', { dependsOn: ['base'] }), a: unit(log, 'a') }));
  assert.equal(reconcile(ctx.project).code, 0);
  changeUnits(ctx, (log) => ({ a: unit(log, 'a') }));
  const r = reconcile(ctx.project, ['--allow-teardown', '-o', 'json']);
  assert.equal(r.code, 2, show(r));
  assert.equal(r.json.units.user.result, 'retained');
  assert.equal(r.json.units.base.result, 'pending-teardown');
  const warning = r.json.warnings.find((w) => w.code === 'NYL-TEARDOWN-HAS-DEPENDENTS');
  assert.ok(warning, show(r));
  assert.match(warning.fix, /--allow-dependents/);
  const allowed = reconcile(ctx.project, ['--allow-teardown', '--allow-dependents', '-o', 'json']);
  assert.equal(allowed.code, 0, show(allowed));
  assert.equal(allowed.json.units.base.result, 'removed');
  assert.deepEqual(commitAt(ctx.bare, DESIRED).body.allowDependents, ['base']);
  assert.equal(desiredDoc(ctx.bare, 'user').lifecycle.state, 'retained', 'the tombstone stays');
});

test('--leaving does only lifecycle work, and conflicts with --unit', () => {
  const ctx = setup((log) => ({ a: unit(log, 'a'), b: unit(log, 'b', { policy: 'Release' }) }));
  assert.equal(reconcile(ctx.project).code, 0);
  changeUnits(ctx, (log) => ({ a: `timeout: 5m\n${unit(log, 'a')}` }));
  logLines(ctx.log, { clear: true });
  const conflict = reconcile(ctx.project, ['--leaving', '--unit', 'a']);
  assert.equal(conflict.code, 1, show(conflict));
  assert.match(conflict.stderr, /NYL-USAGE/);
  const r = reconcile(ctx.project, ['--leaving', '-o', 'json']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.json.units.b.result, 'released');
  assert.equal(r.json.units.a, undefined, 'a changed, but --leaving does not execute it');
  assert.deepEqual(logLines(ctx.log), []);
  const unitOnly = reconcile(ctx.project, ['--unit', 'a', '-o', 'json']);
  assert.equal(unitOnly.code, 0, show(unitOnly));
  assert.deepEqual(logLines(ctx.log), ['a']);
  assert.ok(fs.existsSync(ctx.log));
});

test('kind change: the old incarnation is torn down first (with --allow-teardown), then the new kind starts a new uid in the same run', () => {
  const ctx = setup((log) => ({ a: unit(log, 'a', { policy: 'Teardown' }), b: unit(log, 'b') }));
  assert.equal(reconcile(ctx.project).code, 0);
  const oldUid = desiredDoc(ctx.bare, 'a').uid;
  // a becomes an OciImage: no OciImage driver runs here, so its new incarnation fails, after the old Command went.
  const yaml = fs
    .readFileSync(`${ctx.project}/nyl.yaml`, 'utf8')
    .replace(
      /kind: Command\nmetadata: \{name: a\}\nspec:\n(  .*\n)+?(?=---|$)/,
      'kind: OciImage\nmetadata: {name: a}\nspec:\n  image: busybox@sha256:0000000000000000000000000000000000000000000000000000000000000000\n  deletionPolicy: Teardown\n',
    );
  fs.writeFileSync(`${ctx.project}/nyl.yaml`, yaml);
  commitFiles(ctx.project, {}, 'a becomes an OciImage');
  logLines(ctx.log, { clear: true });
  const waits = reconcile(ctx.project, ['-o', 'json']);
  assert.equal(waits.code, 2, show(waits));
  assert.equal(waits.json.units.a.result, 'pending-teardown');
  const kindChange = waits.json.warnings.find((w) => w.code === 'NYL-UNIT-KIND-CHANGE');
  assert.ok(kindChange, show(waits));
  assert.match(kindChange.fix, /nyl reconcile -e dev --allow-teardown/);
  assert.deepEqual(logLines(ctx.log), []);
  const r = reconcile(ctx.project, ['--allow-teardown', '-o', 'json']);
  assert.deepEqual(logLines(ctx.log), ['-a {}'], 'the old Command was torn down');
  assert.equal(r.json.units.a.kind, 'OciImage', show(r));
  assert.equal(r.json.units.a.dispatched, true, 'the new kind executed in the same run');
  assert.ok(
    r.json.warnings.some((w) => w.code === 'NYL-UNIT-KIND-CHANGE' && /torn down first/.test(w.message)),
    show(r),
  );
  const now = desiredDoc(ctx.bare, 'a');
  assert.notEqual(now.uid, oldUid, 'a new incarnation');
  assert.equal(now.kind, 'OciImage');
  assert.deepEqual(commitAt(ctx.bare, DESIRED).body.removed, ['a']);
});

test('a unit that leaves through the unitSelector leaves like one removed from source (NYL-PLAN-UNITS-LEAVING)', () => {
  const labelled = (log) => ({ a: `${unit(log, 'a')}`, b: `deletionPolicy: Release\n${unit(log, 'b')}` });
  const ctx = setup(labelled, { envExtra: 'unitSelector: {matchLabels: {}}' });
  assert.equal(reconcile(ctx.project).code, 0);
  ctx.envExtra = 'unitSelector: {matchLabels: {team: shop}}';
  // Only a carries the label now: b leaves the ownership set while source still declares it.
  const yaml = fs
    .readFileSync(`${ctx.project}/nyl.yaml`, 'utf8')
    .replace('metadata: {name: a}', 'metadata: {name: a, labels: {team: shop}}')
    .replace('unitSelector: {matchLabels: {}}', ctx.envExtra);
  fs.writeFileSync(`${ctx.project}/nyl.yaml`, yaml);
  commitFiles(ctx.project, {}, 'select the shop team');
  const st = status(ctx.project, ['-o', 'json']);
  assert.equal(st.code, 2, show(st));
  assert.equal(st.json.units.b.state, 'leaving');
  assert.ok(
    st.json.warnings.some((w) => w.code === 'NYL-PLAN-UNITS-LEAVING' && w.units.includes('b')),
    show(st),
  );
  const r = reconcile(ctx.project, ['-o', 'json']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.json.units.b.result, 'released');
  assert.ok(codes(r).includes('NYL-PLAN-UNITS-LEAVING'));
  assert.equal(desiredDoc(ctx.bare, 'b'), undefined);
});
