// End-to-end: -o json prints exactly one JSON document on stdout, also when the command line is
// refused before anything runs (an unknown option, a missing option value, an unknown command).
// nyl() also validates each document against its command's schema.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nyl } from '../support/cli.mjs';
import { tempDir } from '../support/git-fixtures.mjs';

const run = (args) => nyl(tempDir('nyl-refusal-'), args);

test('-o json on a refused command line: one JSON document with NYL-USAGE, exit 1', () => {
  for (const [args, kind] of [
    [['reconcile', '--bogus', '-o', 'json'], 'ReconcileReport'],
    [['status', '-e', 'dev', '--output=json', '--bogus'], 'StatusReport'],
    [['reconcile', '-e', 'dev', '-o', 'json', '--concurrency'], 'ReconcileReport'],
    [['frobnicate', '-o', 'json'], 'StateOperationReport'],
    [['-ojson'], 'StateOperationReport'],
    [['hold', '-o=json'], 'StateOperationReport'],
  ]) {
    const r = run(args);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    const doc = JSON.parse(r.stdout);
    assert.equal(doc.kind, kind, args.join(' '));
    assert.equal(doc.result, 'refused');
    assert.deepEqual(
      doc.errors.map((e) => e.code),
      ['NYL-USAGE'],
      args.join(' '),
    );
    assert.ok(doc.errors[0].fix, 'with its fix');
  }
  const text = run(['reconcile', '--bogus']);
  assert.equal(text.stdout, '', 'without -o json the refusal stays on stderr');
  assert.match(text.stderr, /error NYL-USAGE/);
});
