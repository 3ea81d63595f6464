/**
 * Reading a document Nyl keeps in Git: YAML first (the fast reader for what Nyl wrote, the full
 * parser for anything else), then its shape. A document that fails either is a flaw with the line
 * of a YAML syntax error or the JSON pointer of a shape problem, never an exception and never a
 * value read as something it is not.
 */
import { type Schema, type SchemaProblem, validateSchema } from '../util/schema';
import { extraProblems, shapeOf, type StateDocumentKind } from './shapes';
import { NOT_EMITTED, readEmittedYaml } from './yaml-read';

/** What is wrong with a document: one problem, with where it is. */
export interface Flaw {
  problem: string;
  /** 1-based line of a YAML syntax error. */
  line?: number;
  /** JSON pointer of a shape problem ('' is the whole document). */
  pointer?: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; flaw: Flaw };

/** The full YAML parser, loaded on first use (see documents.ts). */
function fullYamlParser(): typeof import('yaml') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('yaml') as typeof import('yaml');
}

/** The first line of a YAML error, without the position the flaw carries on its own. */
function yamlProblem(error: Error): string {
  const first = error.message.split('\n')[0]!;
  return `invalid YAML: ${first.replace(/ at line \d+, column \d+:?$/, '')}`;
}

/** Parses YAML as state documents are read: the emitter's form fast, anything else by the full parser. */
export function parseYaml(text: string): { ok: true; value: unknown } | { ok: false; flaw: Flaw } {
  const fast = readEmittedYaml(text);
  if (fast !== NOT_EMITTED) return { ok: true, value: fast };
  try {
    return { ok: true, value: fullYamlParser().parse(text) };
  } catch (error) {
    const e = error as Error & { linePos?: { line: number }[] };
    const line = e.linePos?.[0]?.line;
    return { ok: false, flaw: { problem: yamlProblem(e), ...(line !== undefined ? { line } : {}) } };
  }
}

function flawOf(problems: SchemaProblem[]): Flaw {
  const first = problems[0]!;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : '';
  return { problem: `${first.message}${more}`, pointer: first.pointer };
}

/** Parses text as YAML and checks it against schema (and extra, for rules the DSL cannot say). */
export function parseDocument<T>(schema: Schema, text: string, extra?: (value: unknown) => SchemaProblem[]): Parsed<T> {
  const yaml = parseYaml(text);
  if (!yaml.ok) return yaml;
  const problems = validateSchema(schema, yaml.value);
  if (problems.length === 0 && extra) problems.push(...extra(yaml.value));
  return problems.length > 0 ? { ok: false, flaw: flawOf(problems) } : { ok: true, value: yaml.value as T };
}

/** Parses one of the state documents by its kind. */
export function parseStateDocument<T>(kind: StateDocumentKind, text: string): Parsed<T> {
  return parseDocument<T>(shapeOf(kind), text, (value) => extraProblems(kind, value));
}
