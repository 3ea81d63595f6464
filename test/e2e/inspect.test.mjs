// End-to-end: the read-only inspection commands. `nyl log` merges the desired and observed
// histories into one entry per operation (an operation on one ref only is an entry too), follows
// one unit with --unit and stops at -n; `nyl show` prints a unit's receipt, documents and last
// runs, a sensitive output by its digest only; `nyl outputs` prints outputs for scripts, never a
// sensitive value. On state refs shared through state.path, log shows only the environment's own
// commits; a deleted state still shows its history (a warning), while show and outputs refuse.
// None of them moves a ref.
//
// Nothing in the Command driver marks an output sensitive, so the test writes a sensitive output
// with a sealed value into the receipt by hand (test/support/state-edit.mjs).
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { cleanupAll, git, makeBareRepo, makeProject } from '../support/git-fixtures.mjs';
import { command, environment, nyl, nylYaml } from '../support/cli.mjs';
import { reconcile, setup } from '../support/reconcile-helpers.mjs';
import { describe as show, hold } from '../support/hold-helpers.mjs';
import { editStateDoc, OBSERVED_REF } from '../support/state-edit.mjs';

after(cleanupAll);

const SEALED = 'v1:THE-SEALED-VALUE';
const DIGEST = `sha256:${'2'.repeat(64)}`;
const codes = (r) => [...(r.json?.errors ?? []), ...(r.json?.warnings ?? [])].map((d) => d.code);

/** Every ref of a repository and its commit: what a read-only command must leave as it was. */
const allRefs = (repo) => git(repo, 'for-each-ref', '--format=%(refname) %(objectname)');

