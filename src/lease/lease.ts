/**
 * The lease protocol: one holder per environment, fenced by the lease ref.
 *
 * Acquire: an atomic push that creates (or takes over) PREFIX/ENV/lease with a compare-and-swap
 * on its previous value. A held lease is a LeaseHandle, and every push of the holder goes through
 * it, one at a time (`exclusive`), each moving the lease in the same atomic push:
 * - `renew`: a child lease commit with a new deadline. Every push of the holder but its last
 *   renews (the periodic renewal, started markers, checkpoints), so a lease moved by anyone else
 *   rejects the push, and a holder that lost its lease starts nothing and records nothing.
 *   (Pushing the lease to its own value, as a "fence", would not do: git checks such a ref only
 *   against the refs the remote advertised as the push began, not under its ref lock, and a
 *   takeover in that window went unseen.)
 * - `release`: the lease is deleted (the holder's final push).
 * A rejected push whose lease moved means the holder lost it: `lost` is set and it writes nothing
 * more under the lease.
 */
import { hostname } from 'node:os';
import { type Diagnostic, diagnostic, fail, NylError, type Severity } from '../errors/diagnostic';
import type { Identity } from '../git/object-writer';
import type { RefUpdate, RefWriteResult } from '../git/refs';
import { corruptError, type Damage } from '../state/damage';
import { damagedPrefix, leaseRef, stateRefsOf } from '../state/location';
import { readRunHeaders, runIsLive } from '../state/run-record';
import { applyUpdates, type RefSnapshot, type StateStore } from '../state/store';
import { isoMillis, isoSeconds } from '../util/clock';
import type { Runtime } from '../util/runtime';
import { writeRetried } from './retried-write';
import {
  breaksCarriedBy,
  clockSkewOf,
  IMPORTERS,
  RUN_OPERATIONS,
  type LeaseRecord,
  type LeaseSettings,
  type LeaseStatus,
  type LeaseTiming,
  leaseStatus,
  leaseTiming,
  newLeaseRecord,
  serializeLease,
  withoutCarriedBreak,
} from './record';
import { leaseDamage, parseLeaseDocument } from './lease-doc';
import { cachedObservations, ExpiryWatch, type ObservationMemory, type Sight, watchKey, watchWindowMs } from './expiry-watch';
import { LINUX_PROC, provablyGone, thisProcess } from '../util/process-identity';

/**
 * What the lease needs of the runtime: time, cancellation, fault points; `log` (stderr) says once
 * that a taker waits; `env` locates the cache where a taker's observations outlive its command.
 */
export type LeaseRuntime = Pick<Runtime, 'clock' | 'cancel' | 'faults'> & Partial<Pick<Runtime, 'log' | 'env'>>;

export interface LeaseView {
  oid: string;
  record: LeaseRecord;
  /** Set when the lease ref holds no readable lease: it stops every taker until `lease break`. */
  damage?: Damage;
}

/** The lease settings are the Environment's: its duration, and its skew margin when it sets one. */
export interface AcquireOptions extends LeaseSettings {
  operation: string;
  run: string;
  author: Identity;
  /** Wait up to this long while another holder has the lease. */
  waitMs?: number;
  /** More refs to move in the acquiring push (a run ref, which carries the new lease's deadline). */
  extraUpdates?: (record: LeaseRecord) => Promise<RefUpdate[]>;
  /** Refs the caller just read: the first attempt decides on them instead of reading again. */
  initial?: RefSnapshot;
  /** Carry a broken lease's `broken` record into the new lease (recover: a crash leaves it broken). */
  keepBroken?: boolean;
}

interface Acquired {
  handle: LeaseHandle;
  /** The refs the acquisition decided on, with its own updates applied. */
  snapshot: RefSnapshot;
  /** The lease this acquisition replaced (expired or broken), if any. */
  replaced?: LeaseView;
  /**
   * Refs may have moved between the read of `snapshot` and the push that took the lease, although
   * the lease ref was where the push expected it; read them again under the lease before deciding
   * on them. The compare-and-swap covers the lease ref alone:
   * - an absent lease ref may have been taken and let go again meanwhile (another writer's whole
   *   transaction; seconds when the push was retried);
   * - a takeover of an expired lease reads again, as it always did. Every write of the old
   *   holder moves its lease ref, so the takeover's push lands only after all of them that will
   *   ever land, but refs that other writers push without the lease (hold signals) may be newer.
   * A broken lease needs no second read: the break moved its lease ref, so nothing of the old
   * holder landed since.
   */
  mayBeStale: boolean;
}

