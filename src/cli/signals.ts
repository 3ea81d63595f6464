/**
 * SIGINT/SIGTERM handling: the first signal aborts (operations stop starting work and finish or
 * refuse cleanly, tools get the signal and their grace); a second one ends the process at once
 * with 128 + the signal number, and its tools with SIGKILL: asked twice, the operator wants it
 * over now, not after the grace a dead Nyl's tools get (src/exec/watchdog.ts).
 */
import { constants } from 'node:os';
import { killToolsNow } from '../exec/process';

export function installSignalHandlers(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const handler = (sig: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      killToolsNow();
      process.exit(128 + (constants.signals[sig] ?? 0));
    }
    controller.abort(sig);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
