// `nyl teardown` end to end: a run like reconcile (lease, run ref, one transition commit with the
// operation teardown, a ReconcileReport) and teardowns killed midway then taken over, over a
// smart-HTTP remote whose state branches refuse non-fast-forward updates and deletions. What a
// teardown decides (--all consumers first, NYL-TEARDOWN-PENDING, requests on held units, asking
// again, a hold delivered to a teardown run) and the takeovers over an in-memory state
// repository: test/protocol/teardown-command.test.mjs.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { installProtectHook, makeBareRepo } from '../support/git-fixtures.mjs';
import { nylAsync } from '../support/cli.mjs';
import { networkRemotes } from '../support/network-remotes.mjs';
import { commitFiles, logLines, reconcile, results, setup } from '../support/reconcile-helpers.mjs';
import { commitAt, coordinationRefs, desiredDoc, observedDoc } from '../support/hold-helpers.mjs';
import { nyl } from '../support/cli.mjs';
import { sharedFixture } from '../support/shared-fixture.mjs';

const DESIRED = 'refs/heads/nyl/dev/desired';
const show = (r) => `exit ${r.code}\n${r.stdout}\n${r.stderr}`;
const codes = (r) => [...r.json.errors, ...r.json.warnings, ...r.json.notes].map((d) => d.code);
const remotes = networkRemotes('nyl-teardown-remotes-');

/** A unit that logs its name when it runs and `-NAME` when torn down (after waiting for `gate`, when given). */
function unit(log, name, { dependsOn, recovery, gate, teardown = true } = {}) {
  const lines = [`script: 'echo ${name} >> ${log}'`];
  if (dependsOn) lines.push(`dependsOn: [${dependsOn.join(', ')}]`);
  if (recovery) lines.push(`recovery: ${recovery}`);
  const wait = gate ? `echo start -${name} >> ${log}; n=0; while [ ! -e ${gate} ] && [ $n -lt 1500 ]; do sleep 0.02; n=$((n+1)); done; ` : '';
  if (teardown) lines.push(`teardown: {script: '${wait}echo -${name} >> ${log}'}`);
  return lines.join('\n');
}

/** db and app (independent), state init and a first reconcile: built once, put back for every test that takes it. */
const dbAndApp = sharedFixture(() => {
  const ctx = setup((log) => ({ db: unit(log, 'db'), app: unit(log, 'app') }));
  assert.equal(reconcile(ctx.project).code, 0);
  return ctx;
});

const teardown = (project, args, opts) => nyl(project, ['teardown', '-e', 'dev', ...args], opts);

test('teardown --unit: a run with one transition commit (operation teardown); the unit still in source gets a new incarnation at the next reconcile', () => {
  const ctx = dbAndApp();
  const oldUid = desiredDoc(ctx.bare, 'app').uid;
  logLines(ctx.log, { clear: true });
  const r = teardown(ctx.project, ['--unit', 'app', '--reason', 'replaced by redis', '-o', 'json']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.json.kind, 'ReconcileReport');
  assert.equal(r.json.operation, 'teardown');
  assert.deepEqual(results(r.json), { app: 'removed' }, 'only the leaving section: what the teardown did');
  assert.deepEqual(r.json.details.requested, ['app']);
  assert.deepEqual(logLines(ctx.log), ['-app']);
  const c = commitAt(ctx.bare, DESIRED);
  assert.equal(c.headline, 'nyl: teardown dev: 1 removed (app)');
  assert.equal(c.body.operation, 'teardown');
  assert.equal(c.body.run, r.json.run);
  assert.deepEqual(c.body.removed, ['app']);
  assert.deepEqual(c.trailers['Nyl-Operation'], ['teardown']);
  assert.deepEqual(c.trailers['Nyl-Reason'], ['replaced by redis']);
  assert.deepEqual(coordinationRefs(ctx.bare), [], 'the lease and the run ref are gone');
  assert.equal(desiredDoc(ctx.bare, 'app'), undefined);

  // Still in source: the next reconcile creates it.
  const again = reconcile(ctx.project, ['-o', 'json']);
  assert.equal(again.code, 0, show(again));
  assert.equal(again.json.units.app.result, 'executed');
  assert.notEqual(desiredDoc(ctx.bare, 'app').uid, oldUid, 'a new incarnation');
});

test('teardown refuses what it cannot do: no --unit nor --all, both, a unit the state has no incarnation of', () => {
  const ctx = dbAndApp();
  const neither = teardown(ctx.project, ['-o', 'json']);
  assert.equal(neither.code, 1, show(neither));
  assert.deepEqual(codes(neither), ['NYL-USAGE']);
  assert.deepEqual(codes(teardown(ctx.project, ['--all', '--unit', 'db', '-o', 'json'])), ['NYL-USAGE']);
  const unknown = teardown(ctx.project, ['--unit', 'nope', '-o', 'json']);
  assert.equal(unknown.code, 1, show(unknown));
  assert.deepEqual(codes(unknown), ['NYL-UNIT-UNKNOWN']);
  assert.equal(unknown.json.operation, 'teardown');
});

