/**
 * The fields of a Terraform or OpenTofu unit's spec: the root module in
 * source, its variables, the executable (default `terraform` or `tofu`) and the backend
 * configuration. The two kinds share the fields; only the default binary differs. The source
 * model adds the fields every unit kind shares.
 */
import { relativePathField } from '../../util/fields';
import { type ObjectSchema, json, object, required, string } from '../../util/schema';

/** The spec fields of a module kind whose executable defaults to `binary`. */
export const moduleSpec = (binary: string): ObjectSchema =>
  object({
    module: required(relativePathField('root module directory in source')),
    variables: json('object', 'input variables'),
    binary: string({ nonEmpty: true, description: `executable; default ${binary}` }),
    backendConfig: json('scalarMap', 'backend configuration passed to init'),
  });

export const terraformSpec: ObjectSchema = moduleSpec('terraform');
export const openTofuSpec: ObjectSchema = moduleSpec('tofu');
