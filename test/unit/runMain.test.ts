/**
 * runMain keeps a process alive through an unhandled rejection: it logs the rejection with its
 * error, counts it, and the process goes on (graphql-js may abandon a rejected sibling promise).
 */
import { describe, expect, it } from 'vitest';
import { runNode } from '../support/serverProcess.js';

describe('runMain', () => {
  it('logs and counts an unhandled rejection, and the process goes on to exit 0', async () => {
    const child = runNode('test/support/unhandledRejectionMain.ts', {});
    const still = await child.waitForLog((line) => line.msg === 'still running', 'the line after the rejection');
    const { code } = await child.exited;
    expect(code).toBe(0);
    const rejection = child.logs.find((line) => /unhandled promise rejection/.test(String(line.msg)));
    expect(rejection).toMatchObject({ level: 50, err: { message: 'an abandoned sibling field failed late' } });
    expect(child.logs.indexOf(rejection!)).toBeLessThan(child.logs.indexOf(still));
    expect(still.metric).toMatch(/^process_unhandled_rejections_total 1$/m);
  });
});
