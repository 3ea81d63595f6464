// Tool output as lines (src/exec/lines.ts) and where it goes (src/run/unit-output.ts): the bytes
// of every line are the tool's own, its text is decoded across chunk boundaries, a line without
// its newline is held only up to a bound, and every entry of a unit log ends with a newline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LineSplitter } from '../../dist/exec/lines.js';
import { UnitOutput } from '../../dist/run/unit-output.js';

/** Feeds `chunks` to a splitter (bound `max`, if given), then flushes it; returns what it emitted. */
function split(chunks, max) {
  const lines = [];
  const splitter = max === undefined ? new LineSplitter((l) => lines.push(l)) : new LineSplitter((l) => lines.push(l), max);
  for (const c of chunks) splitter.push(c);
  splitter.flush();
  return lines;
}

const bytesOf = (lines) => Buffer.concat(lines.map((l) => l.bytes));

test('every line keeps its bytes (an invalid byte, \\r\\n), its text is whole across chunks; the last line comes with flush', () => {
  const written = Buffer.concat([Buffer.from('bad '), Buffer.from([0xff]), Buffer.from('\r\nh\u00e9llo \u20ac\nlast')]);
  const euro = written.indexOf(0xe2);
  const lines = split([written.subarray(0, euro + 1), written.subarray(euro + 1, euro + 2), written.subarray(euro + 2)]);
  assert.deepEqual(
    lines.map((l) => l.text),
    ['bad \ufffd', 'h\u00e9llo \u20ac', 'last'],
  );
  assert.ok(bytesOf(lines).equals(written), 'the lines are the bytes written, in order');
  assert.deepEqual(
    lines.map((l) => l.bytes.toString('latin1')),
    ['bad \xff\r\n', Buffer.from('h\u00e9llo \u20ac\n').toString('latin1'), 'last'],
  );
});

test('a line longer than the bound is passed on in pieces, a character cut between two of them whole in the text', () => {
  const written = Buffer.from('abcdef\u20acghij\nnext\n');
  const chunks = [...written].map((b) => Buffer.from([b]));
  const lines = split(chunks, 7);
  assert.ok(bytesOf(lines).equals(written));
  assert.ok(
    lines.every((l) => l.bytes.length <= 7),
    'nothing longer than the bound is held',
  );
  assert.equal(lines.map((l) => l.text).join(''), 'abcdef\u20acghijnext');
  assert.ok(lines.map((l) => l.text).includes('next'));
});

test("a unit log: the tool's bytes between the start and end lines, every entry ending with a newline", () => {
  const dir = mkdtempSync(join(tmpdir(), 'nyl-output-'));
  try {
    const stderr = [];
    const output = new UnitOutput('dev', { quiet: false, logDir: dir }, (line) => stderr.push(line));
    output.event('u', 'starting');
    for (const line of split([Buffer.from('one\r\n'), Buffer.from([0xff]), Buffer.from(' unended')])) output.tool('u', line);
    output.event('u', 'executed');
    const log = readFileSync(join(dir, 'dev', 'u.log'));
    assert.equal(log.toString('latin1'), '[dev/u] starting\none\r\n\xff unended\n[dev/u] executed\n');
    assert.deepEqual(stderr, ['[dev/u] starting', '  [dev/u] one', '  [dev/u] \ufffd unended', '[dev/u] executed']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
