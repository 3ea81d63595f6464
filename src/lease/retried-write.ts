/**
 * Writes that outlast a network blip. A write that did not reach the state repository (or whose
 * outcome is unknown: a push killed by its timeout, a connection that broke after the pack was
 * sent) is tried again after 0.5, 1, 2 and 4 seconds, 7.5 s in all. Before each new try the refs
 * are read again, because pushing blindly twice is wrong either way:
 * - every ref is already where the write moves it: the write landed after all, and is done;
 * - every ref is still where the write expects it: nothing landed, and it is pushed again;
 * - anything else: someone else wrote meanwhile, and the write is rejected (never retried).
 * A refused write (a stale compare-and-swap, a hook) is the repository's answer: never retried.
 * Nor is a write once 15 s have passed since its first try: a remote that hangs until the network
 * timeout ends each try does not answer, and five more tries would only hold the run for minutes.
 * Once a write of a store gave up, the next writes of that store (a run ending its run ref and
 * letting its lease go) are tried once each, until one lands: a repository that stayed down for
 * 7.5 s is not waited for again at every step.
 */
import type { RefUpdate, RefWriteResult } from '../git/refs';
import type { RefSnapshot, StateStore } from '../state/store';
import type { Runtime } from '../util/runtime';

export const WRITE_RETRY_DELAYS_MS: readonly number[] = [500, 1000, 2000, 4000];
/** No retry starts later than this after the first try. */
const WRITE_RETRY_BUDGET_MS = 15_000;

type Where = 'landed' | 'not-applied' | 'moved';

function whereIs(updates: readonly RefUpdate[], refs: RefSnapshot): Where {
  const at = (u: RefUpdate) => refs.get(u.ref) ?? null;
  if (updates.every((u) => at(u) === u.to)) return 'landed';
  if (updates.every((u) => u.expect === undefined || at(u) === u.expect)) return 'not-applied';
  return 'moved';
}

/** The refs now, or undefined while the repository still cannot be read. */
async function readAgain(store: StateStore): Promise<RefSnapshot | undefined> {
  try {
    // One attempt: the retries here space the tries out already.
    return await store.snapshot({ once: true });
  } catch {
    return undefined;
  }
}

/** Stores whose last write gave up unreachable. */
const gaveUp = new WeakSet<StateStore>();

/** store.write with retries of what did not reach the repository. */
export async function writeRetried(rt: Pick<Runtime, 'clock'>, store: StateStore, updates: RefUpdate[]): Promise<RefWriteResult> {
  const result = await tryWrite(rt, store, updates, gaveUp.has(store) ? [] : WRITE_RETRY_DELAYS_MS);
  if (!result.ok && result.kind === 'unreachable') gaveUp.add(store);
  else gaveUp.delete(store);
  return result;
}

async function tryWrite(rt: Pick<Runtime, 'clock'>, store: StateStore, updates: RefUpdate[], delays: readonly number[]): Promise<RefWriteResult> {
  const began = rt.clock.now();
  let result = await store.write(updates);
  for (const delayMs of delays) {
    if (result.ok || result.kind !== 'unreachable') return result;
    if (rt.clock.now() + delayMs - began > WRITE_RETRY_BUDGET_MS) return result;
    // Not the run's cancellation signal: a cancelled run still has its run ref to end.
    await rt.clock.sleep(delayMs);
    const refs = await readAgain(store);
    const where = refs && whereIs(updates, refs);
    if (where === 'landed') return { ok: true };
    if (where === 'moved') return { ok: false, kind: 'rejected', refs: [], message: 'the refs moved while the state repository could not be reached' };
    result = await store.write(updates);
  }
  return result;
}
