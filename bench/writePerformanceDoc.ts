/**
 * `npm run docs:performance` writes the generated part of docs/performance.md (between the
 * markers) from bench/results/latest.json; `-- --check` fails when the page is out of date
 * (CI runs the check through test/performanceDoc.test.ts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PERFORMANCE_DOC, performanceDoc } from './performanceDoc.js';
import type { BenchResults } from './results.js';
import { parseCommandLine } from '../src/cli.js';
import { projectRoot } from '../src/projectRoot.js';

const { values } = parseCommandLine({
  name: 'docs:performance',
  run: 'npm run docs:performance --',
  usage: `[--check]

Writes the generated part of docs/performance.md from bench/results/latest.json and before.json.

  --check   writes nothing; exits 1 when the page is out of date`,
  options: { check: { type: 'boolean', default: false } },
});

const read = (name: string) =>
  JSON.parse(readFileSync(path.join(projectRoot(), `bench/results/${name}.json`), 'utf8')) as BenchResults;
const results = read('latest');
const before = read('before');
const docPath = path.join(projectRoot(), PERFORMANCE_DOC);
const current = readFileSync(docPath, 'utf8');
const wanted = await performanceDoc(current, results, before);
if (values.check) {
  if (wanted !== current) {
    console.error(`${PERFORMANCE_DOC} is out of date with bench/results/latest.json: run npm run docs:performance`);
    process.exit(1);
  }
} else if (wanted !== current) {
  writeFileSync(docPath, wanted);
  console.log(`wrote ${PERFORMANCE_DOC}`);
}
