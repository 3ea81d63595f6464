/**
 * The fields of a Command's spec: `run` argv or `script` shell text, `env`,
 * `workingDir`, and `teardown:` and `check:` actions of the same shape. The source model adds the
 * fields every unit kind shares (dependsOn, recovery, approval, deletionPolicy, timeout,
 * terminationGracePeriod, ...).
 * References are refused in the `script` fields (the driver's shellTextFields).
 */
import { envVarMap, relativePathField } from '../../util/fields';
import { type ObjectSchema, type Schema, list, object, string } from '../../util/schema';

const action = (what: string): Record<string, Schema> => ({
  run: list(string(), { minItems: 1, description: `argv of the ${what}, run without a shell` }),
  script: string({ nonEmpty: true, description: `shell text of the ${what}, run by sh -e; references are refused here` }),
  env: envVarMap('environment variables of the process'),
  workingDir: relativePathField('working directory, relative to the project root'),
});

export const commandSpec: ObjectSchema = object(
  {
    ...action('command'),
    teardown: object(action('teardown'), { exactlyOne: [['run', 'script']] }),
    check: object(action('drift check (exit 0 in sync, 1 drifted)'), { exactlyOne: [['run', 'script']] }),
  },
  { exactlyOne: [['run', 'script']] },
);
