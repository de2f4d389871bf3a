/**
 * The generic readers: each takes the environment and a variable's name, applies the spec's
 * default when the variable is unset or empty, and throws ConfigError naming the variable for a
 * value it cannot use. A reader accepts only the names whose spec type it reads, so a variable
 * is always parsed the way the spec (and so docs/configuration.md) says.
 */
import { ENV_SPEC } from './spec.js';
import type { EnvName, VarSpec } from './spec.js';

/** Thrown for a configuration a process refuses to start with; entry points print only its message. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type Env = NodeJS.ProcessEnv;

type SpecOf<N extends EnvName> = (typeof ENV_SPEC)[N];
/** The variables of one type: a reader accepts only the names its type fits. */
type NamesOfType<T> = { [N in EnvName]: SpecOf<N>['type'] extends T ? N : never }[EnvName];
/** Defined when the spec names a default. */
type Value<N extends EnvName, T> = SpecOf<N> extends { default: string } ? T : T | undefined;

/** True when the environment itself sets `name` (its default does not count). */
export const given = (env: Env, name: EnvName): boolean => (env[name] ?? '') !== '';

/** The value of `name`, or its spec's default; undefined when neither is set. */
function raw(env: Env, name: EnvName): string | undefined {
  const value = env[name];
  if (value !== undefined && value !== '') return value;
  const spec: VarSpec = ENV_SPEC[name];
  return spec.default;
}

export function integer<N extends NamesOfType<'integer'>>(env: Env, name: N): Value<N, number> {
  const value = raw(env, name);
  if (value === undefined) return undefined as Value<N, number>;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) {
    throw new ConfigError(`${name} must be a positive integer, got "${value}"`);
  }
  return number;
}

/** A whole number, 0 allowed (how many of something: TRUST_PROXY_HOPS). */
export function count(env: Env, name: NamesOfType<'count'>): number {
  const value = raw(env, name) ?? '0';
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number)) {
    throw new ConfigError(`${name} must be a whole number (0 or more), got "${value}"`);
  }
  return number;
}

export function seconds(env: Env, name: NamesOfType<'seconds'>): number {
  const value = raw(env, name) ?? '0';
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number)) {
    throw new ConfigError(`${name} must be a whole number of seconds, got "${value}"`);
  }
  return number;
}

const DURATION_UNITS: Record<string, number> = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 };

/** A duration in seconds: `3600`, `90s`, `30m`, `24h` or `7d`. */
export function duration<N extends NamesOfType<'duration'>>(env: Env, name: N): Value<N, number> {
  const value = raw(env, name);
  if (value === undefined) return undefined as Value<N, number>;
  const number = durationSeconds(value);
  if (number === undefined)
    throw new ConfigError(`${name} must be a duration such as 3600, 30m or 24h, got "${value}"`);
  return number;
}

/** `3600`, `30m`, `24h`, `7d` in whole seconds (at least 1); undefined for anything else. */
export function durationSeconds(value: string): number | undefined {
  const match = /^(\d+)\s*(s|m|h|d)?$/.exec(value.trim());
  const number = match ? Number(match[1]) * (DURATION_UNITS[match[2] ?? ''] ?? 1) : NaN;
  return Number.isInteger(number) && number >= 1 ? number : undefined;
}

/** A comma-separated list; blanks around items are dropped. */
export const list = (env: Env, name: NamesOfType<'list' | 'secret'>): string[] =>
  (raw(env, name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/** Exact origins: `https://host[:port]`, nothing after it. */
export function origins(env: Env, name: NamesOfType<'list'>): string[] {
  return list(env, name).map((origin) => {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      // reported below
    }
    if (!parsed || parsed.origin !== origin || !/^https?:$/.test(parsed.protocol)) {
      throw new ConfigError(
        `${name} lists origins like https://shop.example.com (no path or trailing /), got "${origin}"`,
      );
    }
    return origin;
  });
}

/** `key=value,key=value` (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS), values percent-decoded. */
export function pairs(env: Env, name: NamesOfType<'list' | 'secret'>): Record<string, string> {
  const entries = list(env, name).map((item) => {
    const at = item.indexOf('=');
    if (at < 1) throw new ConfigError(`${name} must be key=value pairs separated by commas, got "${item}"`);
    try {
      return [item.slice(0, at).trim(), decodeURIComponent(item.slice(at + 1).trim())] as const;
    } catch {
      throw new ConfigError(`${name} has a value that is not percent-encoded correctly: "${item}"`);
    }
  });
  return Object.fromEntries(entries);
}

export function flag<N extends NamesOfType<'boolean'>>(env: Env, name: N): Value<N, boolean> {
  const value = raw(env, name);
  if (value === undefined) return undefined as Value<N, boolean>;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${value}"`);
}

export function port<N extends NamesOfType<'port'>>(env: Env, name: N): Value<N, number> {
  const value = raw(env, name);
  if (value === undefined) return undefined as Value<N, number>;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || number > 65535) {
    throw new ConfigError(`${name} must be an integer between 0 and 65535, got "${value}"`);
  }
  return number;
}

export function oneOf<N extends NamesOfType<readonly string[]>>(
  env: Env,
  name: N,
): Value<N, SpecOf<N>['type'][number]> {
  const value = raw(env, name);
  const allowed: readonly string[] = ENV_SPEC[name].type;
  if (value !== undefined && !allowed.includes(value)) {
    throw new ConfigError(`${name} must be ${allowed.join(', ')}, got "${value}"`);
  }
  return value as Value<N, SpecOf<N>['type'][number]>;
}

/** A string, URL or secret variable: its value or its spec's default. */
export const text = <N extends NamesOfType<'string' | 'url' | 'secret'>>(env: Env, name: N) =>
  raw(env, name) as Value<N, string>;

/** An http:// or https:// URL variable (CDN_PURGE_URL, the OTLP endpoints). */
export function httpUrl<N extends NamesOfType<'url'>>(env: Env, name: N): Value<N, string> {
  const value = text(env, name);
  if (value !== undefined && !/^https?:\/\/[^\s]+$/.test(value)) {
    throw new ConfigError(`${name} must be an http:// or https:// URL, got "${value}"`);
  }
  return value;
}