export function formatIdentity(who: Identity): string {
  return `${who.name} <${who.email}>`;
}

export function describeHolder(record: LeaseRecord): string {
  return `${record.operation} run ${record.run} of ${record.holder.name} on ${record.holder.host} (pid ${record.holder.pid})`;
}

/** The record that stands for a damaged lease: its holder is unknown, so nobody takes it over unbroken. */
function unreadableLease(environment: string): LeaseRecord {
  return newLeaseRecord({
    environment,
    run: 'unknown',
    operation: 'unknown',
    holder: { name: 'unknown', host: 'unknown', pid: 0 },
    acquiredAt: isoSeconds(0),
    deadline: '9999-12-31T00:00:00.000Z',
  });
}

export async function readLease(store: StateStore, snapshot: RefSnapshot): Promise<LeaseView | undefined> {
  const oid = snapshot.get(leaseRef(store.loc));
  if (!oid) return undefined;
  const blob = await store.reader.read(`${oid}:lease.yaml`);
  const parsed = blob ? parseLeaseDocument<LeaseRecord>(blob.content.toString()) : undefined;
  if (parsed?.ok) return { oid, record: parsed.value };
  return { oid, record: unreadableLease(store.loc.environment), damage: await leaseDamage(store.reader, leaseRef(store.loc), oid, parsed) };
}

