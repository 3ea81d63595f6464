/**
 * Group commit of checkpoints: when a unit ends, its checkpoint is pushed at once, together with
 * every other checkpoint ready by then. At most one push is in flight; checkpoints that arrive
 * meanwhile ride on the next one. No checkpoint waits for a unit that still runs, so a crash
 * loses at most the checkpoints of the last second, never a finished sibling's result.
 */
import type { Runtime } from '../util/runtime';
import type { RunRef } from './run-ref';

export class GroupCommit {
  private inFlight: Promise<void> | undefined;
  private names: string[] = [];
  private stopped = false;
  /** Set when a push failed: the lease was lost (or the repository unreachable); nothing more is pushed. */
  failure: { lost: boolean; message: string } | undefined;
  /** Pushes made, for reports and benchmarks. */
  pushes = 0;

  constructor(
    private readonly rt: Pick<Runtime, 'faults'>,
    private readonly runRef: RunRef,
  ) {}

  /** Queues a unit's checkpoint file and makes sure a push will take it. */
  add(unit: string, file: string, content: string): void {
    this.runRef.queue(new Map([[file, content]]));
    this.names.push(unit);
    this.kick();
  }

  private kick(): void {
    if (this.inFlight || this.stopped) return;
    this.inFlight = this.drain().finally(() => {
      this.inFlight = undefined;
      // A checkpoint may have arrived after the loop's last look: it must not wait for another.
      if (!this.failure && this.runRef.hasPending()) this.kick();
    });
  }

  /**
   * Waits for the push in flight, without starting another: checkpoints still pending then ride
   * on the run's next push (the next wave's started markers), and a run that ends writes them in
   * its transition or, without one, when it marks its run ref ended.
   */
  async idle(): Promise<void> {
    while (this.inFlight) await this.inFlight;
  }

  /** Units whose checkpoints wait for a push, for the message of the push that takes them. */
  takeNames(): string[] {
    return this.names.splice(0);
  }

  /** No further group-commit push (the run publishes its transition, or ends without one). */
  stop(): void {
    this.stopped = true;
  }

  private async drain(): Promise<void> {
    while (!this.failure && !this.stopped && this.runRef.hasPending()) {
      const names = this.names.splice(0);
      await this.rt.faults.reach('before-checkpoint-push', names);
      const written = await this.runRef.push('fence', `nyl: checkpoint ${names.join(', ')}\n`).catch((error: Error) => ({ ok: false as const, lost: false, result: { ok: false as const, kind: 'unreachable' as const, message: error.message } }));
      this.pushes++;
      if (!written.ok) {
        this.failure = { lost: written.lost, message: written.result.ok ? '' : written.result.message };
        return;
      }
      await this.rt.faults.reach('after-checkpoint-push', names);
    }
  }
}
