/**
 * A Terraform/OpenTofu stand-in for tests: a Node script (builtins only) that honours the
 * documented Terraform CLI contract for a small subset, so that Nyl's Terraform driver can be
 * tested on machines without providers. The same driver runs unchanged against this and against
 * real terraform; README.md beside this file is the contract.
 *
 * The subset:
 * - the root module is the *.tf.json files of the working directory (HCL files are refused);
 * - blocks: variable, locals, output, terraform (a `backend "local"` block is honoured, the rest
 *   ignored), and resources of two types: terraform_data (as built into Terraform) and
 *   local_file (as the hashicorp/local provider: it writes a real file);
 * - expressions: JSON values whose strings may hold `${...}` references (var.X, local.X,
 *   TYPE.NAME.ATTR, path.module/root/cwd, terraform.workspace, with .attr and [index] steps);
 * - commands: init, plan, apply, destroy, output, show, version; the local backend with its
 *   state file, lock and backup; saved plans (JSON, not Terraform's zip format) that are refused
 *   when stale; refresh of local_file (a file edited or deleted by hand is drift).
 * Shapes (state file, `show -json`, `output -json`, diagnostics, exit codes) follow what
 * terraform v1.11 prints; the places where the stand-in deliberately differs are in README.md.
 *
 * Test hooks (environment): TF_STANDIN_SLEEP_APPLY, TF_STANDIN_LOG, TF_STANDIN_FAIL (README.md).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// ---------------------------------------------------------------------------------------------
// Products and constants
// ---------------------------------------------------------------------------------------------

/** What differs between the two programs the stand-in plays. */
const PRODUCTS = {
  terraform: { name: 'Terraform', command: 'terraform', version: '1.9.0', registry: 'registry.terraform.io' },
  tofu: { name: 'OpenTofu', command: 'tofu', version: '1.8.0', registry: 'registry.opentofu.org' },
};

const PLATFORM = `${process.platform}_${process.arch === 'x64' ? 'amd64' : process.arch}`;
const PLAN_FORMAT = 'tf-standin-plan/1';
const LOCAL_PROVIDER_VERSION = '2.5.2';
const RULE = '\u2500'.repeat(77);
/** Variable names Terraform reserves (configs/named_values.go). */
const RESERVED_VARIABLE_NAMES = ['count', 'depends_on', 'for_each', 'lifecycle', 'providers', 'source', 'version', 'locals'];

// ---------------------------------------------------------------------------------------------
// Diagnostics: every failure is a Diag, printed as terraform prints its diagnostics
// ---------------------------------------------------------------------------------------------

/** One error or warning, as terraform reports it: a summary, maybe a source snippet, a detail. */
export class Diag extends Error {
  constructor(summary, detail = '', { snippet, severity = 'error' } = {}) {
    super(summary);
    this.summary = summary;
    this.detail = detail;
    this.snippet = snippet;
    this.severity = severity;
  }
}

/** Several errors found together (terraform reports every invalid reference, not the first). */
class Diags extends Error {
  constructor(diags) {
    super(diags.map((d) => d.summary).join('; '));
    this.diags = diags;
  }
}

const warning = (summary, detail, opts = {}) => new Diag(summary, detail, { ...opts, severity: 'warning' });

/** Wraps prose paragraphs at `width` like terraform; lines that start with a space are kept. */
function wrap(text, width) {
  const out = [];
  for (const line of text.split('\n')) {
    if (line.length <= width || /^\s/.test(line)) {
      out.push(line);
      continue;
    }
    let current = '';
    for (const word of line.split(' ')) {
      if (current && current.length + 1 + word.length > width) {
        out.push(current);
        current = word;
      } else current = current ? `${current} ${word}` : word;
    }
    out.push(current);
  }
  return out;
}

/**
 * A diagnostic as text. Without colour it is terraform's -no-color form (a blank line, then
 * "Error: summary", a blank line, the detail); with colour terraform draws the same lines in a
 * box of ANSI-coloured bars, which is what it prints when -no-color is absent even on a pipe.
 */
function formatDiag(d, color) {
  const label = d.severity === 'error' ? 'Error' : 'Warning';
  const body = [];
  if (d.snippet) {
    body.push('', `  on ${d.snippet.file} line ${d.snippet.line}${d.snippet.context ? `, in ${d.snippet.context}` : ''}:`);
    body.push(`${String(d.snippet.line).padStart(4)}: ${d.snippet.text}`);
  }
  if (d.detail) body.push('', ...wrap(d.detail, color ? 76 : 78));
  if (!color) return `\n${label}: ${d.summary}\n${body.map((l) => `${l}\n`).join('')}`;
  const c = d.severity === 'error' ? '\x1b[31m' : '\x1b[33m';
  const bar = `${c}\u2502\x1b[0m \x1b[0m`;
  const lines = [`${c}\u2577\x1b[0m\x1b[0m`, `${bar}\x1b[1m${c}${label}: \x1b[0m\x1b[0m\x1b[1m${d.summary}\x1b[0m`];
  body.forEach((l, i) => lines.push(`${bar}${i === 1 && !d.snippet ? '\x1b[0m' : ''}${l}`));
  lines.push(`${c}\u2575\x1b[0m\x1b[0m`);
  return `${lines.join('\n')}\n`;
}

/** Errors go to stderr; warnings to stdout as terraform's views do, unless stdout carries JSON. */
function printDiags(list, io) {
  for (const d of list) {
    const text = formatDiag(d, io.color);
    if (d.severity === 'error' || io.jsonStdout) process.stderr.write(text);
    else process.stdout.write(text);
  }
}

// ---------------------------------------------------------------------------------------------
// Source snippets: terraform points at the line of a file where a problem is
// ---------------------------------------------------------------------------------------------

/** The snippet for `needle` in `file` of the configuration (first line holding it, else line 1). */
function snippet(config, file, needle, context) {
  const text = config.files[file] ?? '';
  const lines = text.split('\n');
  let index = needle ? lines.findIndex((l) => l.includes(needle)) : -1;
  if (index < 0) index = 0;
  return { file, line: index + 1, text: lines[index] ?? '', context };
}

// ---------------------------------------------------------------------------------------------
// Command-line flags: Go's flag package, as terraform uses it
// ---------------------------------------------------------------------------------------------

/**
 * Parses `-name`, `-name=value` and `-name value` (either one or two dashes) until the first
 * argument that is not a flag. `spec` maps flag names to 'bool', 'string' or 'list' (repeatable,
 * kept in order in `ordered` with the other repeatables so -var and -var-file keep their order).
 */
function parseFlags(product, command, args, spec) {
  const flags = {};
  const ordered = [];
  let i = 0;
  const fail = (message) => {
    throw new Diag('Failed to parse command-line flags', `${message}\n\nFor more help on using this command, run:\n  ${product.command} ${command} -help`);
  };
  for (; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') {
      i++;
      break;
    }
    if (!arg.startsWith('-') || arg === '-') break;
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    const kind = spec[name];
    if (!kind) fail(`flag provided but not defined: -${name}`);
    let value = eq < 0 ? undefined : body.slice(eq + 1);
    if (kind === 'bool') {
      if (value === undefined) value = true;
      else if (['true', '1', 't', 'TRUE', 'True'].includes(value)) value = true;
      else if (['false', '0', 'f', 'FALSE', 'False'].includes(value)) value = false;
      else fail(`invalid boolean value "${value}" for -${name}: parse error`);
      flags[name] = value;
      continue;
    }
    if (value === undefined) {
      if (i + 1 >= args.length) fail(`flag needs an argument: -${name}`);
      value = args[++i];
    }
    if (kind === 'list') {
      (flags[name] ??= []).push(value);
      ordered.push({ name, value });
    } else flags[name] = value;
  }
  return { flags, ordered, positional: args.slice(i) };
}

function tooManyArguments(product, command) {
  return new Diag('Too many command line arguments', `To specify a working directory for the ${command}, use the global -chdir flag.\n\nFor more help on using this command, run:\n  ${product.command} ${command} -help`);
}

/** `-lock-timeout=10s` and the like, in milliseconds. */
function parseDuration(text) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text ?? '0s');
  if (!m) throw new Diag('Invalid lock timeout', `The value ${JSON.stringify(text)} is not a duration such as "10s".`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60000, h: 3600000 }[m[2]];
}

// ---------------------------------------------------------------------------------------------
// Types: cty type JSON ('string', ['list', 'string'], ['object', {...}], 'dynamic' for any)
// ---------------------------------------------------------------------------------------------

/** A value not known until apply; `type` is what is known of it (terraform's unknown values). */
class Unknown {
  constructor(type = 'dynamic') {
    this.type = type;
  }
}
const isUnknown = (v) => v instanceof Unknown;
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !isUnknown(v);
const PRIMITIVES = ['string', 'number', 'bool'];

function containsUnknown(v) {
  if (isUnknown(v)) return true;
  if (Array.isArray(v)) return v.some(containsUnknown);
  if (isObject(v)) return Object.values(v).some(containsUnknown);
  return false;
}

/** The type of a value written in JSON: tuples and objects, as HCL's JSON syntax gives them. */
function inferType(v) {
  if (isUnknown(v)) return v.type;
  if (v === null) return 'dynamic';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return ['tuple', v.map(inferType)];
  return ['object', Object.fromEntries(Object.keys(v).sort().map((k) => [k, inferType(v[k])]))];
}

const typeEq = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const typeName = (t) => (typeof t === 'string' ? t : t[0]);

/**
 * Parses a type constraint as written in a variable's `type` ("map(string)", "object({a=string})"):
 * the expression syntax HCL gives that string in JSON configuration. `any` becomes 'dynamic'.
 */
function parseTypeConstraint(src) {
  let pos = 0;
  const skip = () => {
    while (pos < src.length && /\s/.test(src[pos])) pos++;
  };
  const expect = (ch) => {
    skip();
    if (src[pos] !== ch) throw new Error(`expected "${ch}" at offset ${pos}`);
    pos++;
  };
  const ident = () => {
    skip();
    const m = /^[A-Za-z_][\w-]*/.exec(src.slice(pos));
    if (!m) throw new Error(`expected a type name at offset ${pos}`);
    pos += m[0].length;
    return m[0];
  };
  const separator = (close) => {
    skip();
    if (src[pos] === ',') pos++;
    skip();
    return src[pos] !== close;
  };
  const type = () => {
    const name = ident();
    if (PRIMITIVES.includes(name)) return name;
    if (name === 'any') return 'dynamic';
    if (['list', 'set', 'map'].includes(name)) {
      expect('(');
      const element = type();
      expect(')');
      return [name, element];
    }
    if (name === 'object') {
      expect('(');
      expect('{');
      const attrs = {};
      skip();
      while (src[pos] !== '}') {
        const key = ident();
        expect('=');
        attrs[key] = type();
        if (!separator('}')) break;
      }
      expect('}');
      expect(')');
      return ['object', Object.fromEntries(Object.keys(attrs).sort().map((k) => [k, attrs[k]]))];
    }
    if (name === 'tuple') {
      expect('(');
      expect('[');
      const elements = [];
      skip();
      while (src[pos] !== ']') {
        elements.push(type());
        if (!separator(']')) break;
      }
      expect(']');
      expect(')');
      return ['tuple', elements];
    }
    throw new Error(`the keyword "${name}" is not a type constraint the stand-in knows`);
  };
  const result = type();
  skip();
  if (pos !== src.length) throw new Error(`unexpected text after the type at offset ${pos}`);
  return result;
}

/** A number in a string template (cty prints integers without a fraction, as JS does). */
const numberToString = (n) => String(n);

