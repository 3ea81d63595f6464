// End-to-end: `nyl state delete` through the built CLI, over file:// and over a smart
// HTTP remote whose state branches refuse deletion and non-fast-forward updates, as a Git host
// protects them. States Nyl cannot produce yet (tombstones, teardowns in progress, teardown
// requests, released records) are crafted with test/support/state-surgery.mjs on top of what a
// real reconcile wrote. Which documents refuse a deletion, what a deleted state refuses, leases of
// killed deletions and the --teardown flow around its seam (TeardownAll, fake teardowns) run in
// process: test/protocol/state-delete.test.mjs.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanupAll, git, installProtectHook, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { codes, command, environment, nylAsync, nylYaml } from '../support/cli.mjs';
import { commitBody, trailer } from '../support/commit-evidence.mjs';
import { argvOf, nylCommands } from '../support/fix-texts.mjs';
import { DESIRED, ENV, OBSERVED, Scenario, crashReconcile } from '../support/crash-harness.mjs';
import { startGitHttp } from '../support/git-http.mjs';
import { createRef, docAt, editUnits, filesAt } from '../support/state-surgery.mjs';

/** A smart-HTTP server over one base directory, for the protected remote. */
const http = { base: undefined, server: undefined };
before(async () => {
  http.base = tempDir('nyl-state-delete-http-');
  http.server = await startGitHttp(http.base);
});
after(async () => {
  await http.server?.stop();
  cleanupAll();
});
const EVIDENCE = 'refs/nyl/dev/evidence/';
const SIGNALS = 'refs/nyl/dev/signals/';
const BY = 'Test User <test@example.com>';

/** A project whose environments keep their state in `url`; units run `true`. */
function world({ url, units = ['migrate'], envs = { dev: '' } } = {}) {
  const bare = url ? undefined : makeBareRepo();
  const stateURL = url ?? pathToFileURL(bare).href;
  const envDocs = Object.entries(envs).map(([name, extra]) =>
    environment(name, `state:\n  repository: {repoURL: "${stateURL}"}${extra ? `\n  ${extra}` : ''}`),
  );
  const dir = makeProject({ 'nyl.yaml': nylYaml(...envDocs, ...units.map((u) => command(u, "script: 'true'"))) });
  return { dir, bare };
}

