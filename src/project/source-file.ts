/**
 * Parses one source file into its YAML documents and maps JSON pointers inside a document to
 * 1-based line and column, falling back to the nearest existing parent when a field is missing.
 * A field is located at its key (the line a user looks for), a list item at the item.
 */
import { type Document, LineCounter, isAlias, isMap, isNode, isScalar, isSeq, parseAllDocuments } from 'yaml';
import type { Diagnostic } from '../errors/diagnostic';
import { pointerSegments } from '../util/schema';
import { sourceError } from './validate';

export interface Position {
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

export interface ParsedFile {
  /** The non-empty, syntactically valid documents. */
  documents: SourceDocument[];
  /** Syntax errors, one per problem yaml reports. */
  errors: Diagnostic[];
}

export function parseSourceFile(file: string, text: string): ParsedFile {
  const lines = new LineCounter();
  const position = (offset: number): Position => {
    const p = lines.linePos(offset);
    return { line: Math.max(p.line, 1), column: Math.max(p.col, 1) };
  };
  const parsed = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false });
  const out: ParsedFile = { documents: [], errors: [] };
  parsed.forEach((doc, index) => {
    if (doc.errors.length > 0) {
      for (const e of doc.errors) {
        out.errors.push(
          sourceError({ file, ...position(e.pos[0]), pointer: '' }, `YAML syntax error: ${e.message}`, 'fix the YAML syntax at this line'),
        );
      }
      return;
    }
    if (doc.contents === null) return;
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 1000 });
    } catch (err) {
      const start = position(doc.contents.range[0]);
      out.errors.push(sourceError({ file, ...start, pointer: '' }, `YAML error: ${(err as Error).message}`, 'fix the YAML document'));
      return;
    }
    const start = position(doc.contents.range[0]);
    out.documents.push({ file, index, value, start, locate: (pointer) => position(offsetOf(doc, pointer)) });
  });
  return out;
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
