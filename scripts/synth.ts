/**
 * `npm run synth`: synthesizes the CDK app (deploy/) offline and writes its two templates: the
 * default stack (deploy/stack.template.json) and the stack with the long-running tier, as
 * `-c fleet=true` deploys it (deploy/stack.fleet.template.json). `npm run synth -- --check` fails
 * when either checked-in template is out of date. Either way an unacknowledged cdk-nag finding
 * fails synthesis.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { renderStackTemplate } from '../deploy/synth.js';
import type { SynthOptions } from '../deploy/synth.js';
import { parseCommandLine } from '../src/cli.js';
import { projectRoot } from '../src/projectRoot.js';

const TEMPLATES: [file: string, options: SynthOptions][] = [
  ['stack.template.json', { redis: false, fleet: false }],
  ['stack.fleet.template.json', { redis: false, fleet: true }],
];

const { values } = parseCommandLine({
  name: 'synth',
  run: 'npm run synth --',
  usage: `[--check]

Synthesizes the AWS stack (the CDK app in deploy/) offline into deploy/stack.template.json, and
with the long-running tier (-c fleet=true) into deploy/stack.fleet.template.json. An
unacknowledged cdk-nag finding fails it.

  --check   writes nothing; exits 1 when a checked-in template is out of date`,
  options: { check: { type: 'boolean', default: false } },
});
const check = values.check;
const stale: string[] = [];
for (const [name, options] of TEMPLATES) {
  const file = path.join(projectRoot(), 'deploy', name);
  const started = performance.now();
  const rendered = renderStackTemplate(options);
  const took = `${((performance.now() - started) / 1000).toFixed(1)} s`;
  const shown = path.relative(process.cwd(), file);
  if (check) {
    let current = '';
    try {
      current = readFileSync(file, 'utf8');
    } catch {
      // missing counts as stale
    }
    if (current === rendered) console.log(`${shown} is up to date (synthesized in ${took})`);
    else stale.push(shown);
  } else {
    writeFileSync(file, rendered);
    console.log(`wrote ${shown} (synthesized in ${took})`);
  }
}
if (stale.length > 0) {
  console.error(`${stale.join(' and ')} ${stale.length > 1 ? 'are' : 'is'} out of date: run npm run synth`);
  process.exit(1);
}
