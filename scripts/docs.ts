/**
 * `npm run docs`: writes the generated pages of docs/ (their sources are named in each page's
 * first line). `npm run docs -- --check` fails when a checked-in page is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseCommandLine } from '../src/cli.js';
import { generatedDocs } from './docs/generated.js';

const { values } = parseCommandLine({
  name: 'docs',
  run: 'npm run docs --',
  usage: `[--check]

Writes the generated pages of docs/ (configuration.md, errors.md, and the generated blocks of
others) from their sources.

  --check   writes nothing; exits 1 when a checked-in page is out of date`,
  options: { check: { type: 'boolean', default: false } },
});
const check = values.check;
let stale = 0;
for (const { file, text } of await generatedDocs()) {
  const relative = path.relative(process.cwd(), file);
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // missing counts as stale
  }
  if (current === text) continue;
  if (check) {
    console.error(`${relative} is out of date: run npm run docs`);
    stale += 1;
  } else {
    writeFileSync(file, text);
    console.log(`wrote ${relative}`);
  }
}
if (stale > 0) process.exit(1);
if (check) console.log('generated docs are up to date');
