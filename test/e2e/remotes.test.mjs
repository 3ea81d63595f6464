// End-to-end over network remotes: git daemon and smart HTTP (git http-backend), started by the
// suite on 127.0.0.1. State init and status work unchanged; a protected remote works; two
// processes racing for one lease: exactly one wins, every round.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { git, installProtectHook, makeBareRepo, makeProject } from '../support/git-fixtures.mjs';
import { networkRemotes } from '../support/network-remotes.mjs';
import { cliEnv, codes, environment, nyl, nylYaml } from '../support/cli.mjs';
import { campaignSize } from '../support/campaign.mjs';

const RACER = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'support', 'lease-racer.mjs');

const remotes = networkRemotes('nyl-remotes-');

function remoteRepo(name) {
  const bare = makeBareRepo(path.join(remotes.base, `${name}.git`));
  installProtectHook(bare);
  return bare;
}

const transports = {
  'file://': (name) => pathToFileURL(remoteRepo(name)).href,
  'git daemon': (name) => (remoteRepo(name), remotes.daemon.url(`${name}.git`)),
  'smart HTTP': (name) => (remoteRepo(name), remotes.http.url(`${name}.git`)),
};

function race(project, rounds, bare, leaseRef) {
  return (async () => {
    for (let round = 0; round < rounds; round++) {
      const startAt = Date.now() + 250;
      // Each racer answers one line; the winner holds the lease until its stdin is closed, which
      // happens once both have answered.
      const racers = [0, 1].map(() => {
        const child = spawn(process.execPath, [RACER, project, 'dev', String(startAt)], { env: cliEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        let answer;
        const answered = new Promise((resolve) => (answer = resolve));
        child.stdout.on('data', (b) => {
          out += b;
          if (out.includes('\n')) answer();
        });
        child.stderr.on('data', (b) => (err += b));
        const closed = new Promise((resolve) => child.on('close', () => (answer(), resolve({ out: out.trim(), err }))));
        return { child, answered, closed };
      });
      await Promise.all(racers.map((r) => r.answered));
      for (const r of racers) r.child.stdin.end();
      const results = await Promise.all(racers.map((r) => r.closed));
      const winners = results.filter((r) => r.out.startsWith('won '));
      const losers = results.filter((r) => r.out === 'lost NYL-LEASE-HELD');
      assert.equal(winners.length, 1, `round ${round}: ${JSON.stringify(results)}`);
      assert.equal(losers.length, 1, `round ${round}: ${JSON.stringify(results)}`);
      assert.equal(git(bare, 'rev-parse', leaseRef), winners[0].out.slice(4), 'the lease is the winner');
      git(bare, 'update-ref', '-d', leaseRef);
    }
  })();
}

for (const [name, urlFor] of Object.entries(transports)) {
  describe(`state over ${name}`, () => {
    test('state init, again unchanged, status; known branches follow', () => {
      const repoName = `init-${name.replace(/\W/g, '')}`;
      const url = urlFor(repoName);
      const bare = path.join(remotes.base, `${repoName}.git`);
      const project = makeProject({ 'nyl.yaml': nylYaml(environment('dev', `state:\n  repository: {repoURL: "${url}"}`)) });
      const first = nyl(project, ['state', 'init', '-e', 'dev', '-o', 'json']);
      assert.equal(first.code, 0, first.stderr + first.stdout);
      assert.equal(first.json.result, 'done');
      assert.equal(git(bare, 'rev-parse', 'refs/heads/nyl/dev/desired'), first.json.desired);
      assert.equal(git(project, 'rev-parse', 'refs/heads/nyl/dev/desired'), first.json.desired);
      assert.equal(git(bare, 'for-each-ref', 'refs/nyl/'), '', 'lease released');
      const again = nyl(project, ['state', 'init', '-e', 'dev', '-o', 'json']);
      assert.equal(again.code, 0);
      assert.equal(again.json.result, 'unchanged');
      const status = nyl(project, ['status', '-e', 'dev', '-o', 'json']);
      assert.equal(status.code, 0, status.stdout);
      assert.equal(status.json.kind, 'StatusReport');
      assert.equal(status.json.desired, first.json.desired);
    });

    test('two processes racing for one lease: exactly one wins, every round', async () => {
      const repoName = `race-${name.replace(/\W/g, '')}`;
      const url = urlFor(repoName);
      const bare = path.join(remotes.base, `${repoName}.git`);
      const project = makeProject({ 'nyl.yaml': nylYaml(environment('dev', `state:\n  repository: {repoURL: "${url}"}`)) });
      assert.equal(nyl(project, ['state', 'init', '-e', 'dev']).code, 0);
      // Every round takes the same path (two racers, one lease push each): `npm test` runs a few,
      // the full campaign the many that find a rare interleaving.
      const rounds =
        name === 'file://' ? campaignSize('NYL_LEASE_RACE_ROUNDS', { quick: 3, full: 50 }) : campaignSize('NYL_LEASE_RACE_ROUNDS', { quick: 2, full: 15 });
      await race(project, rounds, bare, 'refs/nyl/dev/lease');
    });
  });
}

describe('an unreachable network remote', () => {
  test('fails NYL-STATE-UNAVAILABLE for init and status', () => {
    const project = makeProject({ 'nyl.yaml': nylYaml(environment('dev', `state:\n  repository: {repoURL: "${remotes.http.url('missing.git')}"}`)) });
    for (const args of [
      ['state', 'init', '-e', 'dev'],
      ['status', '-e', 'dev'],
    ]) {
      const r = nyl(project, args);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.deepEqual(codes(r), ['NYL-STATE-UNAVAILABLE']);
    }
  });
});
