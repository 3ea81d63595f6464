// End-to-end: `nyl state restore` over file:// with the built CLI. After a bad hand edit removed a's
// documents and b changed in source since, a restore to the commit before both (named by an
// abbreviated id) brings a's incarnation and receipt back (warned as resurrected) and b's older
// receipt: the next reconcile trusts a's receipt and runs only b again. A commit of the source
// checkout and one of another branch of the state repository are refused with nothing written.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { cleanupAll, commitTree, git } from '../support/git-fixtures.mjs';
import { nyl } from '../support/cli.mjs';
import { changeUnits, logLines, reconcile, setup } from '../support/reconcile-helpers.mjs';
import { DESIRED, OBSERVED, commitAt, describe as show, desiredDoc, tip } from '../support/hold-helpers.mjs';

after(cleanupAll);

const units = (bScript) => (log) => ({ a: `script: 'echo a >> ${log}'`, b: `script: 'echo ${bScript} >> ${log}'` });

function restore(ctx, to, reason = 'undo a bad hand edit') {
  return nyl(ctx.project, ['state', 'restore', '-e', 'dev', '--to', to, '--reason', reason, '-o', 'json']);
}

/** Removes units/a.yaml from ref of the bare repository, as a careless hand edit would. */
function handDelete(bare, ref, file) {
  const before = tip(bare, ref);
  const names = git(bare, 'ls-tree', '-r', '--name-only', before)
    .split('\n')
    .filter((n) => n && n !== file);
  const files = Object.fromEntries(names.map((n) => [n, `${git(bare, 'cat-file', 'blob', `${before}:${n}`)}\n`]));
  git(bare, 'update-ref', ref, commitTree(bare, files, { parents: [before], message: 'hand edit' }), before);
}

const errorCodes = (r) => (r.json?.errors ?? []).map((e) => e.code);

describe('nyl state restore', () => {
  test('restores an older commit after a bad hand edit: forward commits, a resurrected, and the next reconcile runs only what source changed since', () => {
    const ctx = setup(units('b1'));
    assert.equal(reconcile(ctx.project).code, 0);
    const c1 = tip(ctx.bare, DESIRED);
    const uidA = desiredDoc(ctx.bare, 'a').uid;
    changeUnits(ctx, units('b2'));
    assert.equal(reconcile(ctx.project).code, 0);
    handDelete(ctx.bare, DESIRED, 'units/a.yaml');
    handDelete(ctx.bare, OBSERVED, 'units/a.yaml');
    const before = { desired: tip(ctx.bare, DESIRED), observed: tip(ctx.bare, OBSERVED) };

    const r = restore(ctx, c1.slice(0, 12));
    assert.equal(r.code, 0, show(r));
    assert.equal(r.json.operation, 'state-restore');
    assert.deepEqual(r.json.details.resurrected, { a: uidA });
    assert.deepEqual(r.json.details.restored, { a: 'restored', b: 'restored' });
    assert.deepEqual(
      r.json.warnings.map((w) => w.code),
      ['NYL-RESTORE-INCARNATIONS'],
    );
    for (const ref of [DESIRED, OBSERVED]) {
      const c = commitAt(ctx.bare, ref);
      assert.equal(git(ctx.bare, 'rev-parse', `${c.oid}^`), ref === DESIRED ? before.desired : before.observed, `one forward commit on ${ref}`);
      assert.equal(c.headline, 'nyl: state-restore dev (a, b)');
      assert.equal(c.body.restoredFrom.commit, c1);
      assert.deepEqual(c.trailers['Nyl-Reason'], ['undo a bad hand edit']);
    }
    assert.equal(git(ctx.bare, 'rev-parse', `${DESIRED}:units`), git(ctx.bare, 'rev-parse', `${c1}:units`), 'the unit documents of C1');

    const next = reconcile(ctx.project);
    assert.equal(next.code, 0, show(next));
    assert.deepEqual(
      logLines(ctx.log).sort(),
      ['a', 'b1', 'b2', 'b2'],
      'a is trusted; b runs again for what source changed since C1 (a and b1 ran in one wave, in either order)',
    );
    assert.equal(desiredDoc(ctx.bare, 'a').uid, uidA);
  });

  test('a commit of the source checkout and one of another branch of the state repository are refused, nothing written', () => {
    const ctx = setup(units('b1'));
    const files = { 'state.yaml': `${git(ctx.bare, 'cat-file', 'blob', `${DESIRED}:state.yaml`)}\n` };
    const stranger = commitTree(ctx.bare, files, { message: 'a copy elsewhere' });
    git(ctx.bare, 'update-ref', 'refs/heads/elsewhere', stranger);
    const refs = git(ctx.bare, 'for-each-ref');
    for (const to of [git(ctx.project, 'rev-parse', 'HEAD'), stranger]) {
      const r = restore(ctx, to);
      assert.equal(r.code, 1, show(r));
      assert.deepEqual(errorCodes(r), ['NYL-RESTORE-FOREIGN-COMMIT']);
      assert.match(r.json.errors[0].fix, /git log --first-parent refs\/heads\/nyl\/dev\/desired/);
    }
    assert.equal(git(ctx.bare, 'for-each-ref'), refs);
  });
});
