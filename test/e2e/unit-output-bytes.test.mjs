// Captured tool output keeps its bytes: a --unit-log-dir file holds exactly what the tool wrote
// (an invalid UTF-8 byte, CRLF line endings, a character whose bytes arrive in two writes), and
// every entry of the log ends with a newline, the tool's last unterminated line included. The
// prefixed lines on stderr are text: the split character is whole there too.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanupAll, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { command, environment, nyl, nylYaml } from '../support/cli.mjs';

after(cleanupAll);

// \377 is never UTF-8; \342\202 then \254 is the euro sign, written in two parts with a pause
// between, so that Nyl reads them apart.
const SCRIPT = [
  "printf 'bad \\377 byte\\n'",
  "printf 'crlf line\\r\\n'",
  "printf 'euro \\342\\202'",
  'sleep 0.3',
  "printf '\\254 end\\n'",
  "printf 'no newline at the end'",
];
const WRITTEN = Buffer.concat([
  Buffer.from('bad '),
  Buffer.from([0xff]),
  Buffer.from(' byte\ncrlf line\r\neuro '),
  Buffer.from([0xe2, 0x82, 0xac]),
  Buffer.from(' end\nno newline at the end'),
]);

/** Byte for byte; a failure shows both sides, one character per byte. */
function assertBytes(actual, expected, message) {
  const show = (b) => JSON.stringify(b.toString('latin1'));
  assert.ok(actual.equals(expected), `${message}:\n  actual   ${show(actual)}\n  expected ${show(expected)}`);
}

function project() {
  const bare = makeBareRepo();
  const dir = makeProject({
    'nyl.yaml': nylYaml(
      environment('dev', `state:\n  repository: {repoURL: "${pathToFileURL(bare).href}"}`),
      command('talk', `script: |\n${SCRIPT.map((l) => `  ${l}`).join('\n')}`),
    ),
  });
  assert.equal(nyl(dir, ['state', 'init', '-e', 'dev']).code, 0);
  return dir;
}

test('a unit log holds the bytes the tool wrote, between its start and end lines, each ending with a newline', () => {
  const dir = project();
  const logs = tempDir();
  const r = nyl(dir, ['reconcile', '-e', 'dev', '--unit-log-dir', logs]);
  assert.equal(r.code, 0, r.stderr);

  const log = fs.readFileSync(path.join(logs, 'dev', 'talk.log'));
  const start = Buffer.from('[dev/talk] starting Command (reconcile): no receipt\n');
  assertBytes(log.subarray(0, start.length), start, 'the start line first');
  const endAt = log.lastIndexOf('\n[dev/talk] executed in ') + 1;
  assert.ok(endAt > 0, log.toString('latin1'));
  assertBytes(log.subarray(start.length, endAt), Buffer.concat([WRITTEN, Buffer.from('\n')]), "the tool's bytes, its last line terminated");
  assert.match(log.subarray(endAt).toString('utf8'), /^\[dev\/talk\] executed in \d+\.\ds\n$/);
});

test('the prefixed lines on stderr are text: a character split across two reads is whole, line endings dropped', () => {
  const dir = project();
  const r = nyl(dir, ['reconcile', '-e', 'dev']);
  assert.equal(r.code, 0, r.stderr);
  const tool = r.stderr.split('\n').filter((l) => l.startsWith('  [dev/talk] '));
  assert.deepEqual(tool, ['  [dev/talk] bad \uFFFD byte', '  [dev/talk] crlf line', '  [dev/talk] euro \u20AC end', '  [dev/talk] no newline at the end']);
});
