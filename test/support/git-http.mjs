// Smart HTTP for tests: a small Node http server on 127.0.0.1 that runs `git http-backend` as a
// CGI program for every request, so that fetch, ls-remote and push work over http://.
//
// By default startGitHttp() runs the server in a child Node process (this file run as a script).
// Why: tests (and the CLI under test) often call git synchronously (execFileSync/spawnSync); an
// in-process server would be blocked by the very call it must answer, and the push would hang.
// The child runs in its own process group, exits when its stdin closes (the test process died),
// and is killed as a group by stop() and by git-fixtures' exit/signal handlers.

import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { hermeticEnv, killProcessGroup, trackProcessGroup } from './git-fixtures.mjs';
import { seededRandom } from './seeded.mjs';

const THIS_FILE = fileURLToPath(import.meta.url);
let backendPath = null;

function httpBackend() {
  backendPath ??= path.join(execFileSync('git', ['--exec-path'], { env: hermeticEnv(), encoding: 'utf8' }).trim(), 'git-http-backend');
  return backendPath;
}

/** Finds the end of the CGI header block; returns { headerEnd, bodyStart } or null. */
function findHeaderEnd(buf) {
  const crlf = buf.indexOf('\r\n\r\n');
  const lf = buf.indexOf('\n\n');
  if (crlf === -1 && lf === -1) return null;
  if (lf === -1 || (crlf !== -1 && crlf < lf)) return { headerEnd: crlf, bodyStart: crlf + 4 };
  return { headerEnd: lf, bodyStart: lf + 2 };
}

/**
 * Returns an http request handler that serves the repositories under projectRoot through
 * `git http-backend` (exported to everyone, pushes accepted as REMOTE_USER).
 * Only use it in-process when every git call against it is asynchronous.
 */
