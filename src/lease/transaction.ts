/**
 * One lease transaction, the template every state writer follows (state init, reconcile, recover,
 * hold, resume): take the lease, keep renewing it while the body runs, and end in exactly one of
 * three ways, whatever happens inside:
 * - published: the body's transition landed with the lease released in the same atomic push;
 * - ended: the body chose to write nothing (`tx.end`), or it failed: the lease is released, or an
 *   importer that took a broken lease over puts it back so that the break is still recorded;
 * - lost: someone took the lease over; nothing more is written under it.
 * `onUnpublished` runs first in the last two cases (a run marks its run ref ended).
 */
import type { Identity } from '../git/object-writer';
import type { RefUpdate } from '../git/refs';
import type { RefSnapshot, StateStore } from '../state/store';
import { type AcquireOptions, acquireLease, type LeaseHandle, type LeaseRuntime, type LeaseView } from './lease';
import { publishTransition, type PublishResult, type RefTransition } from './publish';

/** Why a transaction ended without its transition. */
type UnpublishedReason = 'error' | 'lease-lost' | 'cancelled' | 'nothing-to-write' | 'state-unavailable';

export interface LeaseTransaction {
  readonly lease: LeaseHandle;
  /** The state refs under the lease (as they were once it was taken). */
  readonly snapshot: RefSnapshot;
  /** The expired or broken lease this one replaced. */
  readonly replaced: LeaseView | undefined;
  /** Publishes the transition and releases the lease in the same atomic push. */
  publish(transitions: RefTransition[], extraUpdates?: () => RefUpdate[]): Promise<PublishResult>;
  /** Ends without a transition (released, or a broken lease put back). */
  end(reason: UnpublishedReason): Promise<void>;
  /** Ends without a transition, releasing the lease even if it replaced a broken one. */
  release(): Promise<void>;
}

export interface TransactionOptions extends AcquireOptions {
  author: Identity;
  /** Runs as soon as the lease is held, before renewals start (a run attaches its run ref). */
  onAcquired?: (lease: LeaseHandle) => void;
  /** Runs when the transaction ends without its transition, before the lease is let go. */
  onUnpublished?: (reason: UnpublishedReason) => Promise<void>;
}

class Transaction implements LeaseTransaction {
  settled = false;

  constructor(
    private readonly rt: LeaseRuntime,
    private readonly store: StateStore,
    private readonly options: TransactionOptions,
    readonly lease: LeaseHandle,
    public snapshot: RefSnapshot,
    readonly replaced: LeaseView | undefined,
  ) {}

  async publish(transitions: RefTransition[], extraUpdates?: () => RefUpdate[]): Promise<PublishResult> {
    const published = await publishTransition(this.rt, this.store, this.lease, transitions, this.options.author, this.snapshot, extraUpdates);
    this.settled = true;
    return published;
  }

  async release(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    await this.lease.release();
  }

  async end(reason: UnpublishedReason): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    this.lease.stopRenewal();
    const lost = this.lease.lost;
    await this.options.onUnpublished?.(lost ? 'lease-lost' : reason).catch(() => undefined);
    if (!lost) await this.lease.end(this.replaced).catch(() => undefined);
  }
}

/** Runs body under the environment's lease; see the module header for how it ends. */
export async function withLease<T>(rt: LeaseRuntime, store: StateStore, options: TransactionOptions, body: (tx: LeaseTransaction) => Promise<T>): Promise<T> {
  const acquired = await acquireLease(rt, store, options);
  const tx = new Transaction(rt, store, options, acquired.handle, acquired.snapshot, acquired.replaced);
  options.onAcquired?.(acquired.handle);
  acquired.handle.startRenewal();
  try {
    // The refs read before the lease was taken may be stale (see Acquired). Under the lease
    // nothing moves any more: the body decides on the refs as they are.
    if (acquired.mayBeStale) tx.snapshot = await store.snapshot();
    await rt.faults.reach('lease-acquired');
    return await body(tx);
  } finally {
    acquired.handle.stopRenewal();
    await tx.end('error');
  }
}
