/**
 * The schema DSL of the source format: one small declarative description serves both validation
 * (a problem per JSON pointer, unknown fields included) and the published JSON Schema (draft
 * 2020-12, `toJsonSchema`), so that the two can never disagree. Pure: the source model
 * (src/project), the drivers' spec schemas (src/drivers/<kind>/spec.ts) and the `-o json`
 * reports (src/report/schemas.ts) all build on it.
 */
import { closest } from './closest';
import { DURATION_PATTERN, type DurationBounds, durationProblem, formatDuration } from './duration';

/** A field rule: a problem with its fix, or undefined when the value is fine. */
export type Rule = (value: string) => { message: string; fix: string } | undefined;

interface Described {
  description?: string;
}

export interface StringSchema extends Described {
  type: 'string';
  /** Refuses an empty string. */
  nonEmpty?: boolean;
  rule?: Rule;
  /** The rule as a JSON Schema pattern, when one exists. */
  pattern?: string;
  /** Published only (JSON Schema treats `format` as an annotation): `date-time` for timestamps. */
  format?: 'date-time';
  /** Published only: typical values, for readers of the JSON Schema. */
  examples?: readonly string[];
}
interface ConstSchema<V extends string | number = string | number> extends Described {
  type: 'const';
  value: V;
}
interface IntegerSchema extends Described {
  type: 'integer';
  minimum?: number;
  maximum?: number;
}
interface BooleanSchema extends Described {
  type: 'boolean';
}
interface EnumSchema<V extends string = string> extends Described {
  type: 'enum';
  values: readonly V[];
}
/** A duration such as `500ms`, `10s`, `30m`, `1h30m`, within its bounds (src/util/duration.ts). */
interface DurationSchema extends Described {
  type: 'duration';
  bounds: DurationBounds;
}
export interface StringMapSchema extends Described {
  type: 'stringMap';
  keyRule?: Rule;
  keyPattern?: string;
}
interface ListSchema<I extends Schema = Schema> extends Described {
  type: 'list';
  items: I;
  minItems?: number;
}
export interface Field<S extends Schema = Schema, R extends boolean = boolean> {
  schema: S;
  required?: R;
}
export interface ObjectSchema<F extends Record<string, Field> = Record<string, Field>> extends Described {
  type: 'object';
  fields: F;
  /** Groups of fields of which exactly one must be set. */
  exactlyOne?: string[][];
  /** Groups of fields of which at most one may be set. */
  atMostOne?: string[][];
  /** Fields it does not know are allowed (a record other versions may extend); by default they are errors. */
  open?: boolean;
}
/** Free JSON: any value, a mapping of any values, or a mapping of scalars. */
interface JsonSchema<S extends JsonShape = JsonShape> extends Described {
  type: 'json';
  shape: S;
}
type JsonShape = 'any' | 'object' | 'scalarMap';

export type Schema =
  | StringSchema
  | ConstSchema
  | IntegerSchema
  | BooleanSchema
  | EnumSchema
  | DurationSchema
  | StringMapSchema
  | ListSchema
  | ObjectSchema
  | JsonSchema
  | ReportKindSchema;

// --- builders -------------------------------------------------------------------------------

