// End-to-end: two clones of one project reconcile one environment against one remote, over
// file://, git daemon and smart HTTP (servers started by the suite on 127.0.0.1). Run at once, one
// executes and the other exits 2 NYL-LEASE-HELD; with --wait-lease the second waits, runs after
// the winner and finds every receipt current. Each clone has its own cache directory, as on two
// machines; a last test covers two clones sharing one machine's cache.
// The race also runs in rounds over smart HTTP with a server that answers pushes and fetches with
// a 503 at random positions (a server per round, its faults drawn from NYL_FAULT_SEED + the
// round, at most two in a row): exactly one executes and nothing runs twice. There the other may
// also come after the first (its retried reads delay it past the first's end): it then takes the
// lease after the first let it go, and must find every receipt current.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { HTTP_FAULTS } from '../support/crash-harness.mjs';
import { git, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { startGitHttp } from '../support/git-http.mjs';
import { networkRemotes } from '../support/network-remotes.mjs';
import { codes, nyl, nylAsync } from '../support/cli.mjs';
import { FULL_CAMPAIGNS, campaignSize } from '../support/campaign.mjs';
import { commitFiles, logLines, logs, projectYaml, refsUnder, results, scratch, stateCounts, waitForLog } from '../support/reconcile-helpers.mjs';

const remotes = networkRemotes('nyl-reconcile-remotes-');

const transports = {
  'file://': (bare) => pathToFileURL(bare).href,
  'git daemon': (bare, name) => remotes.daemon.url(`${name}.git`),
  'smart HTTP': (bare, name) => remotes.http.url(`${name}.git`),
};

const STATE = ['refs/heads/nyl/dev/desired', 'refs/heads/nyl/dev/observed'];
const known = (repo) => Object.fromEntries(STATE.map((r) => [r, refsUnder(repo, r)[r]]));

/** A clone of origin with its own cache directory: { dir, env }. */
function clone(origin, { sharedCache = false } = {}) {
  const dir = path.join(tempDir('nyl-clone-'), 'work');
  git(path.dirname(dir), 'clone', '-q', origin, dir);
  return { dir, env: sharedCache ? {} : { NYL_CACHE_DIR: tempDir('nyl-cache-') } };
}

/**
 * A state repository under the served base dir, its URL for the transport (or from urlOf(bare,
 * repoName)), a log, an origin project.
 */
function world(name, transport, units, urlOf = transports[transport]) {
  const repoName = `${name}-${transport.replace(/\W/g, '')}`;
  const bare = makeBareRepo(path.join(remotes.base, `${repoName}.git`));
  const url = urlOf(bare, repoName);
  const { log } = scratch();
  const origin = makeProject({ 'nyl.yaml': projectYaml(url, units(log, 'v1')) });
  return { bare, url, log, origin };
}

const units = (log, tag) => ({
  first: logs(log, `first-${tag}`, 'sleep 1'),
  second: `dependsOn: [first]\n${logs(log, `second-${tag}`, 'sleep 1')}`,
  third: logs(log, `third-${tag}`, 'sleep 1'),
});

const run = (c, extra = []) => nylAsync(c.dir, ['reconcile', '-e', 'dev', '-o', 'json', ...extra], { env: c.env });

/**
 * Two clones reconcile at once: exactly one executes, the other exits 2 NYL-LEASE-HELD; then a
 * change reaches both, one runs and the other waits for the lease (--wait-lease) and finds every
 * receipt current. mayMiss: the other may also come after the one that executes (retried reads
 * can delay it past that run's end): then it executes nothing and finds every receipt current.
 * Returns whether the two overlapped.
 */
async function raceThenWait(w, { mayMiss = false } = {}) {
  const one = clone(w.origin);
  const two = clone(w.origin);
  const init = nyl(one.dir, ['state', 'init', '-e', 'dev'], { env: one.env });
  assert.equal(init.code, 0, init.stdout + init.stderr);

  // Both at once: exactly one executes.
  const done = await Promise.all([run(one), run(two)].map((r) => r.done));
  const executedAll = (r) => r.code === 0 && Object.values(results(r.json)).every((x) => x === 'executed');
  const winner = done.find(executedAll) ?? done.find((r) => r.code === 0);
  const loser = done.find((r) => r !== winner);
  assert.ok(winner, done.map((r) => `${r.code}: ${r.stdout}${r.stderr}`).join('\n---\n'));
  const overlapped = !(mayMiss && loser.code === 0);
  if (overlapped) {
    assert.equal(loser.code, 2, `${loser.stdout}${loser.stderr}`);
    assert.deepEqual(codes(loser), ['NYL-LEASE-HELD']);
  } else {
    assert.deepEqual(results(loser.json), { first: 'current', second: 'current', third: 'current' }, `${loser.stdout}${loser.stderr}`);
  }
  assert.deepEqual(results(winner.json), { first: 'executed', second: 'executed', third: 'executed' });
  assert.deepEqual(logLines(w.log).sort(), ['first-v1', 'second-v1', 'third-v1'], 'each unit ran once');
  assert.doesNotMatch(loser.stderr, /starting/);
  assert.deepEqual(stateCounts(w.bare), { desired: 2, observed: 2 });
  assert.deepEqual(refsUnder(w.bare, 'refs/nyl/'), {});

  // A change reaches both clones; one runs, the other waits for the lease.
  commitFiles(w.origin, { 'nyl.yaml': projectYaml(w.url, units(w.log, 'v2')) }, 'v2');
  for (const c of [one, two]) git(c.dir, 'pull', '-q', '--ff-only');
  const holder = run(one);
  await waitForLog(w.log, 4);
  const patient = run(two, ['--wait-lease', '30s']);
  const first = await holder.done;
  const second = await patient.done;
  assert.equal(first.code, 0, first.stderr);
  assert.deepEqual(results(first.json), { first: 'executed', second: 'executed', third: 'executed' });
  assert.equal(second.code, 0, `${second.stdout}${second.stderr}`);
  assert.deepEqual(results(second.json), { first: 'current', second: 'current', third: 'current' });
  assert.deepEqual(second.json.errors, []);
  assert.doesNotMatch(second.stderr, /starting/);
  const lines = logLines(w.log);
  assert.equal(lines.length, 6, lines.join('\n'));
  assert.deepEqual(lines.slice(3).sort(), ['first-v2', 'second-v2', 'third-v2'], 'nothing executed twice');
  assert.deepEqual(stateCounts(w.bare), { desired: 3, observed: 3 }, 'the waiting run wrote no commit');
  assert.deepEqual(refsUnder(w.bare, 'refs/nyl/'), {}, 'lease and run refs are gone');

  // The known branches of both clones end equal to the remote's.
  const remote = known(w.bare);
  assert.deepEqual(known(two.dir), remote);
  assert.deepEqual(known(one.dir), remote);
  return overlapped;
}

// Over smart HTTP, `npm test` runs the race in the round with 503s below (and the strict race of
// two lease takers over smart HTTP in test/e2e/remotes.test.mjs); the full campaign runs it
// without faults too.
for (const transport of Object.keys(transports).filter((t) => t !== 'smart HTTP' || FULL_CAMPAIGNS)) {
  describe(`two clones, one remote over ${transport}`, () => {
    test('run at once: exactly one executes, the other exits 2 NYL-LEASE-HELD; then --wait-lease waits and finds every receipt current', async () => {
      await raceThenWait(world('clones', transport, units));
    });
  });
}

const FAULT_SEED = Number(process.env.NYL_FAULT_SEED ?? 9300);
const ROUNDS = campaignSize('NYL_RACE_ROUNDS', { quick: 1, full: 3 });

describe('two clones, one remote over smart HTTP with 503s at random positions', { concurrency: ROUNDS }, () => {
  for (let round = 0; round < ROUNDS; round++) {
    const seed = FAULT_SEED + round;
    test(`round ${round + 1} (NYL_FAULT_SEED=${seed}): exactly one executes, the other exits NYL-LEASE-HELD (or, come after it, finds every receipt current); --wait-lease finds every receipt current`, async (t) => {
      const server = await startGitHttp(remotes.base, { faults: { ...HTTP_FAULTS, seed } });
      const counts = async () => (await fetch(`http://127.0.0.1:${server.port}/__faults`)).json();
      try {
        const w = world(`clones-faults-${round}`, 'smart HTTP', units, (bare, repoName) => server.url(`${repoName}.git`));
        let overlapped;
        try {
          overlapped = await raceThenWait(w, { mayMiss: true });
        } catch (error) {
          const c = await counts();
          error.message += `\n[http-faults seed ${seed}: ${c.injected} of ${c.requests} requests answered 503 (${c.pushes503} pushes, ${c.fetches503} fetches)]`;
          throw error;
        }
        const c = await counts();
        t.diagnostic(
          `http-faults seed ${seed}: ${c.injected} of ${c.requests} requests answered 503 (${c.pushes503} pushes, ${c.fetches503} fetches); ${overlapped ? 'the two overlapped: the other exited NYL-LEASE-HELD' : 'the other came after the first: it executed nothing, every unit current'}`,
        );
      } finally {
        await server.stop();
      }
    });
  }
});

describe("two clones sharing one machine's cache", () => {
  test('while one clone reconciles, the other waits for the lease and reads status; nothing fails on the shared cache repository', async () => {
    // Both clones use the same cache directory, so both processes fetch into one bare cache
    // repository and its refs/nyl-mirror/ refs at once.
    const chain = (log, tag) =>
      Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`u${i}`, `${i ? `dependsOn: [u${i - 1}]\n` : ''}${logs(log, `u${i}-${tag}`, 'sleep 0.1')}`]));
    const w = world('shared', 'smart HTTP', chain);
    const one = clone(w.origin, { sharedCache: true });
    const two = clone(w.origin, { sharedCache: true });
    assert.equal(nyl(one.dir, ['state', 'init', '-e', 'dev']).code, 0);
    const holder = run(one);
    await waitForLog(w.log, 1);
    const patient = run(two, ['--wait-lease', '30s']);
    let finished = false;
    Promise.all([holder.done, patient.done]).then(() => {
      finished = true;
    });
    const failures = [];
    let reads = 0;
    // Status runs one after another while both run, a short pause between them (back to back, they
    // would spend the machine's CPU on reads that add nothing).
    while (!finished) {
      const r = await nylAsync(two.dir, ['status', '-e', 'dev', '-o', 'json']).done;
      reads++;
      if (r.code === 1) failures.push(`${codes(r).join(',')}: ${r.json?.errors?.[0]?.message ?? r.stderr}`);
      if (!finished) await sleep(150);
    }
    const h = await holder.done;
    const p = await patient.done;
    assert.equal(h.code, 0, h.stdout + h.stderr);
    assert.equal(p.code, 0, p.stdout + p.stderr);
    assert.deepEqual(Object.values(results(p.json)), Array(6).fill('current'));
    assert.deepEqual(failures, [], `${failures.length} of ${reads} status runs failed`);
    assert.equal(logLines(w.log).length, 6, 'each unit ran once');
    assert.deepEqual(known(one.dir), known(w.bare));
    assert.deepEqual(known(two.dir), known(w.bare));
  });
});
