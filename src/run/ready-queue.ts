/**
 * The run's ready queue: at most `--concurrency` tasks (a unit's execution, teardown or prepare
 * phase) run at once, taken in the order they were queued. A task's end frees its slot for the
 * next queued task at once; when none is queued, the engine is woken to ask the planner again
 * (what the ended unit lets go), so no slot stays idle while a unit could start. The engine is
 * also the one that hands the checkpoints of those ends to group commit: they ride on the write
 * of the started markers they let go, one write for both.
 *
 * Like a pool, it waits for every task it started, even when one fails, and only then reports the
 * first failure: a run never moves on (or releases its lease) while a unit still runs.
 */
import type { Checkpointed, GroupCommit } from './checkpoints';

/** What a task is, for the engine: lifecycle work waits until no execution or prepare is left. */
type TaskKind = 'execute' | 'teardown' | 'prepare';

interface Task {
  name: string;
  kind: TaskKind;
  run: () => Promise<Checkpointed | undefined>;
}

export class ReadyQueue {
  private readonly queued: Task[] = [];
  /** The names of `queued`: the engine asks about every executable unit at each dispatch point. */
  private readonly queuedNames = new Set<string>();
  private readonly running = new Map<string, TaskKind>();
  private readonly tasks = new Set<Promise<void>>();
  private readonly errors: unknown[] = [];
  /** Checkpoints of units that ended while nothing queued could take their slot: the engine's to hand on. */
  private ended: Checkpointed[] = [];
  /** A task ended that no queued task replaced: the engine plans again. */
  private slotFreed = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly limit: number,
    private readonly commits: GroupCommit,
  ) {}

  /** Whether the unit is queued or running (the planner still reports it as work). */
  has(name: string): boolean {
    return this.running.has(name) || this.queuedNames.has(name);
  }

  /** Nothing runs and nothing is queued. */
  get idle(): boolean {
    return this.running.size === 0 && this.queued.length === 0;
  }

  /** Some execution or prepare phase is queued or running: lifecycle work waits for it. */
  get executing(): boolean {
    return [...this.running.values(), ...this.queued.map((t) => t.kind)].some((k) => k !== 'teardown');
  }

  /** Queues tasks in this order; they start as slots free. */
  add(tasks: Task[]): void {
    this.queued.push(...tasks);
    for (const t of tasks) this.queuedNames.add(t.name);
    this.fill();
  }

  private fill(): void {
    while (this.running.size < Math.max(1, this.limit) && this.queued.length > 0) {
      const task = this.queued.shift()!;
      this.queuedNames.delete(task.name);
      this.begin(task);
    }
  }

  private begin(task: Task): void {
    this.running.set(task.name, task.kind);
    const done: Promise<void> = task
      .run()
      .then(
        (cp) => {
          if (cp) this.ended.push(cp);
        },
        (error: unknown) => {
          this.errors.push(error);
        },
      )
      .finally(() => {
        this.running.delete(task.name);
        this.tasks.delete(done);
        const replaced = this.queued.length > 0;
        this.fill();
        if (replaced) this.handOn();
        else this.slotFreed = true;
        this.wake?.();
      });
    this.tasks.add(done);
  }

  /** A queued unit took the slot without a write of its own: the checkpoints go to group commit now. */
  private handOn(): void {
    for (const cp of this.takeEnded()) this.commits.add(cp.unit, cp.file, cp.content);
  }

  /** The checkpoints the engine holds for its next write (started markers), taken. */
  takeEnded(): Checkpointed[] {
    return this.ended.splice(0);
  }

  /**
   * Waits until the engine should plan again: a slot freed that nothing queued could take, or
   * nothing runs. Throws the first failure of a task once nothing runs.
   */
  async next(): Promise<void> {
    // After a failure nothing new is dispatched: the queued tasks (their markers landed) and the running ones end first.
    while (this.running.size > 0 && (!this.slotFreed || this.errors.length > 0)) await new Promise<void>((resolve) => (this.wake = resolve));
    this.wake = undefined;
    this.slotFreed = false;
    if (this.errors.length > 0) throw this.errors[0];
  }

  /** Waits for every task started (after an error of the engine: no unit may outlive the run's loop). */
  async settle(): Promise<void> {
    while (this.tasks.size > 0) await Promise.all([...this.tasks]);
  }
}
