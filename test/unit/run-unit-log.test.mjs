// The files of --unit-log-dir (src/run/unit-output.ts) against what someone who can write in the
// log directory may plant there (issue 30, item 5): a symlink at a unit's log path or at DIR/ENV
// is not followed, a FIFO at a log path does not hold Nyl, a log file or DIR/ENV that is not this
// user's alone (another owner, a mode open to group or others) is not written to, and each is
// reported once, as a log that cannot be written; the directories Nyl creates are 0700, the files
// it creates 0600.
// The FIFO case runs in a child process with a timeout: a blocking open would hang this runner.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { foreignLogDir, foreignLogFile, UnitOutput } from '../../dist/run/unit-output.js';
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
  assert.match(
    stderr[1],
    /^nyl: warning: cannot write unit logs in .*\/dev, no more are written: .*\/dev\/u\.log is a symbolic link, which Nyl does not follow$/,
  );
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

// A file or DIR/ENV another user planted in a shared DIR is theirs: this user cannot make one, so
// the mode rule is tested with files of our own, and the owner rule on the checks themselves,
// given the stat another user's file would have.
test('a log file group or others may access (0666, as a planted one is): refused before a byte is written; one warning, no more logs', () => {
  const logs = tempDir();
  fs.mkdirSync(path.join(logs, 'dev'), { mode: 0o700 });
  const planted = path.join(logs, 'dev', 'u.log');
  fs.writeFileSync(planted, 'theirs\n');
  fs.chmodSync(planted, 0o666);
  const { out, stderr } = output(logs);
  out.event('u', 'starting');
  out.event('v', 'starting');
  assert.equal(fs.readFileSync(planted, 'utf8'), 'theirs\n');
  assert.equal(fs.existsSync(path.join(logs, 'dev', 'v.log')), false, 'no more logs for the run');
  assert.equal(stderr.filter((l) => l.startsWith('nyl: warning:')).length, 1, stderr.join('\n'));
  assert.match(
    stderr[1],
    /^nyl: warning: cannot write unit logs in .*\/dev, no more are written: .*\/dev\/u\.log has mode 0666: group or others may access it \(a log of ours is 0600\)$/,
  );
});

test('DIR/ENV group or others may write (0777): refused, nothing written in it', () => {
  const logs = tempDir();
  const dir = path.join(logs, 'dev');
  fs.mkdirSync(dir);
  fs.chmodSync(dir, 0o777);
  const { out, stderr } = output(logs);
  out.event('u', 'starting');
  assert.deepEqual(fs.readdirSync(dir), []);
  assert.match(stderr.at(-1), /\/dev has mode 0777: group or others may write in it$/);
});

test('an existing log file and DIR/ENV of 0600 and 0700 (and 0755 for DIR/ENV) of this user: appended to', () => {
  const logs = tempDir();
  fs.mkdirSync(path.join(logs, 'dev'));
  fs.chmodSync(path.join(logs, 'dev'), 0o755);
  const file = path.join(logs, 'dev', 'u.log');
  fs.writeFileSync(file, 'before\n', { mode: 0o600 });
  const { out, stderr } = output(logs);
  out.event('u', 'starting');
  assert.equal(fs.readFileSync(file, 'utf8'), 'before\n[dev/u] starting\n');
  assert.deepEqual(stderr, ['[dev/u] starting']);
});

test('a log file or DIR/ENV another user owns is refused, whatever its mode; without a uid to compare (no getuid) only the mode counts', () => {
  const me = 1000;
  assert.equal(foreignLogFile({ uid: 1001, mode: 0o100600 }, '/l/dev/u.log', me), '/l/dev/u.log is owned by uid 1001, not by this user (uid 1000)');
  assert.equal(foreignLogDir({ uid: 1001, mode: 0o40700 }, '/l/dev', me), '/l/dev is owned by uid 1001, not by this user (uid 1000)');
  assert.equal(foreignLogFile({ uid: me, mode: 0o100600 }, '/l/dev/u.log', me), undefined);
  assert.equal(
    foreignLogFile({ uid: me, mode: 0o100640 }, '/l/dev/u.log', me),
    '/l/dev/u.log has mode 0640: group or others may access it (a log of ours is 0600)',
  );
  assert.equal(foreignLogDir({ uid: me, mode: 0o40755 }, '/l/dev', me), undefined);
  assert.equal(foreignLogDir({ uid: me, mode: 0o40770 }, '/l/dev', me), '/l/dev has mode 0770: group or others may write in it');
  assert.equal(foreignLogFile({ uid: 1001, mode: 0o100600 }, '/l/dev/u.log', undefined), undefined);
});
