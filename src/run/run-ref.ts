/**
 * The writer of a live run's run ref (format: ../state/run-record.ts).
 *
 * Files to record (started markers, checkpoints) wait in `pending` until the next push takes
 * them; every push is a child commit with a compare-and-swap on the run ref, made through the
 * lease handle, so it is fenced by the lease and never in flight together with another push of
 * the run. A push also carries run.yaml with the lease's deadline: a renewal moves both. Files a
 * push could not land stay pending, so a run that lost its lease still leaves its late
 * checkpoints behind as evidence (markEnded).
 */
import { fail } from '../errors/diagnostic';
import type { Identity } from '../git/object-writer';
import type { RefUpdate } from '../git/refs';
import type { FencedWriteResult, LeaseHandle, PushPart } from '../lease/lease';
import type { LeaseRecord } from '../lease/record';
import { writeRetried } from '../lease/retried-write';
import { type RunDoc, runRefName, serializeRunDoc } from '../state/run-record';
import type { StateStore } from '../state/store';
import { isoSeconds, type Clock } from '../util/clock';

/** A run's run.yaml before the lease is taken: the holder and the deadline come from the lease. */
export type RunDraft = Omit<RunDoc, 'holder' | 'deadline'>;

export class RunRef {
  readonly ref: string;
  oid: string | undefined;
  private lease: LeaseHandle | undefined;
  private readonly pending = new Map<string, string>();
  private written: RunDoc | undefined;

  constructor(
    private readonly store: StateStore,
    private readonly clock: Clock,
    private readonly author: Identity,
    private readonly draft: RunDraft,
  ) {
    this.ref = runRefName(store.loc, draft.run);
  }

  get run(): string {
    return this.draft.run;
  }

  /** run.yaml as last written; set by `creation`, which comes before every other write. */
  private get doc(): RunDoc {
    if (!this.written) throw new Error(`run ${this.draft.run} has no run ref yet`);
    return this.written;
  }

  private set doc(doc: RunDoc) {
    this.written = doc;
  }

  /**
   * The update that creates the run ref, pushed together with the lease acquisition: its run.yaml
   * carries the holder and the deadline of the lease record that push writes (made anew for each
   * attempt).
   */
  async creation(lease: LeaseRecord): Promise<RefUpdate> {
    // The holder as run records always named it: a reader of an earlier version refuses a run
    // record with fields it does not know, and only the lease needs the process's boot and start.
    const { name, host, pid } = lease.holder;
    this.doc = { ...this.draft, holder: { name, host, pid }, deadline: lease.deadline };
    const [oid] = await this.store.writeCommits([
      {
        clearTree: true,
        changes: new Map([['run.yaml', serializeRunDoc(this.doc)]]),
        message: `nyl: run ${this.doc.environment} ${this.doc.run}\n`,
        author: this.author,
        timeMs: this.clock.now(),
      },
    ]);
    this.oid = oid!;
    return { ref: this.ref, expect: null, to: oid! };
  }

  /** Takes the lease the run ref was created with: from now on every push goes through it. */
  attach(lease: LeaseHandle): void {
    this.lease = lease;
    lease.renewalPart = (step) => this.partFor(step.record, `nyl: renew run ${this.doc.run}\n`);
  }

  /** Adds files for the next push. */
  queue(files: Map<string, string>): void {
    for (const [k, v] of files) this.pending.set(k, v);
  }

  hasPending(): boolean {
    return this.pending.size > 0;
  }

  /** Pushes everything pending, renewing the lease in the same push: a holder that lost its lease lands nothing. */
  push(message: string): Promise<FencedWriteResult> {
    const lease = this.lease;
    if (!lease) throw new Error('run ref not attached to its lease');
    return lease.write('renew', (step) => this.partFor(step.record, message));
  }

  /**
   * A child commit with everything pending and run.yaml at the lease's deadline and renewal time
   * (a taker tells clock skew from it when the lease ref is gone); applied when it lands.
   */
  private async partFor(lease: LeaseRecord, message: string): Promise<PushPart> {
    const doc: RunDoc = { ...this.doc, deadline: lease.deadline, ...(lease.renewedAt ? { renewedAt: lease.renewedAt } : {}) };
    const included = new Map(this.pending);
    included.set('run.yaml', serializeRunDoc(doc));
    const [oid] = await this.store.writeCommits([{ parent: this.oid!, changes: included, message, author: this.author, timeMs: this.clock.now() }]);
    return {
      updates: [{ ref: this.ref, expect: this.oid!, to: oid! }],
      landed: () => {
        this.oid = oid!;
        this.doc = doc;
        for (const [k, v] of included) if (this.pending.get(k) === v) this.pending.delete(k);
      },
    };
  }

  /** The update that deletes the run ref in the transition push (evaluated at push time). */
  deletion(): RefUpdate {
    return { ref: this.ref, expect: this.oid ?? null, to: null };
  }

  /**
   * Marks the run ended without a transition commit (cancelled, lease lost, an error), so it waits
   * for import without blocking anyone. When an importer already consumed the ref, it is created
   * again with run.yaml and the late checkpoints only (its history keeps the rest): the records
   * the importer consumed must not be imported twice, and the next import keeps the late ones as
   * evidence. Not fenced by the lease (it may be lost), but alone like every push of the run.
   */
  markEnded(reason: string): Promise<void> {
    const run = async () => {
      this.doc = { ...this.doc, ended: { at: isoSeconds(this.clock.now()), reason } };
      this.pending.set('run.yaml', serializeRunDoc(this.doc));
      if (await this.pushUnfenced(`nyl: run ${this.doc.run} ended (${reason})\n`, false)) return;
      await this.pushUnfenced(`nyl: run ${this.doc.run} ended (${reason}), late record\n`, true);
    };
    return this.lease ? this.lease.exclusive(run) : run();
  }

  private async pushUnfenced(message: string, recreate: boolean): Promise<boolean> {
    if (!this.oid) return false;
    const [oid] = await this.store.writeCommits([
      { parent: this.oid, clearTree: recreate, changes: new Map(this.pending), message, author: this.author, timeMs: this.clock.now() },
    ]);
    const result = await writeRetried({ clock: this.clock }, this.store, [{ ref: this.ref, expect: recreate ? null : this.oid, to: oid! }]);
    if (result.ok) {
      this.oid = oid!;
      this.pending.clear();
      return true;
    }
    if (result.kind === 'unreachable')
      fail('NYL-STATE-UNAVAILABLE', `cannot record run ${this.doc.run} of ${this.store.loc.environment}: ${result.message}`, {
        env: this.store.loc.environment,
      });
    return false;
  }
}
