// End-to-end: -o json prints exactly one JSON document on stdout, also when the command line is
// refused before anything runs (an unknown option, a missing option value, an unknown command).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { NYL, cliEnv } from '../support/cli.mjs';

function run(args) {
  return spawnSync(process.execPath, [NYL, ...args], { env: cliEnv(), encoding: 'utf8' });
}

test('-o json on a refused command line: one JSON document with NYL-USAGE, exit 1', () => {
  for (const [args, kind] of [
    [['reconcile', '--bogus', '-o', 'json'], 'ReconcileReport'],
    [['status', '-e', 'dev', '--output=json', '--bogus'], 'StatusReport'],
    [['reconcile', '-e', 'dev', '-o', 'json', '--concurrency'], 'ReconcileReport'],
    [['frobnicate', '-o', 'json'], 'StateOperationReport'],
  ]) {
    const r = run(args);
    assert.equal(r.status, 1, `${args.join(' ')}: ${r.stderr}`);
    const doc = JSON.parse(r.stdout);
    assert.equal(doc.kind, kind, args.join(' '));
    assert.equal(doc.result, 'refused');
    assert.deepEqual(doc.errors.map((e) => e.code), ['NYL-USAGE'], args.join(' '));
    assert.ok(doc.errors[0].fix, 'with its fix');
  }
  const text = run(['reconcile', '--bogus']);
  assert.equal(text.stdout, '', 'without -o json the refusal stays on stderr');
  assert.match(text.stderr, /error NYL-USAGE/);
});
