// End-to-end: what a Command unit's process gets and what `nyl reconcile` prints: outputs flowing
// from producer to consumer through env values and run argv, invalid outputs, values that never
// become shell text, the NYL_* variables, -o json versus text, and prefixed tool output.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { cleanupAll, git } from '../support/git-fixtures.mjs';
import { codes, nyl } from '../support/cli.mjs';
import { changeUnits, commitFiles, logLines, logs, reconcile, refsUnder, results, setup, stateCounts, table } from '../support/reconcile-helpers.mjs';

after(cleanupAll);

describe('outputs', () => {
  const DB_URL = 'postgres://db.internal:5432/app?sslmode=require';

  test('outputs flow through env values and run argv; the consumer depends on the producer', () => {
    const ctx = setup((log) => ({
      // Declared first, and sorting before database: only the reference orders them.
      app: ['env:', '  DATABASE_URL: "${{ units.database.outputs.url }}"', `script: 'echo "app $DATABASE_URL" >> ${log}'`].join('\n'),
      argv: [
        'run:',
        '  - sh',
        '  - -c',
        `  - 'echo "argv $1 $2" >> ${log}'`,
        '  - nyl-argv',
        '  - "${{ units.database.outputs.url }}"',
        '  - "port=${{ units.database.outputs.port }}"',
      ].join('\n'),
      database: ['script: |', `  echo database >> ${log}`, `  printf '{"url": "%s", "port": 5432}' '${DB_URL}' > "$NYL_OUTPUTS"`].join('\n'),
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
    assert.deepEqual(
      r.json.units.user.waits.map((w) => [w.unit, w.reason]),
      [['bad', 'no-current-receipt']],
    );
    assert.equal(r.json.units.fine.result, 'executed');
    assert.match(r.stderr, /^\[dev\/bad\] failed in \d+\.\ds: NYL_OUTPUTS/m);
    assert.deepEqual(refsUnder(ctx.bare, 'refs/nyl/'), {});
    const observed = parseYaml(git(ctx.bare, 'show', 'refs/heads/nyl/dev/observed:units/bad.yaml'));
    assert.equal(observed.condition.type, 'failed');
    assert.equal(observed.receipt, undefined, 'no receipt for a failed unit');
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
    assert.deepEqual(
      table(first.stdout).rows.map((r) => r[0]),
      ['aa', 'zz', 'yy', 'mm'],
    );

    changeUnits(ctx, units('v2'));
    const r = reconcile(ctx.project);
    assert.equal(r.code, 0, r.stderr);
    const t = table(r.stdout);
    assert.match(t.lines[0], /^UNIT {2,}KIND {2,}RESULT {2,}DETAIL$/);
    assert.deepEqual(
      t.rows.map((row) => row.slice(0, 3)),
      [
        ['aa', 'Command', 'executed'],
        ['mm', 'Command', 'executed'],
        ['zz', 'Command', 'current'],
        ['yy', 'Command', 'current'],
      ],
    );
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
        literal: [`env: {V: "$(touch ${dir}/pwned-env); ;rm -rf ${dir}/keep \`touch ${dir}/pwned-tick\`"}`, `script: 'printf %s "$V" > ${dir}/out-env'`].join(
          '\n',
        ),
        evil: ['script: |', `  printf '{"v": "$(touch ${dir}/pwned-output); ;rm -rf ${dir}/keep"}' > "$NYL_OUTPUTS"`].join('\n'),
        consumer: ['env: {W: "${{ units.evil.outputs.v }}"}', `script: 'printf %s "$W" > ${dir}/out-output'`].join('\n'),
        argv: ['env: {A: "; touch /nonexistent-nyl"}', `run: [sh, -c, 'printf %s "$1" > ${dir}/out-argv', nyl, "\${{ units.evil.outputs.v }}"]`].join('\n'),
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

  test('nyl plan warns NYL-SOURCE-SHELL-REFERENCE at file:line for a reference in the text of sh -c (run and teardown.run); none for env: or an argument after the script', () => {
    const ctx = setup((log) => ({
      p: `script: 'echo "{\\"x\\": \\"a\\"}" > "$NYL_OUTPUTS"'`,
      risky: [
        'run:',
        '  - /bin/sh',
        '  - -ec',
        `  - 'echo \${{ units.p.outputs.x }} >> ${log}'`,
        'teardown:',
        `  run: [bash, -c, 'rm -f \${{ units.p.outputs.x }}']`,
      ].join('\n'),
      'by-env': ['env: {X: "${{ units.p.outputs.x }}"}', `run: [sh, -c, 'echo "$X" >> ${log}']`].join('\n'),
      'by-argv': `run: [sh, -c, 'echo "$1" >> ${log}', sh, "\${{ units.p.outputs.x }}"]`,
    }));
    const lines = fs.readFileSync(`${ctx.project}/nyl.yaml`, 'utf8').split('\n');
    const lineOf = (text) => lines.findIndex((l) => l.includes(text)) + 1;
    const json = nyl(ctx.project, ['plan', '-e', 'dev', '-o', 'json']);
    assert.equal(json.code, 2, json.stdout + json.stderr);
    const warned = json.json.warnings.filter((w) => w.code === 'NYL-SOURCE-SHELL-REFERENCE');
    assert.deepEqual(
      warned.map((w) => [w.units, w.location.file, w.location.line, w.location.pointer]),
      [
        [['risky'], 'nyl.yaml', lineOf("- 'echo ${{"), '/spec/run/2'],
        [['risky'], 'nyl.yaml', lineOf('rm -f ${{'), '/spec/teardown/run/2'],
      ],
    );
    assert.match(warned[0].fix, /env: \{X: '\$\{\{ units\.p\.outputs\.x \}\}'\}/);
    assert.match(warned[0].fix, /"\$1"/);
    const text = nyl(ctx.project, ['plan', '-e', 'dev']);
    assert.equal(text.code, 2);
    assert.match(
      text.stdout + text.stderr,
      new RegExp(`warning NYL-SOURCE-SHELL-REFERENCE \\(risky\\)\\n.*\\n  at: nyl\\.yaml:${lineOf("- 'echo ${{")}:\\d+ /spec/run/2\\n  fix: .*env:`),
    );
    assert.doesNotMatch(text.stdout + text.stderr, /NYL-SOURCE-SHELL-REFERENCE \(by-/);
    // The run that executes it warns the same; --unit narrows the warnings to the units it runs.
    const run = reconcile(ctx.project, ['-o', 'json']);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      run.json.warnings.filter((w) => w.code === 'NYL-SOURCE-SHELL-REFERENCE').map((w) => w.location.pointer),
      ['/spec/run/2', '/spec/teardown/run/2'],
    );
    const one = reconcile(ctx.project, ['--unit', 'by-env', '-o', 'json']);
    assert.deepEqual(
      one.json.warnings.filter((w) => w.code === 'NYL-SOURCE-SHELL-REFERENCE'),
      [],
    );
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
