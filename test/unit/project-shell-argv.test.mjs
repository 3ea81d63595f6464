// `run:` argv that hands shell text to a shell (`sh -c TEXT`, `bash -euc TEXT`, `/bin/sh -c`,
// `env sh -c`, `busybox sh -c`): which element is that text, and the warning
// NYL-SOURCE-SHELL-REFERENCE when a reference stands in it (in `run`, `teardown.run` and
// `check.run`), with its file, line and pointer and a fix that names env: and "$1". A reference
// in env:, or in an argv element after the script, is data and warns nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shellReferenceWarnings, shellTextIndex } from '../../dist/project/shell-argv.js';

const REF = 'echo ${{ units.p.outputs.x }}';

test('shellTextIndex: the text after -c of a shell, by basename, with combined flags and options before or after -c', () => {
  const cases = [
    [['sh', '-c', REF], 2],
    [['/bin/sh', '-c', REF], 2],
    [['/usr/local/bin/bash', '-c', REF], 2],
    [['bash', '-ec', REF], 2],
    [['bash', '-euc', REF], 2],
    [['bash', '-c', '-e', REF], 3],
    [['bash', '-o', 'pipefail', '-c', REF], 4],
    [['bash', '-euo', 'pipefail', '-c', REF], 4],
    [['bash', '--norc', '-c', REF], 3],
    [['sh', '-c', '--', REF], 3],
    [['dash', '-c', REF], 2],
    [['zsh', '-c', REF], 2],
    [['ksh', '-c', REF], 2],
    [['mksh', '-c', REF], 2],
    [['ash', '-c', REF], 2],
    [['busybox', 'sh', '-c', REF], 3],
    [['/bin/busybox', 'ash', '-c', REF], 3],
    [['env', 'sh', '-c', REF], 3],
    [['/usr/bin/env', 'LC_ALL=C', '-i', 'bash', '-c', REF], 5],
    [['env', '-u', 'HOME', 'sh', '-c', REF], 5],
  ];
  for (const [run, index] of cases) assert.equal(shellTextIndex(run), index, JSON.stringify(run));
});

test('shellTextIndex: no shell text without -c, without a shell, or without the text', () => {
  const cases = [
    ['sh', REF],
    ['sh', './deploy.sh', REF],
    ['sh', '-e', REF],
    ['bash', '+c', REF],
    ['sh', '-c'],
    ['python3', '-c', REF],
    ['node', '-e', REF],
    ['echo', '-c', REF],
    ['./sh-wrapper', '-c', REF],
    ['shellcheck', '-c', REF],
    ['busybox', 'wget', '-c', REF],
    ['env', 'python3', '-c', REF],
    ['env'],
    [],
  ];
  for (const run of cases) assert.equal(shellTextIndex(run), undefined, JSON.stringify(run));
});

/** A Command unit as the loader builds it, with the source position of each spec string holding a reference. */
function unit(spec, locations, kind = 'Command') {
  return {
    kind,
    name: 'deploy',
    labels: {},
    origin: { file: 'units/deploy.yaml', line: 3, pointer: '', document: 0 },
    spec,
    dependsOn: ['p'],
    declaredDependsOn: [],
    references: [],
    locations,
  };
}

test('a reference in the shell text of run, teardown.run and check.run is a warning at its file, line and pointer; its fix names env: and "$1"', () => {
  const warnings = shellReferenceWarnings(
    unit(
      {
        run: ['sh', '-c', REF],
        teardown: { run: ['/bin/bash', '-euc', 'rm -rf "${{ units.p.outputs.dir }}" ${{ env.values.extra }}'] },
        check: { run: ['env', 'sh', '-c', 'test -e ${{ units.p.outputs.x }}'] },
      },
      { '/run/2': { line: 9, column: 11 }, '/teardown/run/2': { line: 12, column: 13 }, '/check/run/3': { line: 14, column: 5 } },
    ),
    'dev',
  );
  assert.deepEqual(
    warnings.map((w) => [w.code, w.severity, w.units, w.location]),
    [
      ['NYL-SOURCE-SHELL-REFERENCE', 'warning', ['deploy'], { file: 'units/deploy.yaml', line: 9, column: 11, pointer: '/spec/run/2' }],
      ['NYL-SOURCE-SHELL-REFERENCE', 'warning', ['deploy'], { file: 'units/deploy.yaml', line: 12, column: 13, pointer: '/spec/teardown/run/2' }],
      ['NYL-SOURCE-SHELL-REFERENCE', 'warning', ['deploy'], { file: 'units/deploy.yaml', line: 14, column: 5, pointer: '/spec/check/run/3' }],
    ],
  );
  const [run, teardown] = warnings;
  assert.match(run.message, /deploy/);
  assert.match(run.message, /sh -c/);
  assert.ok(run.message.includes('${{ units.p.outputs.x }}'), run.message);
  assert.ok(run.fix.includes("env: {X: '${{ units.p.outputs.x }}'}"), run.fix);
  assert.ok(run.fix.includes('"$X"'), run.fix);
  assert.ok(run.fix.includes(`run: [sh, -c, '... "$1" ...', sh, '\${{ units.p.outputs.x }}']`), run.fix);
  assert.ok(teardown.fix.includes('teardown:'), teardown.fix);
  assert.ok(teardown.fix.includes("env: {DIR: '${{ units.p.outputs.dir }}', EXTRA: '${{ env.values.extra }}'}"), teardown.fix);
  assert.ok(teardown.fix.includes('"$DIR"') && teardown.fix.includes('"$EXTRA"'), teardown.fix);
  assert.ok(teardown.fix.includes('"$1"') && teardown.fix.includes('"$2"'), teardown.fix);
  assert.match(teardown.message, /bash -c/);
});

test('no warning for a reference in env:, after the script, in the argv of a program that is no shell, or in another kind', () => {
  const none = [
    unit({ env: { X: '${{ units.p.outputs.x }}' }, run: ['sh', '-c', 'echo "$X"'] }, {}),
    unit({ run: ['sh', '-c', 'echo "$1"', 'sh', '${{ units.p.outputs.x }}'] }, { '/run/4': { line: 5, column: 3 } }),
    unit({ run: ['./bin/migrate', '--url', '${{ units.p.outputs.x }}'] }, { '/run/2': { line: 5, column: 3 } }),
    unit({ run: ['sh', './deploy.sh', '${{ units.p.outputs.x }}'] }, { '/run/2': { line: 5, column: 3 } }),
    unit({ script: 'echo "$X"', env: { X: '${{ units.p.outputs.x }}' }, teardown: { script: 'true' } }, {}),
    unit({ image: 'alpine:3', command: ['sh', '-c', REF] }, { '/command/2': { line: 5, column: 3 } }, 'OciImage'),
  ];
  for (const u of none) assert.deepEqual(shellReferenceWarnings(u, 'dev'), [], JSON.stringify(u.spec));
});

test('a unit built in code (no source positions) is warned about at its document', () => {
  const [w] = shellReferenceWarnings(unit({ run: ['sh', '-c', REF] }, undefined), 'dev');
  assert.deepEqual(w.location, { file: 'units/deploy.yaml', line: 3, pointer: '/spec/run/2' });
});
