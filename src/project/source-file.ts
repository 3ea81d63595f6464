/**
 * Parses one source file into its YAML documents and maps JSON pointers inside a document to
 * 1-based line and column, falling back to the nearest existing parent when a field is missing.
 * A field is located at its key (the line a user looks for), a list item at the item.
 *
 * It also keeps the limits of a source file (SOURCE_LIMITS), so that no file costs more than a
 * sane one: its size, the data its YAML aliases expand to, and how deep it nests. An alias is
 * one shared object after parsing, cheap here, but every later step (validation, rendering, the
 * parse cache) walks or copies it once per use: 990 aliases of a large mapping once took 1.6 GB
 * and wrote a 487 MB cache entry.
 */
import { type Document, LineCounter, isAlias, isMap, isNode, isScalar, isSeq, parseAllDocuments } from 'yaml';
import type { Diagnostic } from '../errors/diagnostic';
import { childPointer, pointerSegments } from '../util/schema';
import { sourceError } from './validate';

interface Position {
  line: number;
  column: number;
}

export interface SourceDocument {
  file: string;
  /** 0-based index of the document in its file. */
  index: number;
  /** The document as plain JSON-like data. */
  value: unknown;
  /** Where the document's content starts. */
  start: Position;
  locate(pointer: string): Position;
}

interface ParsedFile {
  /** The non-empty, syntactically valid documents. */
  documents: SourceDocument[];
  /** Syntax errors, one per problem yaml reports. */
  errors: Diagnostic[];
}

/** The limits of one source file (documented in docs/source-reference.md, "Limits"). */
const SOURCE_LIMITS = {
  /** Bytes of one file: generous for hand-written YAML; split larger sources with includes. */
  fileBytes: 1024 * 1024,
  /** Size (as compact JSON) of the data one file's documents hold once every alias is expanded. */
  expandedBytes: 4 * 1024 * 1024,
  /** Levels of mappings and lists inside a document, the document itself being level 1. */
  depth: 100,
  /** Unclosed `[` and `{` counted in the raw text: far deeper flow nesting exhausts the parser itself. */
  rawBrackets: 1000,
  /** Alias uses as the yaml package weighs them (each use times the aliases inside what it repeats). */
  aliasCount: 1000,
} as const;

const MiB = 1024 * 1024;

export function parseSourceFile(file: string, text: string): ParsedFile {
  const lines = new LineCounter();
  const position = (offset: number): Position => {
    const p = lines.linePos(offset);
    return { line: Math.max(p.line, 1), column: Math.max(p.col, 1) };
  };
  const out: ParsedFile = { documents: [], errors: [] };
  const unparsable = rawLimitProblem(file, text);
  if (unparsable) return { ...out, errors: [unparsable] };
  const parsed = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false });
  let expanded = 0;
  parsed.forEach((doc, index) => {
    if (doc.errors.length > 0) {
      for (const e of doc.errors) {
        out.errors.push(sourceError({ file, ...position(e.pos[0]), pointer: '' }, `YAML syntax error: ${e.message}`, 'fix the YAML syntax at this line'));
      }
      return;
    }
    if (doc.contents === null) return;
    const start = position(doc.contents.range[0]);
    const locate = (pointer: string): Position => position(offsetOf(doc, pointer));
    const value = toValue(doc, file, start, out.errors);
    if (value === undefined) return;
    const shape = measure(value.data);
    expanded += shape.bytes;
    const problem = shapeProblem(file, shape, expanded, value, locate);
    if (problem) return void out.errors.push(problem);
    out.documents.push({ file, index, value: value.data, start, locate });
  });
  return out;
}

/** The document as plain data, or undefined after recording why it has none. */
function toValue(doc: Document.Parsed, file: string, start: Position, errors: Diagnostic[]): { data: unknown } | undefined {
  try {
    return { data: doc.toJS({ maxAliasCount: SOURCE_LIMITS.aliasCount }) };
  } catch (err) {
    const message = (err as Error).message;
    if (/alias count/i.test(message)) {
      errors.push(
        sourceError(
          { file, ...start, pointer: '' },
          `the YAML aliases (*name) of this document repeat too much: more than ${SOURCE_LIMITS.aliasCount} uses, each weighed by the aliases inside what it repeats`,
          ALIAS_FIX,
        ),
      );
    } else {
      errors.push(sourceError({ file, ...start, pointer: '' }, `YAML error: ${message}`, 'fix the YAML document'));
    }
    return undefined;
  }
}

const ALIAS_FIX = 'write the repeated data once (for example as env.values read through ${{ env.values.KEY }}) instead of repeating it through YAML aliases';