test('teardown --cancel withdraws a request made by mistake that waits for a dependent: reconcile exits 2 until then, 0 after; one desired commit teardown-cancel, nothing torn down', () => {
  const ctx = setup((log) => ({
    db: unit(log, 'db'),
    migrate: unit(log, 'migrate', { dependsOn: ['db'] }),
    app: unit(log, 'app', { dependsOn: ['migrate'] }),
  }));
  assert.equal(reconcile(ctx.project).code, 0);
  logLines(ctx.log, { clear: true });
  assert.equal(teardown(ctx.project, ['--unit', 'migrate']).code, 2);
  assert.equal(reconcile(ctx.project).code, 2, 'the request waits for app');
  const usage = teardown(ctx.project, ['--cancel', '--unit', 'migrate', '--allow-incomplete', '-o', 'json']);
  assert.deepEqual(codes(usage), ['NYL-USAGE']);
  const r = teardown(ctx.project, ['--cancel', '--unit', 'migrate', '--reason', 'asked by mistake', '-o', 'json']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.json.kind, 'StateOperationReport');
  assert.equal(r.json.operation, 'teardown-cancel');
  assert.deepEqual(r.json.details.withdrawn, ['migrate']);
  const c = commitAt(ctx.bare, DESIRED);
  assert.equal(c.body.operation, 'teardown-cancel');
  assert.deepEqual(c.trailers['Nyl-Operation'], ['teardown-cancel']);
  assert.deepEqual(c.trailers['Nyl-Reason'], ['asked by mistake']);
  assert.equal(desiredDoc(ctx.bare, 'migrate').teardownRequest, undefined);
  const again = teardown(ctx.project, ['--cancel', '--all']);
  assert.equal(again.code, 0, show(again));
  assert.match(again.stderr + again.stdout, /NYL-UNCHANGED/);
  assert.equal(reconcile(ctx.project).code, 0);
  assert.deepEqual(logLines(ctx.log), [], 'nothing torn down, nothing executed again');
});

/**
 * Over smart HTTP with protected state branches, where the real SIGKILL and Git transport matter.
 * The same protocol over an in-memory state repository: test/protocol/teardown-command.test.mjs.
 */
const REMOTES = [
  [
    'smart HTTP, protected branches',
    () => {
      const name = `td-${Math.random().toString(36).slice(2, 8)}.git`;
      const bare = makeBareRepo(`${remotes.base}/${name}`);
      installProtectHook(bare);
      return { bare, url: remotes.http.url(name) };
    },
  ],
];

describe('a teardown killed midway, then taken over', { concurrency: true }, () => {
  for (const [where, remote] of REMOTES) {
    test(`${where}: killed after its started marker: a converging teardown runs again in the takeover; a manual one waits for recover --retry`, async () => {
      const r0 = remote();
      const ctx = setup((log) => ({ conv: unit(log, 'conv', { recovery: 'converge' }), man: unit(log, 'man') }), r0);
      assert.equal(reconcile(ctx.project).code, 0);
      logLines(ctx.log, { clear: true });
      const killed = await nylAsync(ctx.project, ['teardown', '-e', 'dev', '--all'], { env: { NYL_FAULT_AT: 'after-started-push', NYL_FAULT_ACTION: 'kill' } })
        .done;
      assert.equal(killed.signal, 'SIGKILL', show(killed));
      assert.equal(nyl(ctx.project, ['lease', 'break', '-e', 'dev', '--reason', 'runner killed']).code, 0);
      const takeover = reconcile(ctx.project, ['-o', 'json']);
      assert.equal(takeover.code, 4, show(takeover));
      assert.deepEqual(takeover.json.details.recovered.sort(), ['conv', 'man']);
      assert.equal(takeover.json.units.conv.result, 'removed', 'converge: torn down again by the takeover');
      assert.equal(takeover.json.units.man.result, 'recovered');
      assert.equal(desiredDoc(ctx.bare, 'man').lifecycle.state, 'deleting');
      assert.equal(observedDoc(ctx.bare, 'man').condition.type, 'uncertain');
      assert.equal(nyl(ctx.project, ['recover', '-e', 'dev', '--unit', 'man', '--retry', '--reason', 'checked']).code, 0);
      const done = reconcile(ctx.project, ['-o', 'json']);
      assert.equal(done.code, 0, show(done));
      assert.equal(done.json.units.man.result, 'removed');
      assert.equal(desiredDoc(ctx.bare, 'man'), undefined);
    });

    test(`${where}: killed after its removal was checkpointed: the takeover imports the removal without tearing down again`, async () => {
      const r0 = remote();
      const ctx = setup((log) => ({ gone: unit(log, 'gone') }), r0);
      assert.equal(reconcile(ctx.project).code, 0);
      logLines(ctx.log, { clear: true });
      const killed = await nylAsync(ctx.project, ['teardown', '-e', 'dev', '--unit', 'gone'], {
        env: { NYL_FAULT_AT: 'before-transition-push', NYL_FAULT_ACTION: 'kill' },
      }).done;
      assert.equal(killed.signal, 'SIGKILL', show(killed));
      assert.deepEqual(logLines(ctx.log), ['-gone']);
      assert.equal(nyl(ctx.project, ['lease', 'break', '-e', 'dev', '--reason', 'runner killed']).code, 0);
      const takeover = reconcile(ctx.project, ['-o', 'json']);
      assert.equal(takeover.code, 0, show(takeover));
      assert.deepEqual(takeover.json.details.imported, ['gone']);
      assert.deepEqual(takeover.json.details.removed, ['gone'], 'the removal is imported');
      assert.equal(takeover.json.units.gone.result, 'executed', 'still in source: the takeover, the next reconcile, creates it again');
      assert.deepEqual(logLines(ctx.log), ['-gone', 'gone'], 'torn down once');
    });
  }
});

