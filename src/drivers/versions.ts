/**
 * Each driver's version tag, part of every execution key: raising a tag re-executes every unit
 * of that kind once, so raise it only when the driver's effects change for the same spec.
 */
import type { UnitKind } from '../project/types';

export const DRIVER_VERSIONS: Record<UnitKind, string> = {
  Command: 'command/1',
  Terraform: 'terraform/1',
  OpenTofu: 'opentofu/1',
  OciImage: 'ociimage/1',
};