/** Sorts set elements the way cty does (numbers numerically, the rest by their JSON). */
function sortSet(values) {
  const unique = [];
  for (const v of values) if (!unique.some((u) => JSON.stringify(u) === JSON.stringify(v))) unique.push(v);
  return unique.sort((a, b) => (typeof a === 'number' && typeof b === 'number' ? a - b : JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
}

/**
 * Converts a value to a type constraint as terraform does for input variables (cty's convert:
 * numbers and bools become strings, numeric strings numbers, extra object attributes are dropped).
 * Returns {value, type} with the concrete type; throws an Error whose message says why not.
 */
function convert(value, want) {
  if (value === null) return { value: null, type: want };
  if (want === 'dynamic') return { value, type: inferType(value) };
  const kind = typeName(want);
  if (kind === 'string') {
    if (typeof value === 'string') return { value, type: 'string' };
    if (typeof value === 'number') return { value: numberToString(value), type: 'string' };
    if (typeof value === 'boolean') return { value: String(value), type: 'string' };
    throw new Error('string required');
  }
  if (kind === 'number') {
    if (typeof value === 'number') return { value, type: 'number' };
    if (typeof value === 'string' && /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(value.trim())) return { value: Number(value), type: 'number' };
    throw new Error('a number is required');
  }
  if (kind === 'bool') {
    if (typeof value === 'boolean') return { value, type: 'bool' };
    if (value === 'true' || value === 'false') return { value: value === 'true', type: 'bool' };
    throw new Error('a bool is required');
  }
  if (kind === 'list' || kind === 'set') {
    if (!Array.isArray(value)) throw new Error(`${kind} of ${typeLabel(want[1])} required`);
    const items = unify(value.map((v, i) => prefixed(`element ${i}`, () => convert(v, want[1]))), kind);
    const values = items.map((it) => it.value);
    return { value: kind === 'set' ? sortSet(values) : values, type: [kind, items.type] };
  }
  if (kind === 'map') {
    if (!isObject(value)) throw new Error(`map of ${typeLabel(want[1])} required`);
    const keys = Object.keys(value).sort();
    const items = unify(keys.map((k) => prefixed(`element "${k}"`, () => convert(value[k], want[1]))), 'map');
    return { value: Object.fromEntries(keys.map((k, i) => [k, items[i].value])), type: ['map', items.type] };
  }
  if (kind === 'object') {
    if (!isObject(value)) throw new Error('object required');
    const out = {};
    const types = {};
    for (const [k, t] of Object.entries(want[1])) {
      if (!(k in value)) throw new Error(`attribute "${k}" is required`);
      const c = prefixed(`attribute "${k}"`, () => convert(value[k], t));
      out[k] = c.value;
      types[k] = c.type;
    }
    return { value: out, type: ['object', types] };
  }
  if (kind === 'tuple') {
    if (!Array.isArray(value) || value.length !== want[1].length) throw new Error(`tuple required (${want[1].length} elements)`);
    const items = value.map((v, i) => prefixed(`element ${i}`, () => convert(v, want[1][i])));
    return { value: items.map((it) => it.value), type: ['tuple', items.map((it) => it.type)] };
  }
  throw new Error(`unsupported type ${JSON.stringify(want)}`);
}

function prefixed(where, fn) {
  try {
    return fn();
  } catch (e) {
    throw new Error(`${where}: ${e.message}`);
  }
}

/** One element type for a collection (list(any) of mixed primitives becomes list(string)). */
function unify(items, kind) {
  const types = items.map((it) => it.type);
  let type = types[0] ?? 'dynamic';
  if (!types.every((t) => typeEq(t, type))) {
    if (!types.every((t) => PRIMITIVES.includes(t))) throw new Error(`all ${kind} elements must have the same type`);
    type = 'string';
    items = items.map((it) => convert(it.value, 'string'));
  }
  items.type = type;
  return items;
}

function typeLabel(t) {
  if (t === 'dynamic') return 'any single type';
  return typeof t === 'string' ? t : `${t[0]}`;
}

// ---------------------------------------------------------------------------------------------
// Configuration: the *.tf.json files of the working directory, merged
// ---------------------------------------------------------------------------------------------

/** Resource types the stand-in has, with their schemas (see RESOURCE_TYPES below). */
const RESOURCE_META = ['depends_on'];
const UNSUPPORTED_META = ['count', 'for_each', 'lifecycle', 'provider', 'provisioner', 'connection'];

/** Iterates a JSON block body that HCL allows either as an object or as an array of objects. */
function* bodies(value) {
  if (Array.isArray(value)) for (const v of value) yield* bodies(v);
  else if (isObject(value)) yield value;
}

/** Reads and merges the root module; refuses HCL files, which the stand-in cannot parse. */
function loadConfig(dir, product) {
  const entries = fs.readdirSync(dir).sort();
  const hcl = entries.filter((f) => f.endsWith('.tf') || f === 'terraform.tfvars' || f.endsWith('.auto.tfvars'));
  if (hcl.length) {
    throw new Diag('Unsupported configuration file', `The ${product.name} stand-in used by these tests reads only JSON configuration (*.tf.json, *.tfvars.json), but the working directory holds ${hcl.join(', ')}. Write the module as JSON for the stand-in.`);
  }
  const config = { files: {}, variables: {}, locals: {}, outputs: {}, resources: {}, backend: null, origins: {} };
  const errors = [];
  for (const file of entries.filter((f) => f.endsWith('.tf.json'))) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    config.files[file] = text;
    let doc;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      errors.push(new Diag('Invalid JSON', `${file} is not valid JSON: ${e.message}`, { snippet: snippet(config, file, null) }));
      continue;
    }
    if (!isObject(doc)) {
      errors.push(new Diag('Root value must be object', 'The root value in a JSON-based configuration must be either a JSON object or a JSON array of objects.', { snippet: snippet(config, file, null) }));
      continue;
    }
    mergeFile(config, file, doc, errors);
  }
  if (errors.length) throw new Diags(errors);
  return config;
}

/** Adds one file's blocks to the configuration, recording where each came from. */
function mergeFile(config, file, doc, errors) {
  const declare = (kind, key, map, name, body) => {
    if (name in map) {
      errors.push(new Diag(`Duplicate ${kind} declaration`, `A ${kind} named "${name}" was already declared in ${config.origins[`${key}.${name}`]}. Names must be unique within a module.`, { snippet: snippet(config, file, `"${name}"`) }));
      return;
    }
    map[name] = body;
    config.origins[`${key}.${name}`] = file;
  };
  for (const [block, value] of Object.entries(doc)) {
    if (block === '//') continue;
    if (block === 'terraform') {
      for (const body of bodies(value)) readTerraformBlock(config, file, body, errors);
    } else if (block === 'variable') {
      for (const body of bodies(value)) for (const [name, v] of Object.entries(body)) declare('variable', 'variable', config.variables, name, checkVariable(config, file, name, v, errors));
    } else if (block === 'locals') {
      for (const body of bodies(value)) for (const [name, v] of Object.entries(body)) declare('local value', 'local', config.locals, name, v);
    } else if (block === 'output') {
      for (const body of bodies(value)) for (const [name, v] of Object.entries(body)) declare('output', 'output', config.outputs, name, checkOutput(config, file, name, v, errors));
    } else if (block === 'resource') {
      for (const body of bodies(value)) {
        for (const [type, named] of Object.entries(body)) {
          for (const inner of bodies(named)) {
            for (const [name, v] of Object.entries(inner)) declare('resource', 'resource', config.resources, `${type}.${name}`, checkResource(config, file, type, name, v, errors));
          }
        }
      }
    } else if (['data', 'module', 'provider', 'moved', 'import', 'check', 'removed'].includes(block)) {
      errors.push(new Diag('Unsupported block type', `The ${block} block is not part of the subset the stand-in implements (variable, locals, output, terraform, and terraform_data or local_file resources).`, { snippet: snippet(config, file, `"${block}"`) }));
    } else {
      errors.push(new Diag('Unsupported block type', `Blocks of type "${block}" are not expected here.`, { snippet: snippet(config, file, `"${block}"`) }));
    }
  }
}

function readTerraformBlock(config, file, body, errors) {
  for (const backends of bodies(body.backend)) {
    for (const [type, cfg] of Object.entries(backends)) {
      if (type !== 'local') {
        errors.push(new Diag('Unsupported backend type', `The stand-in has only the "local" backend; the configuration asks for "${type}".`, { snippet: snippet(config, file, `"${type}"`) }));
        continue;
      }
      const settings = [...bodies(cfg)].reduce((a, b) => ({ ...a, ...b }), {});
      for (const key of Object.keys(settings)) {
        if (!['path', 'workspace_dir'].includes(key)) errors.push(new Diag('Unsupported argument', `An argument named "${key}" is not expected here.`, { snippet: snippet(config, file, `"${key}"`) }));
      }
      config.backend = { type, config: settings, file };
    }
  }
}

function checkVariable(config, file, name, body, errors) {
  body = body ?? {};
  const at = snippet(config, file, `"${name}"`, 'variable');
  if (RESERVED_VARIABLE_NAMES.includes(name)) {
    errors.push(new Diag('Invalid variable name', `The variable name "${name}" is reserved due to its special meaning inside module blocks.`, { snippet: at }));
  }
  for (const key of Object.keys(body)) {
    if (!['type', 'default', 'description', 'sensitive', 'nullable'].includes(key)) {
      errors.push(new Diag('Unsupported argument', `The stand-in does not implement the "${key}" argument of a variable.`, { snippet: at }));
    }
  }
  const variable = { ...body, file, type: 'dynamic', typed: body.type !== undefined };
  if (body.type !== undefined) {
    try {
      variable.type = parseTypeConstraint(String(body.type));
    } catch (e) {
      errors.push(new Diag('Invalid type specification', e.message, { snippet: at }));
    }
  }
  if (body.default !== undefined && body.default !== null) {
    try {
      variable.defaultValue = convert(body.default, variable.type);
    } catch (e) {
      errors.push(new Diag('Invalid default value for variable', `This default value is not compatible with the variable's type constraint: ${e.message}.`, { snippet: at }));
    }
  }
  return variable;
}

function checkOutput(config, file, name, body, errors) {
  body = body ?? {};
  const at = snippet(config, file, `"${name}"`, `output.${name}`);
  if (!('value' in body)) errors.push(new Diag('Missing required argument', 'The argument "value" is required, but no definition was found.', { snippet: at }));
  for (const key of Object.keys(body)) {
    if (!['value', 'sensitive', 'description', 'depends_on'].includes(key)) {
      errors.push(new Diag('Unsupported argument', `The stand-in does not implement the "${key}" argument of an output.`, { snippet: at }));
    }
  }
  return { ...body, file };
}

function checkResource(config, file, type, name, body, errors) {
  body = body ?? {};
  const at = snippet(config, file, `"${name}"`, `resource.${type}.${name}`);
  const schema = RESOURCE_TYPES[type];
  if (!schema) {
    errors.push(new Diag('Unsupported resource type', `The stand-in implements only the resource types terraform_data and local_file, not "${type}".`, { snippet: at }));
    return { type, name, body, file };
  }
  for (const key of Object.keys(body)) {
    if (UNSUPPORTED_META.includes(key)) errors.push(new Diag('Unsupported argument', `The stand-in does not implement the "${key}" meta-argument.`, { snippet: at }));
    else if (!RESOURCE_META.includes(key) && !(key in schema.args)) errors.push(new Diag('Unsupported argument', `An argument named "${key}" is not expected here.`, { snippet: at }));
  }
  for (const [arg, spec] of Object.entries(schema.args)) {
    if (spec.required && body[arg] === undefined) errors.push(new Diag('Missing required argument', `The argument "${arg}" is required, but no definition was found.`, { snippet: at }));
  }
  return { type, name, body, file };
}

// ---------------------------------------------------------------------------------------------
// Expressions: templates and references
// ---------------------------------------------------------------------------------------------

/** Splits a template string into literal parts and `${...}` references ($${ escapes). */
function parseTemplate(s) {
  const parts = [];
  let literal = '';
  for (let i = 0; i < s.length; i++) {
    if (s.startsWith('$${', i) || s.startsWith('%%{', i)) {
      literal += `${s[i]}{`;
      i += 2;
    } else if (s.startsWith('${', i)) {
      const end = s.indexOf('}', i + 2);
      if (end < 0) throw new Error(`unclosed "\${" in ${JSON.stringify(s)}`);
      if (literal) parts.push({ literal });
      literal = '';
      parts.push({ expr: s.slice(i + 2, end).replace(/^~/, '').replace(/~$/, '').trim() });
      i = end;
    } else if (s.startsWith('%{', i)) {
      throw new Error(`template directives ("%{") are not part of the stand-in's subset: ${JSON.stringify(s)}`);
    } else literal += s[i];
  }
  if (literal || parts.length === 0) parts.push({ literal });
  return parts;
}

/**
 * Parses a reference such as `var.x`, `local.y.z[0]` or `terraform_data.a.output["k"]` into its
 * root and traversal steps. Anything else (functions, operators) is outside the subset.
 */
function parseRef(text) {
  const head = /^([A-Za-z_][\w-]*)/.exec(text);
  if (!head) return null;
  const steps = [];
  let rest = text.slice(head[0].length);
  while (rest) {
    let m;
    if ((m = /^\.([A-Za-z_][\w-]*)/.exec(rest))) steps.push(m[1]);
    else if ((m = /^\[\s*(\d+)\s*\]/.exec(rest))) steps.push(Number(m[1]));
    else if ((m = /^\[\s*"((?:[^"\\]|\\.)*)"\s*\]/.exec(rest))) steps.push(JSON.parse(`"${m[1]}"`));
    else return null;
    rest = rest.slice(m[0].length);
  }
  const root = head[1];
  if (root === 'var' || root === 'local' || root === 'path' || root === 'terraform') {
    if (!steps.length || typeof steps[0] !== 'string') return null;
    return { text, root, name: steps[0], steps: steps.slice(1) };
  }
  if (!steps.length || typeof steps[0] !== 'string') return null;
  return { text, root: 'resource', address: `${root}.${steps[0]}`, resType: root, name: steps[0], steps: steps.slice(1) };
}

