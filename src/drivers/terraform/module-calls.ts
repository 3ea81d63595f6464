/**
 * The local modules a Terraform or OpenTofu module calls, read from its files without running
 * anything: every `source` argument whose value is a relative path (`./x`, `../modules/net`), in
 * `*.tf` (HCL) and `*.tf.json` files. The source model adds the directories they name to the
 * unit's execution key, so that a change in a called module runs the unit again.
 *
 * A pure text scan, not an HCL parser: comments are removed first, and any `source = "./..."`
 * counts (a resource argument named `source` with a relative path too, which only adds a path to
 * the key: reading more than needed is safe, less is not). Terraform's own manifest is checked
 * against it when the module runs (./session.ts).
 */

/** Removes `#`, `//` and block comments of HCL, leaving strings alone. */
function withoutComments(text: string): string {
  return text.replace(/"(?:[^"\\\n]|\\.)*"|\/\*[\s\S]*?\*\/|(?:#|\/\/)[^\n]*/g, (m) => (m.startsWith('"') ? m : ' '));
}

function isRelative(source: string): boolean {
  return source.startsWith('./') || source.startsWith('../');
}

function hclSources(text: string): string[] {
  const found: string[] = [];
  for (const m of withoutComments(text).matchAll(/\bsource\s*=\s*"([^"\\]*)"/g)) if (isRelative(m[1]!)) found.push(m[1]!);
  return found;
}

/** Every `"source": "./..."` of a JSON module, at any depth. */
function jsonSources(text: string): string[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return [];
  }
  const found: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'source' && typeof x === 'string' && isRelative(x)) found.push(x);
        else walk(x);
      }
    }
  };
  walk(doc);
  return found;
}

/** The relative module sources the files of one module directory name, as written. */
export function localModuleSources(files: readonly { name: string; text: string }[]): string[] {
  const found = new Set<string>();
  for (const f of files) {
    if (f.name.endsWith('.tf.json')) jsonSources(f.text).forEach((s) => found.add(s));
    else if (f.name.endsWith('.tf')) hclSources(f.text).forEach((s) => found.add(s));
  }
  return [...found].sort();
}

/** Is this a file of a module's configuration (what localModuleSources reads)? */
export function isModuleFile(name: string): boolean {
  return name.endsWith('.tf') || name.endsWith('.tf.json');
}
