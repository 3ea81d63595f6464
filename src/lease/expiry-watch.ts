/**
 * A taker's own observation of a lease: expiry judged by the taker's clock, never by the holder's
 * timestamps alone. The model is Kubernetes' leader election, where a candidate records when it
 * saw the lease record change and takes over only once the record stayed unchanged for the lease
 * duration on its own monotonic clock.
 *
 * Nyl's holders renew the lease (and their run ref) every third of the lease duration. A lease
 * whose deadline has passed on the taker's clock may still be held by a live holder whose clock
 * runs behind (or the taker's ahead): its deadline then means nothing. So a taker watches what it
 * reads, the lease ref and the run refs, and takes over an expired lease only once they stayed
 * exactly as they were for one renewal interval plus the skew margin (`windowMs`) on its own
 * monotonic clock: a live holder renews in that time, whatever either clock says. A change while
 * the lease looked expired is such a renewal: the holder is live, and the clocks disagree.
 *
 * Whatever the stamps say, a lease whose refs stayed unchanged for a whole lease duration plus
 * the window has no live holder (it would have renewed three times): a dead holder whose clock
 * ran ahead of the taker's, which stamped its lease in the taker's future, is taken over too by
 * a taker that waits (`--wait-lease`) that long.
 *
 * An observation outlives the command that made it where that is safe (ObservationMemory): on
 * the same machine and boot, whose monotonic clock every process shares, for exactly the refs it
 * saw. A ref that moved never comes back to the same object id (a lease commit names its parent
 * and its times), so refs seen alike twice stayed alike in between.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runsPrefix } from '../state/location';
import type { StateLocation } from '../state/location';
import type { RefSnapshot } from '../state/store';
import { cacheRoot } from '../util/cache-dir';
import { type Clock, monotonicMs } from '../util/clock';
import type { LeaseTiming } from './record';

/** What a taker saw, and since when (monotonic milliseconds). */
interface Observed {
  key: string;
  sinceMs: number;
  /** The lease looked expired when it was last seen so. */
  lookedExpired: boolean;
}

/** Where an observation is kept between commands of one boot (the cache); absent: this command only. */
export interface ObservationMemory {
  load(): Observed | undefined;
  save(observed: Observed): void;
}

/** What a look at the lease tells a taker. */
export interface Sight {
  /** How long the refs must still stay as they are before an expired lease may be taken over. */
  remainingMs: number;
  /** How long the refs have stayed as they are now, on this taker's monotonic clock. */
  unchangedMs: number;
  /** They changed since this taker last looked: a holder wrote (a renewal, a checkpoint, a new lease). */
  changed: boolean;
  /** They changed while the lease looked expired: its holder renewed it, so it is live. */
  renewedWhileExpired: boolean;
}

/** How long a taker watches an expired lease: one renewal interval plus the skew margin. */
export function watchWindowMs(timing: LeaseTiming): number {
  return Math.max(100, Math.floor(timing.durationMs / 3)) + timing.skewMs;
}

/** The refs whose movement says a holder lives: the lease ref and every run ref. */
export function watchKey(loc: StateLocation, leaseRef: string, snapshot: RefSnapshot): string {
  const prefix = runsPrefix(loc);
  const refs = [...snapshot].filter(([ref]) => ref === leaseRef || ref.startsWith(prefix)).map(([ref, oid]) => `${ref} ${oid}`);
  return createHash('sha256').update(refs.sort().join('\n')).digest('hex');
}

export class ExpiryWatch {
  private seen: Observed | undefined;

  constructor(
    private readonly clock: Clock,
    readonly windowMs: number,
    private readonly memory?: ObservationMemory,
  ) {
    this.seen = memory?.load();
  }

  /** Records what the taker sees now: the refs' key, and whether the lease looks expired on its clock. */
  see(key: string, looksExpired: boolean): Sight {
    const now = monotonicMs(this.clock);
    const before = this.seen;
    const changed = before !== undefined && before.key !== key;
    if (!before || changed) this.seen = { key, sinceMs: now, lookedExpired: looksExpired };
    else this.seen = { ...before, lookedExpired: looksExpired };
    // Written when it says something new: a taker polling with --wait-lease looks every second.
    if (!before || changed || before.lookedExpired !== looksExpired) this.memory?.save(this.seen);
    const renewedWhileExpired = changed && before.lookedExpired && looksExpired;
    const unchangedMs = now - this.seen.sinceMs;
    return { remainingMs: Math.max(0, this.windowMs - unchangedMs), unchangedMs, changed, renewedWhileExpired };
  }
}

/**
 * Observations kept in Nyl's cache directory, one file per environment and state repository,
 * valid for the boot that made them (their times are that boot's monotonic clock). A file that
 * cannot be read or written is no observation: the taker watches afresh.
 */
export function cachedObservations(env: NodeJS.ProcessEnv, place: string, bootId: string | undefined): ObservationMemory | undefined {
  if (!bootId) return undefined;
  const file = join(cacheRoot(env), 'lease-watch', `${createHash('sha256').update(place).digest('hex').slice(0, 32)}.json`);
  return {
    load() {
      try {
        const saved = JSON.parse(readFileSync(file, 'utf8')) as Observed & { boot?: unknown };
        return saved.boot === bootId && typeof saved.key === 'string' && Number.isFinite(saved.sinceMs)
          ? { key: saved.key, sinceMs: saved.sinceMs, lookedExpired: saved.lookedExpired === true }
          : undefined;
      } catch {
        return undefined;
      }
    },
    save(observed) {
      try {
        mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
        writeFileSync(file, JSON.stringify({ ...observed, boot: bootId }), { mode: 0o600 });
      } catch {
        // No cache: the next command watches afresh.
      }
    },
  };
}
