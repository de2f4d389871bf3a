import { readFileSync } from 'node:fs';
import path from 'node:path';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import { resolvers } from '../../resolvers/index.js';
import { projectRoot } from '../projectRoot.js';

export const schemaPath = (): string => path.join(projectRoot(), 'schema.graphql');

/** The executable schema: the SDL in schema.graphql joined with the resolvers in resolvers/. */
export function buildSchema(): GraphQLSchema {
  return makeExecutableSchema({ typeDefs: readFileSync(schemaPath(), 'utf8'), resolvers });
}
