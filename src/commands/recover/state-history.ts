/**
 * The newest readable state.yaml in the first-parent history of a state ref: what `nyl recover`
 * restores a damaged state.yaml from when the copy on the other state ref is damaged too.
 * state.yaml changes only with `state init` (and `--fresh`), `state delete` and `state move`, so the
 * newest version Nyl wrote is the state as it was before the damage.
 */
import type { EnvironmentStateDoc } from '../../state/documents';
import { type StateLocation, statePathOf } from '../../state/location';
import { parseStateDocument } from '../../state/parse';
import type { ObjectReader } from '../../state/store';

/** How far back the walk looks: state.yaml is damaged by recent edits, not by old ones. */
const MAX_COMMITS = 1000;

function firstParent(commitText: string): string | undefined {
  const header = commitText.slice(0, commitText.indexOf('\n\n'));
  return /^parent ([0-9a-f]{40})$/m.exec(header)?.[1];
}

export async function newestReadableState(reader: ObjectReader, loc: StateLocation, tip: string | undefined): Promise<{ doc: EnvironmentStateDoc; commit: string } | undefined> {
  let oid = tip;
  for (let i = 0; oid && i < MAX_COMMITS; i++) {
    const [commit, blob] = await reader.readMany([oid, `${oid}:${statePathOf(loc, 'state.yaml')}`]);
    if (!commit || commit.type !== 'commit') return undefined;
    if (blob?.type === 'blob') {
      const parsed = parseStateDocument<EnvironmentStateDoc>('state', blob.content.toString());
      if (parsed.ok && parsed.value.environment === loc.environment) return { doc: parsed.value, commit: oid };
    }
    oid = firstParent(commit.content.toString());
  }
  return undefined;
}
