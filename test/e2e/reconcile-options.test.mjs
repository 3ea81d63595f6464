// End-to-end: options of `nyl reconcile` through the built CLI: --unit/--units, --fail-fast,
// --source, and a state repository whose branches are protected like a Git host's.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { cleanupAll, commitTree, git, installProtectHook, makeBareRepo } from '../support/git-fixtures.mjs';
import { codes } from '../support/cli.mjs';
import {
  changeUnits,
  commitFiles,
  logLines,
  logs,
  message,
  projectYaml,
  reconcile,
  refsUnder,
  results,
  setup,
  stateCounts,
  stateRepo,
  table,
  trailer,
} from '../support/reconcile-helpers.mjs';

after(cleanupAll);

function commitBody(repo, rev) {
  const paragraphs = message(repo, rev).split(/\n\n+/);
  return parseYaml(paragraphs.slice(1, -1).join('\n\n'));
}

describe('--unit and --units', () => {
  const units = (log) => ({
    database: ['script: |', `  echo database >> ${log}`, `  echo '{"url": "pg://db"}' > "$NYL_OUTPUTS"`].join('\n'),
    migrate: `env: {URL: "\${{ units.database.outputs.url }}"}\nscript: 'echo "migrate $URL" >> ${log}'`,
    app: `dependsOn: [migrate]\n${logs(log, 'app')}`,
    other: logs(log, 'other'),
    broken: `script: 'echo broken >> ${log}; exit 1'`,
  });

  test('only the named units execute; a named unit whose dependency has no current receipt stays blocked (exit 2)', () => {
    const ctx = setup(units);
    const start = stateCounts(ctx.bare);

    const blocked = reconcile(ctx.project, ['--unit', 'migrate', '-o', 'json']);
    assert.equal(blocked.code, 2, blocked.stdout + blocked.stderr);
    assert.deepEqual(logLines(ctx.log), [], 'nothing ran, not even the dependency');
    assert.deepEqual(results(blocked.json), { migrate: 'blocked' });
    assert.deepEqual(
      blocked.json.units.migrate.waits.map((w) => [w.unit, w.reason]),
      [['database', 'no-current-receipt']],
    );
    assert.match(blocked.json.units.migrate.detail, /waits for database \(no-current-receipt\)/);
    assert.deepEqual(stateCounts(ctx.bare), start, 'nothing to record');
    assert.deepEqual(refsUnder(ctx.bare, 'refs/nyl/'), {});
    const blockedText = reconcile(ctx.project, ['--unit', 'migrate']);
    assert.equal(blockedText.code, 2);
    assert.deepEqual(
      table(blockedText.stdout).rows.map((r) => r.slice(0, 3)),
      [['migrate', 'Command', 'blocked']],
    );

    const some = reconcile(ctx.project, ['--units', 'database,other', '-o', 'json']);
    assert.equal(some.code, 0, some.stderr);
    assert.deepEqual(logLines(ctx.log, { clear: true }).sort(), ['database', 'other']);
    assert.deepEqual(results(some.json), { database: 'executed', other: 'executed' });
    assert.deepEqual(stateCounts(ctx.bare), { desired: start.desired + 1, observed: start.observed + 1 });
    const body = commitBody(ctx.bare, 'refs/heads/nyl/dev/observed');
    assert.deepEqual([...body.executed].sort(), ['database', 'other']);

    // Now its dependency is current: the named unit executes, its consumer app does not.
    const named = reconcile(ctx.project, ['--unit', 'migrate', '-o', 'json']);
    assert.equal(named.code, 0, named.stderr);
    assert.deepEqual(logLines(ctx.log, { clear: true }), ['migrate pg://db']);
    assert.deepEqual(results(named.json), { migrate: 'executed' });

    // Repeated --unit; only the named units count for the exit code (broken is never run).
    const repeated = reconcile(ctx.project, ['--unit', 'app', '--unit', 'other', '-o', 'json']);
    assert.equal(repeated.code, 0, repeated.stderr);
    assert.deepEqual(logLines(ctx.log, { clear: true }), ['app']);
    assert.deepEqual(results(repeated.json), { app: 'executed', other: 'current' });

    // A failure of a named unit counts: exit 3; the others are left alone.
    const failing = reconcile(ctx.project, ['--unit', 'broken', '-o', 'json']);
    assert.equal(failing.code, 3);
    assert.deepEqual(logLines(ctx.log, { clear: true }), ['broken']);
    assert.deepEqual(results(failing.json), { broken: 'failed' });
    // ...and does not count when another unit is named.
    const other = reconcile(ctx.project, ['--unit', 'other', '-o', 'json']);
    assert.equal(other.code, 0, other.stderr);
    assert.deepEqual(logLines(ctx.log), []);
  });

  test('an unknown name exits 1 with NYL-UNIT-UNKNOWN and changes nothing', () => {
    const ctx = setup(units);
    const start = stateCounts(ctx.bare);
    for (const args of [
      ['--unit', 'nope'],
      ['--units', 'other,nope'],
      ['--unit', 'other', '--unit', 'nope'],
    ]) {
      const r = reconcile(ctx.project, [...args, '-o', 'json']);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.deepEqual(codes(r), ['NYL-UNIT-UNKNOWN']);
      assert.match(r.json.errors[0].message, /nope/);
    }
    // The text output says the same (one form suffices: the name is resolved before output is chosen).
    const text = reconcile(ctx.project, ['--units', 'other,nope']);
    assert.equal(text.code, 1);
    assert.deepEqual(codes(text), ['NYL-UNIT-UNKNOWN']);
    assert.deepEqual(logLines(ctx.log), []);
    assert.deepEqual(stateCounts(ctx.bare), start);
    assert.deepEqual(refsUnder(ctx.bare, 'refs/nyl/'), {});
  });
});

