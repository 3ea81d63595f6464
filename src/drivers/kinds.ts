/**
 * What Nyl knows of each unit kind without executing anything: its spec schema, the version tag
 * in its execution keys, its default recovery, its shell-text and argv fields. Pure data: the source
 * model and the planner ask here, so that planning loads no driver code (no process, no file
 * system). The drivers that execute kinds are in registry.ts. The only place outside a kind's own
 * folder that names kinds.
 */
import type { KindDescriptor } from './contract';
import { commandSpec } from './command/spec';
import { ociImageSpec } from './oci-image/spec';
import { isModuleFile, localModuleSources } from './terraform/module-calls';
import { openTofuSpec, terraformSpec } from './terraform/spec';

/** Every unit kind, in a stable order. */
export const UNIT_KINDS = ['Command', 'Terraform', 'OpenTofu', 'OciImage'] as const;
export type UnitKind = (typeof UNIT_KINDS)[number];

/** The Command kind; its driver (./command) adds the phases. */
export const COMMAND_KIND: KindDescriptor = {
  kind: 'Command',
  version: 'command/1',
  defaultRecovery: 'manual',
  shellTextFields: ['/script', '/teardown/script', '/check/script'],
  argvFields: ['/run', '/teardown/run', '/check/run'],
  actionFields: { argv: 'run', shellText: 'script', workingDir: 'workingDir' },
  secretFields: ['/env', '/teardown/env', '/check/env'],
  removalUnclaimed: (spec) => (spec.teardown ? undefined : 'declares no teardown: action, so nothing can claim its removal'),
  spec: commandSpec,
};

/** The module kinds: one driver (./terraform), two default binaries. */
const MODULE_KIND = {
  defaultRecovery: 'converge',
  shellTextFields: [],
  sourceDirFields: ['module'],
  sourceDirCalls: { reads: isModuleFile, calls: localModuleSources },
  secretFields: ['/variables'],
  stateLocationFields: ['module', 'backendConfig', 'workspace'],
} as const;
export const TERRAFORM_KIND: KindDescriptor = { kind: 'Terraform', version: 'terraform/1', ...MODULE_KIND, spec: terraformSpec };
export const OPENTOFU_KIND: KindDescriptor = { kind: 'OpenTofu', version: 'opentofu/1', ...MODULE_KIND, spec: openTofuSpec };

/** One-shot containers (./oci-image). */
export const OCI_IMAGE_KIND: KindDescriptor = {
  kind: 'OciImage',
  version: 'ociimage/1',
  defaultRecovery: 'manual',
  shellTextFields: [],
  secretFields: ['/env'],
  removalUnclaimed: () => 'ran a one-shot container, which leaves nothing Nyl can remove, so nothing can claim a removal of what it did',
  spec: ociImageSpec,
};

/** Looks kinds up: the built-in ones, or those of a driver set (registry.ts, test fakes). */
export interface KindSet {
  descriptor(kind: string): KindDescriptor | undefined;
}

const builtin = new Map([COMMAND_KIND, TERRAFORM_KIND, OPENTOFU_KIND, OCI_IMAGE_KIND].map((k) => [k.kind, k]));

/** The kinds Nyl ships. */
export const BUILTIN_KINDS: KindSet = { descriptor: (kind) => builtin.get(kind) };

/** The version tag of a kind, part of every execution key (kind/1 for a kind nobody knows). */
export function versionOf(kind: string, kinds: KindSet): string {
  return kinds.descriptor(kind)?.version ?? `${kind.toLowerCase()}/1`;
}

export function defaultRecovery(kind: string, kinds: KindSet): 'converge' | 'manual' {
  return kinds.descriptor(kind)?.defaultRecovery ?? 'manual';
}

/** May a reference to a sensitive output stand at this pointer of the kind's spec? */
export function isSecretField(kind: string, pointer: string, kinds: KindSet): boolean {
  return (kinds.descriptor(kind)?.secretFields ?? []).some((f) => pointer.startsWith(`${f}/`));
}

/** The argv lists of a kind's spec, run without a shell (see KindDescriptor.argvFields). */
export function argvFieldsOf(kind: string): readonly string[] {
  return BUILTIN_KINDS.descriptor(kind)?.argvFields ?? [];
}

/** Does this spec field hold shell text (where references are refused)? */
export function isShellTextField(kind: string, pointer: string): boolean {
  return BUILTIN_KINDS.descriptor(kind)?.shellTextFields.includes(pointer) ?? false;
}

/** Why a teardown of a unit of this kind and rendering cannot claim its removal, if it cannot (KindDescriptor.removalUnclaimed). */
export function removalUnclaimed(kind: string, rendering: Readonly<Record<string, unknown>>, kinds: KindSet): string | undefined {
  return kinds.descriptor(kind)?.removalUnclaimed?.(rendering);
}
