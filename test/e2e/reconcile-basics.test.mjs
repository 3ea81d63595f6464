// End-to-end: `nyl reconcile` of Command units through the built CLI, with state in a file://
// bare repository: dependency order, transition commits, failures and blocking, re-runs that do
// nothing, source changes that execute exactly what changed, and `nyl status` after a run. Units
// append to a log file so that the tests see what ran, in which order and how many times.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { cleanupAll, git } from '../support/git-fixtures.mjs';
import { command, nyl, nylYaml } from '../support/cli.mjs';
import {
  changeUnits,
  commitFiles,
  logLines,
  logs,
  message,
  reconcile,
  refsUnder,
  results,
  setup,
  stateCounts,
  table,
  trailer,
} from '../support/reconcile-helpers.mjs';

after(cleanupAll);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The YAML body of a transition commit: the paragraphs between the headline and the trailers. */
function commitBody(repo, rev) {
  const paragraphs = message(repo, rev).split(/\n\n+/);
  return parseYaml(paragraphs.slice(1, -1).join('\n\n'));
}

/** Asserts the transition commit at rev of a reconcile: headline, YAML body, trailers. */
function assertTransitionCommit(repo, rev, { run, source }) {
  const msg = message(repo, rev);
  assert.match(msg.split('\n')[0], /^nyl: reconcile dev(: \d+ [a-z-]+( \([^)]+\))?(, \d+ [a-z-]+( \([^)]+\))?)*)?$/, msg);
  assert.match(msg, /^operation: reconcile$/m);
  assert.match(msg, new RegExp(`^run: ${run}$`, 'm'));
  assert.match(msg, new RegExp(`^source: ${source}$`, 'm'));
  const body = commitBody(repo, rev);
  assert.equal(body.operation, 'reconcile');
  assert.equal(body.run, run);
  assert.equal(body.source, source);
  assert.deepEqual(trailer(repo, rev, 'Nyl-Operation'), ['reconcile']);
  assert.deepEqual(trailer(repo, rev, 'Nyl-Run'), [run]);
  assert.deepEqual(trailer(repo, rev, 'Nyl-Source'), [source]);
  return body;
}