/** A live run whose lease ref is already gone still holds the environment until its deadline. */
export async function findLiveRun(store: StateStore, snapshot: RefSnapshot, nowMs: number, skewMs: number): Promise<LeaseView | undefined> {
  const headers = await readRunHeaders(store.reader, store.loc, snapshot);
  const live = headers.find((h) => h.doc && runIsLive(h.doc, nowMs, skewMs));
  if (!live?.doc) return undefined;
  const d = live.doc;
  const stamps = { acquiredAt: d.startedAt, deadline: d.deadline, ...(d.renewedAt ? { renewedAt: d.renewedAt } : {}) };
  return { oid: live.oid, record: newLeaseRecord({ environment: store.loc.environment, run: live.run, operation: d.operation, holder: d.holder, ...stamps }) };
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

/** NYL-CLOCK-SKEW: the holder stamped its lease (or run) `aheadMs` in this host's future. */
export function skewDiagnostic(env: string, view: LeaseView, aheadMs: number, skewMs: number, severity: Severity = 'error'): Diagnostic {
  const r = view.record;
  const here = hostname();
  const ahead = `${Math.round(aheadMs / 1000)} s`;
  const message = `the lease of ${env} is stamped ${ahead} in the future of this host's clock (${here}): ${describeHolder(r)} runs on a clock that far ahead, or this one runs behind; beyond the skew margin of ${Math.round(skewMs / 1000)} s no deadline can be trusted, so nothing is taken over`;
  return diagnostic('NYL-CLOCK-SKEW', severity, message, {
    env,
    data: { hosts: [r.holder.host, here], holder: r.holder, run: r.run, aheadMs, skewMarginMs: skewMs },
  });
}

export function brokenError(env: string, view: LeaseView, expired: boolean, gone = false): NylError {
  const r = view.record;
  const message = gone
    ? `the lease of ${env} is held by ${describeHolder(r)}, whose process on this machine is gone; its run is not imported yet`
    : expired
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
  return new NylError(diagnostic('NYL-RUN-CANCELLED', 'error', `a signal arrived while waiting for the lease of ${env}; nothing was written`, { env }));
}

/** Builds a lease commit whose parent is the lease it replaces or renews. */
async function writeLeaseCommit(
  rt: LeaseRuntime,
  store: StateStore,
  record: LeaseRecord,
  parent: string | undefined,
  author: Identity,
  message: string,
): Promise<string> {
  const [oid] = await store.writeCommits([
    { ...(parent ? { parent } : {}), clearTree: true, changes: new Map([['lease.yaml', serializeLease(record)]]), message, author, timeMs: rt.clock.now() },
  ]);
  return oid!;
}

/** Why this operation may not take the lease now: an error to wait on, or a lease to watch for so long first. */
type Blocker = { error: NylError } | { watchMs: number; view: LeaseView };

/**
 * Why the current lease (or a live run) keeps this operation from taking the lease now, or
 * undefined when it may be taken. Throws NYL-LEASE-BROKEN at once when only an importer may take
 * it over, and NYL-CLOCK-SKEW for a holder stamped beyond the skew margin in this host's future.
 */
async function blockerOf(
  store: StateStore,
  snapshot: RefSnapshot,
  current: LeaseView | undefined,
  importer: boolean,
  nowMs: number,
  timing: LeaseTiming,
  watch: ExpiryWatch,
): Promise<Blocker | undefined> {
  const env = store.loc.environment;
  if (current?.damage) throw corruptError(env, [current.damage]);
  if (current) {
    const judged = judge(store, snapshot, current, nowMs, timing, watch);
    if (judged.held) return { error: judged.held };
    if (!importer && (judged.status === 'broken' || RUN_OPERATIONS.has(current.record.operation)))
      throw brokenError(env, current, judged.status === 'expired', judged.gone);
    if (judged.status === 'broken') return undefined;
    if (judged.watchMs > 0) return { watchMs: judged.watchMs, view: current };
    // Its holder is gone, or its refs (its run's included) stayed unchanged for the window: no
    // run ref of it may hold the environment by a deadline its own clock wrote.
    return undefined;
  }
  const live = await findLiveRun(store, snapshot, nowMs, timing.skewMs);
  return live ? { error: liveError(env, live, nowMs, timing, false) } : undefined;
}

/**
 * The lease as this taker judges it (./expiry-watch.ts): broken by its record; expired at once
 * when its holder is provably gone (a process of this machine and boot that no longer runs);
 * otherwise by its deadline on this host's clock, and an expired one only once its refs stayed
 * as they were for the watch window (`watchMs` is what is left of it). A lease that changed
 * while it looked expired was renewed: it is held, whatever its stamps say.
 */
function judge(
  store: StateStore,
  snapshot: RefSnapshot,
  current: LeaseView,
  nowMs: number,
  timing: LeaseTiming,
  watch: ExpiryWatch,
): { status: LeaseStatus; watchMs: number; held?: NylError; gone?: boolean } {
  const env = store.loc.environment;
  const byClock = leaseStatus(current.record, nowMs, timing.skewMs);
  if (byClock === 'broken') return { status: 'broken', watchMs: 0 };
  if (provablyGone(current.record.holder)) return { status: 'expired', watchMs: 0, gone: true };
  const sight = watch.see(watchKey(store.loc, leaseRef(store.loc), snapshot), byClock === 'expired');
  // Three renewals would have moved it meanwhile: no holder lives, whatever its stamps say.
  if (sight.unchangedMs >= timing.durationMs + watch.windowMs) return { status: 'expired', watchMs: 0 };
  if (byClock === 'live') return { status: 'live', watchMs: 0, held: liveError(env, current, nowMs, timing, sight.changed) };
  if (sight.renewedWhileExpired) return { status: 'live', watchMs: 0, held: renewedError(env, current, timing) };
  return { status: 'expired', watchMs: sight.remainingMs };
}

/**
 * A live holder is waited for. One whose stamps lie beyond the skew margin in this host's future
 * is NYL-CLOCK-SKEW: thrown at once when this taker saw it renew (no deadline can be trusted, and a
 * live holder is never taken over), else the error a taker that cannot wait stops with; a taker
 * that waits watches it, and takes it over once it stayed unchanged for a lease and the window.
 */
function liveError(env: string, view: LeaseView, nowMs: number, timing: LeaseTiming, renewed: boolean): NylError {
  const ahead = clockSkewOf(view.record, nowMs, timing.skewMs);
  if (ahead === undefined) return heldError(env, view);
  const skew = new NylError(skewDiagnostic(env, view, ahead, timing.skewMs));
  if (renewed) throw skew;
  return skew;
}

/** NYL-LEASE-HELD for a holder that renewed a lease whose deadline had passed on this host's clock. */
function renewedError(env: string, view: LeaseView, timing: LeaseTiming): NylError {
  const r = view.record;
  const message = `the lease of ${env} is held by ${describeHolder(r)}: it was renewed while its deadline ${r.deadline} had passed by this host's clock (${hostname()}), so the two clocks disagree by more than the skew margin of ${Math.round(timing.skewMs / 1000)} s; a live holder is never taken over, whatever its stamps say`;
  return new NylError(
    diagnostic('NYL-LEASE-HELD', 'error', message, {
      env,
      data: { holder: r.holder, run: r.run, operation: r.operation, acquiredAt: r.acquiredAt, deadline: r.deadline, clocksDisagree: true },
    }),
  );
}

function newHolderRecord(env: string, options: AcquireOptions, current: LeaseView | undefined, nowMs: number): LeaseRecord {
  const record = newLeaseRecord({
    environment: env,
    run: options.run,
    operation: options.operation,
    holder: { name: formatIdentity(options.author), ...thisProcess() },
    acquiredAt: isoSeconds(nowMs),
    deadline: isoMillis(nowMs + options.durationMs),
  });
  const carried = current ? breaksCarriedBy(current.record) : [];
  if (carried.length > 0) record.unrecordedBreaks = carried;
  if (options.keepBroken && current?.record.broken) {
    record.broken = current.record.broken;
    record.brokenHolder = current.record.brokenHolder ?? { run: current.record.run, operation: current.record.operation, holder: current.record.holder };
  }
  return record;
}

/** More refs than this in the snapshot: the acquisition reads them again instead of fencing each. */
const MAX_DECISION_FENCES = 64;

/**
 * On a network remote, the acquiring push also fences every ref the decision read (each pushed
 * to the value it was read at), so that a push that lands proves them unchanged as of the push's
 * ref advertisement and the refs need not be read again under the lease: one round trip less for
 * every writer (issue 33). Git sends no update for a ref pushed to its own value, so the server
 * does not check it again under its ref lock: only the lease ref's creation (expected absent) is
 * checked there. A whole transaction of another writer that fits between the advertisement and
 * the update is not seen (docs/design.md, "Round trips on network remotes"). Not when a
 * state ref is absent (an absent ref cannot be fenced: pushing its deletion is not checked by the
 * server, and would delete a ref created meanwhile), nor for refs of this machine, which are
 * read again cheaply, nor beyond MAX_DECISION_FENCES refs, nor when the push takes a lease over
 * (its caller does not fence them: a takeover reads again, as it always did, and imports
 * what the old holder still landed). Undefined: read again (Acquired.mayBeStale).
 *
 * A ref created meanwhile under the coordination prefix is not fenced: only a whole transaction
 * of another writer (its lease taken and let go) between the read and this push creates one,
 * and what it leaves (a run ref that ended without its transition) is imported by the next run.
 */
function decisionFences(store: StateStore, snapshot: RefSnapshot, updates: RefUpdate[]): RefUpdate[] | undefined {
  if (store.loc.kind !== 'remote') return undefined;
  if (stateRefsOf(store.loc).some((ref) => !snapshot.has(ref))) return undefined;
  const moved = new Set(updates.map((u) => u.ref));
  const fences = [...snapshot].filter(([ref]) => !moved.has(ref)).map(([ref, oid]) => ({ ref, expect: oid, to: oid }));
  return fences.length <= MAX_DECISION_FENCES ? fences : undefined;
}

/** Takes the environment's lease, waiting up to waitMs for a live holder. */
export async function acquireLease(rt: LeaseRuntime, store: StateStore, options: AcquireOptions): Promise<Acquired> {
  const env = store.loc.environment;
  const timing = leaseTiming(options);
  const waitUntil = rt.clock.now() + (options.waitMs ?? 0);
  let lostRaces = 0;
  let waiting = false;
  let watching = false;
  const watch = new ExpiryWatch(rt.clock, watchWindowMs(timing), memoryOf(rt, store));
  for (let attempt = 0; ; attempt++) {
    if (rt.cancel.aborted) throw cancelled(env);
    const snapshot = attempt === 0 && options.initial ? options.initial : await store.snapshot();
    const current = await readLease(store, snapshot);
    const now = rt.clock.now();
    const found = await blockerOf(store, snapshot, current, IMPORTERS.has(options.operation), now, timing, watch);
    if (found && 'watchMs' in found) {
      if (!watching) rt.log?.(watchingLine(env, found, watch.windowMs));
      watching = true;
      await rt.clock.sleep(found.watchMs, rt.cancel);
      continue;
    }
    const blocked = found?.error;
    if (blocked) {
      if (now >= waitUntil) throw blocked;
      // Said once, on stderr: a command that waits silently for minutes looks hung.
      if (!waiting)
        rt.log?.(`nyl: waiting up to ${Math.ceil((waitUntil - now) / 1000)}s for the lease of ${env}: ${blocked.diagnostics[0]?.message ?? 'it is held'}`);
      waiting = true;
      await rt.faults.reach('lease-waiting', [options.operation]);
      await rt.clock.sleep(Math.min(1000, 100 + attempt * 100, waitUntil - now), rt.cancel);
      if (rt.cancel.aborted) throw cancelled(env);
      continue;
    }
    const record = newHolderRecord(env, options, current, now);
    const oid = await writeLeaseCommit(rt, store, record, current?.oid, options.author, `nyl: lease ${env} (${options.operation})\n\nrun: ${options.run}\n`);
    const updates: RefUpdate[] = [{ ref: leaseRef(store.loc), expect: current?.oid ?? null, to: oid }, ...((await options.extraUpdates?.(record)) ?? [])];
    const fences = current ? undefined : decisionFences(store, snapshot, updates);
    await rt.faults.reach('before-lease-push', [options.operation]);
    const result = await writeRetried(rt, store, [...updates, ...(fences ?? [])]);
    if (result.ok) {
      const acquired: Acquired = {
        handle: new LeaseHandle(rt, store, oid, record, options.author, timing),
        snapshot: applyUpdates(snapshot, updates),
        mayBeStale: !current?.record.broken && fences === undefined,
      };
      if (current) acquired.replaced = current;
      return acquired;
    }
    if (result.kind === 'unreachable') fail('NYL-STATE-UNAVAILABLE', `cannot push to the state repository of ${env}: ${result.message}`, { env });
    // Someone moved the lease between our read and our push: read again and decide anew.
    if (++lostRaces > 50) fail('NYL-STATE-CONFLICT', `the lease of ${env} kept changing while acquiring it`, { env });
  }
}

/** What this host sees of a lease, for status: its holder gone, or how its refs moved (an observation kept for later commands). */
export interface LeaseSighting extends Sight {
  gone: boolean;
  windowMs: number;
}

export function sightLease(rt: LeaseRuntime, store: StateStore, snapshot: RefSnapshot, current: LeaseView, settings: LeaseSettings): LeaseSighting {
  const timing = leaseTiming(settings);
  const watch = new ExpiryWatch(rt.clock, watchWindowMs(timing), memoryOf(rt, store));
  const expired = leaseStatus(current.record, rt.clock.now(), timing.skewMs) === 'expired';
  const sight = watch.see(watchKey(store.loc, leaseRef(store.loc), snapshot), expired);
  return { ...sight, gone: provablyGone(current.record.holder), windowMs: watch.windowMs };
}

/** Said once, on stderr: a takeover that waits minutes without a word looks hung. */
function watchingLine(env: string, found: { view: LeaseView }, windowMs: number): string {
  const r = found.view.record;
  return `nyl: the lease of ${env} held by ${describeHolder(r)} expired at ${r.deadline} by this host's clock; watching it for ${Math.ceil(windowMs / 1000)} s before taking it over: a live holder renews in that time (\`nyl lease break\` takes it over at once)`;
}

/** Where this taker's observations outlive the command: the cache, on a clock that every process of the boot shares. */
function memoryOf(rt: LeaseRuntime, store: StateStore): ObservationMemory | undefined {
  if (!rt.env || !rt.clock.monotonicMs) return undefined;
  return cachedObservations(rt.env, `${store.loc.url ?? 'the clone'}\n${leaseRef(store.loc)}`, LINUX_PROC.bootId());
}

type LeaseMode = 'renew' | 'release';

/** What a fenced write tells the caller that builds the rest of the push. */
interface LeaseStep {
  /** The lease record as it is after this push (a renewal's new deadline). */
  record: LeaseRecord;
}

/** The rest of a fenced push: refs to move with the lease, and what to do once they landed. */
export interface PushPart {
  updates: RefUpdate[];
  landed?: () => void;
}

type PushBuilder = (step: LeaseStep) => Promise<PushPart> | PushPart;

/** What a push makes of the lease once it lands (`oid` null: released), and what it carried with it. */
interface PushOutcome {
  oid: string | null;
  record: LeaseRecord;
  landed?: () => void;
}

export type FencedWriteResult = { ok: true; updates: RefUpdate[] } | { ok: false; lost: boolean; result: RefWriteResult; refs?: RefSnapshot };

/**
 * A held lease. All pushes of the holder go through `exclusive`, one at a time, so a renewal
 * never races the holder's own pushes and at most one push is in flight.
 */
export class LeaseHandle {
  lost = false;
  private released = false;
  private chain: Promise<unknown> = Promise.resolve();
  private renewal: AbortController | undefined;
  /** Builds the other refs a renewal moves with the lease (the run ref follows its deadline). */
  renewalPart: PushBuilder | undefined;
  /** When a push last showed the lease to be ours (clock milliseconds). */
  confirmedAt: number;
  /** The last push, when its outcome is unknown (the repository could not be reached): what it would have made of the lease. */
  private unconfirmed: PushOutcome | undefined;

  constructor(
    private readonly rt: LeaseRuntime,
    private readonly store: StateStore,
    public oid: string,
    public record: LeaseRecord,
    private readonly author: Identity,
    readonly timing: LeaseTiming,
  ) {
    this.confirmedAt = rt.clock.now();
  }

  get ref(): string {
    return leaseRef(this.store.loc);
  }

  /** The deadline of the lease as last pushed, in milliseconds. */
  get deadlineMs(): number {
    return Date.parse(this.record.deadline);
  }

  /** May a unit start now? Not once lost, nor within the safety margin of the pushed deadline. */
  mayStartUnit(): boolean {
    return !this.lost && !this.released && this.rt.clock.now() < this.deadlineMs - this.timing.safetyMs;
  }

  /** Runs fn alone: no other push of this holder is in flight meanwhile. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** The lease's own part of a push of the given mode, and the record after it: released, or renewed by a child commit. */
  private async leaseUpdate(mode: LeaseMode): Promise<{ update: RefUpdate; record: LeaseRecord; oid: string | null }> {
    if (mode === 'release') return { update: { ref: this.ref, expect: this.oid, to: null }, record: this.record, oid: null };
    const now = this.rt.clock.now();
    const record: LeaseRecord = { ...this.record, deadline: isoMillis(now + this.timing.durationMs), renewedAt: isoSeconds(now) };
    const oid = await writeLeaseCommit(this.rt, this.store, record, this.oid, this.author, `nyl: renew lease ${record.environment}\n`);
    return { update: { ref: this.ref, expect: this.oid, to: oid }, record, oid };
  }

  /**
   * Pushes the updates `build` returns together with the lease in one atomic push, alone. A
   * rejected push whose lease moved marks the lease lost; `result` tells the caller the rest.
   */
  write(mode: LeaseMode, build: PushBuilder): Promise<FencedWriteResult> {
    return this.exclusive(() => this.writeNow(mode, build));
  }

  private async writeNow(mode: LeaseMode, build: PushBuilder): Promise<FencedWriteResult> {
    if (this.lost || this.released)
      return { ok: false, lost: this.lost, result: { ok: false, kind: 'rejected', refs: [], message: 'the lease is no longer held' } };
    const lease = await this.leaseUpdate(mode);
    const part = await build({ record: lease.record });
    const updates = [...part.updates, lease.update];
    const began = this.rt.clock.now();
    const result = await writeRetried(this.rt, this.store, updates);
    if (result.ok) {
      this.confirmedAt = began;
      this.unconfirmed = undefined;
      this.landed({ ...lease, ...(part.landed ? { landed: part.landed } : {}) });
      return { ok: true, updates };
    }
    if (result.kind !== 'rejected') {
      this.unconfirmed = { ...lease, ...(part.landed ? { landed: part.landed } : {}) };
      return { ok: false, lost: this.lost, result };
    }
    const refs = await this.store.snapshot();
    if (this.adoptUnconfirmed(refs)) return this.writeNow(mode, build);
    this.lost = refs.get(this.ref) !== this.oid;
    return { ok: false, lost: this.lost, result, refs };
  }

  /** A push of this holder landed: the lease (and what the push carried with it) is as it made them. */
  private landed(push: PushOutcome): void {
    if (push.oid === null) this.released = true;
    else {
      this.oid = push.oid;
      this.record = push.record;
    }
    push.landed?.();
  }

  /**
   * A write rejected because the lease is not where this holder thought: when the lease is where
   * the last write of unknown outcome would have put it, that write landed after all (only this
   * holder makes that commit), and the holder takes it as landed instead of counting the lease
   * as lost. Without this, every checkpoint whose answer was lost would end the run.
   */
  private adoptUnconfirmed(refs: RefSnapshot): boolean {
    const push = this.unconfirmed;
    this.unconfirmed = undefined;
    if (!push || (refs.get(this.ref) ?? null) !== push.oid) return false;
    this.landed(push);
    return true;
  }

  /**
   * Makes sure the lease was ours less than maxAgeMs ago: waits for the push in flight (it
   * confirms the lease when it lands), and renews the lease when that is not recent enough.
   * False when the lease is not held any more, or the repository cannot tell.
   */
  async confirm(maxAgeMs: number): Promise<boolean> {
    const recent = () => this.rt.clock.now() - this.confirmedAt < maxAgeMs;
    if (this.lost || this.released) return false;
    // Usually a checkpoint push landed moments ago: no need to wait for the push in flight.
    if (recent()) return true;
    return this.exclusive(async () => {
      if (this.lost || this.released) return false;
      if (recent()) return true;
      return (await this.writeNow('renew', (step) => this.renewalPart?.(step) ?? { updates: [] })).ok;
    });
  }

  /** Renews the deadline now, moving what renewalUpdates adds in the same push. */
  async renew(): Promise<boolean> {
    const written = await this.write('renew', (step) => this.renewalPart?.(step) ?? { updates: [] });
    return written.ok;
  }

  /** Renews every third of the lease duration until stopped; a failed renewal is retried then. */
  startRenewal(): void {
    const stop = new AbortController();
    this.renewal = stop;
    const every = Math.max(100, Math.floor(this.timing.durationMs / 3));
    void (async () => {
      for (;;) {
        await this.rt.clock.sleep(every, stop.signal);
        if (stop.signal.aborted || this.lost || this.released) return;
        await this.renew().catch(() => undefined);
      }
    })();
  }

  stopRenewal(): void {
    this.renewal?.abort();
    this.renewal = undefined;
  }

  /**
   * Ends the lease of an operation that writes no transition: an importer that took a broken lease
   * over puts it back (so the break is still recorded by the next importer), anyone else releases.
   */
  async end(replaced: LeaseView | undefined): Promise<boolean> {
    return replaced?.record.broken || replaced?.record.unrecordedBreaks?.length ? this.restore(replaced) : this.release();
  }

  /** Puts back the lease this one replaced (an importer that ends before its commit lands). */
  restore(previous: LeaseView): Promise<boolean> {
    this.stopRenewal();
    return this.exclusive(async () => {
      if (this.released || this.lost) return false;
      const result = await writeRetried(this.rt, this.store, [{ ref: this.ref, expect: this.oid, to: previous.oid }]);
      this.released = true;
      return result.ok;
    });
  }

  /** Releases the lease without changing state (an operation that ends writing nothing). */
  async release(): Promise<boolean> {
    this.stopRenewal();
    const written = await this.write('release', () => ({ updates: [] }));
    return written.ok;
  }
}

type BreakResult =
  | { kind: 'broken'; record: LeaseRecord; oid: string; damage?: Damage; keptAt?: string }
  | { kind: 'already-broken'; record: LeaseRecord }
  | { kind: 'nothing-held' }
  /** --wait-lease: the awaited run released the lease in time (`now`: the run that holds it since). */
  | { kind: 'released'; run: string; now?: string };

/**
 * Breaking a damaged lease: the break commit continues the damaged lease commit's history when
 * it is one, and the damaged object is set aside under `damaged/lease/OID` in the same push, so
 * it stays reachable after the importer releases the lease.
 */
function damagedLeasePart(store: StateStore, current: LeaseView | undefined): { parent: string | undefined; updates: RefUpdate[]; keptAt?: string } {
  if (!current?.damage) return { parent: current?.oid, updates: [] };
  const keptAt = `${damagedPrefix(store.loc)}lease/${current.oid}`;
  return { parent: current.damage.path ? current.oid : undefined, updates: [{ ref: keptAt, expect: null, to: current.oid }], keptAt };
}

interface BreakOptions {
  reason: string;
  skewMs: number;
  /** How long to give the holder to release the lease by itself before breaking it. */
  waitMs?: number;
  message: (record: LeaseRecord, damage?: Damage) => string;
}

/**
 * Declares the holder gone (`nyl lease break`): the lease, or a live run whose lease ref is
 * already gone, gets `broken: {by, reason, at}`. Only an importer takes a broken lease over; a
 * holder still running can no longer renew or write, since each of its pushes expects its lease.
 */
export async function breakLease(rt: LeaseRuntime, store: StateStore, author: Identity, options: BreakOptions): Promise<BreakResult> {
  const env = store.loc.environment;
  const { reason, skewMs, message } = options;
  const waitUntil = rt.clock.now() + (options.waitMs ?? 0);
  // --wait-lease: the first holder seen is the one awaited; only it may be broken when the wait
  // ends. One that released in time leaves nothing to break, even if another took the lease since.
  let awaited: string | undefined;
  for (let attempt = 0; attempt < 10; ) {
    const refs = await store.snapshot();
    const current = await readLease(store, refs);
    const now = rt.clock.now();
    if (current && leaseStatus(current.record, now, skewMs) === 'broken') return { kind: 'already-broken', record: current.record };
    // A run takers still treat as live (its deadline plus the skew margin ahead) can be broken.
    const target = current ?? (await findLiveRun(store, refs, now, skewMs));
    if (awaited !== undefined && target?.record.run !== awaited) return { kind: 'released', run: awaited, ...(target ? { now: target.record.run } : {}) };
    if (!target) return { kind: 'nothing-held' };
    if (now < waitUntil) {
      awaited = target.record.run;
      await rt.clock.sleep(Math.min(1000, waitUntil - now), rt.cancel);
      if (rt.cancel.aborted) throw cancelled(env);
      continue;
    }
    attempt++;
    // A damaged lease has no deadline anyone could read: its broken record carries the break's time.
    const times = current?.damage ? { acquiredAt: isoSeconds(now), deadline: isoMillis(now) } : {};
    const record: LeaseRecord = { ...withoutCarriedBreak(target.record), ...times, broken: { by: formatIdentity(author), reason, at: isoSeconds(now) } };
    const damaged = damagedLeasePart(store, current);
    const oid = await writeLeaseCommit(rt, store, record, damaged.parent, author, message(record, current?.damage));
    const result = await writeRetried(rt, store, [{ ref: leaseRef(store.loc), expect: current?.oid ?? null, to: oid }, ...damaged.updates]);
    if (result.ok) return { kind: 'broken', record, oid, ...(current?.damage ? { damage: current.damage, keptAt: damaged.keptAt! } : {}) };
    if (result.kind === 'unreachable') fail('NYL-STATE-UNAVAILABLE', `cannot push to the state repository of ${env}: ${result.message}`, { env });
    // The holder renewed or released meanwhile: look again.
  }
  fail('NYL-STATE-CONFLICT', `the lease of ${env} kept changing while breaking it`, { env });
}
