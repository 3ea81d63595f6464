// The outputs file reader (src/drivers/outputs-file.ts), on files a unit may leave at
// $NYL_OUTPUTS (issue 30, items 5 and 7): a symlink (to /dev/zero once aborted Nyl: out of
// memory), a FIFO (once blocked Nyl forever, deaf to signals and timeouts), a directory, a file
// over the size limit are each refused with a clear reason, fast; a readable file gives its
// outputs; and whatever the result, the file is gone once read (a killed run left the values in
// $TMPDIR).
// The cases that hung or crashed Nyl run the reader in a child process with a timeout, so that a
// regression fails this test rather than hanging or crashing the test runner.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readOutputsFile } from '../../dist/drivers/outputs-file.js';
import { cleanupAll, tempDir } from '../support/git-fixtures.mjs';

after(cleanupAll);

const READER = fileURLToPath(new URL('../../dist/drivers/outputs-file.js', import.meta.url));
const LIMIT = 1024 * 1024;

/** readOutputsFile(file) in a child process that may take at most 5 s and 256 MiB: its result. */
function readInChild(file) {
  const script = `Promise.resolve(require(${JSON.stringify(READER)}).readOutputsFile(${JSON.stringify(file)})).then((r) => process.stdout.write(JSON.stringify(r)))`;
  const out = execFileSync(process.execPath, ['--max-old-space-size=256', '-e', script], {
    timeout: 5000,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(out);
}

/** True when path names anything, a dangling symlink included. */
function present(file) {
  try {
    fs.lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

test('a JSON object: its outputs (the sensitive form too); the file is removed once read', async () => {
  const file = path.join(tempDir(), 'u.outputs.json');
  fs.writeFileSync(file, JSON.stringify({ a: 1, token: { value: 's3cr3t', sensitive: true } }));
  assert.deepEqual(await readOutputsFile(file), { ok: true, outputs: { a: { value: 1, sensitive: false }, token: { value: 's3cr3t', sensitive: true } } });
  assert.equal(present(file), false, 'the values do not outlive the read');
});

test('a missing file: no outputs; invalid JSON: refused, and the file is removed all the same', async () => {
  const dir = tempDir();
  assert.deepEqual(await readOutputsFile(path.join(dir, 'none.json')), { ok: true, outputs: {} });
  const bad = path.join(dir, 'bad.json');
  fs.writeFileSync(bad, '{"password": "hunter2"');
  const read = await readOutputsFile(bad);
  assert.equal(read.ok, false);
  assert.match(read.reason, /^NYL_OUTPUTS holds invalid JSON/);
  assert.doesNotMatch(read.reason, /hunter2/);
  assert.equal(present(bad), false, 'a file that failed to parse is removed too');
});

test('a symlink to /dev/zero: refused as a symlink, without following it; the link is removed', () => {
  const file = path.join(tempDir(), 'u.outputs.json');
  fs.symlinkSync('/dev/zero', file);
  const read = readInChild(file);
  assert.equal(read.ok, false);
  assert.match(read.reason, /^NYL_OUTPUTS is a symbolic link, which Nyl does not follow/);
  assert.equal(present(file), false);
});

test('a symlink to a readable JSON file elsewhere: refused, the file it points to is neither read nor removed', async () => {
  const dir = tempDir();
  const elsewhere = path.join(dir, 'elsewhere.json');
  fs.writeFileSync(elsewhere, '{"a": 1}');
  const file = path.join(dir, 'u.outputs.json');
  fs.symlinkSync(elsewhere, file);
  const read = await readOutputsFile(file);
  assert.equal(read.ok, false);
  assert.match(read.reason, /symbolic link/);
  assert.equal(fs.readFileSync(elsewhere, 'utf8'), '{"a": 1}');
});

test('a FIFO (mkfifo): refused at once, not waited on; it is removed', () => {
  const file = path.join(tempDir(), 'u.outputs.json');
  execFileSync('mkfifo', [file]);
  const started = Date.now();
  const read = readInChild(file);
  assert.equal(read.ok, false);
  assert.match(read.reason, /^NYL_OUTPUTS is a FIFO \(named pipe\), not a regular file/);
  assert.ok(Date.now() - started < 4000);
  assert.equal(present(file), false);
});

test('a directory: refused as one (left for the run to remove)', async () => {
  const file = path.join(tempDir(), 'u.outputs.json');
  fs.mkdirSync(file);
  const read = await readOutputsFile(file);
  assert.equal(read.ok, false);
  assert.match(read.reason, /^NYL_OUTPUTS is a directory, not a regular file/);
});

test(`a file over the limit (${LIMIT} bytes): refused unread and removed; one of exactly the limit is read`, async () => {
  const dir = tempDir();
  const big = path.join(dir, 'big.json');
  fs.writeFileSync(big, Buffer.alloc(LIMIT + 1, 0x20));
  const read = await readOutputsFile(big);
  assert.equal(read.ok, false);
  assert.match(read.reason, /^NYL_OUTPUTS is 1048577 bytes, more than the 1 MiB the outputs of a unit may take; it was not read$/);
  assert.equal(present(big), false);
  const edge = path.join(dir, 'edge.json');
  const body = '{"a": 1}';
  fs.writeFileSync(edge, body + ' '.repeat(LIMIT - body.length));
  assert.deepEqual(await readOutputsFile(edge), { ok: true, outputs: { a: { value: 1, sensitive: false } } });
});