export function createGitHttpHandler(projectRoot, { remoteUser = 'nyl-test', onError } = {}) {
  const backend = httpBackend();
  return function handle(req, res) {
    const url = new URL(req.url, 'http://127.0.0.1');
    const extra = {
      GIT_PROJECT_ROOT: projectRoot,
      GIT_HTTP_EXPORT_ALL: '1',
      // Why: http-backend refuses receive-pack without an authenticated user unless forced on.
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.receivepack',
      GIT_CONFIG_VALUE_0: 'true',
      GATEWAY_INTERFACE: 'CGI/1.1',
      SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
      SERVER_SOFTWARE: 'nyl-test-git-http',
      SERVER_NAME: '127.0.0.1',
      SERVER_PORT: String(req.socket.localPort ?? ''),
      REMOTE_USER: remoteUser,
      REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
      REQUEST_METHOD: req.method,
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.replace(/^\?/, ''),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
    };
    if (req.headers['content-length'] !== undefined) extra.CONTENT_LENGTH = req.headers['content-length'];
    if (req.headers['content-encoding'] !== undefined) extra.HTTP_CONTENT_ENCODING = req.headers['content-encoding'];
    if (req.headers['git-protocol'] !== undefined) extra.GIT_PROTOCOL = req.headers['git-protocol'];

    const child = spawn(backend, [], { env: hermeticEnv(extra), stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.stdin.on('error', () => {
      /* backend may exit before reading the whole body */
    });
    child.on('error', (err) => {
      onError?.(err);
      if (!res.headersSent) {
        res.statusCode = 500;
        res.end(String(err));
      } else res.destroy();
    });
    req.pipe(child.stdin);
    // Client went away before the response ended: do not leave the backend running.
    res.on('close', () => {
      if (!res.writableFinished && child.exitCode === null) child.kill('SIGKILL');
    });

    let head = Buffer.alloc(0);
    let parsed = false;
    const onData = (chunk) => {
      head = Buffer.concat([head, chunk]);
      const end = findHeaderEnd(head);
      if (!end) return;
      child.stdout.removeListener('data', onData);
      parsed = true;
      let status = 200;
      let reason;
      for (const line of head.subarray(0, end.headerEnd).toString('latin1').split(/\r?\n/)) {
        const i = line.indexOf(':');
        if (i <= 0) continue;
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (name.toLowerCase() === 'status') {
          const m = /^(\d{3})\s*(.*)$/.exec(value);
          if (m) {
            status = Number(m[1]);
            reason = m[2] || undefined;
          }
        } else {
          const prev = res.getHeader(name);
          res.setHeader(name, prev === undefined ? value : [].concat(prev, value));
        }
      }
      res.statusCode = status;
      if (reason) res.statusMessage = reason;
      const rest = head.subarray(end.bodyStart);
      if (rest.length) res.write(rest);
      child.stdout.pipe(res);
    };
    child.stdout.on('data', onData);
    child.stdout.on('end', () => {
      if (parsed || res.headersSent || res.writableEnded) return;
      // Ended without a complete header block: report what the backend said.
      const msg = `git http-backend produced no CGI headers (exit ${child.exitCode}): ${stderr}`;
      onError?.(new Error(msg));
      res.statusCode = 502;
      res.end(msg);
    });
    child.on('close', (code) => {
      if (code !== 0 && stderr) onError?.(new Error(`git http-backend exit ${code}: ${stderr.trim()}`));
    });
  };
}

/**
 * Wraps a handler with injected faults, for the network-fault tests:
 * - silent: accept every connection and never answer (a hung remote);
 * - silentFile: while this file exists, requests are accepted and never answered (a remote that
 *   stops answering mid-run); a request that arrived while it existed stays unanswered;
 * - push503 / fetch503: the probability that a push (receive-pack POST) or a fetch (upload-pack
 *   POST) is answered 503 instead, drawn from `seed`, but never more than `maxInARow` requests in a
 *   row (a transient fault passes: that is what retries are for), and after a fault the next
 *   `cooldown` such requests are answered (a try of a fetch is two POSTs, ls-refs and fetch: one
 *   answered between two faults would not let a retry through, and four failed tries in a row
 *   are a remote that stays down, not a transient fault);
 * - downFile: while this file exists, every request is answered 503 (a remote that stays down).
 * GET /__faults answers {requests, injected, pushes503, fetches503, silenced, inFlight} so that a
 * test can report what it injected (503s in all, and drawn ones on pushes and fetches), how many
 * requests it left unanswered, and wait until no request is in flight (a push of a killed client
 * no longer lands late).
 */
export function withFaults(handle, { silent = false, silentFile, push503 = 0, fetch503 = 0, seed = 1, maxInARow = Infinity, cooldown = 0, downFile } = {}) {
  const random = seededRandom(seed);
  const counts = { requests: 0, injected: 0, pushes503: 0, fetches503: 0, silenced: 0, inFlight: 0 };
  let inARow = 0;
  let cool = 0;
  return function faulty(req, res) {
    if (req.url === '/__faults') return void res.end(JSON.stringify(counts));
    counts.requests++;
    counts.inFlight++;
    res.on('close', () => counts.inFlight--);
    if (silent || (silentFile && existsSync(silentFile))) {
      counts.silenced++;
      return;
    }
    const post = req.method === 'POST';
    const p = post && req.url.endsWith('/git-receive-pack') ? push503 : post && req.url.endsWith('/git-upload-pack') ? fetch503 : 0;
    const down = downFile && existsSync(downFile);
    const drawn = p > 0 && random() < p && inARow < maxInARow && (inARow > 0 || cool === 0);
    if (p > 0 && !drawn) cool = inARow > 0 ? cooldown : Math.max(0, cool - 1);
    inARow = drawn ? inARow + 1 : p > 0 ? 0 : inARow;
    if (down || drawn) {
      counts.injected++;
      if (drawn) counts[req.url.endsWith('/git-receive-pack') ? 'pushes503' : 'fetches503']++;
      req.resume();
      req.on('end', () => {
        res.statusCode = 503;
        res.end('injected fault\n');
      });
      return;
    }
    handle(req, res);
  };
}

/**
 * Starts the server in this process (port 0 on 127.0.0.1). Pushes and fetches against it must
 * be asynchronous. Returns { url(repoName), stop(), port }.
 */
export async function startGitHttpInProcess(projectRoot, opts = {}) {
  const handler = createGitHttpHandler(projectRoot, opts);
  const server = http.createServer(opts.faults ? withFaults(handler, opts.faults) : handler);
  server.keepAliveTimeout = 1000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  let stopping = null;
  return {
    port,
    url: (repoName) => `http://127.0.0.1:${port}/${String(repoName).replace(/^\/+/, '')}`,
    stop: () =>
      (stopping ??= new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

/**
 * Starts the smart HTTP server for the repositories under projectRoot in a child process and
 * waits until it listens. Returns { url(repoName) -> 'http://127.0.0.1:PORT/repoName',
 * stop() -> Promise, port, pid, stderr }. Safe with synchronous git calls.
 */
export async function startGitHttp(projectRoot, { timeoutMs = 10000, faults } = {}) {
  const child = spawn(process.execPath, [THIS_FILE, projectRoot, ...(faults ? [JSON.stringify(faults)] : [])], {
    env: hermeticEnv(),
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  trackProcessGroup(child);
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  let gone = null;
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      gone = { code, signal };
      resolve(gone);
    }),
  );

  const port = await new Promise((resolve, reject) => {
    let out = '';
    let settled = false;
    const timer = setTimeout(() => fail(new Error(`git http server did not start within ${timeoutMs} ms: ${stderr}`)), timeoutMs);
    function fail(err) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      killProcessGroup(child, 'SIGKILL');
      reject(err);
    }
    child.once('error', fail);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl === -1) return;
      let parsed;
      try {
        parsed = JSON.parse(out.slice(0, nl)).port;
      } catch (err) {
        fail(err);
        return;
      }
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(parsed);
    });
    exited.then(({ code, signal }) => fail(new Error(`git http server exited (${code ?? signal}) before listening: ${stderr}`)));
  });

  // Why unref: a test that forgets stop() must not hang its file; the exit handler kills the group.
  child.unref();
  for (const s of [child.stdin, child.stdout, child.stderr]) s.unref?.();
  let stopping = null;
  return {
    port,
    pid: child.pid,
    url: (repoName) => `http://127.0.0.1:${port}/${String(repoName).replace(/^\/+/, '')}`,
    stop: () =>
      (stopping ??= (async () => {
        if (!gone) {
          child.ref();
          killProcessGroup(child, 'SIGTERM');
          const timer = setTimeout(() => killProcessGroup(child, 'SIGKILL'), 2000);
          await exited;
          clearTimeout(timer);
        }
        killProcessGroup(child, 'SIGKILL');
      })()),
    get stderr() {
      return stderr;
    },
  };
}

// Run as a script: node git-http.mjs <projectRoot> -> prints {"port":N} and serves until stdin
// closes or a signal arrives.
if (process.argv[1] && pathToFileURL(path.resolve(process.argv[1])).href === import.meta.url) {
  const root = process.argv[2];
  if (!root) {
    process.stderr.write('usage: node git-http.mjs <projectRoot>\n');
    process.exit(2);
  }
  const server = await startGitHttpInProcess(path.resolve(root), {
    onError: (err) => process.stderr.write(`${err.message}\n`),
    ...(process.argv[3] ? { faults: JSON.parse(process.argv[3]) } : {}),
  });
  process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
}