/** Every reference in an expression, with a parse error turned into a Diag at `where`. */
function collectRefs(expr, fail) {
  const refs = [];
  const walk = (v) => {
    if (typeof v === 'string') {
      let parts;
      try {
        parts = parseTemplate(v);
      } catch (e) {
        fail('Unsupported expression', e.message, v);
        return;
      }
      for (const p of parts) {
        if (!('expr' in p)) continue;
        const ref = parseRef(p.expr);
        if (ref) refs.push(ref);
        else fail('Unsupported expression', `The stand-in evaluates only references (var.NAME, local.NAME, TYPE.NAME.ATTRIBUTE, path.module) inside "\${...}", not "${p.expr}".`, p.expr);
      }
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (isObject(v)) Object.values(v).forEach(walk);
  };
  walk(expr);
  return refs;
}

// ---------------------------------------------------------------------------------------------
// Analysis: references checked, dependencies found, cycles refused, resources ordered
// ---------------------------------------------------------------------------------------------

/**
 * Checks every reference of the configuration (all errors together, each naming its file) and
 * finds the dependency graph. Returns the resources in creation order and, for each resource,
 * the resources it depends on (directly or through locals), as terraform records them in state.
 */
function analyse(config) {
  const errors = [];
  const nodes = new Map(); // node -> {refs, file, context}
  const add = (node, expr, file, context, extraDeps = []) => {
    const refs = [];
    const fail = (summary, detail, needle) => errors.push(new Diag(summary, detail, { snippet: snippet(config, file, needle, context) }));
    for (const ref of collectRefs(expr, fail)) {
      const problem = checkRef(config, ref);
      if (problem) fail(problem.summary, problem.detail, ref.text);
      else refs.push(ref);
    }
    for (const dep of extraDeps) {
      if (typeof dep !== 'string' || !config.resources[dep]) fail('Invalid depends_on reference', `depends_on must list resources of this module, such as "terraform_data.a"; ${JSON.stringify(dep)} is not one.`, String(dep));
      else refs.push({ text: dep, root: 'resource', address: dep, steps: [] });
    }
    nodes.set(node, { refs, file, context });
  };
  for (const [name, expr] of Object.entries(config.locals)) add(`local.${name}`, expr, config.origins[`local.${name}`], 'locals');
  for (const [addr, r] of Object.entries(config.resources)) {
    const { depends_on: dependsOn, ...args } = r.body;
    add(addr, args, r.file, `resource.${addr}`, dependsOn ?? []);
  }
  for (const [name, o] of Object.entries(config.outputs)) add(`output.${name}`, o.value, o.file, `output.${name}`, o.depends_on ?? []);
  if (errors.length) throw new Diags(errors);

  const edges = (node) => nodes.get(node).refs.filter((r) => r.root === 'local' || r.root === 'resource').map((r) => (r.root === 'local' ? `local.${r.name}` : r.address));
  const order = [];
  const state = new Map();
  const visit = (node, stack) => {
    if (state.get(node) === 'done') return;
    if (state.get(node) === 'visiting') {
      const cycle = stack.slice(stack.indexOf(node)).reverse();
      throw new Diag(`Cycle: ${cycle.join(', ')}`, '');
    }
    state.set(node, 'visiting');
    for (const next of [...new Set(edges(node))].sort()) visit(next, [...stack, node]);
    state.set(node, 'done');
    if (config.resources[node]) order.push(node);
  };
  for (const node of [...nodes.keys()].sort()) visit(node, []);

  const resourceDeps = new Map();
  const depsOf = (node) => {
    const found = new Set();
    const walk = (n) => {
      for (const e of edges(n)) {
        if (config.resources[e]) found.add(e);
        else walk(e);
      }
    };
    walk(node);
    return [...found].sort();
  };
  for (const addr of Object.keys(config.resources)) resourceDeps.set(addr, depsOf(addr));
  return { order, resourceDeps, nodes };
}

/** Why a reference is invalid, in terraform's words; null when it is fine. */
function checkRef(config, ref) {
  if (ref.root === 'var' && !config.variables[ref.name]) {
    return { summary: 'Reference to undeclared input variable', detail: `An input variable with the name "${ref.name}" has not been declared. This variable can be declared with a variable "${ref.name}" {} block.` };
  }
  if (ref.root === 'local' && !(ref.name in config.locals)) {
    return { summary: 'Reference to undeclared local value', detail: `A local value with the name "${ref.name}" has not been declared.` };
  }
  if (ref.root === 'path' && !['module', 'root', 'cwd'].includes(ref.name)) {
    return { summary: 'Invalid "path" attribute', detail: `The "path" object does not have an attribute named "${ref.name}". The supported attributes are path.cwd, path.module, and path.root.` };
  }
  if (ref.root === 'terraform' && ref.name !== 'workspace') {
    return { summary: 'Invalid "terraform" attribute', detail: `The "terraform" object does not have an attribute named "${ref.name}". The only supported attribute is terraform.workspace.` };
  }
  if (ref.root === 'resource') {
    if (['data', 'module', 'each', 'count', 'self'].includes(ref.resType)) {
      return { summary: 'Unsupported reference', detail: `The stand-in does not implement ${ref.resType} references ("${ref.text}").` };
    }
    if (!config.resources[ref.address]) {
      return { summary: 'Reference to undeclared resource', detail: `A managed resource "${ref.resType}" "${ref.name}" has not been declared in the root module.` };
    }
    const attr = ref.steps[0];
    if (attr !== undefined && !RESOURCE_TYPES[ref.resType].attributes.includes(attr)) {
      return { summary: 'Unsupported attribute', detail: `This object has no argument, nested block, or exported attribute named "${attr}".` };
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Evaluation: values with types, unknowns and sensitivity
// ---------------------------------------------------------------------------------------------

/**
 * An evaluator over one configuration. `vars` maps names to {value, type, sensitive};
 * `resource(addr)` gives {attrs, types, sensitive: Set} or null (not there: unknown).
 * Results are {value, type, sensitive}; a whole-string "${ref}" keeps the referenced type.
 */
function evaluator(config, vars, resource) {
  const locals = new Map();
  const evalRef = (ref, where) => {
    let base;
    if (ref.root === 'var') base = vars.get(ref.name);
    else if (ref.root === 'local') {
      if (!locals.has(ref.name)) locals.set(ref.name, evalExpr(config.locals[ref.name], 'locals'));
      base = locals.get(ref.name);
    } else if (ref.root === 'path') base = { value: ref.name === 'cwd' ? process.cwd() : '.', type: 'string', sensitive: false };
    else if (ref.root === 'terraform') base = { value: 'default', type: 'string', sensitive: false };
    else {
      const r = resource(ref.address);
      if (!r) return { value: new Unknown('dynamic'), type: 'dynamic', sensitive: false };
      const attr = ref.steps[0];
      if (attr === undefined) {
        // A whole resource as an object of its attributes.
        base = { value: r.attrs, type: ['object', r.types], sensitive: false };
      } else {
        base = { value: r.attrs[attr] ?? null, type: r.types[attr] ?? 'dynamic', sensitive: r.sensitive.has(attr) };
        return traverse(base, ref.steps.slice(1), ref, where);
      }
    }
    return traverse(base, ref.steps, ref, where);
  };
  const evalExpr = (expr, where) => {
    if (typeof expr === 'string') return evalTemplate(expr, where);
    if (typeof expr === 'number') return { value: expr, type: 'number', sensitive: false };
    if (typeof expr === 'boolean') return { value: expr, type: 'bool', sensitive: false };
    if (expr === null || expr === undefined) return { value: null, type: 'dynamic', sensitive: false };
    if (Array.isArray(expr)) {
      const items = expr.map((e) => evalExpr(e, where));
      return { value: items.map((i) => i.value), type: ['tuple', items.map((i) => i.type)], sensitive: items.some((i) => i.sensitive) };
    }
    const keys = Object.keys(expr).sort();
    const items = keys.map((k) => evalExpr(expr[k], where));
    return {
      value: Object.fromEntries(keys.map((k, i) => [k, items[i].value])),
      type: ['object', Object.fromEntries(keys.map((k, i) => [k, items[i].type]))],
      sensitive: items.some((i) => i.sensitive),
    };
  };
  const evalTemplate = (s, where) => {
    const parts = parseTemplate(s);
    if (parts.length === 1 && 'expr' in parts[0]) return evalRef(parseRef(parts[0].expr), where);
    let out = '';
    let unknown = false;
    let sensitive = false;
    for (const p of parts) {
      if ('literal' in p) {
        out += p.literal;
        continue;
      }
      const r = evalRef(parseRef(p.expr), where);
      sensitive ||= r.sensitive;
      if (isUnknown(r.value)) unknown = true;
      else if (r.value === null) throw new Diag('Invalid template interpolation value', `The expression result is null. Cannot include a null value in a string template (${where}: "\${${p.expr}}").`);
      else if (typeof r.value === 'object') throw new Diag('Invalid template interpolation value', `Cannot include the given value in a string template: string required (${where}: "\${${p.expr}}").`);
      else out += typeof r.value === 'number' ? numberToString(r.value) : String(r.value);
    }
    return { value: unknown ? new Unknown('string') : out, type: 'string', sensitive };
  };
  return { evalExpr };
}

/** Follows .attr and [index] steps into a value, keeping the type in step. */
function traverse(base, steps, ref, where) {
  let { value, type } = base;
  for (const step of steps) {
    const kind = typeName(type);
    let next = 'dynamic';
    if (kind === 'object') next = type[1][step] ?? 'dynamic';
    else if (kind === 'map' || kind === 'list' || kind === 'set') next = type[1];
    else if (kind === 'tuple') next = type[1][step] ?? 'dynamic';
    if (isUnknown(value)) {
      value = new Unknown(next);
    } else if (value !== null && typeof value === 'object' && step in value) {
      value = value[step];
    } else {
      throw new Diag(typeof step === 'number' ? 'Invalid index' : 'Unsupported attribute', `"${ref.text}" (${where}): ${typeof step === 'number' ? `the index ${step} is out of range` : `this object does not have an attribute named "${step}"`}.`);
    }
    type = next === 'dynamic' && !isUnknown(value) ? inferType(value) : next;
  }
  return { value, type, sensitive: base.sensitive };
}

// ---------------------------------------------------------------------------------------------
// Input variables
// ---------------------------------------------------------------------------------------------

/**
 * The value of every declared variable, from (lowest precedence first) TF_VAR_ environment
 * variables, terraform.tfvars.json, *.auto.tfvars.json, then -var and -var-file in command-line
 * order. A raw string (environment, -var) is parsed as terraform does: taken as a string when the
 * variable has no type or a primitive one, otherwise parsed (JSON standing in for HCL).
 */
function resolveVariables(config, cliInputs, warnings, { givenOnly = false } = {}) {
  const raw = new Map();
  const errors = [];
  for (const [key, value] of Object.entries(process.env)) {
    if (!givenOnly && key.startsWith('TF_VAR_') && config.variables[key.slice(7)]) raw.set(key.slice(7), { text: value, source: 'environment' });
  }
  const autoFiles = givenOnly ? [] : fs.readdirSync('.').filter((f) => f === 'terraform.tfvars.json').concat(fs.readdirSync('.').filter((f) => f.endsWith('.auto.tfvars.json')).sort());
  const inputs = autoFiles.map((f) => ({ name: 'var-file', value: f, auto: true })).concat(cliInputs);
  for (const input of inputs) {
    if (input.name === 'var') {
      const eq = input.value.indexOf('=');
      if (eq < 1) {
        errors.push(new Diag('Invalid -var option', `The given -var option ${JSON.stringify(input.value)} is not correctly specified. It must be a variable name and value separated an equals sign, like -var="key=value".`));
        continue;
      }
      const name = input.value.slice(0, eq);
      if (!config.variables[name]) {
        errors.push(new Diag('Value for undeclared variable', `A variable named "${name}" was assigned on the command line, but the root module does not declare a variable of that name. To use this value, add a "variable" block to the configuration.`));
        continue;
      }
      raw.set(name, { text: input.value.slice(eq + 1), source: 'command line' });
      continue;
    }
    const file = input.value;
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      errors.push(new Diag('Failed to read variables file', `Given variables file ${file} does not exist.`));
      continue;
    }
    let doc;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      errors.push(new Diag('Invalid variables file', `The stand-in reads variables files as JSON only; ${file} is not valid JSON: ${e.message}.`));
      continue;
    }
    if (!isObject(doc)) {
      errors.push(new Diag('Root value must be object', 'The root value in a JSON-based configuration must be either a JSON object or a JSON array of objects.', { snippet: { file, line: 1, text: text.split('\n')[0] } }));
      continue;
    }
    for (const [name, value] of Object.entries(doc)) {
      if (!config.variables[name]) {
        warnings.push(warning('Value for undeclared variable', `The root module does not declare a variable named "${name}" but a value was found in file "${file}". If you meant to use this value, add a "variable" block to the configuration.\n\nTo silence these warnings, use TF_VAR_... environment variables to provide certain "global" settings to all configurations in your organization. To reduce the verbosity of these warnings, use the -compact-warnings option.`));
        continue;
      }
      raw.set(name, { json: value, source: `file "${file}"` });
    }
  }
  const values = new Map();
  for (const [name, v] of Object.entries(config.variables).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const given = raw.get(name);
    const at = snippet(config, v.file, `"${name}"`, 'variable');
    if (!given) {
      if (givenOnly) continue;
      if (v.defaultValue) values.set(name, { ...v.defaultValue, sensitive: Boolean(v.sensitive) });
      else if ('default' in v && v.default === null) values.set(name, { value: null, type: v.type, sensitive: Boolean(v.sensitive) });
      else errors.push(new Diag('No value for required variable', `The root module input variable "${name}" is not set, and has no default value. Use a -var or -var-file command line argument to provide a value for this variable.`, { snippet: at }));
      continue;
    }
    let value = given.json;
    if ('text' in given) {
      const literal = !v.typed || PRIMITIVES.includes(v.type);
      if (literal) value = given.text;
      else {
        try {
          value = JSON.parse(given.text);
        } catch {
          errors.push(new Diag('Invalid value for input variable', `The value for var.${name} from the ${given.source} is not valid: the stand-in parses values of complex type as JSON.`));
          continue;
        }
      }
    }
    try {
      // `raw` is the value as given: terraform's plan lists it before type conversion.
      values.set(name, { ...convert(value, v.type), sensitive: Boolean(v.sensitive), raw: value });
    } catch (e) {
      errors.push(new Diag('Invalid value for input variable', `The given value is not suitable for var.${name} declared at ${v.file}: ${e.message}.`, { snippet: at }));
    }
  }
  if (errors.length) throw new Diags(errors);
  return values;
}

// ---------------------------------------------------------------------------------------------
// Resource types
// ---------------------------------------------------------------------------------------------

const uuid = () => crypto.randomUUID();
const digest = (algo, text, enc = 'hex') => crypto.createHash(algo).update(text, 'utf8').digest(enc);
const sameValue = (a, b) => !containsUnknown(a) && !containsUnknown(b) && JSON.stringify(a) === JSON.stringify(b);

/** The planned value of an attribute from its evaluated argument (null when absent). */
const arg = (args, name, fallback = null) => args[name] ?? { value: fallback, type: fallback === null ? 'dynamic' : inferType(fallback), sensitive: false };

/**
 * Each type: its provider, argument schema, attribute names, and plan/apply/refresh/destroy.
 * A resource instance is {attrs, types, sensitive: Set}; `plan` returns the action and the
 * planned instance (with Unknowns for what apply decides).
 */
const RESOURCE_TYPES = {
  terraform_data: {
    provider: () => 'terraform.io/builtin/terraform',
    providerKey: 'terraform',
    args: { input: { type: 'dynamic' }, triggers_replace: { type: 'dynamic' } },
    attributes: ['id', 'input', 'output', 'triggers_replace'],
    dynamic: ['input', 'output', 'triggers_replace'],
    plan(prior, args) {
      const input = arg(args, 'input');
      const triggers = arg(args, 'triggers_replace');
      const sensitive = new Set([...(input.sensitive ? ['input', 'output'] : []), ...(triggers.sensitive ? ['triggers_replace'] : [])]);
      const fresh = {
        attrs: { id: new Unknown('string'), input: input.value, output: new Unknown(input.type), triggers_replace: triggers.value },
        types: { id: 'string', input: input.type, output: input.type, triggers_replace: triggers.type },
        sensitive,
      };
      if (!prior) return { action: 'create', after: fresh };
      if (!sameTyped(prior, 'triggers_replace', triggers)) return { action: 'replace', after: fresh, replacePaths: [['triggers_replace']] };
      if (!sameTyped(prior, 'input', input)) {
        return { action: 'update', after: { attrs: { ...fresh.attrs, id: prior.attrs.id }, types: fresh.types, sensitive } };
      }
      return { action: 'no-op', after: prior };
    },
    create(args) {
      const input = arg(args, 'input');
      const triggers = arg(args, 'triggers_replace');
      return {
        attrs: { id: uuid(), input: input.value, output: input.value, triggers_replace: triggers.value },
        types: { id: 'string', input: input.type, output: input.type, triggers_replace: triggers.type },
        sensitive: new Set([...(input.sensitive ? ['input', 'output'] : []), ...(triggers.sensitive ? ['triggers_replace'] : [])]),
      };
    },
    update(prior, args) {
      const created = this.create(args);
      created.attrs.id = prior.attrs.id;
      return created;
    },
    refresh: (prior) => prior,
    destroy() {},
  },
  local_file: {
    provider: (p) => `${p.registry}/hashicorp/local`,
    providerKey: 'local',
    args: { filename: { type: 'string', required: true }, content: { type: 'string', required: true }, file_permission: { type: 'string' }, directory_permission: { type: 'string' } },
    attributes: ['content', 'content_base64', 'content_base64sha256', 'content_base64sha512', 'content_md5', 'content_sha1', 'content_sha256', 'content_sha512', 'directory_permission', 'file_permission', 'filename', 'id', 'sensitive_content', 'source'],
    dynamic: [],
    plan(prior, args) {
      const planned = localFileValues(args, () => new Unknown('string'));
      if (!prior) return { action: 'create', after: planned };
      const changed = ['content', 'directory_permission', 'file_permission', 'filename'].filter((k) => !sameValue(prior.attrs[k], planned.attrs[k]));
      if (changed.length) return { action: 'replace', after: planned, replacePaths: changed.map((k) => [k]) };
      return { action: 'no-op', after: prior };
    },
    create(args) {
      const made = localFileValues(args, (algo, enc) => digest(algo, args.content.value, enc));
      const file = made.attrs.filename;
      fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: parseInt(made.attrs.directory_permission, 8) });
      // The provider writes with os.WriteFile(mode): the umask applies, as it does here.
      fs.writeFileSync(file, made.attrs.content, { mode: parseInt(made.attrs.file_permission, 8) });
      return made;
    },
    update(prior, args) {
      return this.create(args);
    },
    /** The provider's Read: a missing file, or one whose sha1 is not the id, leaves state. */
    refresh(prior) {
      let content;
      try {
        content = fs.readFileSync(prior.attrs.filename);
      } catch {
        return null;
      }
      return crypto.createHash('sha1').update(content).digest('hex') === prior.attrs.id ? prior : null;
    },
    destroy(prior) {
      fs.rmSync(prior.attrs.filename, { force: true });
    },
  },
};

