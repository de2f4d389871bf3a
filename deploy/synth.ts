/**
 * Synthesizes the stack in-process, offline and deterministically: no AWS credentials or
 * account lookups (the stack is environment-agnostic), no Docker (bundle.ts), no version
 * reporting, no construct-path or asset-path metadata (absolute paths and CDK versions would
 * differ between machines), so the template depends only on the sources and the lockfile.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { temporaryFolder } from './bundle.js';
import { TablegraphStack } from './stack.js';

export const STACK_NAME = 'Tablegraph';

export interface SynthOptions {
  /** Default: the `redis` context value (`-c redis=true`), else off. */
  redis?: boolean | undefined;
  /** Default: the `fleet` context value (`-c fleet=true`), else off. */
  fleet?: boolean | undefined;
  /** cdk-nag's AwsSolutions pack; on by default: an unacknowledged finding fails synthesis. */
  nag?: boolean | undefined;
  /** Where the cloud assembly goes (a temporary folder by default; `cdk` sets CDK_OUTDIR). */
  outdir?: string | undefined;
}

/** Settings that would put machine- or version-specific bytes into the template. */
export const DETERMINISTIC_CONTEXT = {
  'aws:cdk:version-reporting': false,
  'aws:cdk:enable-path-metadata': false,
  'aws:cdk:enable-asset-metadata': false,
};

export function createApp(options: SynthOptions = {}): { app: App; stack: TablegraphStack } {
  const app = new App({
    // `cdk synth|deploy` passes CDK_OUTDIR; elsewhere a temporary folder, removed at exit.
    outdir: options.outdir ?? process.env.CDK_OUTDIR ?? temporaryFolder('tablegraph-cdk-'),
    analyticsReporting: false,
    stackTraces: false,
    // After the CLI's context, so that `npx cdk synth|deploy` gives the same template too.
    postCliContext: DETERMINISTIC_CONTEXT,
  });
  if (options.nag !== false) Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  const flag = (name: string): boolean => {
    const context: unknown = app.node.tryGetContext(name);
    return context === true || context === 'true';
  };
  const stack = new TablegraphStack(app, STACK_NAME, {
    redis: options.redis ?? flag('redis'),
    fleet: options.fleet ?? flag('fleet'),
  });
  return { app, stack };
}

/** The template as `npm run synth` writes it: 2-space JSON and a final newline. */
export function renderStackTemplate(options: SynthOptions = {}): string {
  const { app, stack } = createApp(options);
  const template: unknown = app.synth().getStackArtifact(stack.artifactId).template;
  return `${JSON.stringify(template, null, 2)}\n`;
}
