// End-to-end over ssh: Debian's OpenSSH server on 127.0.0.1 (test/support/sshd.mjs), run by the
// test with its own host key and authorized_keys. Every git call of a command reuses one ssh
// connection (src/git/ssh.ts: ControlMaster in a private directory removed afterwards), where
// each used to open its own: sshd's log counts the connections it accepted. Skipped, with the
// reason, where sshd cannot run.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { makeBareRepo, tempDir } from '../support/git-fixtures.mjs';
import { nyl } from '../support/cli.mjs';
import { changeUnits, setup } from '../support/reconcile-helpers.mjs';
import { startSshd } from '../support/sshd.mjs';

let sshd;
let skip;

before(async () => {
  const started = await startSshd();
  sshd = started.sshd;
  skip = started.skip;
  if (skip) console.log(`# skipped: ${skip}`);
});

after(() => sshd?.stop());

/** Runs nyl with the ssh client settings; returns its result, its remote git calls and the connections sshd accepted meanwhile. */
function counted(ctx, args, env = {}) {
  const stats = path.join(tempDir('nyl-stats-'), 'stats.jsonl');
  const before = sshd.connections();
  const r = nyl(ctx.project, args, { env: { ...sshd.sshEnv(), NYL_GIT_STATS: stats, TMPDIR: ctx.tmp, ...env } });
  const lines = fs.readFileSync(stats, 'utf8').trim().split('\n');
  return { r, remote: JSON.parse(lines[lines.length - 1]).remote, connections: sshd.connections() - before };
}

test('a command reuses one ssh connection for all its git calls, and removes its control directory', (t) => {
  if (skip) return t.skip(skip);
  const bare = makeBareRepo(path.join(tempDir('nyl-ssh-state-'), 'state.git'));
  // A short TMPDIR: the control sockets must fit a Unix socket's path (src/git/ssh.ts).
  const tmp = fs.mkdtempSync('/tmp/nyl-t-');
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const ctx = { ...setup({ a: 'run: ["true"]' }, { url: sshd.url(bare), bare, init: false }), tmp };
  const init = counted(ctx, ['state', 'init', '-e', 'dev']);
  assert.equal(init.r.code, 0, init.r.stderr);
  const run = counted(ctx, ['reconcile', '-e', 'dev']);
  assert.equal(run.r.code, 0, run.r.stderr);
  for (const [name, c] of [
    ['state init', init],
    ['reconcile', run],
  ]) {
    assert.ok(c.remote >= 3, `${name} made ${c.remote} ssh git calls`);
    assert.equal(c.connections, 1, `${name}: ${c.remote} git calls over ${c.connections} ssh connections`);
  }
  assert.deepEqual(
    fs.readdirSync(ctx.tmp).filter((f) => f.startsWith('nyl-ssh-')),
    [],
    'no control directory is left',
  );
  // Without multiplexing each call opens its own connection: what the count above is compared to.
  changeUnits(ctx, { a: 'run: ["true"]', b: 'run: ["true"]' });
  const plain = counted(ctx, ['reconcile', '-e', 'dev'], { NYL_SSH_MULTIPLEX: '0' });
  assert.equal(plain.r.code, 0, plain.r.stderr);
  assert.equal(plain.connections, plain.remote);
});