function sameTyped(prior, name, planned) {
  return sameValue(prior.attrs[name], planned.value) && (prior.attrs[name] === null || typeEq(prior.types[name], planned.type));
}

/** local_file's attributes; `hash(algo, encoding)` gives the content digests (or unknowns). */
function localFileValues(args, hash) {
  const content = args.content;
  const attrs = {
    content: content.value,
    content_base64: null,
    content_base64sha256: hash('sha256', 'base64'),
    content_base64sha512: hash('sha512', 'base64'),
    content_md5: hash('md5', 'hex'),
    content_sha1: hash('sha1', 'hex'),
    content_sha256: hash('sha256', 'hex'),
    content_sha512: hash('sha512', 'hex'),
    directory_permission: arg(args, 'directory_permission', '0777').value,
    file_permission: arg(args, 'file_permission', '0777').value,
    filename: args.filename.value,
    id: hash('sha1', 'hex'),
    sensitive_content: null,
    source: null,
  };
  const types = Object.fromEntries(Object.keys(attrs).map((k) => [k, 'string']));
  const sensitive = new Set(['sensitive_content', ...(content.sensitive ? ['content'] : [])]);
  return { attrs, types, sensitive };
}

/** Evaluates a resource's arguments, converting those of a fixed type (local_file's strings). */
function evalResourceArgs(config, addr, ev) {
  const r = config.resources[addr];
  const schema = RESOURCE_TYPES[r.type];
  const args = {};
  for (const [name, spec] of Object.entries(schema.args)) {
    if (r.body[name] === undefined) continue;
    let result = ev.evalExpr(r.body[name], `resource.${addr}`);
    if (spec.type !== 'dynamic') {
      try {
        result = isUnknown(result.value) ? { ...result, type: spec.type } : { ...result, ...convert(result.value, spec.type) };
      } catch (e) {
        throw new Diag('Incorrect attribute value type', `Inappropriate value for attribute "${name}" of ${addr}: ${e.message}.`, { snippet: snippet(config, r.file, `"${name}"`, `resource.${addr}`) });
      }
    }
    args[name] = result;
  }
  return args;
}

// ---------------------------------------------------------------------------------------------
// State: terraform's JSON state (version 4), the local backend and its lock
// ---------------------------------------------------------------------------------------------

function emptyState() {
  return { exists: false, lineage: null, serial: 0, outputs: {}, resources: new Map() };
}

function readState(statePath) {
  let text;
  try {
    text = fs.readFileSync(statePath, 'utf8');
  } catch (e) {
    if (e.code === 'ENOENT') return emptyState();
    throw e;
  }
  if (!text.trim()) return emptyState();
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Diag('Failed to load state', `Decoding state file failed: ${e.message}`);
  }
  const resources = new Map();
  for (const r of doc.resources ?? []) {
    if (r.mode !== 'managed' || !RESOURCE_TYPES[r.type]) throw new Diag('Failed to load state', `The state holds ${r.mode} ${r.type}.${r.name}, which the stand-in does not know.`);
    const inst = r.instances?.[0];
    if (!inst) continue;
    const schema = RESOURCE_TYPES[r.type];
    const attrs = {};
    const types = {};
    for (const [k, v] of Object.entries(inst.attributes)) {
      if (schema.dynamic.includes(k)) {
        attrs[k] = v === null ? null : v.value;
        types[k] = v === null ? 'dynamic' : v.type;
      } else {
        attrs[k] = v;
        types[k] = 'string';
      }
    }
    const sensitive = new Set((inst.sensitive_attributes ?? []).map((p) => p[0]?.value).filter(Boolean));
    resources.set(`${r.type}.${r.name}`, { type: r.type, name: r.name, attrs, types, sensitive, dependencies: inst.dependencies ?? [] });
  }
  return { exists: true, lineage: doc.lineage, serial: doc.serial, outputs: doc.outputs ?? {}, resources, version: doc.terraform_version };
}

/** The state as terraform writes it (key order included). */
function stateDocument(product, state) {
  const resources = [...state.resources.values()]
    .sort((a, b) => (`${a.type}.${a.name}` < `${b.type}.${b.name}` ? -1 : 1))
    .map((r) => {
      const schema = RESOURCE_TYPES[r.type];
      const attributes = {};
      for (const k of Object.keys(r.attrs).sort()) {
        const v = r.attrs[k];
        attributes[k] = schema.dynamic.includes(k) ? (v === null ? null : { value: v, type: r.types[k] }) : v;
      }
      const instance = { schema_version: 0, attributes, sensitive_attributes: [...r.sensitive].filter((k) => k !== 'sensitive_content').sort().map((k) => [{ type: 'get_attr', value: k }]) };
      if (r.dependencies?.length) instance.dependencies = r.dependencies;
      return { mode: 'managed', type: r.type, name: r.name, provider: `provider["${schema.provider(product)}"]`, instances: [instance] };
    });
  const outputs = {};
  for (const name of Object.keys(state.outputs).sort()) {
    const o = state.outputs[name];
    outputs[name] = { value: o.value, type: o.type, ...(o.sensitive ? { sensitive: true } : {}) };
  }
  return { version: 4, terraform_version: product.version, serial: state.serial, lineage: state.lineage, outputs, resources, check_results: null };
}

/** Writes state atomically (temp file + rename) and keeps the previous one as .backup. */
function writeState(product, statePath, state, previousText) {
  fs.mkdirSync(path.dirname(statePath), { recursive: true });
  const atomic = (file, text) => {
    const tmp = `${file}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  };
  if (previousText !== null) atomic(`${statePath}.backup`, previousText);
  atomic(statePath, `${JSON.stringify(stateDocument(product, state), null, 2)}\n`);
}

const readText = (file) => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
};

/** The lock this process holds, released at exit whatever the way out. */
let heldLock = null;

function releaseLock() {
  if (!heldLock) return;
  try {
    fs.rmSync(heldLock, { force: true });
  } catch {
    // nothing more can be done at exit
  }
  heldLock = null;
}

/** Is the process that wrote this lock info gone? (Only then is its lock stale.) */
function holderIsGone(file) {
  let pid;
  try {
    pid = JSON.parse(fs.readFileSync(file, 'utf8')).Pid;
  } catch {
    return false;
  }
  if (!Number.isInteger(pid)) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return e.code === 'ESRCH';
  }
}

/** Links `aside` to `file` (the lock), taking over a lock whose holder is gone; waits for a live one until deadline. */
async function lockByLink(aside, file, deadline) {
  for (;;) {
    try {
      fs.linkSync(aside, file);
      heldLock = file;
      return;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      if (holderIsGone(file)) {
        fs.rmSync(file, { force: true });
        continue;
      }
      if (Date.now() >= deadline) return;
      await sleep(Math.min(100, deadline - Date.now()));
    }
  }
}

/**
 * Takes the state lock: `<statepath>.lock.info`, created exclusively, holding terraform's lock
 * info and the holder's pid. Real terraform's local backend locks the state file with fcntl, a
 * lock the kernel releases when its holder dies (SIGKILL included); so here a lock whose holder
 * is gone is stale and taken over. Waits up to `timeout` ms for a live holder, then fails as
 * terraform does.
 */
async function acquireLock(product, statePath, operation, timeout) {
  const file = `${statePath}.lock.info`;
  const info = { ID: uuid(), Operation: operation, Info: '', Who: `${os.userInfo().username}@${os.hostname()}`, Version: product.version, Created: new Date().toISOString(), Path: path.relative(process.cwd(), statePath) || statePath, Pid: process.pid };
  fs.mkdirSync(path.dirname(statePath), { recursive: true });
  const deadline = Date.now() + timeout;
  // The lock appears whole or not at all: written aside, then linked into place (a link fails if
  // the name exists). A file created first and filled after could be seen empty, by a reader or by
  // a kill in between, and an unreadable lock is never taken as stale.
  const aside = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(aside, JSON.stringify(info));
  try {
    await lockByLink(aside, file, deadline);
  } finally {
    fs.rmSync(aside, { force: true });
  }
  if (heldLock === file) return;
  let holder = {};
  try {
    holder = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    // an unreadable lock is still a lock
  }
  throw new Diag('Error acquiring the state lock', [
    'Error message: resource temporarily unavailable',
    'Lock Info:',
    ...['ID', 'Path', 'Operation', 'Who', 'Version', 'Created', 'Info'].map((k) => `  ${`${k}:`.padEnd(10)} ${holder[k] ?? ''}`),
    '',
    '',
    `${product.name} acquires a state lock to protect the state from being written`,
    'by multiple users at the same time. Please resolve the issue above and try',
    'again. For most commands, you can disable locking with the "-lock=false"',
    'flag, but this is not recommended.',
  ].join('\n'));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// Working directory: backend record, provider lock file, and the gate other commands pass
// ---------------------------------------------------------------------------------------------

const dataDir = () => path.resolve(process.env.TF_DATA_DIR || '.terraform');
const backendRecordPath = () => path.join(dataDir(), 'terraform.tfstate');

/** A stable 32-bit number for a backend block, as terraform records one (its own hash differs). */
function blockHash(settings) {
  const sorted = Object.fromEntries(Object.keys(settings).sort().map((k) => [k, settings[k]]));
  return crypto.createHash('sha1').update(JSON.stringify(sorted)).digest().readUInt32BE(0);
}

function readBackendRecord() {
  const text = readText(backendRecordPath());
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new Diag('Failed to read backend configuration', `${backendRecordPath()} is not valid JSON.`);
  }
}

/** terraform's text, with its own line breaks (its lines are short enough to stay as they are). */
function backendInitRequired(product, reason) {
  const { name, command } = product;
  return new Diag(`Backend initialization required, please run "${command} init"`, [
    `Reason: ${reason}`,
    '',
    `The "backend" is the interface that ${name} uses to store state,`,
    'perform operations, etc. If this message is showing up, it means that the',
    `${name} configuration you're using is using a custom configuration for`,
    `the ${name} backend.`,
    '',
    'Changes to backend configurations require reinitialization. This allows',
    `${name} to set up the new configuration, copy existing state, etc. Please run`,
    `"${command} init" with either the "-reconfigure" or "-migrate-state" flags to`,
    'use the current configuration.',
    '',
    'If the change reason above is incorrect, please verify your configuration',
    "hasn't changed and try again. At this point, no changes to your existing",
    'configuration or state have been made.',
  ].join('\n'));
}

