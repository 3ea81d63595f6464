/**
 * Signals to a running run (refs `PREFIX/ENV/signals/RUN/ID`): a commit whose
 * `signal.yaml` asks the run to hold a unit. `nyl hold` writes one while a reconcile holds the
 * lease; the run reads them before starting units and applies them in its transition commit,
 * deleting the signal refs in the same atomic push. Whoever deletes a signal ref (with a
 * compare-and-swap) applies it: that makes a delivered hold take effect exactly once.
 */
import { byCodeUnits } from '../util/compare';
import type { Identity } from '../git/object-writer';
import type { RefUpdate } from '../git/refs';
import { type Damage, damageOf, requireUndamaged } from '../state/damage';
import { API_VERSION, toYaml } from '../state/documents';
import { parseStateDocument } from '../state/parse';
import { signalsPrefix } from '../state/location';
import type { RefSnapshot, StateStore } from '../state/store';
import type { Runtime } from '../util/runtime';
import { uuidv7 } from '../util/uuid';
import type { HoldRequest } from './apply-holds';

/** A hold request as delivered: applyHolds takes signals as they are. */
export interface HoldSignal extends HoldRequest {
  ref: string;
  oid: string;
  /** The run the signal was delivered to. */
  run: string;
}

interface SignalDoc {
  apiVersion: string;
  kind: 'Signal';
  type: 'hold';
  run: string;
  unit: string;
  by: string;
  reason?: string;
  at: string;
}

function signalRefOf(store: StateStore, run: string, id: string): string {
  return `${signalsPrefix(store.loc)}${run}/${id}`;
}

/** Writes a hold signal for run; returns its ref and commit, or undefined when the push was rejected. */
export async function writeHoldSignal(
  rt: Pick<Runtime, 'clock'>,
  store: StateStore,
  run: string,
  hold: HoldRequest,
  author: Identity,
): Promise<{ ref: string; oid: string } | undefined> {
  const doc: SignalDoc = { apiVersion: API_VERSION, kind: 'Signal', type: 'hold', run, ...hold };
  const [oid] = await store.writeCommits([
    {
      clearTree: true,
      changes: new Map([['signal.yaml', toYaml(doc)]]),
      message: `nyl: signal hold ${store.loc.environment} (${hold.unit})\n`,
      author,
      timeMs: rt.clock.now(),
    },
  ]);
  const ref = signalRefOf(store, run, uuidv7(rt.clock.now()));
  const result = await store.write([{ ref, expect: null, to: oid! }]);
  return result.ok ? { ref, oid: oid! } : undefined;
}

/** The signals of the environment as read: the hold signals, and the signal refs that are damaged. */
export interface SignalsRead {
  signals: HoldSignal[];
  damaged: Damage[];
}

/** One signal ref as read: its hold, or damage (a ref without a readable signal.yaml). */
function signalOf(ref: string, oid: string, blob: { content: Buffer } | undefined): HoldSignal | Damage {
  const at = { ref, object: oid, path: 'signal.yaml' };
  if (!blob) return damageOf('signal', at, { problem: 'the ref holds no signal.yaml (or is not a commit)' });
  const parsed = parseStateDocument<SignalDoc>('signal', blob.content.toString());
  if (!parsed.ok) return damageOf('signal', at, parsed.flaw);
  const doc = parsed.value;
  const s: HoldSignal = { ref, oid, run: doc.run, unit: doc.unit, by: doc.by, at: doc.at };
  if (doc.reason) s.reason = doc.reason;
  return s;
}

/** Every signal in the environment's signal namespace, oldest first, with the damaged ones apart. */
export async function readSignals(store: StateStore, refs?: RefSnapshot): Promise<SignalsRead> {
  const prefix = signalsPrefix(store.loc);
  const snapshot = refs ?? (await store.snapshotPrefix(prefix));
  const found = [...snapshot].filter(([ref]) => ref.startsWith(prefix)).sort(([a], [b]) => byCodeUnits(a, b));
  const out: SignalsRead = { signals: [], damaged: [] };
  if (found.length === 0) return out;
  const blobs = await store.reader.readMany(found.map(([, oid]) => `${oid}:signal.yaml`));
  found.forEach(([ref, oid], i) => {
    const read = signalOf(ref, oid, blobs[i]);
    if ('document' in read) out.damaged.push(read);
    else out.signals.push(read);
  });
  return out;
}

/**
 * Every hold signal, oldest first. Refuses NYL-STATE-CORRUPT when a signal is damaged: it may
 * have asked to hold a unit, so nothing may start as if it had not.
 */
export async function readHoldSignals(store: StateStore, refs?: RefSnapshot): Promise<HoldSignal[]> {
  const read = await readSignals(store, refs);
  requireUndamaged(store.loc.environment, read.damaged);
  return read.signals;
}

/** Deletes the signals a push applies, each only as it was read: whoever deletes it applies it. */
export function signalDeletions(signals: readonly HoldSignal[]): RefUpdate[] {
  return signals.map((s) => ({ ref: s.ref, expect: s.oid, to: null }));
}
