/** The generated pages of docs/, formatted as prettier would (so `npm run lint` agrees with them). */
import path from 'node:path';
import prettier from 'prettier';
import { projectRoot } from '../../src/projectRoot.js';
import { renderConfiguration } from './configuration.js';
import { renderErrors } from './errors.js';
import { renderLayers } from './layers.js';
import { renderAccessPatterns, renderCachingTags, renderSubscriptionEvents } from './model.js';
import { renderSecurity } from './security.js';

const PAGES: { name: string; render: () => string }[] = [
  { name: 'configuration.md', render: renderConfiguration },
  { name: 'errors.md', render: renderErrors },
  { name: 'decisions/layers.md', render: renderLayers },
  { name: 'security.md', render: renderSecurity },
  { name: 'access-patterns.md', render: renderAccessPatterns },
  { name: 'caching.md', render: renderCachingTags },
  { name: 'subscriptions.md', render: renderSubscriptionEvents },
];

export async function generatedDocs(): Promise<{ file: string; text: string }[]> {
  return Promise.all(
    PAGES.map(async ({ name, render }) => {
      const file = path.join(projectRoot(), 'docs', name);
      const options = (await prettier.resolveConfig(file)) ?? {};
      return { file, text: await prettier.format(render(), { ...options, filepath: file }) };
    }),
  );
}