export const string = (opts: Omit<StringSchema, 'type'> = {}): StringSchema => ({ type: 'string', ...opts });
export const constant = <const V extends string | number>(value: V, description?: string): ConstSchema<V> => ({
  type: 'const',
  value,
  ...(description ? { description } : {}),
});
export const integer = (opts: Omit<IntegerSchema, 'type'> = {}): IntegerSchema => ({ type: 'integer', ...opts });
export const boolean = (description?: string): BooleanSchema => ({ type: 'boolean', ...(description ? { description } : {}) });
export const oneOf = <const V extends string>(values: readonly V[], description?: string): EnumSchema<V> => ({
  type: 'enum',
  values,
  ...(description ? { description } : {}),
});
export const duration = (bounds: DurationBounds, description?: string): DurationSchema => ({
  type: 'duration',
  bounds,
  ...(description ? { description: `${description} (${formatDuration(bounds.minMs)} to ${formatDuration(bounds.maxMs)})` } : {}),
});
export const stringMap = (opts: Omit<StringMapSchema, 'type'> = {}): StringMapSchema => ({ type: 'stringMap', ...opts });
export const list = <I extends Schema>(items: I, opts: Omit<ListSchema, 'type' | 'items'> = {}): ListSchema<I> => ({ type: 'list', items, ...opts });
export const json = <S extends JsonShape>(shape: S, description?: string): JsonSchema<S> => ({ type: 'json', shape, ...(description ? { description } : {}) });
/** A field given as a bare schema is optional; `required(schema)` makes it required. */
type AsField<F> = F extends Field ? F : F extends Schema ? Field<F, false> : never;
export const object = <F extends Record<string, Schema | Field>>(
  fields: F,
  opts: Omit<ObjectSchema, 'type' | 'fields'> = {},
): ObjectSchema<{ [K in keyof F]: AsField<F[K]> }> => ({
  type: 'object',
  fields: Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, 'schema' in f ? f : { schema: f }])) as { [K in keyof F]: AsField<F[K]> },
  ...opts,
});
export const required = <S extends Schema>(schema: S): Field<S, true> => ({ schema, required: true });

// --- the TypeScript type a schema describes --------------------------------------------------

/**
 * The type of the values `validateSchema` accepts: each shape is declared once, as its schema,
 * and its TypeScript type is `Infer<typeof theSchema>`. Required fields are required properties,
 * the others optional; an open mapping's unknown fields are not in the type (code reads only what
 * it declares).
 */
export type Infer<S extends Schema> = S extends StringSchema | DurationSchema
  ? string
  : S extends ConstSchema<infer V>
    ? V
    : S extends IntegerSchema
      ? number
      : S extends BooleanSchema
        ? boolean
        : S extends EnumSchema<infer V>
          ? V
          : S extends StringMapSchema
            ? Record<string, string>
            : S extends ListSchema<infer I>
              ? Infer<I>[]
              : S extends ObjectSchema<infer F>
                ? InferFields<F>
                : S extends JsonSchema<infer J>
                  ? InferJson<J>
                  : InferReportKind<S>;

type RequiredKeys<F extends Record<string, Field>> = { [K in keyof F]: F[K] extends Field<Schema, true> ? K : never }[keyof F];
type Flatten<T> = { [K in keyof T]: T[K] };
type InferFields<F extends Record<string, Field>> = Flatten<
  { [K in RequiredKeys<F>]: Infer<F[K]['schema']> } & { [K in Exclude<keyof F, RequiredKeys<F>>]?: Infer<F[K]['schema']> }
>;
type InferJson<J extends JsonShape> = J extends 'any'
  ? unknown
  : J extends 'scalarMap'
    ? Record<string, string | number | boolean | null>
    : Record<string, unknown>;

// --- JSON pointers --------------------------------------------------------------------------

