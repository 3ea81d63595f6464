/**
 * SIGINT/SIGTERM handling: the first signal aborts (operations stop starting work and finish or
 * refuse cleanly); a second one ends the process at once with 128 + the signal number.
 */
import { constants } from 'node:os';

export function installSignalHandlers(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const handler = (sig: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(128 + (constants.signals[sig] ?? 0));
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
