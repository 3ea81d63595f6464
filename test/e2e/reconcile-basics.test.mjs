// End-to-end: `nyl reconcile` of Command units through the built CLI, with state in a file://
// bare repository: dependency order, transition commits, failures and blocking, re-runs that do
// nothing, and `nyl status` after a run. Units append to a log file so that the tests see what
// ran, in which order and how many times.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { cleanupAll, git } from '../support/git-fixtures.mjs';
import { codes, nyl } from '../support/cli.mjs';
import {
  changeUnits, commitFiles, logLines, logs, message, reconcile, refsUnder, results, setup, stateCounts, table, trailer,
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
  assert.match(msg.split('\n')[0], /^nyl: reconcile dev( \(.+\))?$/, msg);
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
    const again = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(again.code, 3, again.stderr);
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

describe('outputs', () => {
  const DB_URL = 'postgres://db.internal:5432/app?sslmode=require';

  test('outputs flow through env values and run argv; the consumer depends on the producer', () => {
    const ctx = setup((log) => ({
      // Declared first, and sorting before database: only the reference orders them.
      app: [
        'env:',
        '  DATABASE_URL: "${{ units.database.outputs.url }}"',
        `script: 'echo "app $DATABASE_URL" >> ${log}'`,
      ].join('\n'),
      argv: [
        'run:',
        '  - sh',
        '  - -c',
        `  - 'echo "argv $1 $2" >> ${log}'`,
        '  - nyl-argv',
        '  - "${{ units.database.outputs.url }}"',
        '  - "port=${{ units.database.outputs.port }}"',
      ].join('\n'),
      database: [
        'script: |',
        `  echo database >> ${log}`,
        `  printf '{"url": "%s", "port": 5432}' '${DB_URL}' > "$NYL_OUTPUTS"`,
      ].join('\n'),
    }));
    const r = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const ran = logLines(ctx.log);
    assert.equal(ran[0], 'database', ran.join('\n'));
    assert.deepEqual(ran.slice(1).sort(), [`app ${DB_URL}`, `argv ${DB_URL} port=5432`]);
    assert.deepEqual(r.json.units.database.outputs, ['port', 'url']);
    assert.deepEqual(results(r.json), { database: 'executed', app: 'executed', argv: 'executed' });
    const receipt = parseYaml(git(ctx.bare, 'show', 'refs/heads/nyl/dev/observed:units/database.yaml'));
    assert.deepEqual(receipt.receipt.outputs, { url: DB_URL, port: 5432 });
  });

  test('invalid JSON in NYL_OUTPUTS fails the unit with a clear reason; its consumers wait; exit 3', () => {
    const ctx = setup((log) => ({
      bad: `script: 'echo bad >> ${log}; echo "url=not json" > "$NYL_OUTPUTS"'`,
      list: `script: 'echo list >> ${log}; echo "[1, 2]" > "$NYL_OUTPUTS"'`,
      user: `env: {URL: "\${{ units.bad.outputs.url }}"}\n${logs(log, 'user')}`,
      fine: logs(log, 'fine'),
    }));
    const r = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(r.code, 3, r.stdout + r.stderr);
    assert.doesNotMatch(r.stderr, /^\s+at .*\.js:\d+/m, 'no stack trace');
    assert.deepEqual(logLines(ctx.log).sort(), ['bad', 'fine', 'list']);
    assert.equal(r.json.units.bad.result, 'failed');
    assert.match(r.json.units.bad.detail, /NYL_OUTPUTS/);
    assert.match(r.json.units.bad.detail, /JSON/);
    assert.equal(r.json.units.list.result, 'failed');
    assert.match(r.json.units.list.detail, /NYL_OUTPUTS.*JSON object/);
    assert.equal(r.json.units.user.result, 'blocked');
    assert.deepEqual(r.json.units.user.waits.map((w) => [w.unit, w.reason]), [['bad', 'no-current-receipt']]);
    assert.equal(r.json.units.fine.result, 'executed');
    assert.match(r.stderr, /^\[dev\/bad\] failed in \d+\.\ds: NYL_OUTPUTS/m);
    assert.deepEqual(refsUnder(ctx.bare, 'refs/nyl/'), {});
    const observed = parseYaml(git(ctx.bare, 'show', 'refs/heads/nyl/dev/observed:units/bad.yaml'));
    assert.equal(observed.condition.type, 'failed');
    assert.equal(observed.receipt, undefined, 'no receipt for a failed unit');
  });
});

describe('re-runs and source changes', () => {
  const unitsV = ({ url = 'postgres://v1', dbExtra = '', argvTag = 'x1' } = {}) => (log) => ({
    database: [
      'script: |',
      `  echo database >> ${log}${dbExtra}`,
      `  printf '{"url": "%s"}' '${url}' > "$NYL_OUTPUTS"`,
    ].join('\n'),
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
    assert.deepEqual(table(text.stdout).rows.map((row) => row[2]), ['current', 'current', 'current', 'current', 'current']);

    // One unit's argv changes: only it runs.
    changeUnits(ctx, unitsV({ argvTag: 'x2' }));
    const argv = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(argv.code, 0, argv.stderr);
    assert.deepEqual(logLines(ctx.log, { clear: true }), ['tweak x2']);
    assert.deepEqual(results(argv.json), { database: 'current', migrate: 'current', app: 'current', other: 'current', tweak: 'executed' });
    assert.deepEqual(stateCounts(ctx.bare), { desired: counts.desired + 1, observed: counts.observed + 1 });
    assert.equal(argv.json.units.tweak.uid, first.json.units.tweak.uid, 'the same incarnation');
    assert.notEqual(argv.json.units.tweak.executionKey, first.json.units.tweak.executionKey);
    assert.match(argv.stderr, /^\[dev\/tweak\] starting Command \(reconcile\): execution key changed$/m);

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

describe('output streams', () => {
  test('-o json prints exactly one JSON document on stdout; unit lines go to stderr', () => {
    const ctx = setup((log) => ({
      talk: `script: 'echo talk >> ${log}; echo to-stdout; echo to-stderr >&2'`,
      quiet: `dependsOn: [talk]\n${logs(log, 'quiet')}`,
    }));
    const r = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    assert.equal(doc.apiVersion, 'nyl.io/v1');
    assert.equal(doc.kind, 'ReconcileReport');
    assert.equal(doc.environment, 'dev');
    for (const key of ['units', 'unitOrder', 'run', 'source', 'desired', 'observed', 'committed', 'errors', 'warnings']) {
      assert.ok(key in doc, `report has ${key}`);
    }
    assert.equal(r.stdout.trim().startsWith('{') && r.stdout.trim().endsWith('}'), true);
    assert.doesNotMatch(r.stdout, /\[dev\//, 'no unit line on stdout');
    assert.doesNotMatch(r.stdout, /to-stdout|to-stderr/, 'no tool output on stdout');
    assert.match(r.stderr, /^\[dev\/talk\] starting Command \(reconcile\): no receipt$/m);
    assert.match(r.stderr, /^\[dev\/talk\] executed in \d+\.\ds$/m);
    assert.match(r.stderr, /^ {2}\[dev\/talk\] to-stdout$/m);
    assert.match(r.stderr, /^ {2}\[dev\/talk\] to-stderr$/m);
    assert.match(r.stderr, /^\[dev\/quiet\] executed in \d+\.\ds$/m);
  });

  test('the text table: header, dispatched units in dispatch order, then the rest in dependency order, then run/source/desired/observed', () => {
    const units = (tag) => (log) => ({
      aa: `run: [sh, -c, 'echo aa >> ${log}', nyl, ${tag}]`,
      zz: logs(log, 'zz'),
      yy: `dependsOn: [zz]\n${logs(log, 'yy')}`,
      mm: `dependsOn: [yy]\nrun: [sh, -c, 'echo mm >> ${log}', nyl, ${tag}]`,
    });
    const ctx = setup(units('v1'));
    const first = reconcile(ctx.project);
    assert.equal(first.code, 0, first.stderr);
    // Dependency order (names break ties): aa, zz, yy, mm; all dispatched, in that order.
    assert.deepEqual(table(first.stdout).rows.map((r) => r[0]), ['aa', 'zz', 'yy', 'mm']);

    changeUnits(ctx, units('v2'));
    const r = reconcile(ctx.project);
    assert.equal(r.code, 0, r.stderr);
    const t = table(r.stdout);
    assert.match(t.lines[0], /^UNIT {2,}KIND {2,}RESULT {2,}DETAIL$/);
    assert.deepEqual(t.rows.map((row) => row.slice(0, 3)), [
      ['aa', 'Command', 'executed'],
      ['mm', 'Command', 'executed'],
      ['zz', 'Command', 'current'],
      ['yy', 'Command', 'current'],
    ]);
    // Columns are aligned: every row's KIND starts where the header's does.
    const kindAt = t.lines[0].indexOf('KIND');
    const resultAt = t.lines[0].indexOf('RESULT');
    for (const line of t.lines.slice(1)) {
      assert.equal(line.indexOf('Command'), kindAt, line);
      assert.match(line.slice(resultAt), /^(executed|current)/, line);
    }
    const head = git(ctx.project, 'rev-parse', 'HEAD');
    const remote = refsUnder(ctx.bare, 'refs/heads/nyl/');
    const lines = r.stdout.split('\n');
    const tail = lines.slice(lines.indexOf(t.lines[t.lines.length - 1]) + 1);
    assert.equal(tail[0], '', 'a blank line after the table');
    assert.match(tail[1], /^ {2}run: +[0-9a-f-]{36}$/);
    assert.equal(tail[2].replace(/ +/g, ' '), ` source: ${head}`);
    assert.equal(tail[3].replace(/ +/g, ' '), ` desired: ${remote['refs/heads/nyl/dev/desired']}`);
    assert.equal(tail[4].replace(/ +/g, ' '), ` observed: ${remote['refs/heads/nyl/dev/observed']}`);
    const valueAt = (l) => l.search(/\S+$/);
    assert.equal(new Set(tail.slice(1, 5).map(valueAt)).size, 1, 'the values are aligned');
    assert.doesNotMatch(r.stdout, /\[dev\//, 'unit lines are not on stdout');
  });

  test('tool output is indented and prefixed with the address on every line, stdout and stderr alike', () => {
    const talk = (tag) => (log) => ({
      talk: [
        'script: |',
        `  echo talk >> ${log}`,
        "  printf 'one\\ntwo\\n\\nthree\\n'",
        "  printf 'err one\\nerr two\\n' >&2",
        "  printf 'no newline at the end'",
        `  true ${tag}`,
      ].join('\n'),
    });
    const ctx = setup(talk('v0'));
    for (const [i, output] of [[], ['-o', 'json']].entries()) {
      if (i > 0) changeUnits(ctx, talk(`v${i}`));
      const r = reconcile(ctx.project, [...output]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(logLines(ctx.log, { clear: true }), ['talk'], r.stderr);
      assert.match(r.stderr, /^ {2}\[dev\/talk\] one\n {2}\[dev\/talk\] two\n/m, r.stderr);
      assert.match(r.stderr, /^ {2}\[dev\/talk\] three$/m, r.stderr);
      assert.match(r.stderr, /^ {2}\[dev\/talk\] err one\n {2}\[dev\/talk\] err two$/m, r.stderr);
      assert.match(r.stderr, /^ {2}\[dev\/talk\] no newline at the end$/m, r.stderr);
      for (const line of r.stderr.split('\n')) {
        if (/one|two|three|newline/.test(line)) assert.match(line, /^ {2}\[dev\/talk\] /, `prefixed: ${JSON.stringify(line)}`);
      }
      assert.doesNotMatch(r.stdout, /err one|three|no newline at the end/, 'tool output is not on stdout');
    }
  });
});

describe('values never become shell text', () => {
  test('env values and outputs arrive literally as environment variables; nothing they contain runs', () => {
    const ctx = setup((log) => {
      const dir = log.replace(/\/log$/, '');
      return {
        literal: [
          `env: {V: "$(touch ${dir}/pwned-env); ;rm -rf ${dir}/keep \`touch ${dir}/pwned-tick\`"}`,
          `script: 'printf %s "$V" > ${dir}/out-env'`,
        ].join('\n'),
        evil: [
          'script: |',
          `  printf '{"v": "$(touch ${dir}/pwned-output); ;rm -rf ${dir}/keep"}' > "$NYL_OUTPUTS"`,
        ].join('\n'),
        consumer: [
          'env: {W: "${{ units.evil.outputs.v }}"}',
          `script: 'printf %s "$W" > ${dir}/out-output'`,
        ].join('\n'),
        argv: [
          'env: {A: "; touch /nonexistent-nyl"}',
          `run: [sh, -c, 'printf %s "$1" > ${dir}/out-argv', nyl, "\${{ units.evil.outputs.v }}"]`,
        ].join('\n'),
      };
    });
    fs.mkdirSync(`${ctx.dir}/keep`);
    const r = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const read = (f) => fs.readFileSync(`${ctx.dir}/${f}`, 'utf8');
    assert.equal(read('out-env'), `$(touch ${ctx.dir}/pwned-env); ;rm -rf ${ctx.dir}/keep \`touch ${ctx.dir}/pwned-tick\``);
    assert.equal(read('out-output'), `$(touch ${ctx.dir}/pwned-output); ;rm -rf ${ctx.dir}/keep`);
    assert.equal(read('out-argv'), `$(touch ${ctx.dir}/pwned-output); ;rm -rf ${ctx.dir}/keep`);
    for (const f of ['pwned-env', 'pwned-tick', 'pwned-output']) assert.equal(fs.existsSync(`${ctx.dir}/${f}`), false, `${f} was not created`);
    assert.equal(fs.existsSync(`${ctx.dir}/keep`), true, 'nothing was removed');
  });

  test('a reference inside script is refused with NYL-SOURCE-INVALID whose fix names env:; nothing runs', () => {
    const database = (log) => `script: 'echo database >> ${log}; echo "{\\"url\\": \\"x\\"}" > "$NYL_OUTPUTS"'`;
    const ctx = setup((log) => ({ database: database(log) }));
    changeUnits(ctx, (log) => ({
      database: database(log),
      migrate: `script: 'echo "\${{ units.database.outputs.url }}" >> ${log}'`,
    }));
    const before = stateCounts(ctx.bare);
    const r = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.deepEqual(codes(r), ['NYL-SOURCE-INVALID']);
    const err = r.json.errors[0];
    assert.match(err.fix, /env:/);
    assert.deepEqual(logLines(ctx.log), []);
    assert.deepEqual(stateCounts(ctx.bare), before);
    assert.deepEqual(refsUnder(ctx.bare, 'refs/nyl/'), {});
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
    assert.deepEqual(failed.json.units.waiter.waits.map((w) => w.unit), ['broken']);
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

describe('the process of a Command unit', () => {
  test('gets NYL_ENVIRONMENT, NYL_UNIT, NYL_RUN, NYL_UID and a writable NYL_OUTPUTS; workingDir is in the source commit, not the working tree', () => {
    const ctx = setup((log) => ({
      vars: `script: 'echo "$NYL_ENVIRONMENT|$NYL_UNIT|$NYL_RUN|$NYL_UID" >> ${log}; test -w "$(dirname "$NYL_OUTPUTS")"'`,
      wd: `workingDir: sub\nscript: 'echo "wd $(basename "$(pwd)") $(cat file.txt)" >> ${log}'`,
    }));
    commitFiles(ctx.project, { 'sub/file.txt': 'committed' }, 'add sub');
    fs.writeFileSync(`${ctx.project}/sub/file.txt`, 'uncommitted');
    const r = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(logLines(ctx.log).sort(), [`dev|vars|${r.json.run}|${r.json.units.vars.uid}`, 'wd sub committed']);
  });
});
