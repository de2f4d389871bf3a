/**
 * `npm run cfn`: writes deploy/table.template.json from src/table/definition.ts.
 * `npm run cfn -- --check` fails when the checked-in template is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../src/projectRoot.js';
import { renderTemplate } from '../src/table/cloudformation.js';

const file = path.join(projectRoot(), 'deploy', 'table.template.json');
const rendered = renderTemplate();
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // missing counts as stale
  }
  if (current !== rendered) {
    console.error(`${path.relative(process.cwd(), file)} is out of date: run npm run cfn`);
    process.exit(1);
  }
  console.log('CloudFormation template is up to date');
} else {
  writeFileSync(file, rendered);
  console.log(`wrote ${path.relative(process.cwd(), file)}`);
}
