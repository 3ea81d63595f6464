// A second real process for lease races: acquires the environment's lease through the same
// modules the CLI uses, after waiting for a shared start instant, and prints `won <oid>` or
// `lost <code>`; a winner holds the lease until its stdin ends. Usage: node lease-racer.mjs <project> <env> <startAtEpochMs>
import { createRuntime } from '../../dist/cli/runtime.js';
import { openEnvironment } from '../../dist/commands/shared/context.js';
import { acquireLease } from '../../dist/lease/lease.js';
import { uuidv7 } from '../../dist/util/uuid.js';

const [project, env, startAt] = process.argv.slice(2);
const rt = createRuntime(process.env, new AbortController().signal);
const opened = await openEnvironment(rt, { path: project, environment: env }, { writes: true });
await opened.store.ensureOpen();
while (Date.now() < Number(startAt)) await new Promise((r) => setTimeout(r, 1));
try {
  const acquired = await acquireLease(rt, opened.store, { operation: 'reconcile', run: uuidv7(Date.now()), author: opened.author, durationMs: 60_000 });
  process.stdout.write(`won ${acquired.handle.oid}\n`);
  // A holder stays alive while it holds the lease: one of this machine whose process is gone is
  // provably gone, and its lease is taken over at once (the other racer would win too). So the
  // winner lives until the test closes its stdin, which it does once both racers have answered:
  // a fixed time was too short on a loaded machine, where the loser answered after it.
  await new Promise((resolve) => {
    process.stdin.on('end', resolve);
    process.stdin.resume();
  });
} catch (error) {
  process.stdout.write(`lost ${error.code ?? error.message}\n`);
}
opened.close();