/** What no parse should be asked to do: an oversized file, or flow collections nested absurdly deep. */
function rawLimitProblem(file: string, text: string): Diagnostic | undefined {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > SOURCE_LIMITS.fileBytes) {
    return sourceError(
      { file, line: 1, pointer: '' },
      `${file} is ${(bytes / MiB).toFixed(1)} MiB; a source file may hold at most ${SOURCE_LIMITS.fileBytes / MiB} MiB`,
      "split it into several files listed in a Project document's spec.include",
    );
  }
  const line = deepBracketLine(text);
  if (line === undefined) return undefined;
  return sourceError(
    { file, line, pointer: '' },
    `more than ${SOURCE_LIMITS.rawBrackets} [ or { are open at this line: a document may nest at most ${SOURCE_LIMITS.depth} levels`,
    'flatten the data: nest mappings and lists fewer levels deep',
  );
}

/** The line where more than rawBrackets brackets are open at once, counting every [ { ] } of the text. */
function deepBracketLine(text: string): number | undefined {
  let open = 0;
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) line++;
    else if (c === 91 || c === 123) {
      if (++open > SOURCE_LIMITS.rawBrackets) return line;
    } else if ((c === 93 || c === 125) && open > 0) open--;
  }
  return undefined;
}

interface Shape {
  /** Size of the data as compact JSON, aliases expanded. */
  bytes: number;
  /** Levels of nesting: 0 for a scalar, 1 for a flat mapping or list; Infinity past the limit or in a cycle. */
  depth: number;
}

/**
 * The expanded size and depth of parsed data. An alias is the same object at every use, so the
 * result per object is kept: the walk visits each object once, however often it is repeated. It
 * stops below the depth limit, and an alias that repeats a mapping inside itself (a cycle) counts
 * as infinitely deep.
 */
function measure(data: unknown, level = 1, memo = new Map<object, Shape>()): Shape {
  if (typeof data === 'string') return { bytes: data.length + 2, depth: 0 };
  if (typeof data !== 'object' || data === null) return { bytes: String(data).length, depth: 0 };
  if (level > SOURCE_LIMITS.depth) return { bytes: 0, depth: Infinity };
  const known = memo.get(data);
  if (known) return known;
  memo.set(data, { bytes: 0, depth: Infinity });
  const shape: Shape = { bytes: 2, depth: 1 };
  const entries: [string | undefined, unknown][] = Array.isArray(data) ? data.map((x: unknown) => [undefined, x]) : Object.entries(data);
  for (const [key, item] of entries) {
    const child = measure(item, level + 1, memo);
    shape.bytes += child.bytes + 1 + (key === undefined ? 0 : key.length + 3);
    shape.depth = Math.max(shape.depth, child.depth + 1);
  }
  memo.set(data, shape);
  return shape;
}

/** The refusal of a document over the depth limit, or of a file whose aliases expand too far. */
function shapeProblem(file: string, shape: Shape, fileBytes: number, value: { data: unknown }, locate: (pointer: string) => Position): Diagnostic | undefined {
  if (shape.depth > SOURCE_LIMITS.depth) {
    const pointer = deepestPointer(value.data, SOURCE_LIMITS.depth);
    return sourceError(
      { file, ...locate(pointer), pointer },
      `the data nests deeper than ${SOURCE_LIMITS.depth} levels here (or a YAML alias repeats a mapping or list inside itself)`,
      'flatten the data: nest mappings and lists fewer levels deep, and never use an alias inside what its anchor names',
    );
  }
  if (fileBytes > SOURCE_LIMITS.expandedBytes) {
    return sourceError(
      { file, ...locate(''), pointer: '' },
      `with its YAML aliases (*name) expanded, ${file} holds more than ${SOURCE_LIMITS.expandedBytes / MiB} MiB of data (the limit of a source file)`,
      ALIAS_FIX,
    );
  }
  return undefined;
}

/** A pointer `levels` deep along a path that nests too deep (a refusal only, so it may measure again). */
function deepestPointer(data: unknown, levels: number): string {
  let pointer = '';
  let node = data;
  for (let i = 1; i < levels && typeof node === 'object' && node !== null; i++) {
    const entries: [string, unknown][] = Array.isArray(node) ? node.map((x: unknown, j) => [String(j), x]) : Object.entries(node);
    const next = entries.find(([, x]) => measure(x, i + 1).depth === Infinity);
    if (!next) break;
    pointer = childPointer(pointer, next[0]);
    node = next[1];
  }
  return pointer;
}

function rangeStart(node: unknown): number | undefined {
  return isNode(node) && node.range ? node.range[0] : undefined;
}

/** Offset of the node a pointer addresses: its key for a mapping field, else the node itself. */
function offsetOf(doc: Document.Parsed, pointer: string): number {
  let node: unknown = doc.contents;
  let offset = rangeStart(node) ?? doc.range[0];
  for (const segment of pointerSegments(pointer)) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === segment);
      if (!pair) break;
      offset = rangeStart(pair.key) ?? rangeStart(pair.value) ?? offset;
      node = pair.value;
    } else if (isSeq(node)) {
      const item: unknown = node.items[Number(segment)];
      if (item === undefined) break;
      offset = rangeStart(item) ?? offset;
      node = item;
    } else {
      break;
    }
  }
  return offset;
}
