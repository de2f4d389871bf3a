/**
 * A seeded generator of query documents, built from the schema: it walks the types from Query
 * and picks fields, arguments, aliases, named and inline fragments (on `node`/`nodes` and their
 * interface), @skip/@include with literals and with variables, variables with and without
 * defaults, and variables that are bad or missing. Argument values come from the data the test
 * seeded (known ids), with unknown ids, other users' ids and forged ones mixed in. Each document
 * also carries a fault plan: the response paths at which a resolver fails, and how.
 *
 * The same seed gives the same documents; a failing document is reproduced from its index.
 */
import { getNamedType, isEnumType, isInterfaceType, isLeafType, isNonNullType, isObjectType } from 'graphql';
import { seededRandom } from '../../src/seed/seededRandom.js';
import type {
  GraphQLArgument,
  GraphQLField,
  GraphQLInputType,
  GraphQLInterfaceType,
  GraphQLNamedType,
  GraphQLObjectType,
  GraphQLSchema,
} from 'graphql';

/** How a resolver fails at a path: a coded error, an unexpected one (masked), or null where the schema says non-null. */
export type FaultKind = 'coded' | 'unexpected' | 'null';

export interface GeneratedDocument {
  query: string;
  variables: Record<string, unknown>;
  /** Where resolvers fail (`faultAt`): a seed and the share of response paths; none for most documents. */
  faults: { seed: number; rate: number } | undefined;
  /** Who asks. */
  viewer: 'alice' | 'bob' | 'admin' | 'anonymous';
}

/** Values an argument of this name may take: valid ones first, then hostile ones. */
/** Values by argument name, or by `<name>:<type>` where arguments of one name take different types. */
export type ArgumentValues = Record<string, readonly unknown[]>;

const MAX_DEPTH = 4;

