/**
 * The one clock. Every time-based decision (lease deadlines, expiry, commit times, run ids)
 * reads it, so tests can pin time with NYL_TEST_NOW or a FixedClock.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Waits, for polling; a fake clock may advance instead. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Milliseconds of a clock that never jumps (unlike now(), which an operator or NTP may set),
   * the same for every process of one boot (CLOCK_MONOTONIC): what a taker measures how long a
   * lease stayed as it saw it by. A clock without one measures by now().
   */
  monotonicMs?(): number;
}

/** The clock's monotonic milliseconds, or its now() for a clock that has none (a test's). */
export function monotonicMs(clock: Clock): number {
  return clock.monotonicMs ? clock.monotonicMs() : clock.now();
}

/** CLOCK_MONOTONIC in milliseconds: since boot on Linux, shared by every process of the boot. */
function hrtimeMs(): number {
  return Number(process.hrtime.bigint() / 1_000_000n);
}

export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }
  monotonicMs(): number {
    return hrtimeMs();
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepReal(ms, signal);
  }
}

/** A clock pinned to a start instant that still advances with real time (so deadlines work). */
export class OffsetClock implements Clock {
  private readonly offset: number;
  constructor(start: number) {
    this.offset = start - Date.now();
  }
  now(): number {
    return Date.now() + this.offset;
  }
  monotonicMs(): number {
    return hrtimeMs();
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepReal(ms, signal);
  }
}

function sleepReal(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** ISO 8601 in UTC without milliseconds, as state files and reports show time. */
export function isoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** ISO 8601 in UTC with milliseconds, for deadlines: a 2 s lease lasts 2 s, not 1 to 2. */
export function isoMillis(ms: number): string {
  return new Date(Math.floor(ms)).toISOString();
}
