// Proves the fix-text helpers (test/support/fix-texts.mjs) read a printed command the way sh and
// a reader would: words split on blanks, quotes kept together and removed, placeholders filled only
// where they are whole words, and fixes and diagnostics found in text output as in JSON.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { argvOf, diagnosticsOf, nylCommands, shellWords } from '../support/fix-texts.mjs';

test('shellWords: blanks split, quotes join and vanish, backslashes keep the next character', () => {
  assert.deepEqual(shellWords("nyl lease break -e dev --reason 'clock skew'"), ['nyl', 'lease', 'break', '-e', 'dev', '--reason', 'clock skew']);
  assert.deepEqual(shellWords('a "b c" d\\ e "x\\"y" \'$HOME\' "a\\\\b" "$x"'), ['a', 'b c', 'd e', 'x"y', '$HOME', 'a\\b', '$x']);
  assert.deepEqual(shellWords('--reason=""  pre"fix"post'), ['--reason=', 'prefixpost']);
  assert.deepEqual(shellWords('  '), []);
  assert.throws(() => shellWords('nyl --reason "open'), /unterminated "/);
  assert.throws(() => shellWords("nyl --reason 'open"), /unterminated '/);
});

test('argvOf: fills whole-word placeholders, refuses unfilled or embedded ones, and what is not nyl', () => {
  const fill = { '<why>': 'checked', '<run>': '01a0' };
  assert.deepEqual(argvOf('nyl recover -e dev --unit a --accept <run> --reason "<why>"', fill), [
    'recover',
    '-e',
    'dev',
    '--unit',
    'a',
    '--accept',
    '01a0',
    '--reason',
    'checked',
  ]);
  assert.throws(() => argvOf('nyl hold -e dev --unit <unit>', fill), /placeholder <unit>/);
  assert.throws(() => argvOf('nyl hold --reason=<why>', fill), /placeholder --reason=<why>/);
  assert.throws(() => argvOf('git log nyl/dev/desired'), /not a nyl command/);
});

test('nylCommands: the backticked spans that start with nyl, in order', () => {
  const fix = 'inspect it with `git log x`; publish with `nyl state move -e dev --from local`, or `nyl state init -e dev --fresh`; or `--accept <run>`';
  assert.deepEqual(nylCommands(fix), ['nyl state move -e dev --from local', 'nyl state init -e dev --fresh']);
});

test('diagnosticsOf: text blocks with units and fix, or the JSON lists', () => {
  const stderr =
    'error NYL-UNIT-UNKNOWN\n  the state of dev holds no unit b\n  fix: check the unit name with `nyl status -e dev`\n\nwarning NYL-UNIT-UNCERTAIN (a, b)\n  line one\n  line two\n  fix: check\n';
  assert.deepEqual(diagnosticsOf({ stdout: '', stderr }), [
    { severity: 'error', code: 'NYL-UNIT-UNKNOWN', message: 'the state of dev holds no unit b', fix: 'check the unit name with `nyl status -e dev`' },
    { severity: 'warning', code: 'NYL-UNIT-UNCERTAIN', units: ['a', 'b'], message: 'line one\nline two', fix: 'check' },
  ]);
  const json = { errors: [{ code: 'NYL-A' }], warnings: [{ code: 'NYL-B' }], notes: [{ code: 'NYL-C' }] };
  assert.deepEqual(
    diagnosticsOf({ json }).map((d) => d.code),
    ['NYL-A', 'NYL-B', 'NYL-C'],
  );
});
