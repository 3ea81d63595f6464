/**
 * The lease protocol (DESIGN.md section 3).
 *
 * Acquire: an atomic push that creates (or takes over) PREFIX/ENV/lease with a compare-and-swap
 * on its previous value. Renew: a push of a child lease commit, CAS on the current one, while the
 * holder lives. Release: the holder's final atomic push deletes the lease together with the state
 * change (see LeaseHandle.exclusive). A rejected CAS means someone else moved the lease: the
 * holder lost it and must write nothing more.
 */
import { hostname } from 'node:os';
import { diagnostic, fail, NylError } from '../errors/diagnostic';
import { writeCommits, type Identity } from '../git/object-writer';
import type { RefUpdate } from '../git/refs';
import { fromYaml } from '../state/documents';
import { leaseRef, runsPrefix } from '../state/location';
import type { RefSnapshot, StateStore } from '../state/store';
import { isoSeconds } from '../util/clock';
import type { Runtime } from '../util/runtime';
import { breaksCarriedBy, IMPORTERS, RUN_OPERATIONS, type LeaseRecord, leaseStatus, newLeaseRecord, parseLease, serializeLease } from './record';

export interface LeaseView {
  oid: string;
  record: LeaseRecord;
}

export interface AcquireOptions {
  operation: string;
  run: string;
  author: Identity;
  durationMs: number;
  /** Wait up to this long while another holder has the lease. */
  waitMs?: number;
  /** More refs to move in the acquiring push (a run ref). */
  extraUpdates?: (leaseOid: string) => RefUpdate[];
  /** Refs the caller just read: the first attempt decides on them instead of reading again. */
  initial?: RefSnapshot;
  /** Carry a broken lease's `broken` record into the new lease (recover: a crash leaves it broken). */
  keepBroken?: boolean;
}

export interface Acquired {
  handle: LeaseHandle;
  /** The state refs as they were when the lease was taken. */
  snapshot: RefSnapshot;
  /** The lease this acquisition replaced (expired or broken), if any. */
  replaced?: LeaseView;
}

export function formatIdentity(who: Identity): string {
  return `${who.name} <${who.email}>`;
}

export async function readLease(store: StateStore, snapshot: RefSnapshot): Promise<LeaseView | undefined> {
  const oid = snapshot.get(leaseRef(store.loc));
  if (!oid) return undefined;
  const blob = await store.reader.read(`${oid}:lease.yaml`);
  const record = blob ? parseLease(blob.content.toString()) : undefined;
  if (!record) {
    // An unreadable lease still holds the environment: never take over what we cannot read.
    return {
      oid,
      record: newLeaseRecord({
        environment: store.loc.environment,
        run: 'unknown',
        operation: 'unknown',
        holder: { name: 'unknown', host: 'unknown', pid: 0 },
        acquiredAt: isoSeconds(0),
        deadline: '9999-12-31T00:00:00Z',
      }),
    };
  }
  return { oid, record };
}

export function describeHolder(record: LeaseRecord): string {
  return `${record.operation} run ${record.run} of ${record.holder.name} on ${record.holder.host} (pid ${record.holder.pid})`;
}

function heldError(env: string, view: LeaseView): NylError {
  const r = view.record;
  return new NylError(
    diagnostic('NYL-LEASE-HELD', 'error', `the lease of ${env} is held by ${describeHolder(r)} until ${r.deadline}`, {
      env,
      data: { holder: r.holder, run: r.run, operation: r.operation, acquiredAt: r.acquiredAt, deadline: r.deadline },
    }),
  );
}

function brokenError(env: string, view: LeaseView, expired: boolean): NylError {
  const r = view.record;
  const message = expired
    ? `the lease of ${env} expired at ${r.deadline} while ${describeHolder(r)} held it; its run is not imported yet`
    : `the lease of ${env} was broken by ${r.broken!.by} at ${r.broken!.at} (${r.broken!.reason}); its run is not imported yet`;
  return new NylError(
    diagnostic('NYL-LEASE-BROKEN', 'error', message, {
      env,
      expired,
      data: { holder: r.holder, run: r.run, operation: r.operation, ...(r.broken ? { broken: r.broken } : {}) },
    }),
  );
}

function cancelled(env: string): NylError {
  return new NylError(
    diagnostic('NYL-RUN-CANCELLED', 'error', `a signal arrived while waiting for the lease of ${env}; nothing was written`, { env }),
  );
}