test('a kind change killed before its transition: the takeover imports the removal and the new incarnation, and tears nothing down twice', async () => {
  const ctx = setup((log) => ({ k: `deletionPolicy: Teardown\n${unit(log, 'k')}` }));
  assert.equal(reconcile(ctx.project).code, 0);
  const oldUid = desiredDoc(ctx.bare, 'k').uid;
  const yaml = fs
    .readFileSync(`${ctx.project}/nyl.yaml`, 'utf8')
    .replace(
      /kind: Command\nmetadata: \{name: k\}\nspec:\n(  .*\n)+/,
      'kind: OciImage\nmetadata: {name: k}\nspec:\n  image: busybox@sha256:0000000000000000000000000000000000000000000000000000000000000000\n',
    );
  fs.writeFileSync(`${ctx.project}/nyl.yaml`, yaml);
  commitFiles(ctx.project, {}, 'k becomes an OciImage');
  logLines(ctx.log, { clear: true });
  const killed = await nylAsync(ctx.project, ['reconcile', '-e', 'dev', '--allow-teardown'], {
    env: { NYL_FAULT_AT: 'before-transition-push', NYL_FAULT_ACTION: 'kill' },
  }).done;
  assert.equal(killed.signal, 'SIGKILL', show(killed));
  assert.deepEqual(logLines(ctx.log), ['-k'], 'the old Command was torn down, then the new kind ran (and failed: no driver)');
  assert.equal(nyl(ctx.project, ['lease', 'break', '-e', 'dev', '--reason', 'runner killed']).code, 0);
  const takeover = reconcile(ctx.project, ['--allow-teardown', '-o', 'json']);
  assert.deepEqual(logLines(ctx.log), ['-k'], 'the old incarnation is not torn down again');
  assert.ok(takeover.json.details.removed?.includes('k'), show(takeover));
  const now = desiredDoc(ctx.bare, 'k');
  assert.equal(now.kind, 'OciImage', show(takeover));
  assert.notEqual(now.uid, oldUid);
  assert.equal(observedDoc(ctx.bare, 'k').uid, now.uid, 'the new incarnation is recorded');
});

test('teardown --unit of a unit whose teardown started and failed runs it again; a --unit reconcile still warns that units leave', () => {
  const ctx = setup((log) => ({
    keep: unit(log, 'keep'),
    a: `deletionPolicy: Teardown\nscript: 'true'\nteardown: {script: 'test -e ${log}.ok && echo -a >> ${log}'}`,
  }));
  assert.equal(reconcile(ctx.project).code, 0);
  const keepOnly = fs
    .readFileSync(`${ctx.project}/nyl.yaml`, 'utf8')
    .split('\n---\n')
    .filter((d) => !/name: a\}/.test(d))
    .join('\n---\n');
  fs.writeFileSync(`${ctx.project}/nyl.yaml`, keepOnly);
  commitFiles(ctx.project, {}, 'a leaves');
  const onlyKeep = reconcile(ctx.project, ['--unit', 'keep', '-o', 'json']);
  assert.ok(codes(onlyKeep).includes('NYL-PLAN-UNITS-LEAVING'), show(onlyKeep));
  assert.equal(reconcile(ctx.project, ['--allow-teardown']).code, 3, 'the teardown fails');
  assert.equal(desiredDoc(ctx.bare, 'a').lifecycle.state, 'deleting');
  fs.writeFileSync(`${ctx.log}.ok`, '');
  const r = teardown(ctx.project, ['--unit', 'a', '-o', 'json']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.json.units.a.result, 'removed');
  assert.ok(logLines(ctx.log).includes('-a'));
});
