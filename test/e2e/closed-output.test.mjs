// End-to-end: nobody reads the output (`nyl reconcile -e dev | head -1`). The run must not die
// of it: it finishes as it would have, records everything, and exits with the code it would have
// had. Before, the first write after the pipe closed ended the process with exit 0, abandoning
// its lease and run ref and leaving its units uncertain.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cleanupAll } from '../support/git-fixtures.mjs';
import { NYL, cliEnv, nyl } from '../support/cli.mjs';
import { logLines, setup } from '../support/reconcile-helpers.mjs';

after(cleanupAll);

/** Runs nyl with both output pipes closed by the reader after the first chunk; resolves its exit code. */
function runUnread(cwd, args) {
  const child = spawn(process.execPath, [NYL, ...args], { cwd, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const close = () => {
    child.stdout.destroy();
    child.stderr.destroy();
  };
  child.stdout.once('data', close);
  child.stderr.once('data', close);
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
}

test('a run whose output nobody reads finishes, records everything and exits with its own code', async () => {
  const ctx = setup((log) => ({
    a: `script: 'echo a; echo a >> ${log}'`,
    b: `dependsOn: [a]\nscript: 'sleep 0.2; echo b; echo b >> ${log}'`,
    c: `dependsOn: [b]\nscript: 'echo c >> ${log}; exit 3'`,
  }));
  const r = await runUnread(ctx.project, ['reconcile', '-e', 'dev']);
  assert.deepEqual(r, { code: 3, signal: null }, 'c failed: exit 3, as with a reader');
  assert.deepEqual(logLines(ctx.log), ['a', 'b', 'c']);
  const st = nyl(ctx.project, ['status', '-e', 'dev', '-o', 'json']);
  assert.equal(st.json.lease, undefined, 'the lease was released');
  assert.deepEqual(Object.fromEntries(Object.entries(st.json.units).map(([n, u]) => [n, u.state])), { a: 'current', b: 'current', c: 'failed' });
});
