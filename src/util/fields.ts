/**
 * Field rules of the source format that more than one layer needs: names (they become Git ref
 * and path components), Git branch names and ref prefixes, relative paths, environment variable
 * names; and the schema fields built on them. The source model (src/project) and the drivers'
 * spec schemas both use them. Pure.
 */
import { type Rule, type StringMapSchema, type StringSchema, string, stringMap } from './schema';

export const NAME_PATTERN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
export const ENV_VAR_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const nameRule: Rule = (value) =>
  NAME_PATTERN.test(value)
    ? undefined
    : {
        message: `invalid name "${value}"`,
        fix:
          'use 1 to 63 lowercase letters, digits and "-", starting and ending with a letter or digit: ' +
          'names become Git ref and state path components, so nothing else is safe in every Git host and file system',
      };

const envVarNameRule: Rule = (value) => {
  if (!ENV_VAR_PATTERN.test(value)) {
    return {
      message: `invalid environment variable name "${value}"`,
      fix: 'use letters, digits and "_", not starting with a digit',
    };
  }
  if (value.startsWith('NYL_')) {
    return {
      message: `environment variable ${value} is reserved`,
      fix: 'names starting with NYL_ are set by Nyl for the process (NYL_OUTPUTS, NYL_ENVIRONMENT, ...); pick another name',
    };
  }
  return undefined;
};

/** A path inside the source or state tree: relative, not escaping its root. */
const relativePathRule: Rule = (value) => {
  const problem = relativePathProblem(value);
  return problem === undefined
    ? undefined
    : { message: `invalid path "${value}": ${problem}`, fix: 'write a path relative to the project root (e.g. infra/network), without ".." segments' };
};

/** A branch name by the rules of `git check-ref-format --branch`. */
const branchNameRule: Rule = (value) => {
  const problem = refNameProblem(value);
  return problem === undefined
    ? undefined
    : { message: `invalid branch name "${value}": ${problem}`, fix: 'use a valid Git branch name, e.g. nyl/dev/desired' };
};

export const refPrefixRule: Rule = (value) => {
  let problem: string | undefined;
  if (!value.startsWith('refs/')) problem = 'it must start with refs/';
  else if (!value.endsWith('/')) problem = 'it must end with /';
  else problem = refNameProblem(`${value}x`);
  return problem === undefined
    ? undefined
    : { message: `invalid coordinationRefPrefix "${value}": ${problem}`, fix: 'use a ref namespace such as refs/nyl/ or refs/heads/nyl-run/' };
};

export function relativePathProblem(value: string): string | undefined {
  if (value === '') return 'it is empty';
  if (value.startsWith('/') || /^[A-Za-z]:/.test(value)) return 'it is absolute';
  if (value.includes('\\')) return 'it contains a backslash; use /';
  if (value.split('/').includes('..')) return 'it contains ".."';
  return undefined;
}

/** The rules of git check-ref-format (with --allow-onelevel), as one problem sentence. */
export function refNameProblem(value: string): string | undefined {
  if (value === '') return 'it is empty';
  if (value === '@') return 'it is "@"';
  if (value.startsWith('-')) return 'it starts with "-"';
  if (value.startsWith('/') || value.endsWith('/')) return 'it starts or ends with "/"';
  if (value.includes('//')) return 'it contains "//"';
  if (value.includes('..')) return 'it contains ".."';
  if (value.includes('@{')) return 'it contains "@{"';
  if (value.endsWith('.')) return 'it ends with "."';
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(value)) return 'it contains a space, a control character or one of ~^:?*[\\';
  for (const component of value.split('/')) {
    if (component.startsWith('.')) return `component "${component}" starts with "."`;
    if (component.endsWith('.lock')) return `component "${component}" ends with ".lock"`;
  }
  return undefined;
}

// --- fields -----------------------------------------------------------------------------------

/** A name of an environment, unit, group or repository. */
export const nameField = (description: string): StringSchema => string({ rule: nameRule, pattern: NAME_PATTERN.source, description });

/** A path relative to the project (or state) root, not escaping it. */
export const relativePathField = (description: string): StringSchema => string({ rule: relativePathRule, description });

export const branchField = (description: string): StringSchema => string({ rule: branchNameRule, description });

/** Environment variables of a process: valid names, none starting with NYL_ (Nyl sets those). */
export const envVarMap = (description: string): StringMapSchema =>
  stringMap({ keyRule: envVarNameRule, keyPattern: '^(?!NYL_)[A-Za-z_][A-Za-z0-9_]*$', description });
