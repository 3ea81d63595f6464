/**
 * Reads hold signals delivered to a running run (`nyl hold` while it runs) and hands them to the
 * run's state. Before every unit the run looks; on a repository of this machine a look at the
 * ref files tells exactly whether a signal may exist, over a network a read costs a fetch, so it
 * happens at most every `pollMs` between the forced reads of every wave. A look that says no
 * signal exists skips even a forced read. A read that fails stops the run (`state-unavailable`,
 * or `signal-damaged` for a signal it cannot read): a unit must not start while its holds cannot
 * be seen.
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
export const SIGNAL_POLL_MS = 200;

export class SignalWatch {
  /** Every signal the run read; its transition push deletes them. */
  readonly seen: HoldSignal[] = [];
  private lastRead = -Infinity;

  constructor(
    private readonly source: SignalSource | undefined,
    private readonly clock: Clock,
    private readonly state: RunState,
    private readonly pollMs: number = SIGNAL_POLL_MS,
  ) {}

  /** Reads new signals; `force` (at a wave's edges) ignores the poll interval. */
  async poll(force: boolean): Promise<void> {
    if (!this.source) return;
    const now = this.clock.now();
    const hint = this.source.mayExist();
    if (hint === false) return;
    if (!force && hint === undefined && now - this.lastRead < this.pollMs) return;
    this.lastRead = now;
    let signals: HoldSignal[];
    try {
      signals = await this.source.read();
    } catch (error) {
      // The state repository cannot be read, or a signal is damaged (it may hold any unit): the
      // run starts nothing more.
      this.state.stop(error instanceof NylError && error.code === 'NYL-STATE-CORRUPT' ? 'signal-damaged' : 'state-unavailable');
      return;
    }
    for (const s of signals) {
      if (this.seen.some((x) => x.ref === s.ref)) continue;
      this.seen.push(s);
      this.state.deliverHold(s.unit, { by: s.by, at: s.at, ...(s.reason ? { reason: s.reason } : {}) });
    }
  }
}