const usesLocalFile = (config) => Object.values(config.resources).some((r) => r.type === 'local_file');
const lockFileEntry = (product) => `provider "${product.registry}/hashicorp/local"`;

/**
 * What every command but init and version checks first, as terraform does: a configured
 * backend must have been initialised (and not changed since), and a provider the configuration
 * uses must be in the dependency lock file. Returns the state file's path.
 */
function workingDirectory(product, config) {
  const record = readBackendRecord();
  let statePath = path.resolve('terraform.tfstate');
  if (config.backend) {
    if (!record?.backend) throw backendInitRequired(product, `Initial configuration of the requested backend "${config.backend.type}"`);
    if (record.backend.hash !== blockHash(config.backend.config)) throw backendInitRequired(product, 'Backend configuration block has changed');
    if (record.backend.config?.path) statePath = path.resolve(record.backend.config.path);
  } else if (record?.backend) {
    throw backendInitRequired(product, `Unsetting the previously set backend "${record.backend.type}"`);
  }
  if (usesLocalFile(config) && !(readText('.terraform.lock.hcl') ?? '').includes(lockFileEntry(product))) {
    throw new Diag('Inconsistent dependency lock file', `The following dependency selections recorded in the lock file are inconsistent with the current configuration:\n  - provider ${product.registry}/hashicorp/local: required by this configuration but no version is selected\n\nTo make the initial dependency selection, run:\n  ${product.command} init`);
  }
  return statePath;
}

// ---------------------------------------------------------------------------------------------
// Planning
// ---------------------------------------------------------------------------------------------

/** Refreshes every resource in state; returns the refreshed state and the drift (deleted). */
function refresh(state, io) {
  const refreshed = { ...state, resources: new Map() };
  const drift = [];
  for (const [addr, r] of [...state.resources].sort(([a], [b]) => (a < b ? -1 : 1))) {
    io.out(`${addr}: Refreshing state... [id=${r.attrs.id}]\n`);
    const now = RESOURCE_TYPES[r.type].refresh(r);
    if (now) refreshed.resources.set(addr, now);
    else drift.push({ address: addr, before: r });
  }
  return { refreshed, drift };
}

/**
 * Plans `mode` ('normal', 'destroy' or 'refresh-only') of `config` against `state`. The result
 * is everything a saved plan holds: what was planned against, the variables, the changes, and
 * the JSON terraform's `show -json` prints for it.
 */
function makePlan(product, io, { config, state, mode, cliInputs, warnings }) {
  const variables = resolveVariables(config, cliInputs, warnings);
  const { order, resourceDeps } = analyse(config);
  const { refreshed, drift } = refresh(state, io);
  const planned = new Map();
  const changes = [];
  if (mode === 'normal') {
    const ev = evaluator(config, variables, (a) => planned.get(a) ?? null);
    for (const addr of order) {
      const r = config.resources[addr];
      const prior = refreshed.resources.get(addr) ?? null;
      const result = RESOURCE_TYPES[r.type].plan(prior, evalResourceArgs(config, addr, ev));
      planned.set(addr, result.after);
      changes.push({ address: addr, type: r.type, name: r.name, action: result.action, before: prior, after: result.after, replacePaths: result.replacePaths });
    }
  }
  for (const [addr, prior] of refreshed.resources) {
    if (mode === 'destroy' || (mode === 'normal' && !config.resources[addr])) changes.push({ address: addr, type: prior.type, name: prior.name, action: 'delete', before: prior, after: null });
  }
  changes.sort((a, b) => (a.address < b.address ? -1 : 1));

  const lookup = mode === 'refresh-only' ? (a) => refreshed.resources.get(a) ?? null : (a) => planned.get(a) ?? null;
  const outputChanges = planOutputs(config, variables, lookup, refreshed, mode);
  const plan = {
    format: PLAN_FORMAT,
    terraform_version: product.version,
    timestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    mode,
    state: { exists: state.exists, lineage: state.lineage, serial: state.serial },
    config: { ...config },
    variables: Object.fromEntries([...variables].map(([k, v]) => [k, v])),
    order,
    resourceDeps: Object.fromEntries(resourceDeps),
    changes: changes.map((c) => ({ address: c.address, action: c.action })),
    // What refresh dropped: apply starts from the refreshed state without refreshing again.
    drifted: drift.map((d) => d.address),
  };
  plan.json = planJson(product, { config, variables, changes, outputChanges, refreshed, drift, mode });
  plan.summary = { changes, outputChanges, drift, refreshed };
  return plan;
}

/** Each output's change: created, updated, unchanged or deleted, with its sensitivity. */
function planOutputs(config, variables, lookup, refreshed, mode) {
  const result = [];
  const ev = evaluator(config, variables, lookup);
  if (mode !== 'destroy') {
    for (const name of Object.keys(config.outputs).sort()) {
      const o = config.outputs[name];
      const r = ev.evalExpr(o.value, `output.${name}`);
      if (r.sensitive && !o.sensitive) {
        throw new Diag('Output refers to sensitive values', `To reduce the risk of accidentally exporting sensitive data that was intended to be only internal, Terraform requires that any root module output containing sensitive data be explicitly marked as sensitive, to confirm your intent.\n\nIf you do intend to export this data, annotate the output value as sensitive by adding the following argument:\n    sensitive = true`, { snippet: snippet(config, o.file, `"${name}"`, `output.${name}`) });
      }
      const sensitive = Boolean(o.sensitive) || r.sensitive;
      const prior = refreshed.outputs[name];
      let action = 'update';
      if (!prior) action = r.value === null ? 'no-op' : 'create';
      else if (sameValue(prior.value, r.value) && typeEq(prior.type, r.type) && Boolean(prior.sensitive) === sensitive) action = 'no-op';
      result.push({ name, action, before: prior ? prior.value : null, after: r.value, type: r.type, sensitive });
    }
  }
  for (const name of Object.keys(refreshed.outputs).sort()) {
    if (mode === 'destroy' || !config.outputs[name]) {
      const prior = refreshed.outputs[name];
      result.push({ name, action: 'delete', before: prior.value, after: null, type: prior.type, sensitive: Boolean(prior.sensitive) });
    }
  }
  return result.sort((a, b) => (a.name < b.name ? -1 : 1));
}

// ---------------------------------------------------------------------------------------------
// The JSON plan (`show -json PLANFILE`, format_version 1.2)
// ---------------------------------------------------------------------------------------------

/** The value with unknowns left out (array elements become null), as jsonplan's omitUnknowns. */
function omitUnknowns(v) {
  if (isUnknown(v)) return undefined;
  if (Array.isArray(v)) return v.map((e) => (isUnknown(e) ? null : omitUnknowns(e)));
  if (isObject(v)) {
    const out = {};
    for (const [k, e] of Object.entries(v)) if (!isUnknown(e)) out[k] = omitUnknowns(e);
    return out;
  }
  return v;
}

/** Which parts are unknown, as jsonplan's unknownAsBool (known primitives omitted from objects). */
function unknownAsBool(v) {
  if (isUnknown(v)) return true;
  if (v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) return v.map(unknownAsBool);
  const out = {};
  for (const [k, e] of Object.entries(v)) {
    const b = unknownAsBool(e);
    if (b !== false) out[k] = b;
  }
  return out;
}

/** Which parts are sensitive, as jsonplan's SensitiveAsBool (an unknown collection is empty). */
function sensitiveAsBool(v, type, sensitive) {
  if (sensitive) return true;
  if (isUnknown(v)) return ['object', 'map'].includes(typeName(type)) ? {} : ['list', 'set', 'tuple'].includes(typeName(type)) ? [] : false;
  if (v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) return v.map((e) => sensitiveAsBool(e, inferType(e), false));
  const out = {};
  for (const [k, e] of Object.entries(v)) {
    const b = sensitiveAsBool(e, inferType(e), false);
    if (b !== false) out[k] = b;
  }
  return out;
}

/** A resource instance's attributes as one object (for before/after), and its sensitivity. */
const instanceValue = (inst) => (inst ? Object.fromEntries(Object.keys(inst.attrs).sort().map((k) => [k, inst.attrs[k]])) : null);
function instanceSensitive(inst) {
  if (!inst) return false;
  const out = {};
  for (const k of Object.keys(inst.attrs).sort()) {
    const b = sensitiveAsBool(inst.attrs[k], inst.types[k], inst.sensitive.has(k));
    if (b !== false) out[k] = b;
  }
  return out;
}

const ACTIONS = { create: ['create'], update: ['update'], replace: ['delete', 'create'], delete: ['delete'], 'no-op': ['no-op'] };

function resourceHeader(product, addr, type) {
  const name = addr.slice(type.length + 1);
  return { address: addr, mode: 'managed', type, name, provider_name: RESOURCE_TYPES[type].provider(product) };
}

/** One resource's values as planned_values and prior_state list them. */
function resourceValues(product, addr, inst, dependencies) {
  const values = omitUnknowns(instanceValue(inst));
  const out = { ...resourceHeader(product, addr, inst.type ?? addr.split('.')[0]), schema_version: 0, values, sensitive_values: instanceSensitive(inst) };
  if (dependencies?.length) out.depends_on = dependencies;
  return out;
}

/** An expression as `configuration` shows it: the constant text and what it references. */
function expressionJson(expr) {
  const refs = [];
  for (const ref of collectRefs(expr, () => {})) {
    if (ref.root === 'resource') {
      const attr = ref.steps[0];
      if (attr !== undefined) refs.push(`${ref.address}.${attr}`);
      refs.push(ref.address);
    } else refs.push(`${ref.root}.${ref.name}`);
  }
  const unique = [...new Set(refs)];
  return unique.length ? { constant_value: expr, references: unique } : { constant_value: expr };
}

function configurationJson(product, config) {
  const root = {};
  const outputs = Object.keys(config.outputs).sort();
  if (outputs.length) {
    root.outputs = Object.fromEntries(outputs.map((n) => {
      const o = config.outputs[n];
      return [n, { ...(o.sensitive ? { sensitive: true } : {}), expression: expressionJson(o.value), ...(o.description ? { description: o.description } : {}), ...(o.depends_on ? { depends_on: o.depends_on } : {}) }];
    }));
  }
  const addrs = Object.keys(config.resources).sort();
  if (addrs.length) {
    root.resources = addrs.map((addr) => {
      const r = config.resources[addr];
      const expressions = {};
      for (const k of Object.keys(r.body).sort()) if (k !== 'depends_on') expressions[k] = expressionJson(r.body[k]);
      return { address: addr, mode: 'managed', type: r.type, name: r.name, provider_config_key: RESOURCE_TYPES[r.type].providerKey, expressions, schema_version: 0, ...(r.body.depends_on ? { depends_on: r.body.depends_on } : {}) };
    });
  }
  const vars = Object.keys(config.variables).sort();
  if (vars.length) {
    root.variables = Object.fromEntries(vars.map((n) => {
      const v = config.variables[n];
      return [n, { ...('default' in v ? { default: v.default } : {}), ...(v.description ? { description: v.description } : {}), ...(v.sensitive ? { sensitive: true } : {}) }];
    }));
  }
  const out = {};
  const types = [...new Set(addrs.map((a) => config.resources[a].type))].sort();
  if (types.length) {
    out.provider_config = Object.fromEntries(types.map((t) => {
      const key = RESOURCE_TYPES[t].providerKey;
      return [key, { name: key, full_name: RESOURCE_TYPES[t].provider(product) }];
    }));
  }
  out.root_module = root;
  return out;
}

