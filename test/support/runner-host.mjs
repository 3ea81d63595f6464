// A stand-in for the Nyl process, for tests that kill it: it runs one program through
// NodeProcessRunner and forwards the program's stdout to its own, so that the test reads what the
// program printed (its pids) and then kills this host.
//
//   node runner-host.mjs '<json options>' argv...
//
// Options: { group?: boolean, killGraceMs?: number, stopSignal?: 'SIGINT' | 'SIGTERM', env?: object, killWatchdog?: boolean }.
// killWatchdog: once the program runs, kills its watchdog (src/exec/watchdog.ts) with SIGKILL, as
// if someone had, and holds back the program's output until a new watchdog runs. SIGTERM or
// SIGINT to the host cancels the run with that signal (the program gets it, SIGKILL killGraceMs
// later), as a cancelled run does. The host prints `exit <code> <signal>` when the program has
// ended, then exits 0.
import fs from 'node:fs';
import { NodeProcessRunner } from '../../dist/exec/process.js';
import { isRunning } from './proc.mjs';

const [options, ...argv] = process.argv.slice(2);
const { group = false, killGraceMs = 30000, stopSignal, env, killWatchdog = false } = JSON.parse(options);

/** The pids of this host's running children whose command line says they are a watchdog. */
function watchdogs() {
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((pid) => {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return ppid === process.pid && isRunning(pid) && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('nyl-watchdog');
      } catch {
        return false;
      }
    });
}

async function until(predicate) {
  for (const end = Date.now() + 10_000; !predicate(); await new Promise((r) => setTimeout(r, 10))) {
    if (Date.now() > end) throw new Error('runner-host: timed out');
  }
}

let held = killWatchdog ? [] : undefined;

/** Kills the program's watchdog once the program printed something; lets its output through once another one runs. */
async function replaceWatchdog() {
  await until(() => held.length > 0 && watchdogs().length === 1);
  const [killed] = watchdogs();
  process.kill(killed, 'SIGKILL');
  await until(() => watchdogs().some((pid) => pid !== killed));
  for (const chunk of held) process.stdout.write(chunk);
  held = undefined;
}

const cancel = new AbortController();
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => cancel.abort(signal));

const running = new NodeProcessRunner().run(argv, {
  group,
  killGraceMs,
  ...(stopSignal ? { stopSignal } : {}),
  ...(env ? { env } : {}),
  cancel: cancel.signal,
  onStdout: (chunk) => (held ? held.push(chunk) : process.stdout.write(chunk)),
  onStderr: (chunk) => process.stderr.write(chunk),
});
if (killWatchdog) await replaceWatchdog();
const result = await running;
process.stdout.write(`exit ${result.code} ${result.signal}\n`);
