/**
 * `npm run synth`: synthesizes the CDK app (deploy/) offline and writes deploy/stack.template.json.
 * `npm run synth -- --check` fails when the checked-in template is out of date. Either way an
 * unacknowledged cdk-nag finding fails synthesis.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { renderStackTemplate } from '../deploy/synth.js';
import { parseCommandLine } from '../src/cli.js';
import { projectRoot } from '../src/projectRoot.js';

const { values } = parseCommandLine({
  name: 'synth',
  run: 'npm run synth --',
  usage: `[--check]

Synthesizes the AWS stack (the CDK app in deploy/) offline into deploy/stack.template.json. An
unacknowledged cdk-nag finding fails it.

  --check   writes nothing; exits 1 when the checked-in template is out of date`,
  options: { check: { type: 'boolean', default: false } },
});

const file = path.join(projectRoot(), 'deploy', 'stack.template.json');
const started = performance.now();
const rendered = renderStackTemplate({ redis: false });
const took = `${((performance.now() - started) / 1000).toFixed(1)} s`;
const shown = path.relative(process.cwd(), file);
if (values.check) {
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // missing counts as stale
  }
  if (current !== rendered) {
    console.error(`${shown} is out of date: run npm run synth`);
    process.exit(1);
  }
  console.log(`${shown} is up to date (synthesized in ${took})`);
} else {
  writeFileSync(file, rendered);
  console.log(`wrote ${shown} (synthesized in ${took})`);
}
