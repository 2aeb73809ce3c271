/**
 * The one place where the wire's snake_case meets the TypeScript side's camelCase, at run time and in types.
 */

type SnakeToCamel<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<SnakeToCamel<Tail>>}`
  : S;

type CamelToSnake<S extends string> = S extends `${infer Head}${infer Tail}`
  ? Head extends Lowercase<Head>
    ? `${Head}${CamelToSnake<Tail>}`
    : `_${Lowercase<Head>}${CamelToSnake<Tail>}`
  : S;

/** A wire (snake_case) type with every key, at every depth, in camelCase. */
export type Camel<T> = T extends readonly (infer E)[]
  ? Camel<E>[]
  : T extends Record<string, unknown>
    ? { [K in keyof T as K extends string ? SnakeToCamel<K> : K]: Camel<T[K]> }
    : T;

/** A camelCase type with every key, at every depth, in snake_case. */
export type Snake<T> = T extends readonly (infer E)[]
  ? Snake<E>[]
  : T extends Record<string, unknown>
    ? { [K in keyof T as K extends string ? CamelToSnake<K> : K]: Snake<T[K]> }
    : T;

export function snakeToCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

export function camelToSnake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * Most distinct names each direction remembers. A list answer repeats the same dozen keys on every item, so renaming
 * from memory makes converting a 10,000-item list about ten times faster than a regular expression per key; the cap
 * keeps a server that sends endless distinct keys from growing the memory.
 */
const REMEMBERED_NAMES = 4096;

/** `rename`, remembering up to REMEMBERED_NAMES of its answers. */
function remembered(rename: (name: string) => string): (name: string) => string {
  const known = new Map<string, string>();
  return (name) => {
    let out = known.get(name);
    if (out === undefined) {
      out = rename(name);
      if (known.size < REMEMBERED_NAMES) known.set(name, out);
    }
    return out;
  };
}

const toCamel = remembered(snakeToCamel);
const toSnake = remembered(camelToSnake);

/**
 * A plain object of any realm: its prototype is null or an Object.prototype (whose own is null). A state the engine
 * hands over, or a clone made in another realm (jest's, a worker's), has another realm's Object.prototype.
 */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

function mapKeys(value: unknown, rename: (k: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => mapKeys(v, rename));
  if (isPlainObject(value)) {
    const record = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(record)) {
      const v = record[k];
      if (v !== undefined) out[rename(k)] = mapKeys(v, rename);
    }
    return out;
  }
  return value;
}

/** Converts a wire value (snake_case keys) to the TypeScript side. */
export function fromWire<T>(value: T): Camel<T> {
  return mapKeys(value, toCamel) as Camel<T>;
}

/** Converts a TypeScript-side value (camelCase keys) to the wire; undefined members are dropped. */
export function toWire<T>(value: T): Snake<T> {
  return mapKeys(value, toSnake) as Snake<T>;
}

/** Renders a wire path (`security_config.geo.countries.1`) the way users name the property. */
export function camelPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += (out ? "." : "") + snakeToCamel(String(part));
  }
  return out;
}

/** Renders a wire path as the wire names it (`security_config.geo.countries[1]`). */
export function wirePath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += (out ? "." : "") + String(part);
  }
  return out;
}
