/**
 * Loaded into a system under test by `npm run bench:timeline` (`node --import`): the timeline of
 * each request it serves, from Node's own HTTP diagnostics channels, so that the server and the
 * raw chain are timed by the same code without a line of theirs changed. Meant for one request at
 * a time: a DynamoDB call belongs to the request being served when it is made.
 *
 * Per request (ms from the request's headers being parsed): the body's end, each outgoing call's
 * creation (its DynamoDB command from `x-amz-target`), its response's headers and its body's end,
 * and the answer's finish. Written as JSON lines to TIMELINE_OUT when the process exits. Plain
 * TypeScript that Node runs as it is (types stripped), in the bundled systems too.
 */
import dc from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import type { ClientRequest, IncomingMessage } from 'node:http';

interface Call {
  command: string;
  issued: number;
  headers: number | undefined;
  answered: number | undefined;
}
interface Timeline {
  started: number;
  body: number | undefined;
  calls: Call[];
  finished: number | undefined;
}

const out = process.env.TIMELINE_OUT;
const timelines: Timeline[] = [];
let current: Timeline | undefined;

dc.subscribe('http.server.request.start', (message) => {
  const { request } = message as { request: IncomingMessage };
  const started = performance.now();
  const timeline: Timeline = { started, body: undefined, calls: [], finished: undefined };
  current = timeline;
  request.once('end', () => {
    timeline.body = performance.now() - started;
  });
});

dc.subscribe('http.client.request.created', (message) => {
  const { request } = message as { request: ClientRequest };
  const timeline = current;
  if (!timeline || timeline.finished !== undefined) return;
  const target = request.getHeader('x-amz-target');
  const call: Call = {
    command: typeof target === 'string' ? target.replace(/^.*\./, '') : request.path,
    issued: performance.now() - timeline.started,
    headers: undefined,
    answered: undefined,
  };
  timeline.calls.push(call);
  request.once('response', (response: IncomingMessage) => {
    call.headers = performance.now() - timeline.started;
    response.once('end', () => {
      call.answered = performance.now() - timeline.started;
    });
  });
});

dc.subscribe('http.server.response.finish', () => {
  const timeline = current;
  if (!timeline) return;
  timeline.finished = performance.now() - timeline.started;
  timelines.push(timeline);
  current = undefined;
});

process.once('exit', () => {
  if (out) writeFileSync(out, timelines.map((timeline) => JSON.stringify(timeline)).join('\n'));
});
