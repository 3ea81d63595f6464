// A unit cannot crash or hang Nyl through the files Nyl reads or writes for it (issue 30, item 5).
// - $NYL_OUTPUTS replaced by a FIFO blocked Nyl forever (deaf to SIGTERM and the unit's timeout,
//   its lease held); a symlink to /dev/zero aborted it (out of memory). Now each fails its unit
//   with a reason, and the run ends as any run with a failed unit does.
// - A symlink planted at a --unit-log-dir path made Nyl append to the file it points to. Now it
//   is not followed; the directories Nyl creates are 0700 and the log files 0600.
// Real processes: the built CLI, `sh`, a bare state repository over file://. Every run is
// guarded by a timeout, so that a hang fails its test rather than the suite.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { cleanupAll, git, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { command, environment, nyl, nylAsync, nylYaml } from '../support/cli.mjs';

after(cleanupAll);

/** How long a run here may take before it counts as hung. */
const GUARD_MS = 60_000;

/** Runs nyl asynchronously; kills it (SIGKILL) and throws when it takes longer than GUARD_MS. */
async function guarded(cwd, args) {
  const h = nylAsync(cwd, args, { validateJson: false });
  let timer;
  const hung = new Promise((_, reject) => {
    timer = setTimeout(() => {
      h.child.kill('SIGKILL');
      reject(new Error(`nyl ${args.join(' ')} still ran after ${GUARD_MS} ms: it hung`));
    }, GUARD_MS);
  });
  try {
    return await Promise.race([h.done, hung]);
  } finally {
    clearTimeout(timer);
  }
}

function project(...units) {
  const bare = makeBareRepo();
  const dir = makeProject({ 'nyl.yaml': nylYaml(environment('dev', `state:\n  repository: {repoURL: "${pathToFileURL(bare).href}"}`), ...units) });
  assert.equal(nyl(dir, ['state', 'init', '-e', 'dev']).code, 0);
  return { bare, dir };
}

const script = (...lines) => `script: |\n${lines.map((l) => `  ${l}`).join('\n')}`;

test('$NYL_OUTPUTS replaced by a FIFO or by a symlink to /dev/zero: each unit fails with the reason, the run ends and releases its lease', {
  timeout: GUARD_MS + 10_000,
}, async () => {
  const { bare, dir } = project(
    command('fifo', script('rm -f "$NYL_OUTPUTS"', 'mkfifo "$NYL_OUTPUTS"')),
    command('zero', script('rm -f "$NYL_OUTPUTS"', 'ln -s /dev/zero "$NYL_OUTPUTS"')),
    command('fine', script(`printf '{"a": 1}' > "$NYL_OUTPUTS"`)),
  );
  const r = await guarded(dir, ['reconcile', '-e', 'dev', '-o', 'json']);
  assert.equal(r.code, 3, `exit ${r.code} ${r.signal ?? ''}\n${r.stderr.slice(-3000)}`);
  assert.equal(r.json.units.fine.result, 'executed');
  assert.equal(r.json.units.fifo.result, 'failed');
  assert.match(r.json.units.fifo.detail, /^NYL_OUTPUTS is a FIFO \(named pipe\), not a regular file; it was not read$/);
  assert.equal(r.json.units.zero.result, 'failed');
  assert.match(r.json.units.zero.detail, /^NYL_OUTPUTS is a symbolic link, which Nyl does not follow/);
  const observed = parseYaml(git(bare, 'show', 'refs/heads/nyl/dev/observed:units/fifo.yaml'));
  assert.equal(observed.condition.retryable, true, 'a retryable failure: the next reconcile runs the unit again');
  assert.equal(git(bare, 'for-each-ref', 'refs/nyl/'), '', 'no lease or run ref is left: the run ended');
});

test('--unit-log-dir: directories Nyl creates are 0700, log files 0600; a symlink at a log path is not followed', {
  timeout: 2 * GUARD_MS + 10_000,
}, async () => {
  // talk fails, so that every reconcile runs it again and writes its log.
  const { dir } = project(command('talk', script('echo "tool line"', 'exit 3')));
  const logs = path.join(tempDir(), 'logs');
  const first = await guarded(dir, ['reconcile', '-e', 'dev', '--unit-log-dir', logs]);
  assert.equal(first.code, 3, first.stderr);
  const log = path.join(logs, 'dev', 'talk.log');
  assert.match(fs.readFileSync(log, 'utf8'), /tool line/);
  const mode = (p) => fs.lstatSync(p).mode & 0o777;
  assert.deepEqual([mode(logs), mode(path.join(logs, 'dev')), mode(log)], [0o700, 0o700, 0o600]);

  const outside = path.join(tempDir(), 'outside.txt');
  fs.writeFileSync(outside, 'precious\n');
  fs.rmSync(log);
  fs.symlinkSync(outside, log);
  const second = await guarded(dir, ['reconcile', '-e', 'dev', '--unit-log-dir', logs]);
  assert.equal(second.code, 3, second.stderr);
  assert.equal(fs.readFileSync(outside, 'utf8'), 'precious\n', 'nothing was appended through the symlink');
  assert.ok(fs.lstatSync(log).isSymbolicLink(), 'the symlink is left as it was');
  assert.match(second.stderr, /^nyl: warning: cannot write unit logs in .*: .*talk\.log is a symbolic link, which Nyl does not follow/m);
  assert.match(second.stderr, /^ {2}\[dev\/talk\] tool line$/m, 'the tool line still reaches stderr');
});