describe('dependency order and transition commits', () => {
  test('a chain runs dependencies first; one transition commit per state ref; lease and run refs are gone', () => {
    // Declared backwards, and names sort against the dependency order: zeta <- mid <- alpha.
    const ctx = setup((log) => ({
      alpha: `dependsOn: [mid]\n${logs(log, 'alpha')}`,
      mid: `dependsOn: [zeta]\n${logs(log, 'mid')}`,
      zeta: logs(log, 'zeta'),
    }));
    const before = stateCounts(ctx.bare);
    const r = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(logLines(ctx.log), ['zeta', 'mid', 'alpha']);
    assert.deepEqual(r.json.unitOrder, ['zeta', 'mid', 'alpha']);
    assert.deepEqual(results(r.json), { zeta: 'executed', mid: 'executed', alpha: 'executed' });
    for (const u of Object.values(r.json.units)) {
      assert.equal(u.kind, 'Command');
      assert.equal(u.dispatched, true);
      assert.match(u.uid, UUID);
      assert.match(u.executionKey, /^sha256:[0-9a-f]{64}$/);
      assert.equal(typeof u.durationMs, 'number');
    }
    assert.match(r.json.run, UUID);
    const head = git(ctx.project, 'rev-parse', 'HEAD');
    assert.equal(r.json.source, head);
    assert.equal(r.json.committed, true);
    assert.deepEqual(r.json.errors, []);

    const afterRun = stateCounts(ctx.bare);
    assert.deepEqual(afterRun, { desired: before.desired + 1, observed: before.observed + 1 }, 'exactly one commit per state ref');
    const remote = refsUnder(ctx.bare, 'refs/heads/nyl/');
    assert.equal(remote['refs/heads/nyl/dev/desired'], r.json.desired);
    assert.equal(remote['refs/heads/nyl/dev/observed'], r.json.observed);
    for (const ref of ['refs/heads/nyl/dev/desired', 'refs/heads/nyl/dev/observed']) {
      const body = assertTransitionCommit(ctx.bare, ref, { run: r.json.run, source: head });
      assert.deepEqual(body.executed, ['zeta', 'mid', 'alpha'], `${ref}: executed in dependency order`);
    }
    assert.deepEqual(refsUnder(ctx.bare, 'refs/nyl/'), {}, 'lease and run refs are gone');
    assert.deepEqual(refsUnder(ctx.project, 'refs/heads/nyl/'), remote, 'the known branches follow');
    // The receipts are in the observed tree.
    const receipt = parseYaml(git(ctx.bare, 'show', 'refs/heads/nyl/dev/observed:units/alpha.yaml'));
    assert.equal(receipt.uid, r.json.units.alpha.uid);
    assert.equal(receipt.receipt.executionKey, r.json.units.alpha.executionKey);
    assert.equal(receipt.receipt.run, r.json.run);
  });

  test('a diamond: a first, b and c after it, d last; exit 0', () => {
    const ctx = setup((log) => ({
      d: `dependsOn: [b, c]\n${logs(log, 'd')}`,
      c: `dependsOn: [a]\n${logs(log, 'c', 'sleep 0.2')}`,
      b: `dependsOn: [a]\n${logs(log, 'b', 'sleep 0.2')}`,
      a: logs(log, 'a'),
    }));
    const before = stateCounts(ctx.bare);
    const r = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const ran = logLines(ctx.log);
    assert.equal(ran.length, 4, ran.join(','));
    assert.equal(ran[0], 'a');
    assert.deepEqual(ran.slice(1, 3).sort(), ['b', 'c']);
    assert.equal(ran[3], 'd');
    assert.deepEqual(r.json.unitOrder, ['a', 'b', 'c', 'd']);
    assert.deepEqual(results(r.json), { a: 'executed', b: 'executed', c: 'executed', d: 'executed' });
    assert.deepEqual(stateCounts(ctx.bare), { desired: before.desired + 1, observed: before.observed + 1 });
    for (const ref of ['refs/heads/nyl/dev/desired', 'refs/heads/nyl/dev/observed']) {
      assertTransitionCommit(ctx.bare, ref, { run: r.json.run, source: r.json.source });
    }
    assert.deepEqual(refsUnder(ctx.bare, 'refs/nyl/'), {});
  });
});

