// Writes the GraphQL schema as SDL to dashboard/schema.graphql, from which the dashboard's typed
// operations are generated. A test fails when the committed file differs from the live schema:
// after a schema change, run `npm run dashboard:schema` and rebuild.
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { buildGraphqlSchema } from '../src/graphql/server';

export const SDL_FILE = join(__dirname, '..', 'dashboard', 'schema.graphql');

/** The schema as served, in a stable order, as SDL. */
export async function graphqlSdl(): Promise<string> {
  return printSchema(lexicographicSortSchema(await buildGraphqlSchema())) + '\n';
}

if (require.main === module) {
  void graphqlSdl().then((sdl) => {
    writeFileSync(SDL_FILE, sdl);
    console.log(`wrote ${SDL_FILE}`);
  });
}
