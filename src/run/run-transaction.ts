/**
 * A run's lease transaction (reconcile, and later teardown): the lease taken together with a new
 * run ref in one atomic push, the run ref renewed with the lease, and, when the run ends without
 * its transition commit, the run ref marked ended so that it waits for import without blocking
 * anyone.
 */
import type { Identity } from '../git/object-writer';
import { type LeaseTransaction, withLease } from '../lease/transaction';
import type { LeaseSettings } from '../lease/record';
import { API_VERSION } from '../state/documents';
import type { StateStore } from '../state/store';
import { isoSeconds } from '../util/clock';
import type { Runtime } from '../util/runtime';
import { uuidv7 } from '../util/uuid';
import { RunRef, type RunDraft } from './run-ref';

interface RunOptions extends LeaseSettings {
  operation: 'reconcile' | 'teardown';
  author: Identity;
  source: string;
  sourceOverride: boolean;
  waitMs?: number;
  /** The refs the caller just read: the first acquisition attempt decides on them. */
  initial?: Map<string, string>;
}

export interface RunTransaction {
  tx: LeaseTransaction;
  runRef: RunRef;
}

/** Runs body as a run: its lease, its run ref, and a defined end whatever happens inside. */
export async function withRun<T>(rt: Runtime, store: StateStore, options: RunOptions, body: (run: RunTransaction) => Promise<T>): Promise<T> {
  const now = rt.clock.now();
  const runId = uuidv7(now);
  const draft: RunDraft = {
    apiVersion: API_VERSION,
    kind: 'Run',
    run: runId,
    environment: store.loc.environment,
    operation: options.operation,
    startedAt: isoSeconds(now),
    source: options.source,
    ...(options.sourceOverride ? { sourceOverride: true } : {}),
  };
  const runRef = new RunRef(store, rt.clock, options.author, draft);
  return withLease(
    rt,
    store,
    {
      operation: options.operation,
      run: runId,
      author: options.author,
      durationMs: options.durationMs,
      skewMarginMs: options.skewMarginMs,
      extraUpdates: async (record) => [await runRef.creation(record)],
      onAcquired: (lease) => runRef.attach(lease),
      onUnpublished: (reason) => runRef.markEnded(reason),
      ...(options.waitMs !== undefined ? { waitMs: options.waitMs } : {}),
      ...(options.initial ? { initial: options.initial } : {}),
    },
    (tx) => body({ tx, runRef }),
  );
}
