/**
 * examples/relay/persisted_queries.json is what `npm run relay` writes and an app publishes:
 * exactly the operations of the generated artifacts (relay-compiler only ever adds to the
 * file, so a stale entry would be published too), each id the sha256 of its text.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/projectRoot.js';

const example = path.join(projectRoot(), 'examples/relay');
const generated = path.join(example, 'src/__generated__');

describe("the Relay example's persisted queries", () => {
  const persisted = JSON.parse(readFileSync(path.join(example, 'persisted_queries.json'), 'utf8')) as Record<
    string,
    string
  >;
  const requestIds = readdirSync(generated)
    .map((file) => /@relayRequestID (\S+)/.exec(readFileSync(path.join(generated, file), 'utf8'))?.[1])
    .filter((id): id is string => id !== undefined);

  it('holds exactly the operations of the artifacts', () => {
    expect(requestIds.length).toBeGreaterThan(0);
    expect(Object.keys(persisted).sort()).toEqual([...requestIds].sort());
  });

  it('names each text by its sha256', () => {
    for (const [id, text] of Object.entries(persisted)) {
      expect(createHash('sha256').update(text).digest('hex')).toBe(id);
    }
  });
});
