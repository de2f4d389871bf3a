/**
 * Relay global ids: base64url("<Type>:<key>"), e.g. "VXNlcjphbGljZQ" for User alice. Opaque
 * to clients; decoding checks the type and the raw id before any key is built.
 */
import { BadUserInputError } from '../errors.js';
import { NODE_KINDS, nodeIdOf } from '../table/entities/nodes.js';
import type { NodeKind } from '../table/entities/nodes.js';
import { ID_PATTERN } from '../table/keys.js';
import type { NodeModel } from '../table/models.js';

export type NodeType = NodeKind;
const NODE_TYPES: ReadonlySet<string> = new Set(NODE_KINDS);
/** Longer than any id this server issues; bounds decoding work on hostile input. */
const MAX_GLOBAL_ID_LENGTH = 128;

export const toGlobalId = (type: NodeType, id: string): string => Buffer.from(`${type}:${id}`).toString('base64url');

/** The global id of any node: its kind and the raw id its declaration names (src/table/entities/nodes.ts). */
export const globalIdOf = (node: NodeModel): string => toGlobalId(node.kind, nodeIdOf(node));

/** Decodes a global id; throws BAD_USER_INPUT (naming `argumentName`) if this server could not have issued it. */
export function fromGlobalId(globalId: string, argumentName = 'id'): { type: NodeType; id: string } {
  const refuse = (): never => {
    throw new BadUserInputError(
      `${argumentName} is not a valid global id: pass an id returned by this API`,
      argumentName,
    );
  };
  if (globalId.length > MAX_GLOBAL_ID_LENGTH || !/^[A-Za-z0-9_-]+$/.test(globalId)) return refuse();
  const decoded = Buffer.from(globalId, 'base64url').toString('utf8');
  const separator = decoded.indexOf(':');
  const type = decoded.slice(0, separator) as NodeType;
  const id = decoded.slice(separator + 1);
  if (separator < 0 || !NODE_TYPES.has(type) || !ID_PATTERN.test(id)) return refuse();
  // Reject non-canonical encodings so that one node has exactly one id.
  if (toGlobalId(type, id) !== globalId) return refuse();
  return { type, id };
}
