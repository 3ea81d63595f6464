/**
 * The run ref `PREFIX/ENV/runs/RUN`: a live or dead run's record. `run.yaml` says who runs what;
 * `units/NAME.yaml` records that a unit started (before its driver runs) and its checkpoint
 * (after). Each write is a child commit pushed with a compare-and-swap on the run ref, so the
 * record's history is the run's log and a takeover that consumed the ref is noticed.
 */
import { fail } from '../errors/diagnostic';
import { writeCommits, type Identity } from '../git/object-writer';
import type { RefUpdate } from '../git/refs';
import { API_VERSION, type DesiredUnitDoc, fromYaml, toYaml } from '../state/documents';
import { runsPrefix } from '../state/location';
import type { StateStore } from '../state/store';
import type { Runtime } from '../util/runtime';
import { isoSeconds } from '../util/clock';

export interface RunDoc {
  apiVersion: string;
  kind: 'Run';
  run: string;
  environment: string;
  operation: string;
  holder: { name: string; host: string; pid: number };
  startedAt: string;
  deadline: string;
  source: string;
  sourceOverride?: boolean;
  /** Set when the run ended without its transition commit (cancelled, lease lost). */
  ended?: { at: string; reason: string };
}

export type CheckpointResult = 'receipt' | 'failed' | 'uncertain' | 'not-started';

export interface Checkpoint {
  result: CheckpointResult;
  finishedAt: string;
  outputs?: Record<string, unknown>;
  reason?: string;
  retryable?: boolean;
  acknowledgementRequired?: boolean;
}

export interface RunUnitDoc {
  unit: string;
  uid: string;
  kind: string;
  executionKey: string;
  startedAt: string;
  /** The desired document the unit executes for; becomes the receipt's copy. */
  desired: DesiredUnitDoc;
  checkpoint?: Checkpoint;
}

export function runRefName(store: StateStore, run: string): string {
  return `${runsPrefix(store.loc)}${run}`;
}

export function newRunDoc(init: Omit<RunDoc, 'apiVersion' | 'kind'>): RunDoc {
  return { apiVersion: API_VERSION, kind: 'Run', ...init };
}

export function parseRunUnit(text: string): RunUnitDoc {
  return fromYaml<RunUnitDoc>(text);
}

/**
 * Writes to one run ref, each write a child commit with a compare-and-swap, one at a time.
 * Changes that could not be pushed stay pending, so a run that lost its ref can still leave its
 * late checkpoints behind as evidence (markEnded).
 */
export class RunRecordWriter {
  readonly ref: string;
  oid: string | undefined;
  private doc: RunDoc | undefined;
  private readonly pending = new Map<string, string>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly rt: Runtime,
    private readonly store: StateStore,
    readonly run: string,
    private readonly author: Identity,
  ) {
    this.ref = runRefName(store, run);
  }

  /** The commit that creates the run ref; pushed together with the lease acquisition. */
  async createCommit(doc: RunDoc): Promise<string> {
    this.doc = doc;
    const [oid] = await writeCommits(this.rt.git, this.store.workDir, [
      { clearTree: true, changes: new Map([['run.yaml', toYaml(doc)]]), message: `nyl: run ${doc.environment} ${doc.run}\n`, author: this.author, timeMs: this.rt.clock.now() },
    ]);
    return oid!;
  }

  creationUpdate(oid: string): RefUpdate {
    return { ref: this.ref, expect: null, to: oid };
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Pushes pending changes with a CAS on the run ref; false when the ref moved or is gone. */
  private async push(message: string, recreate: boolean): Promise<boolean> {
    if (!this.oid) throw new Error('run ref not created');
    const [oid] = await writeCommits(this.rt.git, this.store.workDir, [
      { parent: this.oid, changes: new Map(this.pending), message, author: this.author, timeMs: this.rt.clock.now() },
    ]);
    const result = await this.store.write([{ ref: this.ref, expect: recreate ? null : this.oid, to: oid! }]);
    if (result.ok) {
      this.oid = oid!;
      this.pending.clear();
      return true;
    }
    if (result.kind === 'unreachable') {
      fail('NYL-STATE-UNAVAILABLE', `cannot record run ${this.run} of ${this.store.loc.environment}: ${result.message}`, { env: this.store.loc.environment });
    }
    return false;
  }

  /** Records files in the run ref; throws NYL-LEASE-LOST when the ref moved under us. */
  write(changes: Map<string, string>, message: string): Promise<void> {
    return this.serialized(async () => {
      for (const [k, v] of changes) this.pending.set(k, v);
      if (await this.push(message, false)) return;
      fail('NYL-LEASE-LOST', `the run ref ${this.ref} was taken over; run ${this.run} records nothing more in it`, { env: this.store.loc.environment });
    });
  }

  /** Forgets changes that were never pushed (start records of units that then did not start). */
  discard(paths: Iterable<string>): void {
    for (const p of paths) this.pending.delete(p);
  }

  /** Moves the run's deadline with the lease's (a live run's run ref carries the same deadline). */
  renew(deadline: string): Promise<void> {
    return this.serialized(async () => {
      if (!this.doc) return;
      this.doc = { ...this.doc, deadline };
      this.pending.set('run.yaml', toYaml(this.doc));
      await this.push(`nyl: renew run ${this.run}\n`, false);
    });
  }

  /**
   * Marks the run ended without a transition commit (cancelled, lease lost), so it waits for import
   * without blocking anyone. When an importer already consumed the ref, the run ref is created
   * again with the late checkpoints: the next import keeps them as evidence.
   */
  markEnded(reason: string): Promise<void> {
    return this.serialized(async () => {
      if (!this.doc) return;
      this.doc = { ...this.doc, ended: { at: isoSeconds(this.rt.clock.now()), reason } };
      this.pending.set('run.yaml', toYaml(this.doc));
      if (await this.push(`nyl: run ${this.run} ended (${reason})\n`, false)) return;
      await this.push(`nyl: run ${this.run} ended (${reason}), late record\n`, true);
    });
  }

  deletion(): RefUpdate {
    return { ref: this.ref, expect: this.oid ?? null, to: null };
  }
}

export function unitFile(name: string): string {
  return `units/${name}.yaml`;
}

export function serializeRunUnit(doc: RunUnitDoc): string {
  return toYaml(doc);
}