describe('failures', () => {
  test('a failing unit blocks only its consumers; independent units still execute; exit 3', () => {
    const units = (log) => ({
      broken: `script: 'echo broken >> ${log}; echo connection refused >&2; exit 1'`,
      report: `dependsOn: [broken]\n${logs(log, 'report')}`,
      summary: `dependsOn: [report]\n${logs(log, 'summary')}`,
      alone: logs(log, 'alone'),
      next: `dependsOn: [alone]\n${logs(log, 'next')}`,
    });
    const ctx = setup(units);
    const before = stateCounts(ctx.bare);
    const r = reconcile(ctx.project);
    assert.equal(r.code, 3, r.stdout + r.stderr);
    assert.deepEqual(logLines(ctx.log, { clear: true }).sort(), ['alone', 'broken', 'next']);
    const rows = Object.fromEntries(table(r.stdout).rows.map((row) => [row[0], row]));
    assert.deepEqual(rows.broken, ['broken', 'Command', 'failed', 'command exited with code 1']);
    assert.deepEqual(rows.report, ['report', 'Command', 'blocked', '/dependsOn/0 waits for broken (no-current-receipt)']);
    assert.match(r.stdout, /^report +Command +blocked +\/dependsOn\/0 waits for broken \(no-current-receipt\)$/m);
    assert.deepEqual(rows.summary, ['summary', 'Command', 'blocked', '/dependsOn/0 waits for report (no-current-receipt)']);
    assert.deepEqual(rows.alone.slice(0, 3), ['alone', 'Command', 'executed']);
    assert.deepEqual(rows.next.slice(0, 3), ['next', 'Command', 'executed']);
    assert.match(r.stderr, /^\[dev\/broken\] starting Command \(reconcile\): no receipt$/m);
    assert.match(r.stderr, /^ {2}\[dev\/broken\] connection refused$/m);
    assert.match(r.stderr, /^\[dev\/broken\] failed in \d+\.\ds: command exited with code 1$/m);
    assert.doesNotMatch(r.stderr, /\[dev\/(report|summary)\] starting/);
    // The run still records what it did.
    assert.deepEqual(stateCounts(ctx.bare), { desired: before.desired + 1, observed: before.observed + 1 });
    assert.deepEqual(refsUnder(ctx.bare, 'refs/nyl/'), {});
    const body = commitBody(ctx.bare, 'refs/heads/nyl/dev/observed');
    assert.equal(body.units.broken, 'failed');
    assert.equal(body.units.report, 'blocked');
    assert.deepEqual([...body.executed].sort(), ['alone', 'next']);

    // The same in JSON: waits name the pointer, the unit and the reason. The failed unit is retried.
    const mid = stateCounts(ctx.bare);
    const again = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(again.code, 3, again.stderr);
    assert.deepEqual(stateCounts(ctx.bare), { desired: mid.desired, observed: mid.observed + 1 }, 'a commit only on the ref that changed');
    assert.deepEqual(logLines(ctx.log, { clear: true }), ['broken'], 'only the failed unit is retried');
    assert.deepEqual(results(again.json), { broken: 'failed', report: 'blocked', summary: 'blocked', alone: 'current', next: 'current' });
    assert.deepEqual(again.json.units.report.waits, [{ pointer: '/dependsOn/0', unit: 'broken', reason: 'no-current-receipt' }]);
    assert.deepEqual(again.json.units.summary.waits, [{ pointer: '/dependsOn/0', unit: 'report', reason: 'no-current-receipt' }]);
    assert.equal(again.json.units.broken.detail, 'command exited with code 1');
    assert.equal(again.json.units.report.dispatched, false);

    // Fixed: the failed unit and its consumers execute, the rest stays current.
    changeUnits(ctx, (log) => ({ ...units(log), broken: logs(log, 'broken') }));
    const fixed = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(fixed.code, 0, fixed.stderr);
    assert.deepEqual(logLines(ctx.log), ['broken', 'report', 'summary']);
    assert.deepEqual(results(fixed.json), { broken: 'executed', report: 'executed', summary: 'executed', alone: 'current', next: 'current' });
  });
});

