// Debian's OpenSSH server on 127.0.0.1 as a test fixture: its own host key,
// authorized_keys, configuration and log in a temporary directory, on a free port, in a process
// group of its own under a watchdog (as the git daemon's: it dies with the test process, SIGKILL
// included). No system configuration is read or touched. startSshd() resolves undefined, with
// the reason, where sshd cannot run (not installed, or it refuses to start): callers skip.
//
// Clients log in as the user running the test with a key made here: sshEnv() gives git the ssh
// command (that key, no known_hosts, batch mode); connections() counts the TCP connections sshd
// accepted, from its log.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './git-daemon.mjs';
import { WATCHDOG } from './git-daemon.mjs';
import { killProcessGroup, tempDir, trackProcessGroup } from './git-fixtures.mjs';

const SSHD = '/usr/sbin/sshd';

// The daemon runs under the git daemon fixture's watchdog: its group is killed once the test process is gone.

function keygen(file) {
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ssh-keygen: ${r.stderr}`);
}

export async function startSshd() {
  if (!fs.existsSync(SSHD)) return { skip: `${SSHD} is not installed (apt-get install openssh-server)` };
  const dir = tempDir('nyl-sshd-');
  fs.chmodSync(dir, 0o700);
  keygen(path.join(dir, 'host_key'));
  keygen(path.join(dir, 'client_key'));
  fs.copyFileSync(path.join(dir, 'client_key.pub'), path.join(dir, 'authorized_keys'));
  const port = await freePort();
  const log = path.join(dir, 'sshd.log');
  const config = path.join(dir, 'sshd_config');
  fs.writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${path.join(dir, 'host_key')}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
      'StrictModes no',
      'UsePAM no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      'PermitRootLogin prohibit-password',
      'LogLevel VERBOSE',
      '',
    ].join('\n'),
  );
  // Run as root, sshd wants its empty privilege separation directory, which the package's own
  // service creates at each start (a runtime directory, no configuration): so does the fixture.
  if (process.getuid?.() === 0 && !fs.existsSync('/run/sshd')) fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const check = spawnSync(SSHD, ['-t', '-f', config], { encoding: 'utf8' });
  if (check.status !== 0) return { skip: `sshd refuses its test configuration: ${check.stderr.trim()}` };
  // -D: no daemon; -e: log to stderr (the log file); an absolute path, as sshd re-executes itself.
  const child = spawn('sh', ['-c', `${WATCHDOG.trim()}`, 'nyl-sshd', SSHD, '-D', '-e', '-f', config], {
    detached: true,
    stdio: ['pipe', 'ignore', fs.openSync(log, 'a')],
  });
  trackProcessGroup(child);
  child.unref();
  child.stdin.unref?.();
  const user = os.userInfo().username;
  const key = path.join(dir, 'client_key');
  const sshCommand = `ssh -i ${key} -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR`;
  const fixture = {
    port,
    dir,
    url: (repoPath) => `ssh://${user}@127.0.0.1:${port}${repoPath}`,
    /** What git needs to reach the server (the client key, no known_hosts). */
    sshEnv: () => ({ GIT_SSH_COMMAND: sshCommand }),
    /** TCP connections sshd accepted so far. */
    connections: () => (fs.readFileSync(log, 'utf8').match(/^Connection from 127\.0\.0\.1 port/gm) ?? []).length,
    log: () => fs.readFileSync(log, 'utf8'),
    stop: () => killProcessGroup(child, 'SIGTERM'),
  };
  // Wait until it answers a login.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = spawnSync('sh', ['-c', `${sshCommand} -p ${port} ${user}@127.0.0.1 true`], { encoding: 'utf8' });
    if (r.status === 0) return { sshd: fixture };
    if (Date.now() > deadline) {
      fixture.stop();
      return { skip: `sshd did not accept a login on 127.0.0.1:${port}: ${r.stderr.trim()} ${fixture.log().slice(-500)}` };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
