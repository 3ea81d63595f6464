// A stand-in for the Nyl process, for tests that kill it: it runs one program through
// NodeProcessRunner and forwards the program's stdout to its own, so that the test reads what the
// program printed (its pids) and then kills this host.
//
//   node runner-host.mjs '<json options>' argv...
//
// Options: { group?: boolean, killGraceMs?: number, killWatchdog?: boolean }. killWatchdog: first
// runs `true` in a group of its own (which starts the host's watchdog), kills that watchdog with
// SIGKILL and waits until it is gone, as if someone had killed it. SIGTERM or SIGINT to the host cancels the run
// with that signal (the program gets it, SIGKILL killGraceMs later), as a cancelled run does. The
// host prints `exit <code> <signal>` when the program has ended, then exits 0.
import fs from 'node:fs';
import { NodeProcessRunner } from '../../dist/exec/process.js';
import { isRunning } from './proc.mjs';

const [options, ...argv] = process.argv.slice(2);
const { group = false, killGraceMs = 30000, killWatchdog = false } = JSON.parse(options);

/** The pids of this host's children whose command line says they are the watchdog. */
function watchdogs() {
  return fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number).filter((pid) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      return ppid === process.pid && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('nyl-watchdog');
    } catch {
      return false;
    }
  });
}

if (killWatchdog) {
  await new NodeProcessRunner().run(['true'], { group: true });
  const [pid] = watchdogs();
  if (!pid) throw new Error('no watchdog started');
  process.kill(pid, 'SIGKILL');
  while (isRunning(pid)) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 50));
}
const cancel = new AbortController();
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => cancel.abort(signal));

const result = await new NodeProcessRunner().run(argv, {
  group,
  killGraceMs,
  cancel: cancel.signal,
  onStdout: (chunk) => process.stdout.write(chunk),
  onStderr: (chunk) => process.stderr.write(chunk),
});
process.stdout.write(`exit ${result.code} ${result.signal}\n`);
