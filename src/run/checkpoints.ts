/**
 * Group commit of checkpoints: when a unit ends, its checkpoint is pushed at once, together with
 * every other checkpoint ready by then. At most one push is in flight; checkpoints that arrive
 * meanwhile ride on the next one. No checkpoint waits for a unit that still runs, so a crash
 * loses at most the checkpoints of the last second, never a finished sibling's result.
 *
 * The checkpoints of the units whose end lets the next units start ride on those units' started
 * markers instead of a push of their own (`start`): one write records both.
 *
 * A push that did not reach the repository is retried by the lease's write (a network blip must
 * not end a run whose units keep running); when it still fails, or is refused (the lease moved),
 * group commit pushes nothing more and the run starts no further unit.
 */
import type { FencedWriteResult } from '../lease/lease';
import type { Runtime } from '../util/runtime';
import type { RunRef } from './run-ref';

/** A unit's checkpoint: its record file in the run ref and the record's text. */
export interface Checkpointed {
  unit: string;
  file: string;
  content: string;
}

interface PushProblem {
  lost: boolean;
  message: string;
}

export class GroupCommit {
  private inFlight: Promise<void> | undefined;
  private names: string[] = [];
  private stopped = false;
  /** Set when a push failed for good: the lease was lost, or the repository stayed unreachable; nothing more is pushed. */
  failure: PushProblem | undefined;

  constructor(
    private readonly rt: Pick<Runtime, 'faults' | 'clock'>,
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

  /** Waits for the push in flight. */
  async idle(): Promise<void> {
    while (this.inFlight) await this.inFlight;
  }

  /**
   * After the last wave: every checkpoint still pending is pushed before the run writes its
   * transition, so a crash in between loses no result. Then nothing more is pushed.
   */
  async flush(): Promise<void> {
    if (this.runRef.hasPending()) this.kick();
    await this.idle();
    this.stopped = true;
  }

  /**
   * Started markers (the ready queue's, ../run/engine.ts): one write after the push in flight,
   * with the lease, carrying every checkpoint pending and the `checkpoints` given (the
   * units whose end let these start: the same write records both). Undefined when the write threw.
   */
  async start(units: string[], files: Map<string, string>, checkpoints: Checkpointed[]): Promise<FencedWriteResult | undefined> {
    await this.idle();
    // The write is the push in flight: a checkpoint that arrives meanwhile waits for it, as it
    // would for any other push, instead of starting a push of its own beside it.
    const written = this.writeStart(units, files, checkpoints);
    this.inFlight = written
      .then(() => {})
      .finally(() => {
        this.inFlight = undefined;
        if (!this.failure && this.runRef.hasPending()) this.kick();
      });
    return written;
  }

  private async writeStart(units: string[], files: Map<string, string>, checkpoints: Checkpointed[]): Promise<FencedWriteResult | undefined> {
    for (const c of checkpoints) {
      this.runRef.queue(new Map([[c.file, c.content]]));
      this.names.push(c.unit);
    }
    this.runRef.queue(files);
    const riding = this.names.splice(0);
    // A write that carries checkpoints is a checkpoint push too, for the fault points.
    if (riding.length > 0) await this.rt.faults.reach('before-checkpoint-push', riding);
    const message = `nyl: start ${units.join(', ')}${riding.length > 0 ? `; checkpoint ${riding.join(', ')}` : ''}\n`;
    const written = await this.runRef.push(message).catch(() => undefined);
    if (!written?.ok) this.names.unshift(...riding);
    else if (riding.length > 0) await this.rt.faults.reach('after-checkpoint-push', riding);
    return written;
  }

  /** Units whose checkpoints have not reached the repository (yet). */
  unpushed(): string[] {
    return [...this.names];
  }

  private async drain(): Promise<void> {
    try {
      await this.pushAll();
    } catch (error) {
      // Not the repository's answer (a bug, a commit that could not be written): group commit
      // stops rather than retry (the run then ends).
      this.failure = { lost: false, message: (error as Error)?.message ?? String(error) };
    }
  }

  private async pushAll(): Promise<void> {
    while (!this.failure && !this.stopped && this.runRef.hasPending()) {
      this.failure = await this.pushOnce();
    }
  }

  /** One push of everything pending; what went wrong, if it did not land. */
  private async pushOnce(): Promise<PushProblem | undefined> {
    const names = this.names.splice(0);
    await this.rt.faults.reach('before-checkpoint-push', names);
    const written = await this.runRef.push(`nyl: checkpoint ${names.join(', ')}\n`);
    if (!written.ok) {
      // The files stay pending in the run ref: the run's end takes them.
      this.names.unshift(...names);
      const { result } = written;
      return { lost: written.lost, message: result.ok ? '' : result.message };
    }
    await this.rt.faults.reach('after-checkpoint-push', names);
    return undefined;
  }
}
