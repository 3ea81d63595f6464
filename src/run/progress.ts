/**
 * Progress of the units that run long, on stderr: a tool may stay silent for many minutes (a
 * database restore, `terraform apply` waiting on a cloud API), and a CI job that prints nothing
 * for that long looks hung, or is killed by a no-output timeout.
 *
 * - Without a terminal (a CI log), each unit that still runs prints
 *   `[dev/migrate] still running (1m30s)` every interval (30 s): lines that a log keeps.
 * - On a terminal (the runtime's liveStatus), one status line names every running unit with its
 *   time, `migrate 1m02s, db 12s`, rewritten every second in place; the terminal clears it before
 *   any other line and draws it again after (src/cli owns the terminal).
 *
 * Time is the runtime's clock, so tests on a virtual clock see the lines at virtual times. The
 * lines go to stderr only, never to a unit's log (they say nothing about the tool) and never to
 * stdout, which keeps the report alone (`-o json`). --quiet-unit-output hides the tools' lines,
 * not these: like the start and end lines they are Nyl's, and a hidden tool is when a heartbeat
 * matters most.
 */
import type { Clock } from '../util/clock';
import type { LiveStatus } from '../util/runtime';

/** How often a unit that runs long says so without a terminal. */
const PROGRESS_INTERVAL_MS = 30_000;

/** How often the terminal's status line is drawn again. */
const LIVE_REFRESH_MS = 1000;

/** The interval: 30 s; tests may shorten it (NYL_TEST_PROGRESS_INTERVAL_MS), never lengthen it. */
export function progressIntervalMs(env: NodeJS.ProcessEnv): number {
  const override = Number(env.NYL_TEST_PROGRESS_INTERVAL_MS);
  return Number.isInteger(override) && override > 0 && override <= PROGRESS_INTERVAL_MS ? override : PROGRESS_INTERVAL_MS;
}

/** Elapsed time as a clock shows it: `12s`, `1m02s`, `1h05m09s`. */
export function elapsed(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const [h, m, s] = [Math.floor(total / 3600), Math.floor(total / 60) % 60, total % 60];
  const two = (n: number) => String(n).padStart(2, '0');
  if (h > 0) return `${h}h${two(m)}m${two(s)}s`;
  return m > 0 ? `${m}m${two(s)}s` : `${s}s`;
}

export class UnitProgress {
  /** Running units and when each started, in the order they started. */
  private readonly running = new Map<string, number>();
  /** Stops the terminal's refresh loop; set while it runs. */
  private refresh: AbortController | undefined;

  constructor(
    private readonly env: string,
    private readonly clock: Clock,
    private readonly log: (line: string) => void,
    private readonly live: LiveStatus | undefined,
    private readonly intervalMs: number,
  ) {}

  /** A unit starts; the returned function says it ended (call it exactly once). */
  begin(unit: string): () => void {
    const stop = new AbortController();
    this.running.set(unit, this.clock.now());
    if (this.live) this.startRefresh();
    else void this.heartbeat(unit, stop.signal);
    return () => {
      stop.abort();
      this.running.delete(unit);
      if (this.live && this.running.size === 0) this.stopRefresh();
      else this.live?.set(this.env, this.text());
    };
  }

  /** Without a terminal: a line every interval from the unit's start, until it ends. */
  private async heartbeat(unit: string, ended: AbortSignal): Promise<void> {
    const started = this.running.get(unit)!;
    for (let n = 1; ; n++) {
      await this.clock.sleep(started + n * this.intervalMs - this.clock.now(), ended);
      if (ended.aborted) return;
      this.say(`[${this.env}/${unit}] still running (${elapsed(this.clock.now() - started)})`);
    }
  }

  private say(line: string): void {
    try {
      this.log(line);
    } catch {
      // stderr closed: nobody is watching.
    }
  }

  /** The status line's text: every running unit with its time, the longest-running first. */
  private text(): string {
    const now = this.clock.now();
    return [...this.running].map(([unit, since]) => `${unit} ${elapsed(now - since)}`).join(', ');
  }

  private startRefresh(): void {
    this.live!.set(this.env, this.text());
    if (this.refresh) return;
    const stop = new AbortController();
    this.refresh = stop;
    void (async () => {
      const every = Math.min(LIVE_REFRESH_MS, this.intervalMs);
      while (!stop.signal.aborted) {
        await this.clock.sleep(every, stop.signal);
        if (!stop.signal.aborted) this.live!.set(this.env, this.text());
      }
    })();
  }

  private stopRefresh(): void {
    this.refresh?.abort();
    this.refresh = undefined;
    this.live!.set(this.env, undefined);
  }
}
