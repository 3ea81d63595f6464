/**
 * The one clock. Every time-based decision (lease deadlines, expiry, commit times, run ids)
 * reads it, so tests can pin time with NYL_TEST_NOW or a FixedClock.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Waits, for polling; a fake clock may advance instead. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export class SystemClock implements Clock {
  now(): number {
    return Date.now();
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

/**
 * Parses a duration such as 30s, 10m, 1h30m, 500ms. Returns milliseconds or undefined.
 */
export function parseDuration(text: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;
  let total = 0;
  let matched = false;
  let m: RegExpExecArray | null;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  while ((m = re.exec(text)) !== null) {
    total += Number(m[1]) * units[m[2]!]!;
    matched = true;
    if (re.lastIndex === text.length) return Math.round(total);
  }
  return matched && re.lastIndex === text.length ? Math.round(total) : undefined;
}
