/**
 * The one duration grammar of Nyl, for source (`timeout`, `lease.duration`) and the command line
 * (`--wait-lease`) alike: whole numbers with the units d, h, m, s and ms, largest first, each at
 * most once, such as `500ms`, `30s`, `10m`, `1h30m` or `2d`.
 *
 * Every duration also has bounds, checked where it is read (source validation, argv parsing), so
 * that nothing out of range reaches a timer: Node's timers hold at most 2^31-1 ms (about 24.8
 * days) and fire after 1 ms for anything longer, which turned `timeout: 600h` into a kill after
 * 1 ms and `lease.duration: 2000h` into a renewal every millisecond.
 */
const DURATION = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;

/** The grammar as a JSON Schema pattern (published with the source schema). */
export const DURATION_PATTERN = '^(?=\\d)(?:\\d+d)?(?:\\d+h)?(?:\\d+m)?(?:\\d+s)?(?:\\d+ms)?$';

/** Milliseconds of a duration, or undefined when the text does not follow the grammar. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text);
  if (!m || text === '') return undefined;
  const [d, h, min, s, ms] = [m[1], m[2], m[3], m[4], m[5]].map((x) => (x === undefined ? 0 : Number(x)));
  return (((d! * 24 + h!) * 60 + min!) * 60 + s!) * 1000 + ms!;
}

const SECOND = 1000;
const HOUR = 3600 * SECOND;
const DAY = 24 * HOUR;

// Every bound below stays under the longest delay a Node timer holds, 2^31-1 ms (about 24.8 days).

/** The range a duration must fall in, both ends included. */
export interface DurationBounds {
  minMs: number;
  maxMs: number;
}

/**
 * `timeout` of a unit: at least 1s (a shorter deadline kills tools while they start), at most 7d
 * (a run holds its environment's lease as long as a unit runs; nothing sane runs longer).
 */
export const TIMEOUT_BOUNDS: DurationBounds = { minMs: SECOND, maxMs: 7 * DAY };

/**
 * `lease.duration`: at least 2s, at most 24h. The holder renews every third of the lease and keeps
 * a tenth as its safety margin (the taker adds a tenth as skew margin): below 2 s the margin
 * (200 ms) no longer covers a push with room to spare (25-65 ms on the hosts measured, more over
 * the Internet). Above 24h a crashed run would hold its environment for more than a day.
 */
export const LEASE_BOUNDS: DurationBounds = { minMs: 2 * SECOND, maxMs: DAY };

/**
 * `terminationGracePeriod` of a unit: from 0s (SIGKILL right after SIGTERM) to 1h. A tool of a
 * dead Nyl may run that long after Nyl died, so a grace far beyond any lease would let it overlap
 * the run that takes over; an hour is more than any tool needs to save its state.
 */
export const GRACE_BOUNDS: DurationBounds = { minMs: 0, maxMs: HOUR };

/** `lease.skewMargin`: up to 24h, the longest lease; a larger margin only blocks a dead run's environment longer. */
export const SKEW_MARGIN_BOUNDS: DurationBounds = { minMs: 1, maxMs: DAY };

/** A module unit's `lockTimeout`: 0s (fail at once, as Terraform does by default) to 24h. */
export const LOCK_TIMEOUT_BOUNDS: DurationBounds = { minMs: 0, maxMs: DAY };

/** `--wait-lease`: 0s (do not wait) to 24h, the longest lease anyone can be waiting for. */
export const WAIT_LEASE_BOUNDS: DurationBounds = { minMs: 0, maxMs: DAY };

/** A duration the way it is written, largest units first: 90000 -> `1m30s`; days from 48h on. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const parts: string[] = [];
  let rest = ms;
  const units = [
    ['d', ms >= 2 * DAY ? DAY : Infinity],
    ['h', HOUR],
    ['m', 60 * SECOND],
    ['s', SECOND],
    ['ms', 1],
  ] as const;
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    if (n === 0) continue;
    parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  return parts.join('');
}

/**
 * Why a text is no duration within the bounds, or undefined when it is one: the problem, and
 * what to give instead (`a duration from 2s to 24h, such as 24h`) for the caller's own verb.
 */
export function durationProblem(text: string, bounds: DurationBounds): { message: string; wanted: string } | undefined {
  const ms = parseDuration(text);
  const range = `${formatDuration(bounds.minMs)} to ${formatDuration(bounds.maxMs)}`;
  if (ms === undefined) return { message: `${text} is not a duration`, wanted: `a duration from ${range}, such as 30s, 10m or 1h30m` };
  if (ms < bounds.minMs || ms > bounds.maxMs) {
    const nearest = formatDuration(ms < bounds.minMs ? bounds.minMs : bounds.maxMs);
    return { message: `${text} is out of range: it must be from ${range}`, wanted: `a duration from ${range}, such as ${nearest}` };
  }
  return undefined;
}
