import { readFileSync } from 'node:fs';
import path from 'node:path';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import { resolvers } from '../../../resolvers/index.js';
import { projectRoot } from '../../projectRoot.js';
import { assertSchemaPolicy } from './schemaPolicy.js';

export const schemaPath = (): string => path.join(projectRoot(), 'schema.graphql');

/**
 * The executable schema: the SDL in schema.graphql joined with the resolvers in resolvers/.
 * Its policy directives are checked against it and the entity declarations first: a server
 * does not start on a policy that names what is not there (schemaPolicy.ts).
 */
export function buildSchema(): GraphQLSchema {
  return assertSchemaPolicy(makeExecutableSchema({ typeDefs: readFileSync(schemaPath(), 'utf8'), resolvers }));
}