/** Resource attributes that changed resources and outputs read, as relevant_attributes lists. */
function relevantAttributes(config, changes, outputChanges) {
  const seen = new Map();
  const visitExpr = (expr, visitedLocals) => {
    for (const ref of collectRefs(expr, () => {})) {
      if (ref.root === 'resource' && ref.steps.length) {
        const key = JSON.stringify([ref.address, ref.steps]);
        seen.set(key, { resource: ref.address, attribute: ref.steps });
      } else if (ref.root === 'local' && !visitedLocals.has(ref.name)) {
        visitedLocals.add(ref.name);
        visitExpr(config.locals[ref.name], visitedLocals);
      }
    }
  };
  for (const c of changes) if (c.action !== 'no-op' && config.resources[c.address]) visitExpr(config.resources[c.address].body, new Set());
  for (const o of outputChanges) if (o.action !== 'no-op' && config.outputs[o.name]) visitExpr(config.outputs[o.name].value, new Set());
  return [...seen.values()].sort((a, b) => (JSON.stringify([a.resource, a.attribute]) < JSON.stringify([b.resource, b.attribute]) ? -1 : 1));
}

/** The whole `show -json` document of a plan, with terraform's fields and their order. */
function planJson(product, { config, variables, changes, outputChanges, refreshed, drift, mode }) {
  const doc = { format_version: '1.2', terraform_version: product.version };
  if (variables.size) doc.variables = Object.fromEntries([...variables].map(([k, v]) => [k, { value: 'raw' in v ? v.raw : v.value }]));

  const planned = { };
  if (mode !== 'destroy') {
    const outs = {};
    for (const o of outputChanges) {
      if (o.action === 'delete') continue;
      outs[o.name] = containsUnknown(o.after) ? { sensitive: o.sensitive } : { sensitive: o.sensitive, type: o.type, value: o.after };
    }
    if (Object.keys(outs).length) planned.outputs = outs;
  }
  const plannedResources = mode === 'refresh-only'
    ? [...refreshed.resources].sort(([a], [b]) => (a < b ? -1 : 1)).map(([addr, inst]) => resourceValues(product, addr, inst))
    : changes.filter((c) => c.action !== 'delete').map((c) => resourceValues(product, c.address, { ...c.after, type: c.type }));
  planned.root_module = plannedResources.length ? { resources: plannedResources } : {};
  doc.planned_values = planned;

  if (drift.length) {
    doc.resource_drift = drift.map((d) => ({
      ...resourceHeader(product, d.address, d.before.type),
      change: { actions: ['delete'], before: instanceValue(d.before), after: null, after_unknown: {}, before_sensitive: instanceSensitive(d.before), after_sensitive: false },
    }));
  }
  if (changes.length) {
    doc.resource_changes = changes.map((c) => {
      const after = instanceValue(c.after);
      const known = !containsUnknown(after);
      const change = {
        actions: ACTIONS[c.action],
        before: instanceValue(c.before),
        after: c.after ? omitUnknowns(after) : null,
        after_unknown: !c.after || known ? {} : unknownAsBool(after),
        before_sensitive: instanceSensitive(c.before),
        after_sensitive: instanceSensitive(c.after),
      };
      if (c.replacePaths) change.replace_paths = c.replacePaths;
      return { ...resourceHeader(product, c.address, c.type), change, ...(c.action === 'replace' ? { action_reason: 'replace_because_cannot_update' } : {}) };
    });
  }
  if (outputChanges.length) {
    doc.output_changes = Object.fromEntries(outputChanges.map((o) => {
      const change = { actions: ACTIONS[o.action], before: o.before };
      const after = o.action === 'delete' ? null : o.after;
      if (!isUnknown(after)) change.after = omitUnknowns(after);
      change.after_unknown = containsUnknown(after) ? unknownAsBool(after) : false;
      change.before_sensitive = o.sensitive;
      change.after_sensitive = o.sensitive;
      return [o.name, change];
    }));
  }

  // prior_state: the refreshed state, with the outputs the plan could already compute.
  // (terraform writes each output it can compute into that state while planning).
  const priorOutputs = {};
  for (const [name, o] of Object.entries(refreshed.outputs)) priorOutputs[name] = { sensitive: Boolean(o.sensitive), value: o.value, type: o.type };
  if (mode !== 'destroy') {
    for (const o of outputChanges) {
      if (o.action !== 'delete' && !containsUnknown(o.after) && o.after !== null) priorOutputs[o.name] = { sensitive: o.sensitive, value: o.after, type: o.type };
    }
  }
  for (const name of Object.keys(priorOutputs).sort()) {
    const o = priorOutputs[name];
    delete priorOutputs[name];
    priorOutputs[name] = o;
  }
  const priorResources = [...refreshed.resources].sort(([a], [b]) => (a < b ? -1 : 1)).map(([addr, inst]) => resourceValues(product, addr, inst, inst.dependencies));
  if (Object.keys(priorOutputs).length || priorResources.length) {
    doc.prior_state = {
      format_version: '1.0',
      terraform_version: product.version,
      values: { ...(Object.keys(priorOutputs).length ? { outputs: priorOutputs } : {}), root_module: priorResources.length ? { resources: priorResources } : {} },
    };
  }
  doc.configuration = configurationJson(product, config);
  const relevant = relevantAttributes(config, changes, outputChanges);
  if (relevant.length) doc.relevant_attributes = relevant;
  doc.timestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  doc.applyable = planHasChanges({ changes, outputChanges, drift, mode });
  doc.complete = true;
  doc.errored = false;
  return doc;
}

/** Whether applying would change anything (terraform's CanApply; -detailed-exitcode 2). */
function planHasChanges({ changes, outputChanges, drift, mode }) {
  if (changes.some((c) => c.action !== 'no-op')) return true;
  if (outputChanges.some((o) => o.action !== 'no-op')) return true;
  return mode === 'refresh-only' && drift.length > 0;
}

// ---------------------------------------------------------------------------------------------
// Human-readable rendering (not a contract: close to terraform's, simplified)
// ---------------------------------------------------------------------------------------------

