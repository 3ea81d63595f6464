/**
 * The fields of a Command's spec: `run` argv or `script` shell text, `env`,
 * `workingDir`, and `teardown:` and `check:` actions of the same shape. The source model adds the
 * fields every unit kind shares (dependsOn, recovery, approval, deletionPolicy, timeout,
 * terminationGracePeriod, ...).
 * References are refused in the `script` fields (the driver's shellTextFields).
 */
import { envVarMap, relativePathField } from '../../util/fields';
import { type Infer, list, object, string } from '../../util/schema';
import type { SharedSpec } from '../contract';

const action = (what: string) => ({
  run: list(string(), { minItems: 1, description: `argv of the ${what}, run without a shell` }),
  script: string({ nonEmpty: true, description: `shell text of the ${what}, run by sh -e; references are refused here` }),
  env: envVarMap('environment variables of the process'),
  workingDir: relativePathField('working directory, relative to the project root'),
});

const actionSpec = (what: string) => object(action(what), { exactlyOne: [['run', 'script']] });

export const commandSpec = object(
  {
    ...action('command'),
    teardown: actionSpec('teardown'),
    check: actionSpec('drift check (exit 0 in sync, 1 drifted)'),
  },
  { exactlyOne: [['run', 'script']] },
);

/**
 * One runnable action as rendered: the unit itself, its teardown or its check. `run` and `env`
 * are typed by hand: a whole-value reference may render another unit's output, any JSON value,
 * where the schema (which describes the source) has a string; the process gets it as JSON.
 */
export type CommandAction = Omit<Infer<ReturnType<typeof actionSpec>>, 'run' | 'env'> & { run?: unknown[]; env?: Record<string, unknown> };

/** A Command's rendered spec, as its driver reads it. */
export type CommandSpec = CommandAction & SharedSpec & { teardown?: CommandAction; check?: CommandAction };
