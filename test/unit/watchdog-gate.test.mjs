// The watchdog's gate (src/exec/watchdog.ts) starts a tool in a process group of its own. Pins:
// the gate passed the tool's whole environment as NAME=VALUE arguments to env(1), so every local
// user could read secrets (TF_VAR_..., AWS_SECRET_ACCESS_KEY) in /proc/PID/cmdline while it ran.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateEnv, gatedArgv } from '../../dist/exec/watchdog.js';

test("the gate's argv is the shell, its constant script and the tool's argv: nothing of the environment", () => {
  const argv = gatedArgv(['terraform', 'apply', '-json']);
  assert.deepEqual(argv.slice(-3), ['terraform', 'apply', '-json']);
  assert.ok(!argv.some((a) => a.includes('=')), argv.join(' '));
});

test('the environment the gate gets: shell names as given, PWD the working directory, nothing a shell would change', () => {
  const env = { TF_VAR_token: 'hunter2', PATH: '/bin', 'A.B': 'x', IFS: ':', OPTIND: '2', PPID: '1', _: '/usr/bin/node', PWD: '/elsewhere', GONE: undefined };
  assert.deepEqual(gateEnv(env, '/work'), { TF_VAR_token: 'hunter2', PATH: '/bin', PWD: '/work' });
});