/** A value as terraform's `output` command prints it (HCL-like, with tolist/tomap/toset). */
function formatHcl(value, type, indent = 0) {
  const pad = ' '.repeat(indent);
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') {
    if (value.includes('\n')) {
      const body = value.replace(/\n$/, '').split('\n').map((l) => `${indent ? pad : ''}${l}`).join('\n');
      return indent ? `<<-EOT\n${body}\n${pad}EOT` : `<<EOT\n${body}\nEOT`;
    }
    return JSON.stringify(value).replace(/\$\{/g, '$${').replace(/%\{/g, '%%{');
  }
  if (typeof value !== 'object') return String(value);
  const kind = typeName(type);
  const inner = ' '.repeat(indent + 2);
  if (Array.isArray(value)) {
    const elemType = (i) => (kind === 'tuple' ? type[1][i] : Array.isArray(type) ? type[1] : inferType(value[i]));
    const body = value.length ? `[\n${value.map((v, i) => `${inner}${formatHcl(v, elemType(i), indent + 2)},\n`).join('')}${pad}]` : '[]';
    return kind === 'list' ? `tolist(${body})` : kind === 'set' ? `toset(${body})` : body;
  }
  const keys = Object.keys(value).sort();
  const attrType = (k) => (kind === 'object' ? type[1][k] : kind === 'map' ? type[1] : inferType(value[k]));
  const body = keys.length ? `{\n${keys.map((k) => `${inner}${JSON.stringify(k)} = ${formatHcl(value[k], attrType(k), indent + 2)}\n`).join('')}${pad}}` : '{}';
  return kind === 'map' ? `tomap(${body})` : body;
}

/** A planned attribute value in a diff: unknown, sensitive, or compact JSON. */
function diffValue(v, sensitive) {
  if (sensitive) return '(sensitive value)';
  if (isUnknown(v) || containsUnknown(v)) return '(known after apply)';
  return v === null ? 'null' : JSON.stringify(v);
}

const SYMBOLS = { create: '+', update: '~', replace: '-/+', delete: '-' };
const PHRASES = { create: 'will be created', update: 'will be updated in-place', replace: 'must be replaced', delete: 'will be destroyed' };

function renderResourceChange(c) {
  const lines = [`  # ${c.address} ${PHRASES[c.action]}`];
  const symbol = SYMBOLS[c.action];
  lines.push(`${symbol.padStart(3)} resource "${c.type}" "${c.name}" {`);
  const keys = [...new Set([...Object.keys(c.before?.attrs ?? {}), ...Object.keys(c.after?.attrs ?? {})])].sort();
  const shown = keys.filter((k) => (c.before?.attrs[k] ?? null) !== null || (c.after?.attrs[k] ?? null) !== null);
  const width = Math.max(0, ...shown.map((k) => k.length));
  let hidden = 0;
  for (const k of keys) {
    const before = c.before?.attrs[k] ?? null;
    const after = c.after ? (c.after.attrs[k] ?? null) : null;
    const sensitive = Boolean(c.before?.sensitive.has(k) || c.after?.sensitive.has(k));
    const name = k.padEnd(width);
    if (c.action === 'create') {
      if (after !== null) lines.push(`      + ${name} = ${diffValue(after, sensitive)}`);
    } else if (c.action === 'delete') {
      if (before !== null) lines.push(`      - ${name} = ${diffValue(before, sensitive)} -> null`);
    } else if (sameValue(before, after)) {
      if (k === 'id') lines.push(`        ${name} = ${diffValue(before, sensitive)}`);
      else hidden++;
    } else lines.push(`      ~ ${name} = ${diffValue(before, sensitive)} -> ${diffValue(after, sensitive)}`);
  }
  if (hidden) lines.push(`        # (${hidden} unchanged attribute${hidden === 1 ? '' : 's'} hidden)`);
  lines.push('    }');
  return lines.join('\n');
}

function renderOutputChanges(outputChanges) {
  const changed = outputChanges.filter((o) => o.action !== 'no-op');
  if (!changed.length) return '';
  const width = Math.max(...outputChanges.map((o) => o.name.length));
  const lines = changed.map((o) => {
    const name = o.name.padEnd(width);
    if (o.action === 'create') return `  + ${name} = ${diffValue(o.after, o.sensitive)}`;
    if (o.action === 'delete') return `  - ${name} = ${diffValue(o.before, o.sensitive)} -> null`;
    return `  ~ ${name} = ${diffValue(o.before, o.sensitive)} -> ${diffValue(o.after, o.sensitive)}`;
  });
  return `\nChanges to Outputs:\n${lines.join('\n')}\n`;
}

function renderDrift(product, drift, mode) {
  if (!drift.length) return '';
  const items = drift.map((d) => `  # ${d.address} has been deleted\n  - resource "${d.before.type}" "${d.before.name}" {\n      - id = ${JSON.stringify(d.before.attrs.id)} -> null\n    }`).join('\n\n');
  const tail = mode === 'refresh-only'
    ? `\n\nThis is a refresh-only plan, so ${product.name} will not take any actions to\nundo these. If you were expecting these changes then you can apply this plan\nto record the updated values in the ${product.name} state without changing any\nremote objects.\n`
    : `\n\nUnless you have made equivalent changes to your configuration, or ignored the\nrelevant attributes using ignore_changes, the following plan may include\nactions to undo or respond to these changes.\n\n${RULE}\n`;
  return `\nNote: Objects have changed outside of ${product.name}\n\n${product.name} detected the following changes made outside of ${product.name}\nsince the last "${product.command} apply" which may have affected this plan:\n\n${items}\n${tail}`;
}

/** The plan as `plan` prints it; returns the text. */
function renderPlan(product, plan) {
  const { changes, outputChanges, drift } = plan.summary;
  const mode = plan.mode;
  let text = renderDrift(product, drift, mode);
  const acting = changes.filter((c) => c.action !== 'no-op');
  const outputText = renderOutputChanges(outputChanges);
  if (!acting.length && !outputText && !(mode === 'refresh-only' && drift.length)) {
    if (mode === 'refresh-only') {
      return `${text}\nNo changes. Your infrastructure still matches the configuration.\n\n${product.name} has checked that the real remote objects still match the result\nof your most recent changes, and found no differences.\n`;
    }
    return `${text}\nNo changes. Your infrastructure matches the configuration.\n\n${product.name} has compared your real infrastructure against your configuration\nand found no differences, so no changes are needed.\n`;
  }
  if (acting.length) {
    const used = [...new Set(acting.map((c) => c.action))];
    const legend = ['create', 'update', 'delete', 'replace'].filter((a) => used.includes(a)).map((a) => ({ create: '  + create', update: '  ~ update in-place', delete: '  - destroy', replace: '-/+ destroy and then create replacement' })[a]);
    text += `\n${product.name} used the selected providers to generate the following execution\nplan. Resource actions are indicated with the following symbols:\n${legend.join('\n')}\n\n${product.name} will perform the following actions:\n\n`;
    text += `${acting.map(renderResourceChange).join('\n\n')}\n`;
    const counts = countChanges(changes);
    text += `\nPlan: ${counts.add} to add, ${counts.change} to change, ${counts.destroy} to destroy.\n`;
  }
  text += outputText;
  if (!acting.length && outputText && mode !== 'refresh-only') {
    text += `\nYou can apply this plan to save these new output values to the ${product.name}\nstate, without changing any real infrastructure.\n`;
  }
  return text;
}

function countChanges(changes) {
  const n = (a) => changes.filter((c) => c.action === a).length;
  return { add: n('create') + n('replace'), change: n('update'), destroy: n('delete') + n('replace') };
}

function renderOutputs(outputs) {
  const names = Object.keys(outputs).sort();
  return names.map((n) => `${n} = ${outputs[n].sensitive ? '<sensitive>' : formatHcl(outputs[n].value, outputs[n].type)}\n`).join('');
}

// ---------------------------------------------------------------------------------------------
// Applying a plan
// ---------------------------------------------------------------------------------------------

/** Deletes in reverse dependency order: a resource goes before those it depends on. */
function deletionOrder(resources, addrs) {
  const order = [];
  const done = new Set();
  const visit = (addr) => {
    if (done.has(addr)) return;
    done.add(addr);
    for (const [other, r] of resources) if (addrs.includes(other) && r.dependencies?.includes(addr)) visit(other);
    order.push(addr);
  };
  for (const addr of [...addrs].sort()) visit(addr);
  return order;
}

/**
 * Carries out a plan on the state it was planned against (its refreshed form): deletions first,
 * then the configured resources in dependency order, evaluated again with the values apply
 * produces. Returns the new state's resources and outputs and the counts.
 */
function executePlan(product, io, plan, refreshedState) {
  const config = plan.config;
  const variables = new Map(Object.entries(plan.variables));
  const working = new Map(refreshedState.resources);
  const actions = new Map(plan.changes.map((c) => [c.address, c.action]));
  const counts = { add: 0, change: 0, destroy: 0 };
  const destroyOne = (addr) => {
    const prior = working.get(addr);
    io.out(`${addr}: Destroying... [id=${prior.attrs.id}]\n`);
    RESOURCE_TYPES[prior.type].destroy(prior);
    working.delete(addr);
    io.out(`${addr}: Destruction complete after 0s\n`);
    counts.destroy++;
  };
  const deletions = plan.changes.filter((c) => c.action === 'delete' || c.action === 'replace').map((c) => c.address);
  for (const addr of deletionOrder(working, deletions)) if (actions.get(addr) === 'delete') destroyOne(addr);

  if (plan.mode === 'normal') {
    const ev = evaluator(config, variables, (a) => working.get(a) ?? null);
    for (const addr of plan.order) {
      const action = actions.get(addr);
      const r = config.resources[addr];
      const schema = RESOURCE_TYPES[r.type];
      const dependencies = plan.resourceDeps[addr] ?? [];
      if (action === 'no-op') {
        working.set(addr, { ...working.get(addr), dependencies });
        continue;
      }
      const args = evalResourceArgs(config, addr, ev);
      if (action === 'replace') destroyOne(addr);
      if (action === 'update') {
        const prior = working.get(addr);
        io.out(`${addr}: Modifying... [id=${prior.attrs.id}]\n`);
        working.set(addr, { type: r.type, name: r.name, ...schema.update(prior, args), dependencies });
        io.out(`${addr}: Modifications complete after 0s [id=${working.get(addr).attrs.id}]\n`);
        counts.change++;
      } else {
        io.out(`${addr}: Creating...\n`);
        working.set(addr, { type: r.type, name: r.name, ...schema.create(args), dependencies });
        io.out(`${addr}: Creation complete after 0s [id=${working.get(addr).attrs.id}]\n`);
        counts.add++;
      }
    }
  }
  const outputs = {};
  if (plan.mode !== 'destroy') {
    const ev = evaluator(config, variables, (a) => working.get(a) ?? null);
    for (const name of Object.keys(config.outputs).sort()) {
      const o = config.outputs[name];
      const r = ev.evalExpr(o.value, `output.${name}`);
      // terraform keeps no null (or, refresh-only, unknown) outputs in state
      if (r.value === null || containsUnknown(r.value)) continue;
      outputs[name] = { value: r.value, type: r.type, ...(o.sensitive || r.sensitive ? { sensitive: true } : {}) };
    }
  }
  return { resources: working, outputs, counts };
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

/** Standard output helper and the colour setting, shared by the commands. */
function makeIo(color, jsonStdout = false) {
  return { color, jsonStdout, out: (t) => process.stdout.write(t) };
}

const VAR_FLAGS = { var: 'list', 'var-file': 'list' };
const COMMON = { input: 'bool', 'no-color': 'bool', lock: 'bool', 'lock-timeout': 'string', 'compact-warnings': 'bool', parallelism: 'string' };

function cmdVersion(product, args) {
  const { flags, positional } = parseFlags(product, 'version', args, { json: 'bool' });
  if (positional.length) throw tooManyArguments(product, 'version');
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ terraform_version: product.version, platform: PLATFORM, provider_selections: {}, ...(product.name === 'Terraform' ? { terraform_outdated: false } : {}) }, null, 2)}\n`);
  } else {
    process.stdout.write(`${product.name} v${product.version}\non ${PLATFORM}\n`);
  }
  return 0;
}

/** Parses `-backend-config` values: `key=value`, or a file of `key = "value"` lines. */
function backendOverrides(values) {
  const out = {};
  for (const v of values ?? []) {
    const eq = v.indexOf('=');
    if (eq > 0 && !fs.existsSync(v)) {
      out[v.slice(0, eq)] = v.slice(eq + 1);
      continue;
    }
    const text = readText(v);
    if (text === null) throw new Diag('Failed to read file', `The file "${v}" could not be read.`);
    for (const line of text.split('\n')) {
      const m = /^\s*([\w-]+)\s*=\s*"?(.*?)"?\s*$/.exec(line);
      if (m) out[m[1]] = m[2];
    }
  }
  for (const key of Object.keys(out)) {
    if (!['path', 'workspace_dir'].includes(key)) throw new Diag('Invalid backend configuration argument', `The backend configuration argument "${key}" given on the command line is not expected for the selected backend type.`);
  }
  return out;
}

async function cmdInit(product, args, io) {
  const { flags, positional } = parseFlags(product, 'init', args, { ...COMMON, 'backend-config': 'list', reconfigure: 'bool', 'migrate-state': 'bool', 'force-copy': 'bool', upgrade: 'bool', backend: 'bool', get: 'bool' });
  if (positional.length) throw tooManyArguments(product, 'init');
  const config = loadConfig('.', product);
  analyse(config);
  const warnings = [];
  io.out('Initializing the backend...\n');
  if (config.backend) {
    const settings = { ...config.backend.config, ...backendOverrides(flags['backend-config']) };
    const wanted = { type: 'local', config: { path: settings.path ?? null, workspace_dir: settings.workspace_dir ?? null }, hash: blockHash(config.backend.config) };
    const record = readBackendRecord();
    const same = record?.backend && JSON.stringify(record.backend) === JSON.stringify(wanted);
    if (record?.backend && !same && !flags.reconfigure) {
      throw new Diag('Backend configuration changed', `A change in the backend configuration has been detected, which may require migrating existing state.\n\nIf you wish to attempt automatic migration of the state, use "${product.command} init -migrate-state".\nIf you wish to store the current configuration with no changes to the state, use "${product.command} init -reconfigure".`);
    }
    if (!same) {
      fs.mkdirSync(dataDir(), { recursive: true });
      fs.writeFileSync(backendRecordPath(), `${JSON.stringify({ version: 3, terraform_version: product.version, backend: wanted }, null, 2)}\n`);
      io.out(`\nSuccessfully configured the backend "local"! ${product.name} will automatically\nuse this backend unless the backend configuration changes.\n`);
    }
  } else if (flags['backend-config']?.length) {
    warnings.push(warning('Missing backend configuration', `-backend-config was used without a "backend" block in the configuration.\n\nIf you intended to override the default local backend configuration,\nno action is required, but you may add an explicit backend block to your\nconfiguration to clear this warning:\n\nterraform {\n  backend "local" {}\n}\n\nHowever, if you intended to override a defined backend, please verify that\nthe backend configuration is present and valid.`));
  }
  io.out('Initializing provider plugins...\n');
  if (Object.values(config.resources).some((r) => r.type === 'terraform_data')) io.out(`- terraform.io/builtin/terraform is built in to ${product.name}\n`);
  let createdLock = false;
  if (usesLocalFile(config)) {
    const lock = readText('.terraform.lock.hcl') ?? '';
    if (lock.includes(lockFileEntry(product))) io.out('- Reusing previous version of hashicorp/local from the dependency lock file\n');
    else {
      io.out(`- Finding latest version of hashicorp/local...\n- Installing hashicorp/local v${LOCAL_PROVIDER_VERSION}...\n- Installed hashicorp/local v${LOCAL_PROVIDER_VERSION} (stand-in, nothing downloaded)\n`);
      const text = `# This file is maintained automatically by "${product.command} init".\n# Manual edits may be lost in future updates.\n\n${lockFileEntry(product)} {\n  version = "${LOCAL_PROVIDER_VERSION}"\n}\n`;
      fs.writeFileSync('.terraform.lock.hcl', lock ? `${lock.trimEnd()}\n\n${text.split('\n\n').slice(1).join('\n\n')}` : text);
      createdLock = !lock;
    }
  }
  printDiags(warnings, io);
  if (createdLock) {
    io.out(`\n${product.name} has created a lock file .terraform.lock.hcl to record the provider\nselections it made above. Include this file in your version control repository\nso that ${product.name} can guarantee to make the same selections by default when\nyou run "${product.command} init" in the future.\n`);
  }
  io.out(`\n${product.name} has been successfully initialized!\n\nYou may now begin working with ${product.name}. Try running "${product.command} plan" to see\nany changes that are required for your infrastructure. All ${product.name} commands\nshould now work.\n\nIf you ever set or change modules or backend configuration for ${product.name},\nrerun this command to reinitialize your working directory. If you forget, other\ncommands will detect it and remind you to do so if necessary.\n`);
  return 0;
}

/** Reads a plan file written by `plan -out`; anything else is refused as terraform does. */
function readPlanFile(file) {
  const text = readText(file);
  if (text === null) throw new Diag('Failed to load plan file', `Failed to read plan from plan file: open ${file}: no such file or directory`);
  let plan;
  try {
    plan = JSON.parse(text);
  } catch {
    plan = null;
  }
  if (plan?.format !== PLAN_FORMAT) throw new Diag('Failed to load plan file', `The file ${file} is not a plan file the stand-in wrote.`);
  return plan;
}

/** Takes the lock unless -lock=false; the timeout comes from -lock-timeout. */
async function lockUnlessDisabled(product, flags, statePath, operation) {
  if (flags.lock === false) return;
  await acquireLock(product, statePath, operation, parseDuration(flags['lock-timeout'] ?? '0s'));
}

function injectedSleep() {
  const ms = Number(process.env.TF_STANDIN_SLEEP_APPLY || 0);
  return ms > 0 ? sleep(ms) : Promise.resolve();
}

/** `plan`: prints the plan, writes it with -out, exits 0/2/1 with -detailed-exitcode. */
async function cmdPlan(product, args, io) {
  const { flags, ordered, positional } = parseFlags(product, 'plan', args, { ...COMMON, ...VAR_FLAGS, out: 'string', 'detailed-exitcode': 'bool', 'refresh-only': 'bool', destroy: 'bool', refresh: 'bool' });
  if (positional.length) throw tooManyArguments(product, 'plan');
  if (flags['refresh-only'] && flags.destroy) throw new Diag('Incompatible plan mode options', 'The -destroy and -refresh-only options are mutually-exclusive.');
  const config = loadConfig('.', product);
  const statePath = workingDirectory(product, config);
  await lockUnlessDisabled(product, flags, statePath, 'OperationTypePlan');
  const state = readState(statePath);
  const warnings = [];
  const mode = flags.destroy ? 'destroy' : flags['refresh-only'] ? 'refresh-only' : 'normal';
  const plan = makePlan(product, io, { config, state, mode, cliInputs: ordered, warnings });
  io.out(renderPlan(product, plan));
  printDiags(warnings, io);
  if (flags.out) {
    const { summary, ...saved } = plan;
    fs.writeFileSync(flags.out, `${JSON.stringify(saved)}\n`);
  }
  if (!plan.json.applyable) {
    // terraform says nothing of the plan file when there is nothing to apply
  } else if (flags.out) {
    io.out(`\n${RULE}\n\nSaved the plan to: ${flags.out}\n\nTo perform exactly these actions, run the following command to apply:\n    ${product.command} apply "${flags.out}"\n`);
  } else {
    io.out(`\n${RULE}\n\nNote: You didn't use the -out option to save this plan, so ${product.name} can't\nguarantee to take exactly these actions if you run "${product.command} apply" now.\n`);
  }
  releaseLock();
  return flags['detailed-exitcode'] && plan.json.applyable ? 2 : 0;
}

/**
 * `apply PLANFILE` applies exactly a saved plan (refused when state moved on since);
 * `apply -auto-approve` and `destroy -auto-approve` plan and apply in one go.
 */
