/**
 * The fleet's container image (`-c fleet=true`): the server (src/main.ts) and the consumer
 * (src/consumer/main.ts) bundled by bundle.ts exactly as the Lambda functions are, beside the
 * files they read at run time, and deploy/container/Dockerfile, which copies them onto the
 * Node.js 24 LTS image. One image, two commands (`node server.mjs`, `node consumer.mjs`).
 *
 * Synthesis only stages the folder as a Docker image asset (no Docker, no network): its hash is
 * CDK's fingerprint of the folder's relative paths and bytes, so the template is the same on
 * every machine. `cdk deploy` builds and pushes the image, and needs Docker there only.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import { ContainerImage } from 'aws-cdk-lib/aws-ecs';
import { projectRoot } from '../src/projectRoot.js';
import { bundleEntry, copyProjectFiles, hashFolder, LAMBDA_ENTRIES, temporaryFolder } from './bundle.js';
import type { BundleFolder } from './bundle.js';

/** What the image runs: `node <name>.mjs`. */
export const CONTAINER_ENTRIES = {
  server: 'src/main.ts',
  consumer: 'src/consumer/main.ts',
} as const;

export type ContainerName = keyof typeof CONTAINER_ENTRIES;

/** The files the server reads at run time: the GraphQL function's (schema, persisted documents). */
export const CONTAINER_FILES = LAMBDA_ENTRIES.graphql.files;

export const DOCKERFILE = 'deploy/container/Dockerfile';

/** The command of a container running `name`'s bundle. */
export const containerCommand = (name: ContainerName): string[] => ['node', `${name}.mjs`];

/** Arm64 (Graviton), as the functions: the bundle is plain JavaScript, and the Dockerfile runs nothing to emulate. */
export const CONTAINER_PLATFORM = Platform.LINUX_ARM64;

/** Writes the image's build context (both bundles, their files, the Dockerfile) into a fresh folder under `outDir`. */
export function bundleContainer(outDir: string = temporaryFolder('tablegraph-image-')): BundleFolder {
  const dir = path.join(outDir, 'image');
  mkdirSync(dir, { recursive: true });
  for (const [name, entry] of Object.entries(CONTAINER_ENTRIES)) bundleEntry(entry, path.join(dir, `${name}.mjs`));
  copyProjectFiles(CONTAINER_FILES, dir);
  copyFileSync(path.join(projectRoot(), DOCKERFILE), path.join(dir, 'Dockerfile'));
  return { dir, hash: hashFolder(dir) };
}

let cached: BundleFolder | undefined;

/** bundleContainer, once per process. */
export function cachedContainerBundle(): BundleFolder {
  cached ??= bundleContainer();
  return cached;
}

/** The image as a Docker image asset of the stack (staged at synthesis, built at deployment). */
export function fleetImage(): ContainerImage {
  return ContainerImage.fromAsset(cachedContainerBundle().dir, { platform: CONTAINER_PLATFORM });
}
