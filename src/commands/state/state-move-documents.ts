/**
 * The state.yaml documents of `nyl state move`, decided without I/O.
 *
 * A move writes one `moved` event, the same at both ends: the old location's copy of state.yaml
 * gets `status: moved` and `movedTo`, so that every command still pointed there refuses with
 * NYL-STATE-MOVED; the new location's copy continues the same history with `status: active` and
 * the coordination prefix it now lives under.
 */
import type { EnvironmentStateDoc, StateEvent } from '../../state/documents';

export interface MoveEnds {
  /** describeEnd of the old and the new location. */
  from: string;
  to: string;
}

export function movedEvent(ends: MoveEnds, at: string, by: string, reason: string | undefined): StateEvent {
  return { type: 'moved', at, by, ...(reason ? { reason } : {}), from: ends.from, to: ends.to };
}

/** The old location's state.yaml: it names where the state went. */
export function markedMoved(doc: EnvironmentStateDoc, event: StateEvent): EnvironmentStateDoc {
  return { ...doc, status: 'moved', movedTo: event.to!, events: [...doc.events, event] };
}

/**
 * The new location's state.yaml, from the old location's: active again, under the new prefix.
 * A copy already marked moved carries the event; one that is not (a move of the prefix alone,
 * where both ends are the same file) gets it here.
 */
export function continuedAt(doc: EnvironmentStateDoc, event: StateEvent, coordinationPrefix: string): EnvironmentStateDoc {
  const last = doc.events[doc.events.length - 1];
  const carried = doc.status === 'moved' && last?.type === 'moved';
  const next: EnvironmentStateDoc = {
    ...doc,
    status: 'active',
    coordinationRefPrefix: coordinationPrefix,
    events: carried ? doc.events : [...doc.events, event],
  };
  delete next.movedTo;
  return next;
}
