/**
 * The fields of a Terraform or OpenTofu unit's spec: the root module in source, its variables,
 * the executable (default `terraform` or `tofu`), the backend configuration, the workspace, how
 * long to wait for a state lock, and whether its state may be shared. The two kinds share the
 * fields; only the default binary differs. The source model adds the fields every unit kind
 * shares.
 */
import { LOCK_TIMEOUT_BOUNDS } from '../../util/duration';
import { relativePathField } from '../../util/fields';
import { type Infer, boolean, duration, json, object, required, string } from '../../util/schema';
import type { SharedSpec } from '../contract';

/** How long a step waits for a state lock another process holds, unless the unit says otherwise. */
export const DEFAULT_LOCK_TIMEOUT = '2m';

/** The spec fields of a module kind whose executable defaults to `binary`. */
const moduleSpec = (binary: string) =>
  object({
    module: required(relativePathField('root module directory in source')),
    variables: json('object', 'input variables'),
    binary: string({ nonEmpty: true, description: `executable; default ${binary}` }),
    backendConfig: json('scalarMap', 'backend configuration passed to init'),
    workspace: string({
      nonEmpty: true,
      description: 'Terraform workspace (TF_WORKSPACE); default: the default workspace, whatever TF_WORKSPACE Nyl runs with',
    }),
    lockTimeout: duration(LOCK_TIMEOUT_BOUNDS, `how long a step waits for a state lock another process holds (-lock-timeout); default ${DEFAULT_LOCK_TIMEOUT}`),
    sharedState: boolean(
      'its state may be shared with other environments or units, and a first execution may take over a state that already holds resources; default false',
    ),
  });

export const terraformSpec = moduleSpec('terraform');
export const openTofuSpec = moduleSpec('tofu');

/** A module unit's rendered spec, as its driver reads it. */
export type ModuleSpec = Infer<ReturnType<typeof moduleSpec>> & SharedSpec;
