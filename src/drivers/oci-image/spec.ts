/**
 * The fields of an OciImage unit's spec: the image (a tag is resolved to
 * its digest), command, args, env, the container runtime and network. The source model adds the
 * fields every unit kind shares.
 */
import { envVarMap } from '../../util/fields';
import { type Infer, list, object, oneOf, required, string } from '../../util/schema';
import type { SharedSpec } from '../contract';

export const ociImageSpec = object({
  image: required(string({ nonEmpty: true, description: 'image reference; a tag is resolved to its digest' })),
  command: list(string()),
  args: list(string()),
  env: envVarMap('environment variables of the container'),
  runtime: oneOf(['podman', 'docker']),
  network: string({ nonEmpty: true, description: 'container network; default none' }),
});

/**
 * An OciImage unit's rendered spec, as its driver reads it. `env` is typed by hand: a whole-value
 * reference may render another unit's output, any JSON value, where the schema (which describes
 * the source) has a string; the container gets it as JSON.
 */
export type OciImageSpec = Omit<Infer<typeof ociImageSpec>, 'env'> & { env?: Record<string, unknown> } & SharedSpec;