/** Reads only run.yaml of every run ref: enough to tell a live run from a dead one. */
export async function readRunHeaders(store: StateStore, refs: RefSnapshot): Promise<{ run: string; ref: string; oid: string; doc?: RunHeader }[]> {
  const prefix = runsPrefix(store.loc);
  const found = [...refs].filter(([ref]) => ref.startsWith(prefix));
  if (found.length === 0) return [];
  const blobs = await store.reader.readMany(found.map(([, oid]) => `${oid}:run.yaml`));
  return found.map(([ref, oid], i) => {
    const out: { run: string; ref: string; oid: string; doc?: RunHeader } = { run: ref.slice(prefix.length), ref, oid };
    const b = blobs[i];
    if (b) out.doc = fromYaml<RunHeader>(b.content.toString());
    return out;
  });
}

/** The fields of a run ref's run.yaml the lease protocol reads. */
export interface RunHeader {
  run: string;
  operation: string;
  holder: LeaseRecord['holder'];
  startedAt: string;
  deadline: string;
  ended?: { at: string; reason: string };
}

/** Builds a lease commit whose parent is the lease it replaces or renews. */
async function writeLeaseCommit(rt: Runtime, store: StateStore, record: LeaseRecord, parent: string | undefined, author: Identity, message: string): Promise<string> {
  const [oid] = await writeCommits(rt.git, store.workDir, [
    {
      ...(parent ? { parent } : {}),
      clearTree: true,
      changes: new Map([['lease.yaml', serializeLease(record)]]),
      message,
      author,
      timeMs: rt.clock.now(),
    },
  ]);
  return oid!;
}

/** The refs after a successful write of updates onto snapshot. */
export function applyUpdates(snapshot: RefSnapshot, updates: RefUpdate[]): RefSnapshot {
  const next = new Map(snapshot);
  for (const u of updates) {
    if (u.to === null) next.delete(u.ref);
    else next.set(u.ref, u.to);
  }
  return next;
}

/** Takes the environment's lease, waiting up to waitMs for a live holder. */
export async function acquireLease(rt: Runtime, store: StateStore, options: AcquireOptions): Promise<Acquired> {
  const env = store.loc.environment;
  const waitUntil = rt.clock.now() + (options.waitMs ?? 0);
  const importer = IMPORTERS.has(options.operation);
  for (let attempt = 0; ; attempt++) {
    if (rt.cancel.aborted) throw cancelled(env);
    const snapshot = attempt === 0 && options.initial ? options.initial : await store.snapshot();
    const current = await readLease(store, snapshot);
    const now = rt.clock.now();
    let blocked: NylError | undefined;
    if (current) {
      const status = leaseStatus(current.record, now);
      if (status === 'live') blocked = heldError(env, current);
      else if (!importer && (status === 'broken' || RUN_OPERATIONS.has(current.record.operation))) {
        throw brokenError(env, current, status === 'expired');
      }
    }
    if (!blocked && !current?.record.broken) {
      // "A live run whose lease ref is already gone" still holds the environment until its deadline.
      const live = (await readRunHeaders(store, snapshot)).find((h) => h.doc && !h.doc.ended && Date.parse(h.doc.deadline) > now);
      if (live?.doc) {
        blocked = heldError(env, {
          oid: live.oid,
          record: newLeaseRecord({ environment: env, run: live.run, operation: live.doc.operation, holder: live.doc.holder, acquiredAt: live.doc.startedAt, deadline: live.doc.deadline }),
        });
      }
    }
    if (blocked) {
      if (now >= waitUntil) throw blocked;
      await rt.clock.sleep(Math.min(1000, 100 + attempt * 100, waitUntil - now), rt.cancel);
      if (rt.cancel.aborted) throw cancelled(env);
      continue;
    }
    const record = newLeaseRecord({
      environment: env,
      run: options.run,
      operation: options.operation,
      holder: { name: formatIdentity(options.author), host: hostname(), pid: process.pid },
      acquiredAt: isoSeconds(now),
      deadline: isoSeconds(now + options.durationMs),
    });
    const carried = current ? breaksCarriedBy(current.record) : [];
    if (carried.length > 0) record.unrecordedBreaks = carried;
    if (options.keepBroken && current?.record.broken) {
      record.broken = current.record.broken;
      record.brokenHolder = current.record.brokenHolder ?? { run: current.record.run, operation: current.record.operation, holder: current.record.holder };
    }
    const oid = await writeLeaseCommit(rt, store, record, current?.oid, options.author, `nyl: lease ${env} (${options.operation})\n\nrun: ${options.run}\n`);
    const updates: RefUpdate[] = [{ ref: leaseRef(store.loc), expect: current?.oid ?? null, to: oid }];
    if (options.extraUpdates) updates.push(...options.extraUpdates(oid));
    const result = await store.write(updates);
    if (result.ok) {
      const handle = new LeaseHandle(rt, store, oid, record, options.author, options.durationMs);
      const after = applyUpdates(snapshot, updates);
      const acquired: Acquired = { handle, snapshot: after };
      if (current) acquired.replaced = current;
      return acquired;
    }
    if (result.kind === 'unreachable') {
      fail('NYL-STATE-UNAVAILABLE', `cannot push to the state repository of ${env}: ${result.message}`, { env });
    }
    // Someone moved the lease between our read and our push: read again and decide anew.
    if (attempt > 50) fail('NYL-STATE-CONFLICT', `the lease of ${env} kept changing while acquiring it`, { env });
  }
}

