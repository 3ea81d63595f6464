// An in-memory SourceTree for tests: files by path, with a record of every call so that tests
// can assert batching (one readMany per include level). objects() gives Git's object ids: blobs
// hashed as Git hashes them, trees over their entries (not Git's binary tree format, but equally
// a function of everything below them).
import { createHash } from 'node:crypto';

const sha1 = (text) => createHash('sha1').update(text).digest('hex');

/** Every blob and tree of the files with an object id, the root as ''. */
function objectsOf(files) {
  const found = new Map();
  const children = new Map([['', new Map()]]);
  for (const [path, text] of Object.entries(files)) {
    const body = Buffer.from(text);
    found.set(path, { type: 'blob', oid: sha1(Buffer.concat([Buffer.from(`blob ${body.length}\0`), body])) });
    const parts = path.split('/');
    for (let i = 0; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (!children.has(dir)) children.set(dir, new Map());
      children.get(dir).set(parts[i], parts.slice(0, i + 1).join('/'));
    }
  }
  const treeOid = (dir) => {
    const lines = [...children.get(dir)]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, full]) => `${name} ${children.has(full) ? treeOid(full) : found.get(full).oid}`);
    const oid = sha1(`tree\n${lines.join('\n')}`);
    found.set(dir, { type: 'tree', oid });
    return oid;
  };
  treeOid('');
  return found;
}

export function memoryTree(files) {
  const has = (p) => Object.prototype.hasOwnProperty.call(files, p);
  const calls = { list: 0, read: [], readMany: [] };
  return {
    calls,
    async list() {
      calls.list++;
      return Object.keys(files).sort();
    },
    async read(path) {
      calls.read.push(path);
      return has(path) ? files[path] : undefined;
    },
    async readMany(paths) {
      calls.readMany.push([...paths]);
      return paths.map((p) => (has(p) ? files[p] : undefined));
    },
    async objects() {
      return objectsOf(files);
    },
  };
}

/** Joins lines with newlines, so that a test reads line numbers off the array index + 1. */
export function yaml(...lines) {
  return lines.join('\n') + '\n';
}

/**
 * The lines of one resource document: header lines 1-4, then each spec line indented under
 * `spec:`, so the n-th spec line is line 4 + n of the document.
 */
export function resource(kind, name, ...specLines) {
  return [
    'apiVersion: nyl.io/v1',
    `kind: ${kind}`,
    `metadata: {name: ${name}}`,
    specLines.length > 0 ? 'spec:' : 'spec: {}',
    ...specLines.map((l) => `  ${l}`),
  ];
}

/** Documents (arrays of lines) joined with `---` into one file text. */
export function documents(...docs) {
  return docs.map((d) => d.join('\n')).join('\n---\n') + '\n';
}

/** Loads files expecting a NylError and returns its diagnostics. */
export async function loadErrors(loadProject, files) {
  let error;
  try {
    await loadProject('/project', memoryTree(files));
  } catch (e) {
    error = e;
  }
  if (!error || error.name !== 'NylError') throw new Error(`expected a NylError, got ${error ?? 'a project'}`);
  return error.diagnostics;
}

/** The one diagnostic located at a pointer (and file, when given); fails listing all otherwise. */
export function at(diagnostics, pointer, file) {
  const found = diagnostics.filter((d) => d.location?.pointer === pointer && (file === undefined || d.location.file === file));
  if (found.length !== 1) {
    throw new Error(`expected one diagnostic at ${pointer}, found ${found.length}:\n${JSON.stringify(diagnostics, null, 2)}`);
  }
  return found[0];
}
