/**
 * The fields of an OciImage unit's spec: the image (a tag is resolved to
 * its digest), command, args, env, the container runtime and network. The source model adds the
 * fields every unit kind shares.
 */
import { envVarMap } from '../../util/fields';
import { type ObjectSchema, list, object, oneOf, required, string } from '../../util/schema';

export const ociImageSpec: ObjectSchema = object({
  image: required(string({ nonEmpty: true, description: 'image reference; a tag is resolved to its digest' })),
  command: list(string()),
  args: list(string()),
  env: envVarMap('environment variables of the container'),
  runtime: oneOf(['podman', 'docker']),
  network: string({ nonEmpty: true, description: 'container network; default none' }),
});