describe('re-runs and source changes', () => {
  const unitsV =
    ({ url = 'postgres://v1', dbExtra = '', argvTag = 'x1' } = {}) =>
    (log) => ({
      database: ['script: |', `  echo database >> ${log}${dbExtra}`, `  printf '{"url": "%s"}' '${url}' > "$NYL_OUTPUTS"`].join('\n'),
      migrate: `env: {DATABASE_URL: "\${{ units.database.outputs.url }}"}\nscript: 'echo "migrate $DATABASE_URL" >> ${log}'`,
      app: `dependsOn: [database]\n${logs(log, 'app')}`,
      other: logs(log, 'other'),
      tweak: `run: [sh, -c, 'echo "tweak $1" >> ${log}', nyl-tweak, ${argvTag}]`,
    });

  test('a re-run executes nothing and writes nothing; source changes execute exactly what changed', () => {
    const ctx = setup(unitsV());
    const first = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(logLines(ctx.log, { clear: true }).length, 5);

    // Nothing changed: all current, no commit on either branch, no unit ran.
    const counts = stateCounts(ctx.bare);
    const refs = refsUnder(ctx.bare);
    const again = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(results(again.json), { database: 'current', migrate: 'current', app: 'current', other: 'current', tweak: 'current' });
    assert.deepEqual(logLines(ctx.log), []);
    assert.deepEqual(stateCounts(ctx.bare), counts);
    assert.deepEqual(refsUnder(ctx.bare), refs, 'no ref of the state repository moved');
    assert.equal(again.json.committed, false);
    assert.equal(again.json.desired, first.json.desired);
    assert.equal(again.json.observed, first.json.observed);
    assert.doesNotMatch(again.stderr, /starting/);
    const text = reconcile(ctx.project);
    assert.equal(text.code, 0);
    assert.deepEqual(
      table(text.stdout).rows.map((row) => row[2]),
      ['current', 'current', 'current', 'current', 'current'],
    );

    // One unit's argv changes: only it runs.
    changeUnits(ctx, unitsV({ argvTag: 'x2' }));
    const argv = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(argv.code, 0, argv.stderr);
    assert.deepEqual(logLines(ctx.log, { clear: true }), ['tweak x2']);
    assert.deepEqual(results(argv.json), { database: 'current', migrate: 'current', app: 'current', other: 'current', tweak: 'executed' });
    assert.deepEqual(stateCounts(ctx.bare), { desired: counts.desired + 1, observed: counts.observed + 1 });
    assert.equal(argv.json.units.tweak.uid, first.json.units.tweak.uid, 'the same incarnation');
    assert.notEqual(argv.json.units.tweak.executionKey, first.json.units.tweak.executionKey);
    assert.match(argv.stderr, /^\[dev\/tweak\] starting Command \(reconcile\): spec field run changed$/m);

    // The producer changes but its outputs do not: only the producer runs.
    changeUnits(ctx, unitsV({ argvTag: 'x2', dbExtra: ' # same outputs' }));
    const same = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(same.code, 0, same.stderr);
    assert.deepEqual(logLines(ctx.log, { clear: true }), ['database']);
    assert.deepEqual(results(same.json), { database: 'executed', migrate: 'current', app: 'current', other: 'current', tweak: 'current' });

    // The producer's output value changes: it and its consumer run; `app` (dependsOn only) does not.
    changeUnits(ctx, unitsV({ argvTag: 'x2', url: 'postgres://v2' }));
    const out = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(logLines(ctx.log, { clear: true }), ['database', 'migrate postgres://v2']);
    assert.deepEqual(results(out.json), { database: 'executed', migrate: 'executed', app: 'current', other: 'current', tweak: 'current' });
    assert.deepEqual(out.json.unitOrder.slice(0, 2), ['database', 'migrate']);

    // And again nothing.
    const still = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(still.code, 0);
    assert.deepEqual(logLines(ctx.log), []);
    assert.equal(still.json.committed, false);
  });
});

describe('status after a run', () => {
  test('pending before the first run (exit 2), failed/pending after a failure (exit 3), current when fixed (exit 0)', () => {
    const units = (broken) => (log) => ({
      ok: logs(log, 'ok'),
      broken: broken ? `script: 'echo broken >> ${log}; exit 1'` : logs(log, 'broken'),
      waiter: `dependsOn: [broken]\n${logs(log, 'waiter')}`,
    });
    const ctx = setup(units(true));
    const status = () => nyl(ctx.project, ['status', '-e', 'dev', '-o', 'json']);
    const states = (r) => Object.fromEntries(Object.entries(r.json.units).map(([n, u]) => [n, u.state]));

    const initial = status();
    assert.equal(initial.code, 2, initial.stdout + initial.stderr);
    assert.deepEqual(states(initial), { ok: 'pending', broken: 'pending', waiter: 'pending' });

    assert.equal(reconcile(ctx.project).code, 3);
    const failed = status();
    assert.equal(failed.code, 3, failed.stdout);
    assert.deepEqual(states(failed), { ok: 'current', broken: 'failed', waiter: 'pending' });
    assert.equal(failed.json.units.ok.receipt, 'current');
    assert.equal(failed.json.units.broken.receipt, 'none');
    assert.equal(failed.json.units.broken.condition.type, 'failed');
    assert.deepEqual(
      failed.json.units.waiter.waits.map((w) => w.unit),
      ['broken'],
    );
    const text = nyl(ctx.project, ['status', '-e', 'dev']);
    assert.equal(text.code, 3);
    assert.match(text.stdout, /^broken +Command +failed/m);

    changeUnits(ctx, units(false));
    assert.equal(reconcile(ctx.project).code, 0);
    const fixed = status();
    assert.equal(fixed.code, 0, fixed.stdout);
    assert.deepEqual(states(fixed), { ok: 'current', broken: 'current', waiter: 'current' });
    const remote = refsUnder(ctx.bare, 'refs/heads/nyl/');
    assert.equal(fixed.json.desired, remote['refs/heads/nyl/dev/desired']);
    assert.equal(fixed.json.observed, remote['refs/heads/nyl/dev/observed']);
  });
});

