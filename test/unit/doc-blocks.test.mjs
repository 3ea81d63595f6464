// The reader and matcher of runnable doc examples (test/support/doc-blocks.mjs): that a changed
// output line, a missing line or a command in the wrong place is a mismatch, and what varies
// from run to run is not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { docScript, docSteps, outputMismatch } from '../support/doc-blocks.mjs';

const page = [
  'Intro.',
  '',
  '```sh',
  'mkdir a && cd a',
  'cat > f <<EOF',
  'x',
  'EOF',
  'echo one \\',
  '  two',
  '```',
  '',
  '<!-- doc-test: write nyl.yaml -->',
  '```yaml',
  'kind: Environment',
  '```',
  '',
  '```console',
  '$ nyl plan -e dev',
  'UNIT  ACTION',
  '...',
  '$ echo $?',
  '2',
  '```',
  '',
  '<!-- doc-test: skip needs a Git host -->',
  '```sh',
  'nyl doctor host https://example.com/x.git',
  '```',
  '',
  '```yaml',
  'not: run',
  '```',
].join('\n');

test('docSteps: sh commands with heredocs and continuations, written files, console outputs, skips', () => {
  const { steps, skipped } = docSteps(page);
  assert.deepEqual(
    steps.map((s) => s.command),
    [
      'mkdir a && cd a',
      'cat > f <<EOF\nx\nEOF',
      'echo one \\\n  two',
      "cat > nyl.yaml <<'__DOC_EOF__'\nkind: Environment\n__DOC_EOF__",
      'nyl plan -e dev',
      'echo $?',
    ],
  );
  assert.deepEqual(steps[4].expected, ['UNIT  ACTION', '...']);
  assert.equal(steps[0].expected, undefined);
  assert.deepEqual(skipped, [{ line: 26, why: 'needs a Git host' }]);
});

test('docScript: a command that must succeed stops the script; one whose exit `echo $?` shows does not', () => {
  const { steps } = docSteps(page);
  const script = docScript(steps, '/out');
  const stops = script.split('\n').filter((l) => l.includes('exit 100')).length;
  assert.equal(stops, steps.length - 1, 'every step but the one before `echo $?` must exit 0');
});

test('outputMismatch: equal after normalizing ids, times, durations and spaces', () => {
  const shown = [
    '[dev/a] executed in 0.0s',
    '  run:      01a22a7b-a8a3-7f5e-af40-cece764e9ba1',
    '  source:   f4d7955a19b228f63d5b8d1732d75a1013dd44e1',
    'at 2026-11-30T03:24:37Z in /home/alice/x',
  ];
  const printed = [
    '[dev/a] executed in 1.3s',
    '  run: 01a252ec-52f7-7b75-a5a5-515e8ff91e15',
    '  source: 45e3176c2eaf6cedb3403b7af90fc4faf517feea',
    'at 2027-01-01T00:00:00Z in /tmp/h1/x',
    '',
  ];
  assert.equal(outputMismatch(shown, printed, '/tmp/h1'), undefined);
});

test('outputMismatch: a changed word, a missing line or an extra line is a mismatch', () => {
  const shown = ['UNIT  RESULT', 'a     executed', 'b     current'];
  assert.match(outputMismatch(shown, ['UNIT  RESULT', 'a     failed', 'b     current']), /shown line 2/);
  assert.match(outputMismatch(shown, ['UNIT  RESULT', 'a     executed']), /shown line 3/);
  assert.ok(outputMismatch(shown, ['UNIT  RESULT', 'a     executed', 'b     current', 'c     current']));
});

test('outputMismatch: `...` matches any number of lines, none included, but the lines around it still count', () => {
  const shown = ['head', '...', 'tail'];
  assert.equal(outputMismatch(shown, ['head', 'tail']), undefined);
  assert.equal(outputMismatch(shown, ['head', 'x', 'y', 'tail']), undefined);
  assert.ok(outputMismatch(shown, ['head', 'x', 'tale']));
  assert.ok(outputMismatch(shown, ['hat', 'tail']));
});
