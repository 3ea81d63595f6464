// End-to-end over smart HTTP with injected faults (test/support/git-http.mjs withFaults): a
// remote that accepts connections and never answers fails `status` and `reconcile` with
// NYL-STATE-UNAVAILABLE within the network timeout; 503s at random pushes and fetches are retried
// and the run ends as if nothing happened; a remote that goes down mid-run and stays down ends
// the run with exit 4 NYL-RUN-UNRECORDED, and once it is back the next run imports what ran.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startGitHttp } from '../support/git-http.mjs';
import { cleanupAll, makeBareRepo, tempDir } from '../support/git-fixtures.mjs';
import { nyl, nylAsync } from '../support/cli.mjs';
import { logLines, setup } from '../support/reconcile-helpers.mjs';
import { gatedScript, openGate, waitForLine } from '../support/hold-helpers.mjs';

const servers = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  cleanupAll();
});

/** A served base directory with a bare repository `state.git`, behind a server with these faults. */
async function faultyRemote(faults) {
  const base = tempDir('nyl-faults-');
  makeBareRepo(path.join(base, 'state.git'));
  const server = await startGitHttp(base, { faults });
  servers.push(server);
  const counts = async () => (await fetch(`http://127.0.0.1:${server.port}/__faults`)).json();
  return { url: server.url('state.git'), counts, injected: async () => (await counts()).injected };
}

const codes = (r) => (r.json?.errors ?? []).map((e) => e.code);

test('a remote that accepts connections and never answers: status and reconcile fail NYL-STATE-UNAVAILABLE within the timeout', async () => {
  const remote = await faultyRemote({ silent: true });
  const ctx = setup({ a: "script: 'true'" }, { url: remote.url, init: false });
  for (const args of [
    ['status', '-e', 'dev'],
    ['reconcile', '-e', 'dev'],
  ]) {
    const began = Date.now();
    const r = nyl(ctx.project, [...args, '-o', 'json'], { env: { NYL_GIT_TIMEOUT: '1s' } });
    const took = Date.now() - began;
    assert.equal(r.code, 1, `${args[0]}: ${r.stdout}${r.stderr}`);
    assert.deepEqual(codes(r), ['NYL-STATE-UNAVAILABLE'], args[0]);
    assert.match(r.json.errors[0].message, /did not finish within 1 s \(NYL_GIT_TIMEOUT\)/);
    assert.ok(took < 10_000, `${args[0]} gave up after ${took} ms`);
  }
});

test('503s at random pushes and fetches, up to two in a row, are retried: the run ends exit 0 with every unit executed once', async () => {
  // A cooldown after each fault: a retry is a read (two POSTs) and a push, and faults drawn on
  // each of them in turn would be a remote that stays down, not a transient fault.
  const remote = await faultyRemote({ push503: 0.3, fetch503: 0.2, seed: 7, maxInARow: 2, cooldown: 3 });
  const ctx = setup((log) => Object.fromEntries(['a', 'b', 'c', 'd'].map((n) => [n, `script: 'echo ${n} >> ${log}'`])), { url: remote.url, init: false });
  const init = nyl(ctx.project, ['state', 'init', '-e', 'dev']);
  assert.equal(init.code, 0, init.stdout + init.stderr);
  const r = nyl(ctx.project, ['reconcile', '-e', 'dev', '--concurrency', '1', '-o', 'json']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(logLines(ctx.log).sort(), ['a', 'b', 'c', 'd']);
  const again = nyl(ctx.project, ['status', '-e', 'dev', '-o', 'json']);
  assert.equal(again.code, 0, again.stdout + again.stderr);
  const counts = await remote.counts();
  assert.ok(counts.pushes503 > 0 && counts.fetches503 > 0, `503s on pushes and on fetches: ${JSON.stringify(counts)}`);
});

test('a remote that goes down mid-run and stays down: exit 4 NYL-RUN-UNRECORDED; back up, status shows it running, the next run imports it', async () => {
  const down = path.join(tempDir('nyl-down-'), 'down');
  const remote = await faultyRemote({ downFile: down });
  let gate;
  const ctx = setup(
    (log) => {
      gate = path.join(path.dirname(log), 'gate');
      return { a: gatedScript(log, gate) };
    },
    { url: remote.url, envExtra: 'lease: {duration: 4s}' },
  );
  const run = nylAsync(ctx.project, ['reconcile', '-e', 'dev', '-o', 'json']);
  await waitForLine(ctx.log, 'start a');
  fs.writeFileSync(down, '');
  openGate(gate);
  const r = await run.done;
  assert.equal(r.code, 4, r.stdout + r.stderr);
  assert.deepEqual(codes(r), ['NYL-RUN-UNRECORDED']);
  assert.deepEqual(r.json.errors[0].units, ['a']);
  assert.match(r.json.errors[0].fix, /nyl reconcile -e dev/);
  fs.rmSync(down);

  const status = nyl(ctx.project, ['status', '-e', 'dev', '-o', 'json']);
  if (status.json.lease?.status === 'live') assert.equal(status.json.units.a.state, 'running', status.stdout);
  else assert.equal(status.json.units.a.state, 'uncertain', status.stdout);
  const next = nyl(ctx.project, ['reconcile', '-e', 'dev', '--wait-lease', '30s', '-o', 'json']);
  assert.equal(next.code, 4, next.stdout + next.stderr);
  assert.equal(next.json.units.a.result, 'recovered', 'started without a recorded result: uncertain, not run again');
  assert.deepEqual(
    logLines(ctx.log).filter((l) => l.startsWith('start')),
    ['start a'],
  );
});

test('every read of a remote without state yet answered 503 twice before it passes: state init and status retry the listing too', async () => {
  // fetch503: 1 with maxInARow: 2 answers upload-pack requests 503, 503, then passes, again and
  // again: the first read of a repository without state refs fetches (503, 503, answered: no such
  // ref) and then lists its refs (ls-remote: 503, 503, answered), each within the fetch retries.
  const remote = await faultyRemote({ fetch503: 1, maxInARow: 2 });
  const ctx = setup({ a: "script: 'true'" }, { url: remote.url, init: false });
  const init = nyl(ctx.project, ['state', 'init', '-e', 'dev', '-o', 'json']);
  assert.equal(init.code, 0, `${init.stdout}${init.stderr}\n[${await remote.injected()} faults injected]`);
  // Exit 2: the unit is pending (not an error).
  const status = nyl(ctx.project, ['status', '-e', 'dev', '-o', 'json']);
  assert.equal(status.code, 2, `${status.stdout}${status.stderr}\n[${await remote.injected()} faults injected]`);
  assert.deepEqual(status.json.errors, []);
  assert.equal(status.json.units.a.state, 'pending');
  assert.ok((await remote.injected()) >= 4, 'faults were injected');
});
