// The files of --unit-log-dir (src/run/unit-output.ts) against what someone who can write in the
// log directory may plant there (issue 30, item 5): a symlink at a unit's log path or at DIR/ENV
// is not followed, a FIFO at a log path does not hold Nyl, and each is reported once, as a log
// that cannot be written; the directories Nyl creates are 0700, the files it creates 0600.
// The FIFO case runs in a child process with a timeout: a blocking open would hang this runner.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UnitOutput } from '../../dist/run/unit-output.js';
import { cleanupAll, tempDir } from '../support/git-fixtures.mjs';

after(cleanupAll);

const MODULE = fileURLToPath(new URL('../../dist/run/unit-output.js', import.meta.url));

/** A UnitOutput of environment dev logging under logDir; its stderr lines. */
function output(logDir) {
  const stderr = [];
  return { out: new UnitOutput('dev', { quiet: true, logDir }, (line) => stderr.push(line)), stderr };
}

const mode = (p) => fs.lstatSync(p).mode & 0o777;

test('a missing log directory is created 0700 (DIR and DIR/ENV), a log file 0600', () => {
  const logs = path.join(tempDir(), 'logs');
  const { out, stderr } = output(logs);
  out.event('u', 'starting');
  assert.deepEqual(stderr, ['[dev/u] starting']);
  assert.deepEqual([mode(logs), mode(path.join(logs, 'dev')), mode(path.join(logs, 'dev', 'u.log'))], [0o700, 0o700, 0o600]);
});

test('a symlink at a unit log path: not followed, the file it points to untouched; one warning, no more logs', () => {
  const logs = tempDir();
  fs.mkdirSync(path.join(logs, 'dev'));
  const outside = path.join(tempDir(), 'outside');
  fs.writeFileSync(outside, 'precious\n');
  fs.symlinkSync(outside, path.join(logs, 'dev', 'u.log'));
  const { out, stderr } = output(logs);
  out.event('u', 'starting');
  out.event('u', 'executed');
  assert.equal(fs.readFileSync(outside, 'utf8'), 'precious\n');
  assert.equal(stderr.filter((l) => l.startsWith('nyl: warning:')).length, 1, stderr.join('\n'));
  assert.match(stderr[1], /^nyl: warning: cannot write unit logs in .*\/dev, no more are written: .*\/dev\/u\.log is a symbolic link, which Nyl does not follow$/);
});

test('a symlink at DIR/ENV: not followed, nothing written where it points', () => {
  const logs = tempDir();
  const elsewhere = tempDir();
  fs.symlinkSync(elsewhere, path.join(logs, 'dev'));
  const { out, stderr } = output(logs);
  out.event('u', 'starting');
  assert.deepEqual(fs.readdirSync(elsewhere), []);
  assert.match(stderr.at(-1), /\/dev is a symbolic link, which Nyl does not follow$/);
});

test('a FIFO at a unit log path: refused at once, not waited on', () => {
  const logs = tempDir();
  fs.mkdirSync(path.join(logs, 'dev'));
  execFileSync('mkfifo', [path.join(logs, 'dev', 'u.log')]);
  const script = `const { UnitOutput } = require(${JSON.stringify(MODULE)}); new UnitOutput('dev', { quiet: true, logDir: ${JSON.stringify(logs)} }, (l) => console.log(l)).event('u', 'starting')`;
  const printed = execFileSync(process.execPath, ['-e', script], { timeout: 5000, encoding: 'utf8' });
  assert.match(printed, /u\.log is not a regular file\n$/);
});
