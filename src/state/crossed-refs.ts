/**
 * State never crosses environments: two environments may name the same state ref only in one
 * repository, each with a directory (`path`) of its own. Decided without I/O when the location
 * of the environment a command opens is resolved (./location.ts), against every other declared
 * Environment and an instance of each EnvironmentTemplate.
 *
 * Why the same name in two repositories is refused: the clone keeps one branch per state ref
 * name (the known branch of a state repository, or for a `clone` location the state itself).
 * It copied one repository and was read as the other's: `state init` of the second environment
 * took the first one's state for its own, `state move --from local` copied that history into the
 * second repository and committed onto the first one's branches, and the first was blocked.
 * In one repository, the same name and directory is one state.yaml for two environments.
 */
import type { SourceLocation } from '../errors/diagnostic';
import { fail } from '../errors/diagnostic';
import type { EnvironmentGroupResource, EnvironmentResource } from '../project/types';

/** An environment's state refs as resolved, and where they live. */
export interface PlacedRefs {
  env: EnvironmentResource;
  /** Full ref names. */
  desiredRef: string;
  observedRef: string;
  statePath: string;
  /** The repository's identity (comparable); `name` is how messages show it. */
  repository: { identity: string; name: string };
  /** The group whose shared state fields the environment takes. */
  group?: EnvironmentGroupResource | undefined;
}

type Field = 'desiredRef' | 'observedRef';
const FIELDS: readonly Field[] = ['desiredRef', 'observedRef'];

type Located = SourceLocation & { pointer: string };

/** Where a ref field is set: the Environment (or the template of an instance), the group, or nowhere. */
interface FieldSource {
  setBy: 'environment' | 'template' | 'group' | 'default';
  location: Located;
}

const side = (field: Field) => (field === 'desiredRef' ? 'desired' : 'observed');

/** Refuses the first ref `mine` shares with another environment in a way that mixes their state. */
export function refuseCrossedRefs(mine: PlacedRefs, others: readonly PlacedRefs[]): void {
  for (const other of others) {
    for (const field of FIELDS) {
      for (const otherField of FIELDS) {
        if (mine[field] !== other[otherField]) continue;
        const crossed = mine.repository.identity !== other.repository.identity;
        if (crossed || mine.statePath === other.statePath) refuse({ mine, field }, { mine: other, field: otherField }, crossed);
      }
    }
  }
}

interface End {
  mine: PlacedRefs;
  field: Field;
}

/** NYL-SOURCE-INVALID at the field that set the name: this environment's, else the other's. */
function refuse(here: End, there: End, crossed: boolean): never {
  const hereSource = fieldSource(here.mine, here.field);
  const thereSource = fieldSource(there.mine, there.field);
  const [at, source] = hereSource.setBy === 'default' ? [there, thereSource] : [here, hereSource];
  const ref = here.mine[here.field];
  // Where the other side sets the name, unless that is the field reported (a group's shared one).
  const elsewhere = thereSource.setBy === 'default' || where(thereSource.location) === where(source.location) ? '' : ` (set at ${where(thereSource.location)})`;
  const why = crossed
    ? `in another repository (${here.mine.repository.name} and ${there.mine.repository.name}): the clone keeps one branch ${ref} for both, so the state of one would be read and moved as the other's`
    : `in the same repository and the same directory (${here.mine.statePath || 'the root of the tree'}): both would keep their state.yaml there`;
  fail(
    'NYL-SOURCE-INVALID',
    `the ${side(here.field)} state ref ${ref} of environment ${here.mine.env.name} is also the ${side(there.field)} state ref of ${describe(there.mine, here.mine)}${elsewhere}, ${why}`,
    {
      location: source.location,
      fix: fixFor(at, source, crossed),
      data: { environments: [here.mine.env.name, there.mine.env.name], ref },
    },
  );
}

/** The other environment as a message names it: a declared one, or a template's instances. */
function describe(other: PlacedRefs, mine: PlacedRefs): string {
  const instance = other.env.instance;
  if (!instance) return `environment ${other.env.name}`;
  return mine.env.instance?.template === instance.template
    ? `the other instances of EnvironmentTemplate ${instance.template}`
    : `the instances of EnvironmentTemplate ${instance.template}`;
}

function fixFor(at: End, source: FieldSource, crossed: boolean): string {
  const name = at.mine.env.name;
  const s = side(at.field);
  const instead = crossed
    ? "; or keep both environments' state in one repository, each with a state.path of its own"
    : '; or give each environment a state.path of its own';
  switch (source.setBy) {
    case 'group':
      return `remove ${at.field} from spec.shared.state of EnvironmentGroup ${at.mine.group!.name}, so that each member gets a ref of its own (nyl/<env>/${s}), or set spec.state.${at.field} of ${name} to one such as nyl/${name}/${s}${instead}`;
    case 'template':
      return `put the instance's name in spec.environment.state.${at.field} of EnvironmentTemplate ${at.mine.env.instance!.template}, such as nyl/\${{ instance.name }}/${s} (the default, when the field is left out)${instead}`;
    default:
      return `set spec.state.${at.field} of ${name} to a name of its own, such as nyl/${name}/${s} (the default, when the field is left out)${instead}`;
  }
}

/** Where a ref field of an environment is set (an instance's fields are its template's). */
function fieldSource(p: PlacedRefs, field: Field): FieldSource {
  const { env, group } = p;
  if (env.spec.state?.[field] !== undefined) {
    const pointer = `/spec/state/${field}`;
    const location = locationIn(env, pointer);
    return env.instance ? { setBy: 'template', location: { ...location, pointer: `/spec/environment/state/${field}` } } : { setBy: 'environment', location };
  }
  if (group?.spec.shared?.state?.[field] !== undefined) return { setBy: 'group', location: locationIn(group, `/spec/shared/state/${field}`) };
  return { setBy: 'default', location: locationIn(env, '/metadata/name') };
}

function locationIn(r: EnvironmentResource | EnvironmentGroupResource, pointer: string): Located {
  const l = r.locations?.[pointer];
  return { file: r.origin.file, line: l?.line ?? r.origin.line, ...(l ? { column: l.column } : {}), pointer };
}

function where(location: SourceLocation): string {
  return location.line === undefined ? location.file : `${location.file}:${location.line}`;
}