describe('invalid source', () => {
  // A document that does not parse declares nothing; references to it were reported as unknown
  // units, before the syntax error that caused them (issue 10, item 20).
  test('a YAML syntax error comes first, its unknown-unit fallout is not reported, other errors follow; exit 1; nothing written', () => {
    const ctx = setup((log) => ({ db: logs(log, 'db'), app: `dependsOn: [db]\n${logs(log, 'app')}` }));
    const before = { bare: refsUnder(ctx.bare), clone: refsUnder(ctx.project, 'refs/heads/nyl/'), lease: refsUnder(ctx.project, 'refs/nyl/') };
    const nylYamlText = fs.readFileSync(path.join(ctx.project, 'nyl.yaml'), 'utf8');
    const [envDoc] = nylYamlText.split('\n---\n');
    commitFiles(ctx.project, {
      'nyl.yaml': nylYaml(
        'apiVersion: nyl.io/v1\nkind: Project\nmetadata: {name: shop}\nspec: {include: ["units/*.yaml"]}',
        envDoc,
        command('app', `dependsOn: [db]\nenv: {URL: "\${{ units.db.outputs.url }}"}\n${logs(ctx.log, 'app')}`),
        command('late', `${logs(ctx.log, 'late')}\ntimeout: forever`),
      ),
      'units/db.yaml': `${command('db', logs(ctx.log, 'db'))}\n  env: {A: [b}\n`,
    });

    const r = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const where = r.json.errors.map((e) => [e.code, e.location?.file, e.location?.pointer]);
    assert.ok(where.length >= 2, JSON.stringify(r.json.errors));
    const syntax = where.filter(([, file]) => file === 'units/db.yaml');
    assert.deepEqual(where, [...syntax, ['NYL-SOURCE-INVALID', 'nyl.yaml', '/spec/timeout']], JSON.stringify(r.json.errors.map((e) => e.message)));
    assert.match(r.json.errors[0].message, /^YAML syntax error: /);
    assert.equal(r.json.errors[0].location.line, 6);
    assert.ok(r.json.errors[0].fix);
    assert.ok(
      r.json.errors.every((e) => !/unknown/.test(e.message)),
      JSON.stringify(r.json.errors.map((e) => e.message)),
    );

    const text = reconcile(ctx.project);
    assert.equal(text.code, 1);
    const blocks = [...(text.stdout + text.stderr).matchAll(/^error (NYL-[A-Z-]+).*\n(?: {2}.*\n)*? {2}at: (\S+)/gm)].map((m) => [m[1], m[2].split(':')[0]]);
    assert.deepEqual(blocks, [...syntax.map(() => ['NYL-SOURCE-INVALID', 'units/db.yaml']), ['NYL-SOURCE-INVALID', 'nyl.yaml']], text.stdout + text.stderr);

    assert.deepEqual(logLines(ctx.log), []);
    assert.deepEqual(
      { bare: refsUnder(ctx.bare), clone: refsUnder(ctx.project, 'refs/heads/nyl/'), lease: refsUnder(ctx.project, 'refs/nyl/') },
      before,
      'nothing written',
    );
  });
});