/**
 * A held lease. All pushes that expect the lease go through exclusive(), so a renewal never
 * races the holder's own final push.
 */
export class LeaseHandle {
  lost = false;
  /** Called after each successful renewal with the new deadline (the run ref follows it). */
  onRenewed: ((deadline: string) => Promise<void>) | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private released = false;

  constructor(
    private readonly rt: Runtime,
    private readonly store: StateStore,
    public oid: string,
    public record: LeaseRecord,
    private readonly author: Identity,
    private readonly durationMs: number,
  ) {}

  get ref(): string {
    return leaseRef(this.store.loc);
  }

  /** The deadline of the lease as last pushed: past it, another importer may take it over. */
  get deadlineMs(): number {
    return Date.parse(this.record.deadline);
  }

  /** Runs fn with the current lease oid, serialized with renewals. */
  exclusive<T>(fn: (leaseOid: string) => Promise<T>): Promise<T> {
    const next = this.chain.then(() => fn(this.oid));
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Renews the deadline now. Returns false when the lease was lost. */
  renew(): Promise<boolean> {
    return this.exclusive(async (current) => {
      if (this.lost || this.released) return !this.lost;
      const now = this.rt.clock.now();
      const record: LeaseRecord = { ...this.record, deadline: isoSeconds(now + this.durationMs), renewedAt: isoSeconds(now) };
      const oid = await writeLeaseCommit(this.rt, this.store, record, current, this.author, `nyl: renew lease ${record.environment}\n`);
      const result = await this.store.write([{ ref: this.ref, expect: current, to: oid }]);
      if (result.ok) {
        this.oid = oid;
        this.record = record;
        await this.onRenewed?.(record.deadline).catch(() => undefined);
        return true;
      }
      if (result.kind === 'rejected') this.lost = true;
      return !this.lost;
    });
  }

  /** Renews every third of the lease duration until stopped. */
  startRenewal(): void {
    const every = Math.max(200, Math.floor(this.durationMs / 3));
    this.timer = setInterval(() => {
      void this.renew().catch(() => undefined);
    }, every);
    this.timer.unref();
  }

  stopRenewal(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The update that releases the lease, for the holder's final atomic push. */
  releaseUpdate(leaseOid: string): RefUpdate {
    return { ref: this.ref, expect: leaseOid, to: null };
  }

  markReleased(): void {
    this.released = true;
    this.stopRenewal();
  }

  /**
   * Ends the lease of an operation that writes no transition: an importer that took a broken lease
   * over puts it back (so the break is still recorded by the next importer), anyone else releases.
   */
  async end(replaced: LeaseView | undefined): Promise<boolean> {
    return replaced?.record.broken || replaced?.record.unrecordedBreaks?.length ? this.restore(replaced) : this.release();
  }

  /** Puts back the lease this one replaced (recover that ends before its commit lands). */
  async restore(previous: LeaseView): Promise<boolean> {
    this.stopRenewal();
    return this.exclusive(async (current) => {
      const result = await this.store.write([{ ref: this.ref, expect: current, to: previous.oid }]);
      this.released = true;
      return result.ok;
    });
  }

  /** Releases the lease without changing state (an operation that ends writing nothing). */
  async release(): Promise<boolean> {
    this.stopRenewal();
    if (this.released) return true;
    return this.exclusive(async (current) => {
      const result = await this.store.write([this.releaseUpdate(current)]);
      this.released = true;
      return result.ok;
    });
  }
}
