/**
 * Reads hold signals delivered to a running run (`nyl hold` while it runs) and hands them to the
 * run's state. Before every unit the run looks; on a repository of this machine a look at the
 * ref files tells exactly whether a signal may exist, over a network a read costs a fetch, so it
 * happens at most every `pollMs` between the forced reads of every wave. A look that says no
 * signal exists skips even a forced read.
 *
 * A read that cannot reach the state repository is tried again after 0.5, 1 and 2 s, as the Git
 * store's own reads are. If it still fails, the run goes on: a hold is applied at the first read
 * that sees it, and a failed read only makes that read later, as a hold delivered a moment later
 * would be. The next look reads again at once (whatever the poll interval), tried once until a
 * read succeeds, so an outage does not cost seconds before every unit. A run that cannot reach the
 * repository stops at its next write anyway; a hold its last read missed is applied after the run
 * (../commands/reconcile/late-holds.ts). A signal that cannot be read (damaged: it may hold any unit)
 * stops the run (`signal-damaged`), and so does any other failure (`state-unavailable`).
 */
import { NylError } from '../errors/diagnostic';
import type { Clock } from '../util/clock';
import type { RunState } from './run-state';
import type { HoldSignal } from './signals';

export interface SignalSource {
  read(): Promise<HoldSignal[]>;
  /** true/false when a cheap look can tell, undefined when only a read can. */
  mayExist(): boolean | undefined;
}

/** How often, at most, signals are read between dispatches inside a wave (default). */
const SIGNAL_POLL_MS = 200;

/** Waits before a read that could not reach the repository is tried again. */
export const SIGNAL_READ_RETRY_DELAYS_MS: readonly number[] = [500, 1000, 2000];

const codeOf = (error: unknown) => (error instanceof NylError ? error.code : undefined);

export class SignalWatch {
  /** Every signal the run read; its transition push deletes them. */
  readonly seen: HoldSignal[] = [];
  private lastRead = -Infinity;
  /** The last read could not reach the repository: the next look reads at once, tried once. */
  private failing = false;

  constructor(
    private readonly source: SignalSource | undefined,
    private readonly clock: Clock,
    private readonly state: RunState,
    private readonly pollMs: number = SIGNAL_POLL_MS,
    /** The run's cancellation: it ends the waits between tries. */
    private readonly cancel?: AbortSignal,
  ) {}

  /** Would a look read now? `force` (at a wave's edges) ignores the poll interval. */
  due(force: boolean): boolean {
    if (!this.source) return false;
    const hint = this.source.mayExist();
    if (hint === false) return false;
    return force || this.failing || hint !== undefined || this.clock.now() - this.lastRead >= this.pollMs;
  }

  /** Reads new signals when a look is due (see `due`). */
  async poll(force: boolean): Promise<void> {
    if (!this.source || !this.due(force)) return;
    this.lastRead = this.clock.now();
    const signals = await this.read(this.source);
    for (const s of signals ?? []) {
      if (this.seen.some((x) => x.ref === s.ref)) continue;
      this.seen.push(s);
      this.state.deliverHold(s.unit, { by: s.by, at: s.at, ...(s.reason ? { reason: s.reason } : {}) });
    }
  }

  /** The signals, or undefined when they could not be read (the run stopped, or tries again later). */
  private async read(source: SignalSource): Promise<HoldSignal[] | undefined> {
    const delays = this.failing ? [] : SIGNAL_READ_RETRY_DELAYS_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        const signals = await source.read();
        this.failing = false;
        return signals;
      } catch (error) {
        const code = codeOf(error);
        if (code !== 'NYL-STATE-UNAVAILABLE') {
          this.state.stop(code === 'NYL-STATE-CORRUPT' ? 'signal-damaged' : 'state-unavailable');
          return undefined;
        }
        if (attempt >= delays.length || this.cancel?.aborted) {
          this.failing = true;
          return undefined;
        }
        await this.clock.sleep(delays[attempt]!, this.cancel);
      }
    }
  }
}