export function childPointer(base: string, key: string | number): string {
  return `${base}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

export function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

// --- validation -----------------------------------------------------------------------------

export interface SchemaProblem {
  /** JSON pointer of the offending value (or of the missing field) inside the validated value. */
  pointer: string;
  message: string;
  fix: string;
}

export function validateSchema(schema: Schema, value: unknown, pointer = ''): SchemaProblem[] {
  const out: SchemaProblem[] = [];
  check(schema, value, pointer, out);
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `a string (${JSON.stringify(value)})`;
  return `a ${typeof value} (${String(value)})`;
}

function at(pointer: string): string {
  return pointer === '' ? 'the document' : pointer;
}

function wrongType(pointer: string, expected: string, value: unknown, fix?: string): SchemaProblem {
  const quote =
    expected.includes('string') && (typeof value === 'number' || typeof value === 'boolean')
      ? `quote the value ("${String(value)}") so that it is a string`
      : `write ${expected} here`;
  return { pointer, message: `${at(pointer)} must be ${expected}, found ${describe(value)}`, fix: fix ?? quote };
}

function check(schema: Schema, value: unknown, pointer: string, out: SchemaProblem[]): void {
  switch (schema.type) {
    case 'string':
      if (typeof value !== 'string') return void out.push(wrongType(pointer, 'a string', value));
      if (schema.nonEmpty && value === '') {
        return void out.push({ pointer, message: `${at(pointer)} must not be empty`, fix: 'write a value or remove the field' });
      }
      applyRule(schema.rule, value, pointer, out);
      return;
    case 'const':
      if (value !== schema.value) out.push(wrongType(pointer, JSON.stringify(schema.value), value, `write ${schema.value}`));
      return;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) return void out.push(wrongType(pointer, 'an integer', value));
      if (schema.minimum !== undefined && value < schema.minimum) {
        out.push({ pointer, message: `${at(pointer)} must be at least ${schema.minimum}`, fix: `write a number >= ${schema.minimum}` });
      }
      if (schema.maximum !== undefined && value > schema.maximum) {
        out.push({ pointer, message: `${at(pointer)} must be at most ${schema.maximum}`, fix: `write a number <= ${schema.maximum}` });
      }
      return;
    case 'boolean':
      if (typeof value !== 'boolean') out.push(wrongType(pointer, 'true or false', value, 'write true or false'));
      return;
    case 'enum':
      if (typeof value !== 'string' || !schema.values.includes(value)) {
        out.push(wrongType(pointer, `one of ${schema.values.join(', ')}`, value, `write one of: ${schema.values.join(', ')}`));
      }
      return;
    case 'duration': {
      const problem = typeof value === 'string' ? durationProblem(value, schema.bounds) : undefined;
      if (typeof value !== 'string') out.push(wrongType(pointer, 'a duration', value, 'write a duration such as 10s, 30m or 1h30m'));
      else if (problem) out.push({ pointer, message: `${at(pointer)}: ${problem.message}`, fix: `write ${problem.wanted}` });
      return;
    }
    case 'stringMap':
      if (!isRecord(value)) return void out.push(wrongType(pointer, 'a mapping of strings', value));
      for (const [k, v] of Object.entries(value)) {
        const p = childPointer(pointer, k);
        applyRule(schema.keyRule, k, p, out);
        if (typeof v !== 'string') out.push(wrongType(p, 'a string', v));
      }
      return;
    case 'list':
      if (!Array.isArray(value)) return void out.push(wrongType(pointer, 'a list', value));
      if (schema.minItems !== undefined && value.length < schema.minItems) {
        out.push({ pointer, message: `${at(pointer)} needs at least ${schema.minItems} item(s)`, fix: 'add the missing items' });
      }
      value.forEach((item: unknown, i) => check(schema.items, item, childPointer(pointer, i), out));
      return;
    case 'object':
      return checkObject(schema, value, pointer, out);
    case 'json':
      return checkJson(schema, value, pointer, out);
    default:
      return checkReportKind(schema, value, pointer, out);
  }
}

function applyRule(rule: Rule | undefined, value: string, pointer: string, out: SchemaProblem[]): void {
  const problem = rule?.(value);
  if (problem) out.push({ pointer, ...problem });
}

function checkObject(schema: ObjectSchema, value: unknown, pointer: string, out: SchemaProblem[]): void {
  if (!isRecord(value)) return void out.push(wrongType(pointer, 'a mapping', value));
  const known = Object.keys(schema.fields);
  const unknown = schema.open ? [] : Object.keys(value).filter((key) => !known.includes(key));
  const guesses = new Map(unknown.map((key) => [key, closest(key, known)]));
  // Why: a misspelled field (`scirpt`) is the one finding; the field it misses (`script`) follows from it.
  const meant = new Set([...guesses.values()].filter((g): g is string => g !== undefined && value[g] === undefined));
  for (const [key, field] of Object.entries(schema.fields)) {
    if (value[key] === undefined) {
      if (field.required && !meant.has(key)) {
        out.push({ pointer: childPointer(pointer, key), message: `${at(pointer)} misses the required field ${key}`, fix: `add ${key}` });
      }
      continue;
    }
    check(field.schema, value[key], childPointer(pointer, key), out);
  }
  for (const [key, guess] of guesses) {
    out.push({
      pointer: childPointer(pointer, key),
      message: `unknown field ${key}; known fields: ${known.join(', ')}`,
      fix: guess ? `did you mean ${guess}? Unknown fields are errors, never ignored` : `remove ${key}: unknown fields are errors, never ignored`,
    });
  }
  for (const group of schema.exactlyOne ?? []) {
    const present = group.filter((k) => value[k] !== undefined);
    if (present.length === 0 && !group.some((k) => meant.has(k))) {
      out.push({ pointer, message: `${at(pointer)} needs exactly one of ${group.join(', ')}; none is set`, fix: `add one of ${group.join(', ')}` });
    } else if (present.length > 1) {
      out.push(tooMany(pointer, present, 'exactly'));
    }
  }
  for (const group of schema.atMostOne ?? []) {
    const present = group.filter((k) => value[k] !== undefined);
    if (present.length > 1) out.push(tooMany(pointer, present, 'at most'));
  }
}

function tooMany(pointer: string, present: string[], how: string): SchemaProblem {
  return {
    pointer: childPointer(pointer, present[present.length - 1]!),
    message: `${present.join(' and ')} are both set in ${at(pointer)}; ${how} one is allowed`,
    fix: `keep one of ${present.join(', ')} and remove the other`,
  };
}

function checkJson(schema: JsonSchema, value: unknown, pointer: string, out: SchemaProblem[]): void {
  if (schema.shape !== 'any' && !isRecord(value)) return void out.push(wrongType(pointer, 'a mapping', value));
  if (schema.shape === 'scalarMap' && isRecord(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (v !== null && typeof v === 'object') out.push(wrongType(childPointer(pointer, k), 'a string, number or boolean', v));
    }
  }
  checkFinite(value, pointer, out);
}

/** YAML's .inf and .nan parse to numbers that JSON (and so state) cannot hold. */
function checkFinite(value: unknown, pointer: string, out: SchemaProblem[]): void {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    out.push({ pointer, message: `${at(pointer)} is ${String(value)}, which JSON cannot represent`, fix: 'write a finite number or a string' });
  } else if (Array.isArray(value)) {
    value.forEach((v: unknown, i) => checkFinite(v, childPointer(pointer, i), out));
  } else if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) checkFinite(v, childPointer(pointer, k), out);
  }
}

// --- JSON Schema ----------------------------------------------------------------------------

export type JsonSchemaObject = { [key: string]: unknown };

export function toJsonSchema(schema: Schema): JsonSchemaObject {
  const base: JsonSchemaObject = schema.description ? { description: schema.description } : {};
  switch (schema.type) {
    case 'string':
      return {
        ...base,
        type: 'string',
        ...(schema.nonEmpty ? { minLength: 1 } : {}),
        ...(schema.pattern ? { pattern: schema.pattern } : {}),
        ...(schema.format ? { format: schema.format } : {}),
        ...(schema.examples ? { examples: [...schema.examples] } : {}),
      };
    case 'const':
      return { ...base, const: schema.value };
    case 'integer':
      return {
        ...base,
        type: 'integer',
        ...(schema.minimum !== undefined ? { minimum: schema.minimum } : {}),
        ...(schema.maximum !== undefined ? { maximum: schema.maximum } : {}),
      };
    case 'boolean':
      return { ...base, type: 'boolean' };
    case 'enum':
      return { ...base, enum: [...schema.values] };
    case 'duration':
      return { ...base, type: 'string', pattern: DURATION_PATTERN };
    case 'stringMap':
      return {
        ...base,
        type: 'object',
        additionalProperties: { type: 'string' },
        ...(schema.keyPattern ? { propertyNames: { pattern: schema.keyPattern } } : {}),
      };
    case 'list':
      return { ...base, type: 'array', items: toJsonSchema(schema.items), ...(schema.minItems !== undefined ? { minItems: schema.minItems } : {}) };
    case 'json':
      if (schema.shape === 'any') return base;
      if (schema.shape === 'object') return { ...base, type: 'object' };
      // anyOf rather than a union type (`type: [...]`), which Ajv's strict mode refuses.
      return { ...base, type: 'object', additionalProperties: { anyOf: ['string', 'number', 'boolean', 'null'].map((type) => ({ type })) } };
    case 'object': {
      const required = Object.entries(schema.fields)
        .filter(([, f]) => f.required)
        .map(([k]) => k);
      const out: JsonSchemaObject = {
        ...base,
        type: 'object',
        properties: Object.fromEntries(Object.entries(schema.fields).map(([k, f]) => [k, toJsonSchema(f.schema)])),
        additionalProperties: schema.open === true,
      };
      if (required.length > 0) out.required = required;
      const all: JsonSchemaObject[] = [];
      for (const group of schema.exactlyOne ?? []) all.push({ oneOf: group.map((k) => present([k])) });
      for (const group of schema.atMostOne ?? []) all.push({ not: present(group) });
      if (all.length === 1) Object.assign(out, all[0]);
      else if (all.length > 1) out.allOf = all;
      return out;
    }
    default:
      return reportKindToJsonSchema(schema, base);
  }
}

/**
 * "These fields are set", for the groups of a mapping. The subschema declares the fields it
 * requires (as `true`, no constraint of its own) because validators in strict mode (Ajv's
 * strictRequired) refuse a `required` name that no `properties` beside it declares: that is how a
 * misspelled name in a schema shows. Ajv applies oneOf and not before the mapping's own
 * `properties`, so those do not count.
 */
function present(fields: readonly string[]): JsonSchemaObject {
  return { properties: Object.fromEntries(fields.map((k) => [k, true])), required: [...fields] };
}

// --- the kinds the published reports need ------------------------------------------------------
//
// The `-o json` reports (src/report/schemas.ts) are declared in this DSL too, so that one
// description gives both their TypeScript types (Infer) and their published JSON Schemas. They
// need what source does not: references to a document's definitions, unions, mappings of any keys,
// the closed `details` objects whose contents higher layers own, and types declared below this
// layer (a diagnostic). Nyl only emits reports, so their validation is plain: it follows each
// kind below, but a string's published `pattern` and `format` are checked only through a `rule`
// (as in source), and a reference without a target takes any value.

/** A reference to a definition of the published document (`#/$defs/<name>`): typed and checked as its target. */
interface RefSchema<S extends Schema = Schema> extends Described {
  type: 'ref';
  name: string;
  /** The definition it stands for; without it the value is unknown and any value passes. */
  target?: S;
}
/** A value of one of the members: anyOf, or oneOf (exactly one) when exclusive. */
interface UnionSchema<M extends Schema = Schema> extends Described {
  type: 'union';
  members: readonly M[];
  exclusive?: boolean;
}
/** A mapping of any keys to values of one schema. */
interface MapSchema<V extends Schema = Schema> extends Described {
  type: 'map';
  values: V;
}
/**
 * A closed mapping whose fields are all optional and whose values a higher layer builds: the
 * schema publishes each field, and its type is a plain record, since this layer cannot name theirs.
 */
interface DetailsSchema extends Described {
  type: 'details';
  fields: Record<string, Schema>;
}
/** A schema whose TypeScript type T is declared elsewhere (a lower layer), and must be one of its values. */
interface TypedSchema<T = unknown, S extends Schema = Schema> extends Described {
  type: 'typed';
  /** Not `schema`: a mapping's fields tell a Field from a bare schema by that name. */
  inner: S;
  /** Never set: carries T for Infer. */
  readonly phantom?: T;
}
type ReportKindSchema = RefSchema | UnionSchema | MapSchema | DetailsSchema | TypedSchema;

/** Without a target, the value's type is unknown (a definition whose shape this layer does not type). */
export function ref(name: string, target?: undefined, description?: string): RefSchema<JsonSchema<'any'>>;
export function ref<S extends Schema>(name: string, target: S, description?: string): RefSchema<S>;
export function ref(name: string, target?: Schema, description?: string): RefSchema {
  return { type: 'ref', name, ...(target ? { target } : {}), ...(description ? { description } : {}) };
}
export const union = <M extends Schema>(members: readonly M[], opts: Omit<UnionSchema, 'type' | 'members'> = {}): UnionSchema<M> => ({
  type: 'union',
  members,
  ...opts,
});
export const map = <V extends Schema>(values: V, description?: string): MapSchema<V> => ({ type: 'map', values, ...(description ? { description } : {}) });
export const details = (description: string, fields: Record<string, Schema>): DetailsSchema => ({ type: 'details', description, fields });
/** `typed(schema).as<T>()`: the schema, typed as T, which the compiler checks is one of its values. */
export const typed = <S extends Schema>(schema: S) => ({
  // The check is a rest parameter, so that it waits for S to be known (a bound on T would not).
  as: <T>(..._fits: T extends Infer<S> ? [] : [never]): TypedSchema<T, S> => ({ type: 'typed', inner: schema }),
});

type InferReportKind<S> =
  S extends RefSchema<infer T>
    ? Infer<T>
    : S extends UnionSchema<infer M>
      ? Infer<M>
      : S extends MapSchema<infer V>
        ? Record<string, Infer<V>>
        : S extends DetailsSchema
          ? Record<string, unknown>
          : S extends TypedSchema<infer T>
            ? T
            : never;

function checkReportKind(schema: ReportKindSchema, value: unknown, pointer: string, out: SchemaProblem[]): void {
  switch (schema.type) {
    case 'ref':
      if (schema.target) check(schema.target, value, pointer, out);
      return;
    case 'union':
      return checkUnion(schema, value, pointer, out);
    case 'map':
      if (!isRecord(value)) return void out.push(wrongType(pointer, 'a mapping', value));
      for (const [k, v] of Object.entries(value)) check(schema.values, v, childPointer(pointer, k), out);
      return;
    case 'details': {
      const fields = Object.fromEntries(Object.entries(schema.fields).map(([k, f]) => [k, { schema: f }]));
      return checkObject({ type: 'object', fields }, value, pointer, out);
    }
    case 'typed':
      return check(schema.inner, value, pointer, out);
  }
}

/** The problems of the member that comes closest (the fewest), when not exactly one (or, for anyOf, none) fits. */
function checkUnion(schema: UnionSchema, value: unknown, pointer: string, out: SchemaProblem[]): void {
  const problems = schema.members.map((m) => validateSchema(m, value, pointer));
  const fits = problems.filter((p) => p.length === 0).length;
  if (fits === 1 || (fits > 1 && !schema.exclusive)) return;
  if (fits > 1) return void out.push({ pointer, message: `${at(pointer)} fits more than one of its forms`, fix: 'write a value of exactly one form' });
  out.push(...problems.reduce((a, b) => (b.length < a.length ? b : a)));
}

function reportKindToJsonSchema(schema: ReportKindSchema, base: JsonSchemaObject): JsonSchemaObject {
  switch (schema.type) {
    case 'ref':
      return { ...base, $ref: `#/$defs/${schema.name}` };
    case 'union':
      return { ...base, [schema.exclusive ? 'oneOf' : 'anyOf']: schema.members.map(toJsonSchema) };
    case 'map':
      return { ...base, type: 'object', additionalProperties: toJsonSchema(schema.values) };
    case 'details':
      return {
        ...base,
        type: 'object',
        properties: Object.fromEntries(Object.entries(schema.fields).map(([k, f]) => [k, toJsonSchema(f)])),
        additionalProperties: false,
      };
    case 'typed':
      return { ...base, ...toJsonSchema(schema.inner) };
  }
}