export function createDocumentGenerator(schema: GraphQLSchema, values: ArgumentValues, seed: number) {
  const random = seededRandom(seed);
  const chance = (p: number) => random() < p;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const some = <T>(items: readonly T[], most: number): T[] => {
    const chosen = items.filter(() => chance(0.5));
    const result = chosen.length ? chosen : [pick(items)];
    return result.slice(0, most);
  };

  return function generate(): GeneratedDocument {
    const variables: Record<string, unknown> = {};
    const definitions: string[] = [];
    const fragments: string[] = [];
    let counter = 0;
    const next = (prefix: string) => `${prefix}${(counter += 1)}`;

    /** A value of an input type, printed as a literal. */
    const literal = (value: unknown, type: GraphQLInputType): string => {
      if (value === null) return 'null';
      const named = getNamedType(type);
      if (Array.isArray(value)) return `[${value.map((item) => literal(item, type)).join(', ')}]`;
      if (typeof value === 'object')
        return `{ ${Object.entries(value as Record<string, unknown>)
          .map(([key, item]) => `${key}: ${literal(item, type)}`)
          .join(', ')} }`;
      if (typeof value === 'string' && (named.name.endsWith('Status') || isEnumType(named))) return value;
      if (typeof value === 'string' && /^(NAME|PRICE|ASC|DESC)$/.test(value)) return value;
      return JSON.stringify(value);
    };

    /** An argument's value: a literal, or a variable (maybe defaulted, maybe missing, maybe of the wrong type). */
    const argument = (arg: GraphQLArgument): string | undefined => {
      const candidates = values[`${arg.name}:${getNamedType(arg.type).name}`] ?? values[arg.name];
      if (!candidates) return undefined;
      if (!isNonNullType(arg.type) && !chance(0.5)) return undefined;
      const value = pick(candidates);
      if (!chance(0.35)) return `${arg.name}: ${literal(value, arg.type)}`;
      const name = next('v');
      const nonNull = isNonNullType(arg.type);
      const roll = random();
      let definition = `$${name}: ${String(arg.type)}`;
      if (roll < 0.15) {
        // A default (non-null ones too).
        definition += ` = ${literal(value, arg.type)}`;
        if (chance(0.5)) variables[name] = value;
      } else if (roll < 0.2 && nonNull) {
        // Missing: a coercion error before anything runs.
      } else if (roll < 0.27) {
        variables[name] = pick([{ bad: true }, 12.5, 'not-a-number', [], true]);
      } else {
        variables[name] = value;
      }
      definitions.push(definition);
      return `${arg.name}: $${name}`;
    };

    /** @skip or @include, with a literal or a Boolean variable (sometimes defaulted). */
    const directive = (): string => {
      if (!chance(0.12)) return '';
      const which = pick(['skip', 'include']);
      if (chance(0.5)) return ` @${which}(if: ${String(chance(0.5))})`;
      const name = next('b');
      if (chance(0.3)) definitions.push(`$${name}: Boolean = ${String(chance(0.5))}`);
      else {
        definitions.push(`$${name}: Boolean!`);
        variables[name] = chance(0.5);
      }
      return ` @${which}(if: $${name})`;
    };

    const fieldsOf = (type: GraphQLObjectType | GraphQLInterfaceType) =>
      Object.values(type.getFields()).filter(
        (field) => field.args.every((arg) => !isNonNullType(arg.type) || values[arg.name]) && !field.deprecationReason,
      );

    /** One field with its arguments, alias, directives and (for objects) selections. */
    const field = (f: GraphQLField<unknown, unknown>, depth: number): string | undefined => {
      const named = getNamedType(f.type);
      if (!isLeafType(named) && depth >= MAX_DEPTH) return undefined;
      const args = f.args.map((arg) => argument(arg)).filter((text): text is string => text !== undefined);
      const alias = chance(0.15) ? `${next('a')}: ` : '';
      const head = `${alias}${f.name}${args.length ? `(${args.join(', ')})` : ''}${directive()}`;
      if (isLeafType(named)) return head;
      return `${head} ${selection(named, depth + 1)}`;
    };

    /** A selection set on `type`: fields, `__typename`, inline fragments and fragment spreads. */
    const selection = (type: GraphQLNamedType, depth: number): string => {
      const parts: string[] = [];
      if (isInterfaceType(type)) {
        if (chance(0.6)) parts.push('id');
        for (const implementation of schema.getPossibleTypes(type)) {
          if (chance(0.6))
            parts.push(`... on ${implementation.name}${directive()} ${selection(implementation, depth)}`);
        }
      } else if (isObjectType(type)) {
        for (const f of some(fieldsOf(type), depth >= MAX_DEPTH ? 3 : 4)) {
          const text = field(f, depth);
          if (text) parts.push(text);
        }
        if (chance(0.15) && depth < MAX_DEPTH) {
          const name = next('F');
          fragments.push(`fragment ${name} on ${type.name} ${selection(type, depth + 1)}`);
          parts.push(`...${name}${directive()}`);
        }
        if (chance(0.08)) parts.push(`...${directive() || ' @include(if: true)'} { __typename }`);
      }
      if (chance(0.2) || parts.length === 0) parts.push(chance(0.3) ? `${next('t')}: __typename` : '__typename');
      return `{ ${parts.join(' ')} }`;
    };

    const query = schema.getQueryType() as GraphQLObjectType;
    const roots = some(fieldsOf(query), 3)
      .map((f) => field(f, 1))
      .filter(Boolean);
    const head = definitions.length ? `query Generated(${definitions.join(', ')})` : 'query Generated';
    const faults = chance(0.3) ? { seed: Math.floor(random() * 2 ** 31), rate: pick([0.03, 0.1, 0.25]) } : undefined;
    const text = [`${head} { ${roots.join(' ')} }`, ...fragments].join('\n');
    return { query: text, variables, faults, viewer: pick(['alice', 'alice', 'bob', 'admin', 'anonymous'] as const) };
  };
}

/**
 * Decides, by hashing a document's seed with a response path, whether a resolver fails there:
 * both executors see the same paths, so they meet the same faults. `rate` of the paths fail.
 */
export function faultAt(seed: number, path: string, rate: number): FaultKind | undefined {
  let hash = seed >>> 0;
  for (let i = 0; i < path.length; i += 1) hash = Math.imul(hash ^ path.charCodeAt(i), 16777619) >>> 0;
  const roll = seededRandom(hash)();
  if (roll >= rate) return undefined;
  return roll < rate / 3 ? 'coded' : roll < (2 * rate) / 3 ? 'unexpected' : 'null';
}
