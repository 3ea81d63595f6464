// `nyl recover -e dev` where the state cannot be imported into: a location whose state
// was deleted or moved still gets its break recorded, in an unchanged commit, and the lease
// released, so that the command that repairs the state can run. With --unit, recover refuses with
// the state's finding instead.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { cleanupAll, git } from '../support/git-fixtures.mjs';
import { DESIRED, ENV, LEASE, RUNS, Scenario, allCodes, crashReconcile, errorCodes } from '../support/crash-harness.mjs';
import { trailer } from '../support/commit-evidence.mjs';

after(cleanupAll);

/** Rewrites state.yaml on the desired ref as `nyl state delete` / `nyl state move` would leave it. */
function markState(sc, status, movedTo) {
  const current = git(sc.bare, 'show', `${DESIRED}:state.yaml`);
  let text = current.replace(/status: active/, `status: ${status}`);
  if (movedTo) text += `\nmovedTo: ${movedTo}\n`;
  const blob = git(sc.bare, 'hash-object', '-w', '--stdin', { input: `${text.trimEnd()}\n` });
  const tree = git(sc.bare, 'mktree', { input: `100644 blob ${blob}\tstate.yaml\n` });
  const parent = git(sc.bare, 'rev-parse', DESIRED);
  const commit = git(sc.bare, 'commit-tree', tree, '-p', parent, '-m', `test: mark ${status}`);
  git(sc.bare, 'update-ref', DESIRED, commit, parent);
  return commit;
}

for (const [status, code, movedTo] of [
  ['deleted', 'NYL-STATE-DELETED', undefined],
  ['moved', 'NYL-STATE-MOVED', 'file:///elsewhere/state.git'],
]) {
  describe(`recover -e on ${status} state`, () => {
    test(`records the break in an unchanged commit, releases the lease, warns ${code}, exit 0; --unit refuses`, async () => {
      const sc = new Scenario();
      try {
        await sc.ok(['state', 'init', '-e', ENV]);
        await crashReconcile(sc, 'lease-acquired');
        await sc.ok(['lease', 'break', '-e', ENV, '--reason', 'runner killed']);
        const marked = markState(sc, status, movedTo);

        const refused = await sc.ok(['recover', '-e', ENV, '--unit', 'db', '--retry', '-o', 'json'], 1);
        assert.deepEqual(errorCodes(refused), [code]);
        assert.ok(sc.refs()[LEASE], 'a refusal leaves the broken lease');
        assert.match(git(sc.bare, 'show', `${LEASE}:lease.yaml`), /broken:/);

        const r = await sc.ok(['recover', '-e', ENV, '--reason', 'repair first', '-o', 'json'], 0);
        assert.equal(r.json.result, 'done');
        assert.ok(allCodes(r).includes(code), JSON.stringify(r.json.warnings));
        assert.equal(r.json.details.leaseBroken.reason, 'runner killed');
        const refs = sc.refs();
        assert.equal(refs[LEASE], undefined, 'the lease is released');
        const head = refs[DESIRED];
        assert.equal(git(sc.bare, 'rev-parse', `${head}^`), marked, 'one commit on top of the marked state');
        assert.equal(git(sc.bare, 'rev-parse', `${head}^{tree}`), git(sc.bare, 'rev-parse', `${marked}^{tree}`), 'an unchanged commit');
        const message = git(sc.bare, 'log', '-1', '--format=%B', head);
        assert.match(message, /^nyl: recover dev/);
        assert.match(message, /leaseBroken:/);
        assert.equal(trailer(message, 'Nyl-Operation'), 'recover');
        assert.ok(
          Object.keys(refs).some((k) => k.startsWith(RUNS)),
          'the run ref stays: nothing was imported into a deleted or moved state',
        );
      } finally {
        await sc.cleanup();
      }
    });
  });
}

describe('recover -e on deleted state, then state init --fresh', () => {
  test('the dead run of the broken lease is marked ended, so that it does not keep the environment held: --fresh runs at once', async () => {
    const sc = new Scenario();
    try {
      await sc.ok(['state', 'init', '-e', ENV]);
      await crashReconcile(sc, 'after-started-push');
      const [run] = sc.runRefs();
      await sc.ok(['lease', 'break', '-e', ENV, '--reason', 'runner killed']);
      markState(sc, 'deleted');

      await sc.ok(['recover', '-e', ENV, '--reason', 'repair first', '-o', 'json'], 0);
      const record = YAML.parse(git(sc.bare, 'show', `${RUNS}${run}:run.yaml`));
      assert.ok(record.ended, `the run ref records that its run ended: ${JSON.stringify(record)}`);
      assert.match(record.ended.reason, /lease broken/);

      const fresh = await sc.ok(['state', 'init', '-e', ENV, '--fresh', '--reason', 'start over', '-o', 'json'], 0);
      assert.equal(fresh.json.result, 'done');
      assert.deepEqual(sc.runRefs(), [run], 'the run ref stays for the next import');
    } finally {
      await sc.cleanup();
    }
  });
});