describe('nyl log, show and outputs', () => {
  test('log merges both refs into one entry per operation; show and outputs never print a sensitive value; nothing moves', () => {
    const ctx = setup({ db: `script: 'echo "{\\"url\\": \\"pg://db\\", \\"port\\": 5432}" > "$NYL_OUTPUTS"'`, web: "script: 'true'" });
    assert.equal(reconcile(ctx.project, ['--reason', 'deploy 1']).code, 0);
    assert.equal(hold(ctx.project, 'web').code, 0);
    // A sensitive output, as a receipt keeps one: its digest and its sealed value. A hand edit, so
    // the observed ref gets a commit Nyl did not write.
    editStateDoc(ctx.bare, OBSERVED_REF(), 'units/db.yaml', (doc) => ({
      ...doc,
      receipt: { ...doc.receipt, sensitiveOutputs: { password: { sha256: DIGEST, sealed: SEALED } } },
    }));
    const before = [allRefs(ctx.bare), allRefs(ctx.project)];

    const log = nyl(ctx.project, ['log', '-e', 'dev', '-o', 'json']);
    assert.equal(log.code, 0, show(log));
    assert.deepEqual(
      log.json.entries.map((e) => [e.operation, Boolean(e.desired), Boolean(e.observed)]),
      [
        ['hold', true, false],
        ['-', false, true],
        ['reconcile', true, true],
        ['state-init', true, true],
      ],
    );
    // The hand edit is dated 2026-01-01 (the fixtures' fixed date): between the refs, the newer commit comes first.
    const [held, edit, run] = log.json.entries;
    assert.equal(edit.headline, 'hand edit of units/db.yaml');
    assert.equal(held.reason, 'incident 4711');
    assert.deepEqual(held.units, { web: 'hold' });
    assert.equal(run.reason, 'deploy 1');
    assert.match(run.run, /^[0-9a-f-]{36}$/);
    assert.equal(run.source, git(ctx.project, 'rev-parse', 'HEAD'));
    assert.deepEqual(run.units, { db: 'executed', web: 'executed' });
    assert.match(run.by, /^Test User </);
    assert.equal(log.json.truncated, false);

    const one = nyl(ctx.project, ['log', '-e', 'dev', '-n', '1']);
    assert.equal(one.code, 0, show(one));
    assert.match(one.stdout, /^\S+Z {2}hold {2}Test User </);
    assert.match(one.stdout, /web: hold\n/);
    assert.match(one.stdout, /older entries left out: -n 0 shows all/);
    assert.doesNotMatch(one.stdout, /reconcile/);

    const db = nyl(ctx.project, ['show', '-e', 'dev', '--unit', 'db', '-o', 'json']);
    assert.equal(db.code, 0, show(db));
    assert.doesNotMatch(db.stdout, /THE-SEALED-VALUE/);
    assert.deepEqual(db.json.receipt.outputs, { url: 'pg://db', port: 5432 });
    assert.deepEqual(db.json.receipt.sensitiveOutputs, { password: { sha256: DIGEST } });
    assert.equal(db.json.receipt.run, run.run);
    assert.equal(db.json.desiredDocument.kind, 'Command');
    assert.equal(db.json.observedDocument.receipt.desired, undefined);
    // The hand edit changed db's observed document: it is one of db's last runs, a commit Nyl did not write.
    assert.deepEqual(
      db.json.lastRuns.map((e) => e.operation),
      ['-', 'reconcile'],
    );

    const text = nyl(ctx.project, ['show', '-e', 'dev', '--unit', 'web']);
    assert.equal(text.code, 0, show(text));
    assert.match(text.stdout, /^unit web of dev\nreceipt: run /);
    assert.match(text.stdout, /\nhold: by Test User <test@example\.com> since \S+ \(incident 4711\)\n/);
    assert.match(text.stdout, /\nlast runs:\n {2}\S+ {2}hold {2}hold {2}Test User/);

    const all = nyl(ctx.project, ['outputs', '-e', 'dev', '-o', 'json']);
    assert.equal(all.code, 0, show(all));
    assert.deepEqual(all.json.outputs, { db: { url: 'pg://db', port: 5432 }, web: {} });
    assert.deepEqual(all.json.sensitive, { db: ['password'] });
    const lines = nyl(ctx.project, ['outputs', '-e', 'dev', '--unit', 'db']);
    assert.equal(lines.code, 0, show(lines));
    assert.equal(
      lines.stdout,
      'port=5432\nurl=pg://db\npassword=(sensitive)\n',
      "in the receipt's order (the hand edit wrote them sorted), sensitive ones last",
    );

    const unknown = nyl(ctx.project, ['show', '-e', 'dev', '--unit', 'nope', '-o', 'json']);
    assert.equal(unknown.code, 1, show(unknown));
    assert.deepEqual(codes(unknown), ['NYL-UNIT-UNKNOWN']);
    const usage = nyl(ctx.project, ['log', '-e', 'dev', '-n', 'ten', '-o', 'json']);
    assert.equal(usage.code, 1, show(usage));
    assert.equal(usage.json.kind, 'LogReport');
    assert.deepEqual(codes(usage), ['NYL-USAGE']);
    const noUnit = nyl(ctx.project, ['show', '-e', 'dev', '-o', 'json']);
    assert.equal(noUnit.code, 1, show(noUnit));
    assert.deepEqual([noUnit.json.kind, noUnit.json.operation, ...codes(noUnit)], ['ShowReport', 'show', 'NYL-USAGE']);

    assert.deepEqual([allRefs(ctx.bare), allRefs(ctx.project)], before, 'log, show and outputs move no ref');
  });

  test("shared state refs: log shows only the environment's own commits; a deleted state keeps its history, show and outputs refuse", () => {
    const bare = makeBareRepo();
    const shared = (dir) =>
      `state:\n  repository: {repoURL: "${pathToFileURL(bare).href}"}\n  path: envs/${dir}\n  desiredRef: nyl/shared/desired\n  observedRef: nyl/shared/observed`;
    const project = makeProject({
      'nyl.yaml': nylYaml(environment('dev', shared('dev')), environment('qa', shared('qa')), command('migrate', "script: 'true'")),
    });
    for (const env of ['dev', 'qa']) assert.equal(nyl(project, ['state', 'init', '-e', env]).code, 0);
    assert.equal(nyl(project, ['reconcile', '-e', 'qa']).code, 0);

    const dev = nyl(project, ['log', '-e', 'dev', '-o', 'json']);
    assert.equal(dev.code, 0, show(dev));
    assert.deepEqual(
      dev.json.entries.map((e) => e.headline),
      ['nyl: state-init dev'],
    );
    const qa = nyl(project, ['log', '-e', 'qa', '-o', 'json']);
    assert.deepEqual(
      qa.json.entries.map((e) => e.headline),
      ['nyl: reconcile qa: 1 executed (migrate)', 'nyl: state-init qa'],
    );

    assert.equal(nyl(project, ['state', 'delete', '-e', 'dev', '--reason', 'decommission']).code, 0);
    const deleted = nyl(project, ['log', '-e', 'dev', '-o', 'json']);
    assert.equal(deleted.code, 0, show(deleted));
    assert.deepEqual(codes(deleted), ['NYL-STATE-DELETED']);
    assert.deepEqual(
      deleted.json.entries.map((e) => [e.operation, e.reason ?? '-']),
      [
        ['state-delete', 'decommission'],
        ['state-init', '-'],
      ],
    );
    const outputs = nyl(project, ['outputs', '-e', 'dev', '-o', 'json']);
    assert.equal(outputs.code, 1, show(outputs));
    assert.deepEqual(codes(outputs), ['NYL-STATE-DELETED']);
  });
});
