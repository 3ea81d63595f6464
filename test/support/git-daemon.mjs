// A `git daemon` on 127.0.0.1 serving every repository under a base directory, pushes enabled.
//
// Invariants: the daemon runs in its own process group (spawned detached, under a small sh
// watchdog), which stop() kills as a whole (daemon and per-connection children); git-fixtures'
// exit/signal handlers kill it too, and the watchdog kills the group when the test process dies
// by SIGKILL, so no daemon outlives the test process even when a test forgets stop().

import { spawn } from 'node:child_process';
import net from 'node:net';
import { hermeticEnv, killProcessGroup, trackProcessGroup } from './git-fixtures.mjs';

/** Resolves a port that was free a moment ago (bind port 0 on 127.0.0.1, read it, release it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(port) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    const done = (ok) => {
      sock.destroy();
      resolve(ok);
    };
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
    sock.setTimeout(500, () => done(false));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Runs "$@" (the daemon) and kills the whole process group when stdin reaches EOF, i.e. when the
// test process is gone, even by SIGKILL, which no exit handler sees. Exits when the daemon does.
// (Background jobs of a non-interactive sh get /dev/null as stdin, hence the copy on fd 3.)
export const WATCHDOG = `
exec 3<&0
"$@" </dev/null 3<&- &
daemon=$!
( cat <&3 >/dev/null; kill -TERM 0 ) &
exec 3<&-
wait "$daemon"
status=$?
trap '' TERM
kill -TERM 0 2>/dev/null
exit $status
`;

async function startOnce(baseDir, port, timeoutMs) {
  const child = spawn(
    'sh',
    [
      '-c',
      WATCHDOG,
      'nyl-git-daemon',
      'git',
      'daemon',
      '--reuseaddr',
      `--base-path=${baseDir}`,
      '--export-all',
      '--enable=receive-pack',
      '--informative-errors',
      '--listen=127.0.0.1',
      `--port=${port}`,
      baseDir,
    ],
    { env: hermeticEnv(), detached: true, stdio: ['pipe', 'ignore', 'pipe'] },
  );
  trackProcessGroup(child);
  // Why unref: a test that forgets stop() must not hang its file; the exit handler kills the group.
  child.unref();
  child.stdin.unref?.();
  child.stderr.unref();
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  child.once('error', (err) => {
    stderr += String(err);
  });
  let gone = null;
  // 'close' (not 'exit'): stderr is complete by then, for the "address in use" check below.
  const exited = new Promise((resolve) =>
    child.once('close', (code, signal) => {
      gone = { code, signal };
      resolve(gone);
    }),
  );

  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !gone) {
    if (await canConnect(port)) {
      let stopping = null;
      const stop = () => {
        stopping ??= (async () => {
          if (!gone) {
            child.ref(); // keep the event loop alive until the close event arrives
            child.stderr.ref();
            killProcessGroup(child, 'SIGTERM');
            const timer = setTimeout(() => killProcessGroup(child, 'SIGKILL'), 2000);
            await exited;
            clearTimeout(timer);
          }
          // Per-connection children share the group; make sure none lingers.
          killProcessGroup(child, 'SIGKILL');
        })();
        return stopping;
      };
      return {
        port,
        pid: child.pid,
        url: (repoName) => `git://127.0.0.1:${port}/${String(repoName).replace(/^\/+/, '')}`,
        stop,
        get stderr() {
          return stderr;
        },
      };
    }
    await sleep(50);
  }
  const why = gone ? `exited (${gone.code ?? gone.signal})` : `did not accept connections within ${timeoutMs} ms`;
  if (!gone) {
    child.ref();
    child.stderr.ref();
    killProcessGroup(child, 'SIGKILL');
    await exited;
  }
  const err = new Error(`git daemon on 127.0.0.1:${port} ${why}: ${stderr.trim()}`);
  err.addressInUse = /in use/i.test(stderr);
  throw err;
}

/**
 * Starts `git daemon` exporting every repository under baseDir (receive-pack enabled) and waits
 * until it accepts connections (polls up to timeoutMs, default 10 s).
 * Returns { url(repoName) -> 'git://127.0.0.1:PORT/repoName', stop() -> Promise, port, pid, stderr }.
 */
export async function startGitDaemon(baseDir, { timeoutMs = 10000 } = {}) {
  let lastErr;
  // Why retries: another process may take the port between freePort() and the daemon's bind.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(baseDir, await freePort(), timeoutMs);
    } catch (err) {
      lastErr = err;
      if (!err.addressInUse) break;
    }
  }
  throw lastErr;
}