/** `nyl args...` in dir; asserts the exit code. */
async function run(dir, args, exit = 0, env = {}) {
  const r = await nylAsync(dir, args, { env }).done;
  assert.equal(r.code, exit, `nyl ${args.join(' ')}: expected exit ${exit}, got ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r;
}

const del = (dir, extra = [], exit = 0, env = {}) => run(dir, ['state', 'delete', '-e', ENV, '--reason', 'decommission', ...extra], exit, env);

/** Every ref of a bare repository: {name: oid}. */
function refs(repo) {
  const out = git(repo, 'for-each-ref', '--format=%(refname) %(objectname)');
  return Object.fromEntries(
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' ')),
  );
}

function refsUnder(repo, prefix) {
  return Object.keys(refs(repo)).filter((r) => r.startsWith(prefix));
}

/** Deletes the unit files of `units` on both state refs, as a teardown or `state forget` would. */
function dropUnits(bare, units) {
  for (const ref of [DESIRED, OBSERVED]) editUnits(bare, ref, units, () => null, { message: `test: drop ${units.join(', ')}` });
}

describe('nyl state delete', { concurrency: true }, () => {
  describe('refusals change nothing', { concurrency: true }, () => {
    test('one unit: the fix names it; a uid of a generation state init --fresh gave up blocks nothing', async () => {
      const { dir, bare } = world({ units: ['migrate'] });
      await run(dir, ['state', 'init', '-e', ENV]);
      await run(dir, ['reconcile', '-e', ENV]);
      const one = await del(dir, [], 1);
      assert.match(one.stderr, /^error NYL-STATE-DELETE-INCARNATIONS \(migrate\)$/m);
      assert.match(one.stderr, /`nyl teardown -e dev --unit migrate`/);
      assert.doesNotMatch(one.stderr, /nyl state forget/, 'forget drops no active unit: the fix does not offer it');
      await run(dir, ['state', 'init', '-e', ENV, '--fresh', '--reason', 'restored the cluster']);
      const done = await del(dir, ['-o', 'json']);
      assert.deepEqual(done.json.details.removed, ['migrate']);
      assert.match(git(bare, 'show', `${DESIRED}:state.yaml`), /status: deleted/);
    });

    test('usage: the teardown options need --teardown, a reason is required; nothing is read or written', async () => {
      const { dir, bare } = world();
      await run(dir, ['state', 'init', '-e', ENV]);
      const before = refs(bare);
      const usage = await Promise.all(
        [['--allow-dependents'], ['--allow-incomplete'], ['--source', 'HEAD']].map((extra) => del(dir, [...extra, '-o', 'json'], 1)),
      );
      for (const r of usage) {
        assert.deepEqual(codes(r), ['NYL-USAGE']);
        assert.match(r.json.errors[0].message, /needs --teardown/);
      }
      const [noReason, blank] = await Promise.all([
        run(dir, ['state', 'delete', '-e', ENV, '-o', 'json'], 1),
        run(dir, ['state', 'delete', '-e', ENV, '--reason', ' '], 1),
      ]);
      assert.deepEqual(codes(noReason), ['NYL-REASON-REQUIRED']);
      assert.deepEqual(codes(blank), ['NYL-REASON-REQUIRED']);
      assert.deepEqual(refs(bare), before);
    });

    test('a run ref no run imported: a holder gone from this machine is NYL-LEASE-BROKEN at once; once broken, NYL-STATE-DELETE-INCARNATIONS names reconcile and recover, and --teardown refuses NYL-LEASE-BROKEN first', async () => {
      const sc = new Scenario();
      try {
        await sc.ok(['state', 'init', '-e', ENV]);
        await crashReconcile(sc, 'after-started-push');
        const [deadRun] = sc.runRefs();
        const args = ['state', 'delete', '-e', ENV, '--reason', 'decommission', '-o', 'json'];
        // Killed on this machine: its process is provably gone, so its lease is not waited for.
        const gone = await sc.ok(args, 2);
        assert.deepEqual(codes(gone), ['NYL-LEASE-BROKEN']);
        assert.match(gone.json.errors[0].message, /whose process on this machine is gone; its run is not imported yet/);
        await sc.ok(['lease', 'break', '-e', ENV, '--reason', 'runner killed']);
        const before = sc.refs();

        const refused = await sc.ok(args, 1);
        assert.deepEqual(codes(refused), ['NYL-STATE-DELETE-INCARNATIONS']);
        const [d] = refused.json.errors;
        assert.deepEqual(d.data, { runs: [deadRun] });
        assert.match(d.message, new RegExp(`run ${deadRun} is not imported yet`));
        assert.match(d.fix, /`nyl reconcile -e dev`/);
        assert.match(d.fix, /`nyl recover -e dev`/);
        const broken = await sc.ok([...args, '--teardown'], 2);
        assert.deepEqual(codes(broken), ['NYL-LEASE-BROKEN'], 'checked before the teardown');
        assert.deepEqual(sc.refs(), before, 'nothing changed');

        // The import leaves the units the dead run started uncertain: incarnations.
        await sc.ok(['recover', '-e', ENV, '--reason', 'runner killed']);
        const units = await sc.ok(args, 1);
        assert.deepEqual(codes(units), ['NYL-STATE-DELETE-INCARNATIONS']);
        assert.ok(units.json.errors[0].units.length > 0);
        assert.equal(units.json.errors[0].data, undefined);
      } finally {
        await sc.cleanup();
      }
    });
  });

  describe('the deletion', { concurrency: true }, () => {
    test('one commit per state ref removes every unit file and marks state.yaml deleted; evidence and signal refs go; later commands refuse NYL-STATE-DELETED; --fresh starts over', async () => {
      const { dir, bare } = world({ units: ['migrate'] });
      await run(dir, ['state', 'init', '-e', ENV]);
      await run(dir, ['hold', '-e', ENV, '--unit', 'migrate', '--reason', 'not yet']); // a held marker: no incarnation
      const evidence = createRef(bare, `${EVIDENCE}migrate/0192f0c0-0000-7000-8000-000000000001`);
      createRef(bare, `${SIGNALS}0192f0c0-0000-7000-8000-000000000002/0192f0c0-0000-7000-8000-000000000003`);
      createRef(bare, 'refs/nyl/dev/damaged/runs/0192f0c0-0000-7000-8000-000000000004');
      const tips = { desired: git(bare, 'rev-parse', DESIRED), observed: git(bare, 'rev-parse', OBSERVED) };

      const r = await del(dir, [], 0, { NYL_TEST_NOW: '2030-01-02T03:04:05Z' });
      const now = { desired: git(bare, 'rev-parse', DESIRED), observed: git(bare, 'rev-parse', OBSERVED) };
      assert.equal(r.stdout, `state-delete dev: done\n  desired:  ${now.desired}\n  observed: ${now.observed}\n  removed:\n    - migrate\n`);
      for (const side of ['desired', 'observed']) {
        const ref = side === 'desired' ? DESIRED : OBSERVED;
        assert.equal(git(bare, 'rev-parse', `${ref}^`), tips[side], `${side}: one commit on top, fast-forward; its history stays`);
        assert.deepEqual(filesAt(bare, ref), ['state.yaml']);
        const message = git(bare, 'log', '-1', '--format=%B', ref);
        assert.equal(message.split('\n')[0], 'nyl: state-delete dev');
        assert.deepEqual(commitBody(message), { operation: 'state-delete', removed: ['migrate'] });
        assert.equal(trailer(message, 'Nyl-Operation'), 'state-delete');
        assert.equal(trailer(message, 'Nyl-Requested-By'), BY);
        assert.equal(trailer(message, 'Nyl-Reason'), 'decommission');
        const state = docAt(bare, ref, 'state.yaml');
        assert.equal(state.status, 'deleted');
        // The pinned clock still advances: the event is stamped when the command decided.
        const { at, ...event } = state.events.at(-1);
        assert.deepEqual(event, { type: 'state-deleted', by: BY, reason: 'decommission' });
        // Within a minute of the pinned start, however loaded the machine.
        assert.match(at, /^2030-01-02T03:0[45]:\d\dZ$/);
        assert.equal(state.generation, 1);
      }
      assert.ok(git(bare, 'cat-file', '-t', `${tips.desired}:units/migrate.yaml`), 'the removed files stay in history');
      assert.deepEqual(
        refsUnder(bare, 'refs/nyl/'),
        ['refs/nyl/dev/damaged/runs/0192f0c0-0000-7000-8000-000000000004'],
        'evidence and signal refs deleted, no lease; damaged refs kept',
      );
      assert.equal(git(dir, 'rev-parse', 'refs/heads/nyl/dev/desired'), now.desired, "the clone's known branch follows");
      assert.ok(evidence);

      const again = await del(dir, ['-o', 'json'], 1);
      assert.deepEqual(codes(again), ['NYL-STATE-DELETED']);

      const status = await run(dir, ['status', '-e', ENV], 1);
      assert.equal(
        `${status.stdout}${status.stderr}`,
        'dev: no units\n\nerror NYL-STATE-DELETED\n  the state of dev was deleted with `nyl state delete`\n  fix: remove the Environment dev from source to decommission it, or start it over with `nyl state init -e dev --fresh`\n',
      );
      // That reconcile, hold, resume, recover and state init refuse NYL-STATE-DELETED too, that lease break
      // still works and that state init --fresh starts over: test/protocol/state-delete.test.mjs ('a deleted state').
    });

    test("on refs shared through path, only the environment's directory changes", async () => {
      const { dir, bare } = world({
        units: ['migrate'],
        envs: {
          dev: 'path: envs/dev\n  desiredRef: nyl/shared/desired\n  observedRef: nyl/shared/observed',
          qa: 'path: envs/qa\n  desiredRef: nyl/shared/desired\n  observedRef: nyl/shared/observed',
        },
      });
      const D = 'refs/heads/nyl/shared/desired';
      const O = 'refs/heads/nyl/shared/observed';
      await run(dir, ['state', 'init', '-e', 'dev']);
      await run(dir, ['state', 'init', '-e', 'qa']);
      await run(dir, ['reconcile', '-e', 'qa']);
      const qaBefore = [D, O].map((ref) => git(bare, 'rev-parse', `${ref}:envs/qa`));

      const r = await run(dir, ['state', 'delete', '-e', 'dev', '--reason', 'gone', '-o', 'json']);
      assert.deepEqual(r.json.details.removed, []);
      for (const ref of [D, O]) {
        const changed = git(bare, 'diff', '--name-only', `${ref}^`, ref).split('\n');
        assert.deepEqual(changed, ['envs/dev/state.yaml'], ref);
        assert.equal(commitBody(git(bare, 'log', '-1', '--format=%B', ref)).removed, undefined, 'nothing listed when no unit file went');
      }
      assert.deepEqual(
        [D, O].map((ref) => git(bare, 'rev-parse', `${ref}:envs/qa`)),
        qaBefore,
        "qa's directory is untouched",
      );
      assert.match(git(bare, 'show', `${D}:envs/dev/state.yaml`), /status: deleted/);
      assert.match(git(bare, 'show', `${D}:envs/qa/state.yaml`), /status: active/, 'qa is not deleted');
      assert.deepEqual(codes(await run(dir, ['status', '-e', 'dev', '-o', 'json'], 1)), ['NYL-STATE-DELETED']);
    });

    test('over smart HTTP with protected state branches: the state refs move fast-forward, the evidence ref goes in the same push', async () => {
      const name = 'protected';
      const bare = makeBareRepo(path.join(http.base, `${name}.git`));
      installProtectHook(bare);
      const { dir } = world({ url: http.server.url(`${name}.git`), units: ['migrate', 'other'] });
      await run(dir, ['state', 'init', '-e', ENV]);
      await run(dir, ['reconcile', '-e', ENV]);
      dropUnits(bare, ['migrate']);
      createRef(bare, `${EVIDENCE}other/0192f0c0-0000-7000-8000-000000000001`);
      const refused = await del(dir, ['-o', 'json'], 1);
      assert.deepEqual(refused.json.errors[0].units, ['other']);
      dropUnits(bare, ['other']);
      const tipBefore = git(bare, 'rev-parse', DESIRED);
      const r = await del(dir, ['-o', 'json']);
      assert.equal(r.json.result, 'done');
      assert.equal(git(bare, 'rev-parse', `${DESIRED}^`), tipBefore);
      assert.equal(r.json.desired, git(bare, 'rev-parse', DESIRED));
      assert.equal(r.json.observed, git(bare, 'rev-parse', OBSERVED));
      assert.deepEqual(refsUnder(bare, 'refs/nyl/'), []);
      assert.deepEqual(codes(await del(dir, ['-o', 'json'], 1)), ['NYL-STATE-DELETED']);
    });
  });

  // A state delete (or a state init --fresh of a deleted location) killed with the lease taken, then
  // lease break and recover: test/protocol/state-delete.test.mjs ('leases').

  describe('--teardown', { concurrency: true }, () => {
    /** A project whose units log their teardown to a file; teardown: false leaves one without. */
    function logged(units) {
      const bare = makeBareRepo();
      const log = path.join(tempDir('nyl-state-delete-log-'), 'log');
      const env = environment(ENV, `state:\n  repository: {repoURL: "${pathToFileURL(bare).href}"}`);
      const docs = Object.entries(units).map(([n, { teardown = true, dependsOn } = {}]) =>
        command(
          n,
          [
            `script: 'true'`,
            ...(dependsOn ? [`dependsOn: [${dependsOn.join(', ')}]`] : []),
            ...(teardown ? [`teardown: {script: 'echo ${n} >> ${log}'}`] : []),
          ].join('\n'),
        ),
      );
      return { dir: makeProject({ 'nyl.yaml': nylYaml(env, ...docs) }), bare, log };
    }
    const torn = (log) => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);

    test('with nothing to tear down it deletes at once; with units it tears them down consumers first, then deletes in the same command', async () => {
      const { dir, bare, log } = logged({ db: {}, app: { dependsOn: ['db'] } });
      await run(dir, ['state', 'init', '-e', ENV]);
      const empty = await del(dir, ['--teardown', '-o', 'json']);
      assert.equal(empty.json.result, 'done');
      assert.equal(empty.json.details.teardown, undefined, 'no teardown ran');
      await run(dir, ['state', 'init', '-e', ENV, '--fresh']);
      await run(dir, ['reconcile', '-e', ENV]);
      const r = await del(dir, ['--teardown', '-o', 'json']);
      assert.equal(r.json.result, 'done');
      assert.deepEqual(torn(log), ['app', 'db'], 'consumers first');
      assert.equal(r.json.details.teardown.operation, 'teardown');
      assert.deepEqual(
        Object.values(r.json.details.teardown.units).map((u) => u.result),
        ['removed', 'removed'],
      );
      assert.equal(docAt(bare, DESIRED, 'state.yaml').status, 'deleted');
      assert.deepEqual(filesAt(bare, DESIRED), ['state.yaml']);
    });

    test('a held unit: exit 2 and nothing deleted; after resume, running it again resumes and deletes', async () => {
      const { dir, bare, log } = logged({ db: {}, app: {} });
      await run(dir, ['state', 'init', '-e', ENV]);
      await run(dir, ['reconcile', '-e', ENV]);
      await run(dir, ['hold', '-e', ENV, '--unit', 'db', '--reason', 'incident']);
      const waits = await del(dir, ['--teardown', '-o', 'json'], 2);
      assert.deepEqual(codes(waits), ['NYL-STATE-DELETE-WAITING']);
      assert.deepEqual(waits.json.errors[0].units, ['db']);
      assert.equal(waits.json.details.teardown.units.db.result, 'held');
      assert.deepEqual(torn(log), ['app'], 'the teardown of app is done and kept');
      assert.equal(docAt(bare, DESIRED, 'state.yaml').status, 'active', 'nothing deleted');
      assert.ok(docAt(bare, DESIRED, 'units/db.yaml').teardownRequest, 'the request is recorded on the held file');
      await run(dir, ['resume', '-e', ENV, '--unit', 'db', '--reason', 'resolved']);
      const done = await del(dir, ['--teardown', '-o', 'json']);
      assert.equal(done.json.result, 'done');
      assert.deepEqual(torn(log), ['app', 'db']);
      assert.equal(docAt(bare, DESIRED, 'state.yaml').status, 'deleted');
    });

    test('units whose driver cannot claim their removal: refused before anything is torn down (one error, every name); its fix, run as printed, deletes with one summary warning and counts every unit removed', async () => {
      const { dir, bare, log } = logged({ db: {}, legacy: { teardown: false }, old: { teardown: false, dependsOn: ['legacy'] } });
      await run(dir, ['state', 'init', '-e', ENV]);
      await run(dir, ['reconcile', '-e', ENV]);
      assert.deepEqual(codes(await del(dir, ['--allow-incomplete', '-o', 'json'], 1)), ['NYL-USAGE']);
      const refused = await del(dir, ['--teardown', '-o', 'json'], 1);
      assert.deepEqual(codes(refused), ['NYL-STATE-DELETE-INCOMPLETE']);
      assert.deepEqual(refused.json.errors[0].units, ['legacy', 'old']);
      assert.equal(refused.json.details.teardown, undefined, 'no teardown ran');
      assert.deepEqual(torn(log), []);
      assert.equal(docAt(bare, DESIRED, 'units/legacy.yaml').lifecycle.state, 'active', 'nothing started');
      // The fix's first way (add teardown: and record it by a reconcile) is the user's to write;
      // its second runs as printed.
      const fix = nylCommands(refused.json.errors[0].fix).find((c) => c.includes('--allow-incomplete'));
      const done = await run(dir, [...argvOf(fix, { '<why>': 'decommission' }), '-o', 'json']);
      assert.equal(done.json.result, 'done');
      assert.deepEqual(done.json.details.removed, ['db', 'legacy', 'old'], 'what the teardown removed counts');
      const incomplete = done.json.warnings.filter((w) => w.code === 'NYL-TEARDOWN-INCOMPLETE');
      assert.deepEqual(
        incomplete.map((w) => w.units),
        [['legacy', 'old']],
        'one summary warning',
      );
      assert.equal(docAt(bare, DESIRED, 'state.yaml').status, 'deleted');
    });
  });
});
