import { readFileSync } from 'node:fs';
import { graphqlSdl, SDL_FILE } from '../../scripts/graphql-sdl';

/** The dashboard's operations are typed from this file: a schema change must show up here first. */
test('the committed dashboard/schema.graphql is the live GraphQL schema', async () => {
  const committed = readFileSync(SDL_FILE, 'utf8');
  const live = await graphqlSdl();
  if (committed !== live)
    throw new Error(
      'dashboard/schema.graphql is out of date: run `npm run dashboard:schema`, then `npm run build` (the dashboard may need changes).',
    );
  expect(committed).toContain('type Query');
});