describe('--fail-fast', () => {
  test('the failed unit, its blocked consumer, NYL-RUN-STOPPED', () => {
    const ctx = setup((log) => ({
      broken: `script: 'echo broken >> ${log}; echo connection refused >&2; exit 1'`,
      report: `dependsOn: [broken]\n${logs(log, 'report')}`,
    }));
    const r = reconcile(ctx.project, ['--fail-fast', '--concurrency', '1']);
    assert.equal(r.code, 3, r.stdout + r.stderr);
    assert.deepEqual(table(r.stdout).lines, [
      'UNIT    KIND     RESULT   DETAIL',
      'broken  Command  failed   command exited with code 1',
      'report  Command  blocked  /dependsOn/0 waits for broken (no-current-receipt)',
    ]);
    const head = git(ctx.project, 'rev-parse', 'HEAD');
    const remote = refsUnder(ctx.bare, 'refs/heads/nyl/');
    assert.match(r.stdout, /^ {2}run: {6}[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/m);
    assert.match(r.stdout, new RegExp(`^ {2}source: {3}${head}$`, 'm'));
    assert.match(r.stdout, new RegExp(`^ {2}desired: {2}${remote['refs/heads/nyl/dev/desired']}$`, 'm'));
    assert.match(r.stdout, new RegExp(`^ {2}observed: ${remote['refs/heads/nyl/dev/observed']}$`, 'm'));
    const all = `${r.stdout}\n${r.stderr}`;
    assert.match(
      all,
      /^warning NYL-RUN-STOPPED\n {2}--fail-fast stopped the run of dev after unit broken: it started no further unit\n {2}fix: fix broken, then run again; without --fail-fast a run continues with every unit that does not depend on it$/m,
    );
    assert.deepEqual(
      r.stderr
        .split('\n')
        .filter((l) => l.includes('[dev/'))
        .map((l) => l.replace(/\d+\.\ds/, 'T')),
      ['[dev/broken] starting Command (reconcile): no receipt', '  [dev/broken] connection refused', '[dev/broken] failed in T: command exited with code 1'],
    );
    assert.deepEqual(logLines(ctx.log), ['broken']);
  });

  test('with --concurrency 1 no unit starts after the first failure; those not started are blocked; the run still commits', () => {
    const units = (log) => ({
      alpha: logs(log, 'alpha'),
      broken: `script: 'echo broken >> ${log}; exit 1'`,
      cache: logs(log, 'cache'),
      deploy: logs(log, 'deploy'),
      later: `dependsOn: [alpha]\n${logs(log, 'later')}`,
      report: `dependsOn: [broken]\n${logs(log, 'report')}`,
    });
    const ctx = setup(units);
    const start = stateCounts(ctx.bare);
    const r = reconcile(ctx.project, ['--fail-fast', '--concurrency', '1', '-o', 'json']);
    assert.equal(r.code, 3, r.stderr);
    assert.deepEqual(logLines(ctx.log, { clear: true }), ['alpha', 'broken'], 'name order, and nothing after broken');
    assert.deepEqual(results(r.json), {
      alpha: 'executed',
      broken: 'failed',
      cache: 'blocked',
      deploy: 'blocked',
      later: 'blocked',
      report: 'blocked',
    });
    for (const name of ['cache', 'deploy', 'later']) {
      assert.equal(r.json.units[name].dispatched, false);
      assert.match(r.json.units[name].detail, /not started.*--fail-fast.*broken/);
    }
    assert.equal(r.json.units.report.detail, '/dependsOn/0 waits for broken (no-current-receipt)');
    assert.deepEqual(r.json.unitOrder, ['alpha', 'broken', 'cache', 'deploy', 'later', 'report']);
    assert.deepEqual(
      r.json.warnings.map((w) => w.code),
      ['NYL-RUN-STOPPED'],
    );
    assert.match(r.json.warnings[0].message, /broken/);
    assert.ok(r.json.warnings[0].fix);
    assert.doesNotMatch(r.stderr, /\[dev\/(cache|deploy|later|report)\] starting/);
    // The transition commit records the executed unit's receipt and the failure.
    assert.equal(r.json.committed, true);
    assert.deepEqual(stateCounts(ctx.bare), { desired: start.desired + 1, observed: start.observed + 1 });
    assert.deepEqual(refsUnder(ctx.bare, 'refs/nyl/'), {});
    const body = commitBody(ctx.bare, 'refs/heads/nyl/dev/observed');
    assert.deepEqual(body.executed, ['alpha']);
    assert.equal(body.units.broken, 'failed');
    assert.match(git(ctx.bare, 'show', 'refs/heads/nyl/dev/observed:units/alpha.yaml'), /executionKey: sha256:/);

    // Without --fail-fast the next run does everything that does not depend on broken.
    const next = reconcile(ctx.project, ['--concurrency', '1', '-o', 'json']);
    assert.equal(next.code, 3);
    assert.deepEqual(logLines(ctx.log), ['broken', 'cache', 'deploy', 'later']);
    assert.deepEqual(results(next.json), {
      alpha: 'current',
      broken: 'failed',
      cache: 'executed',
      deploy: 'executed',
      later: 'executed',
      report: 'blocked',
    });
    assert.deepEqual(
      next.json.warnings.map((w) => w.code),
      [],
    );
  });

  test('units already running when the first failure comes finish and are recorded', () => {
    const ctx = setup((log) => ({
      broken: `script: 'echo broken >> ${log}; exit 1'`,
      slow: logs(log, 'slow-start', `sleep 1; echo slow-end >> ${log}`),
      tail1: logs(log, 'tail1'),
      tail2: logs(log, 'tail2'),
    }));
    const r = reconcile(ctx.project, ['--fail-fast', '--concurrency', '2', '-o', 'json']);
    assert.equal(r.code, 3, r.stderr);
    assert.deepEqual(logLines(ctx.log).sort(), ['broken', 'slow-end', 'slow-start']);
    assert.deepEqual(results(r.json), { broken: 'failed', slow: 'executed', tail1: 'blocked', tail2: 'blocked' });
    assert.deepEqual(
      r.json.warnings.map((w) => w.code),
      ['NYL-RUN-STOPPED'],
    );
    const slow = parseYaml(git(ctx.bare, 'show', 'refs/heads/nyl/dev/observed:units/slow.yaml'));
    assert.equal(slow.receipt.executionKey, r.json.units.slow.executionKey, 'the running unit got its receipt');
    assert.deepEqual(refsUnder(ctx.bare, 'refs/nyl/'), {});
  });

  test('a run with --fail-fast and no failure is an ordinary run', () => {
    const ctx = setup((log) => ({ one: logs(log, 'one'), two: `dependsOn: [one]\n${logs(log, 'two')}` }));
    const r = reconcile(ctx.project, ['--fail-fast', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(logLines(ctx.log), ['one', 'two']);
    assert.deepEqual(r.json.warnings, []);
  });
});

describe('exit codes', () => {
  test('the most severe wins: a failure (3) over an error (1), an error (1) over a blocked unit (2)', () => {
    const units = (brokenFixed) => (log) => ({
      database: ['script: |', `  echo database >> ${log}`, `  echo '{"url": "pg://db"}' > "$NYL_OUTPUTS"`].join('\n'),
      // References an output database never writes: an error of this unit only.
      migrate: `env: {U: "\${{ units.database.outputs.nokey }}"}\nscript: 'echo migrate >> ${log}'`,
      waiter: `dependsOn: [migrate]\n${logs(log, 'waiter')}`,
      broken: brokenFixed ? logs(log, 'broken') : `script: 'echo broken >> ${log}; exit 1'`,
    });
    const ctx = setup(units(false));
    const failed = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(failed.code, 3, failed.stdout + failed.stderr);
    assert.deepEqual(codes(failed), ['NYL-SOURCE-INVALID']);
    assert.equal(failed.json.errors[0].location.pointer, '/spec/env/U');
    assert.deepEqual(results(failed.json), { database: 'executed', migrate: 'blocked', waiter: 'blocked', broken: 'failed' });
    assert.deepEqual(logLines(ctx.log, { clear: true }).sort(), ['broken', 'database']);

    changeUnits(ctx, units(true));
    const error = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(error.code, 1, error.stdout + error.stderr);
    assert.deepEqual(results(error.json), { database: 'current', migrate: 'blocked', waiter: 'blocked', broken: 'executed' });
    assert.deepEqual(logLines(ctx.log), ['broken']);

    // Only the named units count: the blocked waiter alone is exit 2.
    const named = reconcile(ctx.project, ['--unit', 'waiter', '-o', 'json']);
    assert.equal(named.code, 2, named.stdout + named.stderr);
    assert.deepEqual(results(named.json), { waiter: 'blocked' });
  });
});

describe('timeout', () => {
  test('a unit running past its timeout is killed and fails; exit 3; the other units are unaffected', async () => {
    const ctx = setup((log) => ({
      slow: `timeout: 1s\nscript: 'echo slow >> ${log}; sleep 4; echo late >> ${log}'`,
      quick: logs(log, 'quick'),
    }));
    const started = Date.now();
    const r = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(r.code, 3, r.stderr);
    assert.ok(Date.now() - started < 3500, 'the run did not wait for the tool');
    assert.equal(r.json.units.slow.result, 'failed');
    assert.match(r.json.units.slow.detail, /timed out after 1s/);
    assert.ok(r.json.units.slow.durationMs >= 900 && r.json.units.slow.durationMs < 3000, String(r.json.units.slow.durationMs));
    assert.equal(r.json.units.quick.result, 'executed');
    assert.match(r.stderr, /^\[dev\/slow\] failed in 1\.\ds: timed out after 1s/m);
    await new Promise((resolve) => setTimeout(resolve, 3500));
    assert.deepEqual(logLines(ctx.log).sort(), ['quick', 'slow'], 'the killed tool never wrote its last line');
    const observed = parseYaml(git(ctx.bare, 'show', 'refs/heads/nyl/dev/observed:units/slow.yaml'));
    assert.equal(observed.condition.type, 'failed');
  });
});

describe('--source', () => {
  test('renders at an older commit and marks the override in the transition commit; the next plain run renders HEAD', () => {
    const ctx = setup((log) => ({ app: logs(log, 'v1'), keep: logs(log, 'keep') }));
    const v1 = git(ctx.project, 'rev-parse', 'HEAD');
    const v2 = changeUnits(ctx, (log) => ({ app: logs(log, 'v2'), keep: logs(log, 'keep') }));

    const old = reconcile(ctx.project, ['--source', v1.slice(0, 10)]);
    assert.equal(old.code, 0, old.stderr);
    assert.deepEqual(logLines(ctx.log, { clear: true }).sort(), ['keep', 'v1']);
    assert.match(old.stdout, new RegExp(`^ {2}source: +${v1} \\(override\\)$`, 'm'));
    for (const ref of ['refs/heads/nyl/dev/desired', 'refs/heads/nyl/dev/observed']) {
      const body = commitBody(ctx.bare, ref);
      assert.equal(body.source, v1);
      assert.equal(body.sourceOverride, true, `${ref}: ${message(ctx.bare, ref)}`);
      assert.deepEqual(trailer(ctx.bare, ref, 'Nyl-Source'), [`${v1} (override)`]);
      assert.deepEqual(trailer(ctx.bare, ref, 'Nyl-Operation'), ['reconcile']);
    }
    const desired = parseYaml(git(ctx.bare, 'show', 'refs/heads/nyl/dev/desired:units/app.yaml'));
    assert.equal(desired.source, v1);

    // A revision expression works too; at v1 everything is current now.
    const again = reconcile(ctx.project, ['--source', 'main~1', '-o', 'json']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.json.source, v1);
    assert.equal(again.json.sourceOverride, true);
    assert.deepEqual(results(again.json), { app: 'current', keep: 'current' });
    assert.deepEqual(logLines(ctx.log), []);

    const plain = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.json.source, v2);
    assert.equal(plain.json.sourceOverride, false);
    assert.deepEqual(logLines(ctx.log), ['v2']);
    assert.deepEqual(results(plain.json), { app: 'executed', keep: 'current' });
    const body = commitBody(ctx.bare, 'refs/heads/nyl/dev/observed');
    assert.equal(body.source, v2);
    assert.equal(body.sourceOverride, undefined);
    assert.deepEqual(trailer(ctx.bare, 'refs/heads/nyl/dev/observed', 'Nyl-Source'), [v2]);
  });

  test('an unknown revision exits 1 with NYL-SOURCE-UNREACHABLE and changes nothing', () => {
    const ctx = setup((log) => ({ app: logs(log, 'app') }));
    const start = stateCounts(ctx.bare);
    for (const rev of ['no-such-branch', '0123456789abcdef0123456789abcdef01234567', 'main~5']) {
      const r = reconcile(ctx.project, ['--source', rev, '-o', 'json']);
      assert.equal(r.code, 1, `${rev}: ${r.stdout}${r.stderr}`);
      assert.deepEqual(codes(r), ['NYL-SOURCE-UNREACHABLE']);
      const text = reconcile(ctx.project, ['--source', rev]);
      assert.equal(text.code, 1);
      assert.match(text.stdout + text.stderr, /^error NYL-SOURCE-UNREACHABLE\n/m);
      assert.match(text.stdout + text.stderr, /^ {2}fix: /m);
    }
    assert.deepEqual(logLines(ctx.log), []);
    assert.deepEqual(stateCounts(ctx.bare), start);
    assert.deepEqual(refsUnder(ctx.bare, 'refs/nyl/'), {});
  });

  // Spec 03: --source must pass the same reachability checks as the Environment's source. A
  // commit no branch or tag reaches (unpushed work of another clone, a fork's commit fetched by
  // id) has not been shared, so rendering it would record unreviewable source in state.
  test('a commit no branch or tag reaches is refused with NYL-SOURCE-UNREACHABLE naming it, as --source and as spec.source.ref; once one reaches it, it is accepted', () => {
    const origin = makeBareRepo();
    const ctx = setup((log) => ({ app: logs(log, 'v1') }));
    git(ctx.project, 'remote', 'add', 'origin', origin);
    const v1 = git(ctx.project, 'rev-parse', 'HEAD');
    const dangling = commitTree(ctx.project, { 'nyl.yaml': projectYaml(ctx.url, { app: logs(ctx.log, 'dangling') }) }, { parents: [v1], message: 'dangling' });
    const untouched = () => ({ bare: refsUnder(ctx.bare), clone: refsUnder(ctx.project, 'refs/heads/nyl/'), lease: refsUnder(ctx.project, 'refs/nyl/') });
    const start = untouched();

    for (const rev of [dangling, dangling.slice(0, 12)]) {
      const r = reconcile(ctx.project, ['--source', rev, '-o', 'json']);
      assert.equal(r.code, 1, `${rev}: ${r.stdout}${r.stderr}`);
      assert.deepEqual(codes(r), ['NYL-SOURCE-UNREACHABLE']);
      assert.match(r.json.errors[0].message, new RegExp(`^--source ${rev}\\b`));
      assert.match(r.json.errors[0].message, new RegExp(dangling));
      assert.match(r.json.errors[0].fix, new RegExp(`git branch -a --contains ${dangling}`));
      const text = reconcile(ctx.project, ['--source', rev]);
      assert.equal(text.code, 1);
      assert.match(text.stdout + text.stderr, /^error NYL-SOURCE-UNREACHABLE\n/m);
    }
    const asRef = commitFiles(ctx.project, { 'nyl.yaml': projectYaml(ctx.url, { app: logs(ctx.log, 'v1') }, `source: {ref: ${dangling}}`) });
    const configured = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(configured.code, 1, configured.stdout + configured.stderr);
    assert.deepEqual(codes(configured), ['NYL-SOURCE-UNREACHABLE']);
    assert.match(configured.json.errors[0].message, new RegExp(`spec.source.ref of dev ${dangling}`));
    assert.match(configured.json.errors[0].fix, /spec\.source\.ref of dev/);
    assert.deepEqual(logLines(ctx.log), []);
    assert.deepEqual(untouched(), start, 'nothing written: no state commit, no lease, no run ref');

    // The fix works typed as printed: once origin has a branch holding the commit, fetching it is enough.
    git(ctx.project, 'push', '-q', origin, `${dangling}:refs/heads/feature`);
    const fix = reconcile(ctx.project, ['--source', dangling, '-o', 'json']).json.errors[0].fix;
    for (const [, command] of fix.matchAll(/`(git [^`]+)`/g)) git(ctx.project, ...command.split(' ').slice(1));
    const fetched = reconcile(ctx.project, ['--source', dangling, '-o', 'json']);
    assert.equal(fetched.code, 0, fetched.stdout + fetched.stderr);
    assert.equal(fetched.json.source, dangling);
    assert.deepEqual(logLines(ctx.log, { clear: true }), ['dangling']);
    const viaRef = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(viaRef.code, 0, viaRef.stdout + viaRef.stderr);
    assert.equal(viaRef.json.source, dangling);

    // A tag, or a local branch, reaches a commit as well.
    const tagged = commitTree(ctx.project, { 'nyl.yaml': projectYaml(ctx.url, { app: logs(ctx.log, 'tagged') }) }, { parents: [asRef], message: 'tagged' });
    git(ctx.project, 'tag', 'release-1', tagged);
    const byTag = reconcile(ctx.project, ['--source', tagged, '-o', 'json']);
    assert.equal(byTag.code, 0, byTag.stdout + byTag.stderr);
    assert.deepEqual(logLines(ctx.log, { clear: true }), ['tagged']);
    const branched = commitTree(
      ctx.project,
      { 'nyl.yaml': projectYaml(ctx.url, { app: logs(ctx.log, 'branched') }) },
      { parents: [asRef], message: 'branched' },
    );
    git(ctx.project, 'branch', 'topic', branched);
    const byBranch = reconcile(ctx.project, ['--source', `${branched}~0`, '-o', 'json']);
    assert.equal(byBranch.code, 0, byBranch.stdout + byBranch.stderr);
    assert.deepEqual(logLines(ctx.log, { clear: true }), ['branched']);

    // So does HEAD, detached or not: a plain run renders it anyway, so --source may name its history.
    const parent = commitTree(ctx.project, { 'nyl.yaml': projectYaml(ctx.url, { app: logs(ctx.log, 'parent') }) }, { parents: [asRef], message: 'parent' });
    const detached = commitTree(
      ctx.project,
      { 'nyl.yaml': projectYaml(ctx.url, { app: logs(ctx.log, 'detached') }) },
      { parents: [parent], message: 'detached' },
    );
    git(ctx.project, 'checkout', '-q', '--detach', detached);
    const byHead = reconcile(ctx.project, ['--source', parent, '-o', 'json']);
    assert.equal(byHead.code, 0, byHead.stdout + byHead.stderr);
    assert.deepEqual(logLines(ctx.log), ['parent']);
  });
});

describe('a protected state repository', () => {
  test('branches that refuse non-fast-forward pushes and deletions: init, reconcile with changes, reconcile again', () => {
    const state = stateRepo();
    installProtectHook(state.bare);
    const units = (tag) => (log) => ({
      database: ['script: |', `  echo database-${tag} >> ${log}`, `  echo '{"url": "pg://${tag}"}' > "$NYL_OUTPUTS"`].join('\n'),
      migrate: `env: {URL: "\${{ units.database.outputs.url }}"}\nscript: 'echo "migrate $URL" >> ${log}'`,
      broken: `script: 'echo broken >> ${log}; exit 1'`,
    });
    const ctx = setup(units('v1'), state);
    const tips = [];
    const tip = () => refsUnder(ctx.bare, 'refs/heads/nyl/');
    tips.push(tip());

    const first = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(first.code, 3, first.stderr);
    assert.deepEqual(results(first.json), { database: 'executed', migrate: 'executed', broken: 'failed' });
    assert.deepEqual(first.json.errors, []);
    tips.push(tip());

    changeUnits(ctx, units('v2'));
    const second = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(second.code, 3, second.stderr);
    assert.deepEqual(results(second.json), { database: 'executed', migrate: 'executed', broken: 'failed' });
    tips.push(tip());

    changeUnits(ctx, (log) => ({ ...units('v2')(log), broken: logs(log, 'fixed') }));
    const third = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(third.code, 0, third.stderr);
    assert.deepEqual(results(third.json), { database: 'current', migrate: 'current', broken: 'executed' });
    tips.push(tip());

    const fourth = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(fourth.code, 0, fourth.stderr);
    assert.equal(fourth.json.committed, false);
    tips.push(tip());

    assert.deepEqual(logLines(ctx.log).sort(), ['broken', 'broken', 'database-v1', 'database-v2', 'fixed', 'migrate pg://v1', 'migrate pg://v2']);
    for (let i = 1; i < tips.length; i++) {
      for (const ref of ['refs/heads/nyl/dev/desired', 'refs/heads/nyl/dev/observed']) {
        assert.ok(tips[i][ref]);
        git(ctx.bare, 'merge-base', '--is-ancestor', tips[i - 1][ref], tips[i][ref]);
      }
    }
    assert.deepEqual(refsUnder(ctx.bare, 'refs/nyl/'), {}, 'lease and run refs were deleted');
    assert.deepEqual(refsUnder(ctx.project, 'refs/heads/nyl/'), tips[tips.length - 1]);
  });
});

test('--reapply needs --unit and --reason: exit 1 NYL-USAGE before anything is read', async () => {
  const { nyl } = await import('../support/cli.mjs');
  const { tempDir } = await import('../support/git-fixtures.mjs');
  const dir = tempDir();
  for (const args of [
    ['--reapply', '--reason', 'rotate'],
    ['--unit', 'db', '--reapply'],
    ['--unit', 'db', '--reapply', '--reason', ' '],
  ]) {
    const r = nyl(dir, ['reconcile', '-e', 'dev', ...args, '-o', 'json']);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.deepEqual(codes(r), ['NYL-USAGE'], args.join(' '));
  }
});
