import { types } from 'node:util';
import { MessageValidationError } from './errors.js';

/** A `\u0000` escape, or an escaped lone surrogate, not itself escaped: many JSON readers (jsonb too) refuse both. */
const UNSTORABLE_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const MAX_PATH_CHARACTERS = 200;

/**
 * A JSON payload as the text it is stored and published as, written once by `JSON.stringify`. What that would
 * silently change or drop is refused instead, naming the path of the first such value (never the value):
 * NaN and ±Infinity (null), a BigInt and a cycle (it throws), a function or a symbol (left out), undefined or a
 * hole in an array (null), and objects whose content it loses: Map, Set, WeakMap, WeakSet ({}), binary data
 * (typed arrays, ArrayBuffer, DataView, Buffer), Error (its message and stack are not enumerable), RegExp,
 * Promise, and an invalid Date (null). Kept as `JSON.stringify` writes them: a value's `toJSON` (a Date is its
 * ISO text), class instances (their own enumerable fields), and an object property set to undefined, which is
 * left out like an absent field. docs/table.md, "JSON payloads", lists the rules.
 */
export function serializeJsonPayload(payload: unknown, where: string): string {
  const paths = new WeakMap<object, string>();
  // The last object visited and the path it had before (a cycle is reported from it once JSON.stringify throws).
  let lastPath = '';
  let lastEarlier: string | undefined;

  // Runs for every value of every payload at enqueue: paths are built only for objects and for the failure.
  const pathOf = (holder: unknown, key: string): string => {
    const parent = typeof holder === 'object' && holder !== null ? paths.get(holder) : undefined;
    if (parent === undefined) return 'payload';
    if (Array.isArray(holder)) return `${parent}[${key}]`;
    return `${parent}${IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`;
  };
  const refuse = (holder: unknown, key: string, problem: string): never => {
    fail(`${where}: ${pathOf(holder, key).slice(0, MAX_PATH_CHARACTERS)} ${problem}`);
  };

  function check(this: unknown, key: string, value: unknown): unknown {
    switch (typeof value) {
      case 'number':
        if (!Number.isFinite(value)) {
          refuse(this, key, `is ${String(value)}, which JSON cannot represent (JSON.stringify would store null); send a finite number, null or a string`);
        }
        return value;
      case 'bigint':
        return refuse(this, key, 'is a BigInt, which JSON cannot represent (JSON.stringify throws); send it as a string (String(n)) or a number');
      case 'function':
      case 'symbol':
        return refuse(this, key, `is a ${typeof value}, which JSON.stringify would ${Array.isArray(this) ? 'store as null' : 'leave out'}; send data only`);
      case 'undefined':
        if (Array.isArray(this)) refuse(this, key, 'is undefined (or a hole) in an array, which JSON.stringify would store as null; send null');
        return value;
      case 'object':
        if (value === null) {
          if ((this as Record<string, unknown>)[key] instanceof Date)
            refuse(this, key, 'is an invalid Date, which JSON.stringify would store as null; send a valid Date, null or a string');
          return value;
        }
        refuseLossy(this, key, value);
        lastPath = pathOf(this, key);
        lastEarlier = paths.get(value);
        paths.set(value, lastPath);
        return value;
      default:
        return value;
    }
  }

  /** Objects whose content JSON.stringify loses; plain objects and arrays pass with one prototype check. */
  function refuseLossy(holder: unknown, key: string, value: object): void {
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype === Object.prototype || prototype === Array.prototype || prototype === null) {
      // A Buffer's toJSON turns it into { type: 'Buffer', data: [...] } before this check sees it.
      if ((value as { type?: unknown }).type === 'Buffer' && Buffer.isBuffer((holder as Record<string, unknown>)[key])) refuse(holder, key, BINARY);
      return;
    }
    const problem = lossOf(value);
    if (problem !== undefined) refuse(holder, key, problem);
  }

  let json: string | undefined;
  try {
    json = JSON.stringify(payload, check);
  } catch (error) {
    if (error instanceof MessageValidationError) throw error;
    if (error instanceof TypeError && lastEarlier !== undefined && isAncestor(lastEarlier, lastPath)) {
      fail(
        `${where}: ${lastPath.slice(0, MAX_PATH_CHARACTERS)} refers back to ${lastEarlier.slice(0, MAX_PATH_CHARACTERS)} (a cycle), which JSON cannot represent; send a copy without the back reference`,
      );
    }
    // The serializer's own message can quote the payload (property names of a cycle, a toJSON's text).
    const kind = error instanceof Error ? error.name : typeof error;
    fail(`${where}: payload cannot be serialized to JSON (${kind} from a toJSON method); pass plain data`);
  }
  if (json === undefined) fail(`${where}: payload is ${typeof payload}, which has no JSON form; pass plain data (null is allowed)`);
  if (UNSTORABLE_ESCAPE.test(json)) fail(`${where}: payload holds a NUL character or a lone UTF-16 surrogate, which many JSON readers refuse`);
  return json;
}

const BINARY =
  'is binary data, which JSON.stringify would store as an object of numbers; encode it into a string (base64), or send the binary as the whole payload (a Uint8Array)';

/** What JSON.stringify would lose of an object that is not plain, or undefined for a class instance it keeps the fields of. */
function lossOf(value: object): string | undefined {
  if (types.isMap(value) || types.isWeakMap(value))
    return `is a ${types.isMap(value) ? 'Map' : 'WeakMap'}, which JSON.stringify would store as {}; convert it first (Object.fromEntries(map))`;
  if (types.isSet(value) || types.isWeakSet(value))
    return `is a ${types.isSet(value) ? 'Set' : 'WeakSet'}, which JSON.stringify would store as {}; convert it first ([...set])`;
  if (types.isArrayBufferView(value) || types.isAnyArrayBuffer(value)) return BINARY;
  if (types.isNativeError(value)) return 'is an Error, whose message and stack JSON.stringify leaves out; send { name, message } instead';
  if (types.isRegExp(value)) return 'is a RegExp, which JSON.stringify would store as {}; send its source as a string';
  if (types.isPromise(value)) return 'is a Promise, which JSON.stringify would store as {}; await it first';
  if (types.isBigIntObject(value)) return 'is a BigInt, which JSON cannot represent (JSON.stringify throws); send it as a string (String(n)) or a number';
  if (types.isSymbolObject(value)) return 'is a symbol, which JSON.stringify would store as {}; send data only';
  return undefined;
}

/** True when `path` lies under `ancestor` (`payload.a` under `payload`, `payload[0].b` under `payload[0]`). */
function isAncestor(ancestor: string, path: string): boolean {
  return path.length > ancestor.length && path.startsWith(ancestor) && (path[ancestor.length] === '.' || path[ancestor.length] === '[');
}

function fail(message: string): never {
  throw new MessageValidationError('OUTBOXER_PAYLOAD_NOT_JSON', message);
}