async function cmdApply(product, args, io, { destroy = false } = {}) {
  const command = destroy ? 'destroy' : 'apply';
  const spec = { ...COMMON, ...VAR_FLAGS, 'auto-approve': 'bool', refresh: 'bool', ...(destroy ? {} : { 'refresh-only': 'bool', destroy: 'bool' }) };
  const { flags, ordered, positional } = parseFlags(product, command, args, spec);
  if (positional.length > (destroy ? 0 : 1)) throw tooManyArguments(product, command);
  const config = loadConfig('.', product);
  const statePath = workingDirectory(product, config);
  const warnings = [];
  let plan;
  let state;
  if (positional.length) {
    plan = readPlanFile(positional[0]);
    if (flags['refresh-only'] || flags.destroy) throw new Diag('Incompatible plan options', 'A saved plan already says what to do: -refresh-only and -destroy cannot be given with it.');
    if (ordered.length) checkPlanVariables(plan, ordered, warnings);
    printDiags(warnings, io);
    await lockUnlessDisabled(product, flags, statePath, 'OperationTypeApply');
    state = readState(statePath);
    const now = { exists: state.exists, lineage: state.lineage, serial: state.serial };
    if (JSON.stringify(now) !== JSON.stringify(plan.state)) {
      throw new Diag('Saved plan is stale', 'The given plan file can no longer be applied because the state was changed by another operation after the plan was created.');
    }
    // The plan was made against the refreshed state; apply starts from the same.
    state = { ...state, resources: new Map([...state.resources].filter(([addr]) => !plan.drifted.includes(addr))) };
  } else {
    await lockUnlessDisabled(product, flags, statePath, 'OperationTypeApply');
    state = readState(statePath);
    const mode = destroy || flags.destroy ? 'destroy' : flags['refresh-only'] ? 'refresh-only' : 'normal';
    plan = makePlan(product, io, { config, state, mode, cliInputs: ordered, warnings });
    io.out(renderPlan(product, plan));
    printDiags(warnings, io);
    if (plan.json.applyable && !flags['auto-approve']) {
      io.out(destroy || mode === 'destroy'
        ? `\nDo you really want to destroy all resources?\n  ${product.name} will destroy all your managed infrastructure, as shown above.\n  There is no undo. Only 'yes' will be accepted to confirm.\n\n  Enter a value: `
        : `\nDo you want to perform these actions?\n  ${product.name} will perform the actions described above.\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: `);
      throw new Diag('error asking for approval: EOF', '');
    }
    state = { ...state, resources: plan.summary.refreshed.resources };
  }
  await injectedSleep();
  const previousText = readText(statePath);
  const result = executePlan(product, io, plan, state);
  const next = { ...state, resources: result.resources, outputs: result.outputs };
  const before = stateDocument(product, readState(statePath));
  const candidate = stateDocument(product, next);
  const changed = JSON.stringify({ ...candidate, serial: 0, lineage: 0, terraform_version: 0 }) !== JSON.stringify({ ...before, serial: 0, lineage: 0, terraform_version: 0 });
  if (!state.exists || changed) {
    next.lineage = state.lineage ?? uuid();
    next.serial = state.exists ? state.serial + 1 : 1;
    writeState(product, statePath, next, previousText);
  }
  releaseLock();
  const c = result.counts;
  // terraform says "Destroy complete!" for a destroy it planned itself, not for a saved destroy plan
  if (!positional.length && plan.mode === 'destroy') io.out(`\nDestroy complete! Resources: ${c.destroy} destroyed.\n`);
  else io.out(`\nApply complete! Resources: ${c.add} added, ${c.change} changed, ${c.destroy} destroyed.\n`);
  if (Object.keys(result.outputs).length && plan.mode !== 'destroy') io.out(`\nOutputs:\n\n${renderOutputs(result.outputs)}`);
  return 0;
}

/** Variables given with a saved plan must agree with it (terraform 1.11 accepts equal ones). */
function checkPlanVariables(plan, ordered, warnings) {
  const values = resolveVariables(plan.config, ordered, warnings, { givenOnly: true });
  for (const [name, v] of values) {
    if (JSON.stringify(v.value) !== JSON.stringify(plan.variables[name]?.value)) {
      throw new Diag('Mismatch between input and plan variable value', `Value saved in the plan file for variable "${name}" is different from the value given on the command line. Remove the -var and -var-file options to apply the saved plan.`);
    }
  }
}

async function cmdOutput(product, args, io) {
  const { flags, positional } = parseFlags(product, 'output', args, { json: 'bool', raw: 'bool', 'no-color': 'bool', state: 'string' });
  if (positional.length > 1) throw new Diag('Unexpected argument', 'The output command expects exactly one argument with the name of an output variable or no arguments to show all outputs.');
  if (flags.json && flags.raw) throw new Diag('Invalid output format', 'The -raw and -json options are mutually-exclusive.');
  const config = loadConfig('.', product);
  const statePath = flags.state ? path.resolve(flags.state) : workingDirectory(product, config);
  const outputs = readState(statePath).outputs;
  const name = positional[0];
  if (name !== undefined) {
    const o = outputs[name];
    if (!o) throw new Diag(`Output "${name}" not found`, `The output variable requested could not be found in the state file. If you recently added this to your configuration, be sure to run \`${product.command} apply\`, since the state won't be updated with new output variables until that command is run.`);
    if (flags.json) io.out(`${JSON.stringify(o.value)}\n`);
    else if (flags.raw) {
      if (o.value === null || typeof o.value === 'object') {
        throw new Diag('Unsupported value for raw output', `The -raw option only supports strings, numbers, and boolean values, but output value "${name}" is ${o.value === null ? 'null' : typeName(o.type)}.\n\nUse the -json option for machine-readable representations of output values that have complex types.`);
      }
      io.out(String(o.value));
    } else io.out(`${formatHcl(o.value, o.type)}\n`);
    return 0;
  }
  if (flags.raw) throw new Diag('Output name required', 'You must give the name of a single output value when using the -raw option.');
  if (flags.json) {
    const doc = Object.fromEntries(Object.keys(outputs).sort().map((n) => [n, { sensitive: Boolean(outputs[n].sensitive), type: outputs[n].type, value: outputs[n].value }]));
    io.out(`${JSON.stringify(doc, null, 2)}\n`);
    return 0;
  }
  if (!Object.keys(outputs).length) {
    printDiags([warning('No outputs found', `The state file either has no outputs defined, or all the defined outputs are empty. Please define an output in your configuration with the \`output\` keyword and run \`${product.command} refresh\` for it to become available. If you are using interpolation, please verify the interpolated value is not empty. You can use the \`${product.command} console\` command to assist.`)], { ...io, jsonStdout: true });
    return 0;
  }
  io.out(renderOutputs(outputs));
  return 0;
}

/** `show -json PLANFILE` (the plan JSON), `show -json` (the state JSON), or their text forms. */
async function cmdShow(product, args, io) {
  const { flags, positional } = parseFlags(product, 'show', args, { json: 'bool', 'no-color': 'bool' });
  if (positional.length > 1) throw tooManyArguments(product, 'show');
  const config = loadConfig('.', product);
  const statePath = workingDirectory(product, config);
  if (positional.length) {
    const plan = readPlanFile(positional[0]);
    if (flags.json) io.out(`${JSON.stringify(plan.json)}\n`);
    else {
      const counts = plan.json.resource_changes ?? [];
      io.out(`Saved plan (${plan.mode}) with ${counts.filter((c) => c.change.actions[0] !== 'no-op').length} resource change(s); use -json for details.\n`);
    }
    return 0;
  }
  const state = readState(statePath);
  if (flags.json) {
    if (!state.exists) {
      io.out(`${JSON.stringify({ format_version: '1.0' })}\n`);
      return 0;
    }
    const outputs = Object.fromEntries(Object.keys(state.outputs).sort().map((n) => [n, { sensitive: Boolean(state.outputs[n].sensitive), value: state.outputs[n].value, type: state.outputs[n].type }]));
    const resources = [...state.resources].sort(([a], [b]) => (a < b ? -1 : 1)).map(([addr, inst]) => resourceValues(product, addr, inst, inst.dependencies));
    const values = { ...(Object.keys(outputs).length ? { outputs } : {}), root_module: resources.length ? { resources } : {} };
    io.out(`${JSON.stringify({ format_version: '1.0', terraform_version: state.version ?? product.version, values })}\n`);
    return 0;
  }
  if (!state.exists || (!state.resources.size && !Object.keys(state.outputs).length)) {
    io.out(state.exists ? 'The state file is empty. No resources are represented.\n' : 'No state.\n');
    return 0;
  }
  for (const [addr, r] of [...state.resources].sort(([a], [b]) => (a < b ? -1 : 1))) {
    io.out(`# ${addr}:\nresource "${r.type}" "${r.name}" {\n${Object.keys(r.attrs).sort().filter((k) => r.attrs[k] !== null).map((k) => `    ${k} = ${r.sensitive.has(k) ? '(sensitive value)' : JSON.stringify(r.attrs[k])}\n`).join('')}}\n\n`);
  }
  if (Object.keys(state.outputs).length) io.out(`\nOutputs:\n\n${renderOutputs(state.outputs)}`);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Test hooks
// ---------------------------------------------------------------------------------------------

/** TF_STANDIN_LOG: one JSON line per invocation; TF_VAR_ names only, never their values. */
function logInvocation(program, argv) {
  const file = process.env.TF_STANDIN_LOG;
  if (!file) return;
  const entry = {
    program,
    argv,
    cwd: process.cwd(),
    env: {
      TF_DATA_DIR: process.env.TF_DATA_DIR ?? null,
      TF_PLUGIN_CACHE_DIR: process.env.TF_PLUGIN_CACHE_DIR ?? null,
      TF_VAR_names: Object.keys(process.env).filter((k) => k.startsWith('TF_VAR_')).sort(),
    },
  };
  fs.appendFileSync(file, `${JSON.stringify(entry)}\n`);
}

/** TF_STANDIN_FAIL: the named subcommands (comma-separated) fail as soon as they start. */
function injectedFailure(subcommand) {
  const names = (process.env.TF_STANDIN_FAIL ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (names.includes(subcommand)) throw new Diag('injected failure', `TF_STANDIN_FAIL=${process.env.TF_STANDIN_FAIL} makes "${subcommand}" fail.`);
}

// ---------------------------------------------------------------------------------------------
// Entry point
// ---------------------------------------------------------------------------------------------

/**
 * Signals: the lock is removed and the process exits 128+signal (130 for SIGINT, 143 for
 * SIGTERM). State is only ever replaced by rename, so whatever was on disk stays whole.
 */
function installSignalHandlers(product) {
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) {
    process.on(signal, () => {
      process.stdout.write(`\nInterrupt received.\nPlease wait for ${product.name} to exit or data loss may occur.\nGracefully shutting down...\n`);
      releaseLock();
      process.exit(code);
    });
  }
  process.on('exit', releaseLock);
}

const HELP = (product) => `Usage: ${product.command} [global options] <subcommand> [args]

The ${product.name} stand-in (tests only) implements: init, plan, apply, destroy, output, show, version.

Global options (use these before the subcommand, if any):
  -chdir=DIR    Switch to a different working directory before executing the
                given subcommand.
  -version      An alias for the "version" subcommand.
`;

async function dispatch(product, argv, io) {
  const args = [...argv];
  while (args.length && args[0].startsWith('-')) {
    const flag = args.shift();
    if (['-version', '--version', '-v'].includes(flag)) return cmdVersion(product, args.filter((a) => a === '-json'));
    if (['-help', '--help', '-h'].includes(flag)) {
      process.stdout.write(HELP(product));
      return 0;
    }
    const chdir = /^--?chdir=(.*)$/.exec(flag);
    if (!chdir) {
      process.stderr.write(`${HELP(product)}\nError: unknown global option ${flag}\n`);
      return 1;
    }
    try {
      process.chdir(chdir[1]);
    } catch (e) {
      throw new Diag(`Error handling -chdir option: chdir ${chdir[1]}: ${e.code === 'ENOENT' ? 'no such file or directory' : e.message}`, '');
    }
  }
  const sub = args.shift();
  if (sub === undefined) {
    process.stderr.write(HELP(product));
    return 127;
  }
  injectedFailure(sub);
  switch (sub) {
    case 'version': return cmdVersion(product, args);
    case 'init': return cmdInit(product, args, io);
    case 'plan': return cmdPlan(product, args, io);
    case 'apply': return cmdApply(product, args, io);
    case 'destroy': return cmdApply(product, args, io, { destroy: true });
    case 'output': return cmdOutput(product, args, { ...io, jsonStdout: args.includes('-json') || args.includes('--json') });
    case 'show': return cmdShow(product, args, { ...io, jsonStdout: args.includes('-json') || args.includes('--json') });
    default:
      process.stderr.write(`${product.name} has no command named "${sub}".\n\nTo see all of ${product.name}'s top-level commands, run:\n  ${product.command} -help\n\n`);
      return 1;
  }
}

/** Runs the stand-in as `program` ('terraform' or 'tofu') with the arguments after it. */
export async function run(program, argv) {
  const product = PRODUCTS[program] ?? PRODUCTS.terraform;
  installSignalHandlers(product);
  const io = makeIo(!argv.includes('-no-color') && !argv.includes('--no-color'));
  try {
    logInvocation(program, argv);
    process.exitCode = await dispatch(product, argv, io);
  } catch (e) {
    if (e instanceof Diags) printDiags(e.diags, io);
    else if (e instanceof Diag) printDiags([e], io);
    else printDiags([new Diag('Internal error in the stand-in', e?.stack ?? String(e))], io);
    process.exitCode = 1;
  } finally {
    releaseLock();
  }
}
