/**
 * The state a command needs before it changes anything: present, not deleted, not moved.
 */
import { fail } from '../errors/diagnostic';
import type { StateLocation } from '../state/location';
import type { EnvironmentStateView } from '../state/read';

/** Returns the state's generation; refuses missing, deleted or moved state. */
export function requireActiveState(envName: string, view: EnvironmentStateView, loc: StateLocation): number {
  if (!view.state) {
    fail('NYL-STATE-MISSING', `${loc.desiredRef} of ${loc.url ?? 'the clone'} holds no state for ${envName}`, { env: envName });
  }
  if (view.state.status === 'deleted') fail('NYL-STATE-DELETED', `the state of ${envName} was deleted with \`nyl state delete\``, { env: envName });
  if (view.state.status === 'moved') fail('NYL-STATE-MOVED', `the state of ${envName} moved to ${view.state.movedTo ?? 'another location'}`, { env: envName, movedTo: view.state.movedTo });
  return view.state.generation;
}
