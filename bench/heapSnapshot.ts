/**
 * Reading a V8 heap snapshot (the `.heapsnapshot` JSON) for `npm run bench:memory`: objects
 * counted by constructor, the objects allocated since an earlier snapshot of the same process
 * and still alive (ids only grow within a process, as DevTools' "objects allocated between
 * snapshots"), and the shortest path from the GC roots to a few of them (what keeps them).
 */

interface RawSnapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface Group {
  count: number;
  bytes: number;
}

export interface HeapSnapshot {
  /** Nodes (objects) in the snapshot. */
  nodes: number;
  /** Sum of every node's own size. */
  bytes: number;
  /** The highest object id: a later snapshot's objects above it were allocated after this one. */
  maxId: number;
  /** Objects by group (groupOf), over the whole heap. */
  groups: Map<string, Group>;
  /** Objects with an id above `id`, by group. */
  newerThan(id: number): Map<string, Group>;
  /** The shortest strong path from the GC roots to an object of `group` with an id above `id`, as text. */
  pathTo(group: string, id: number, samples: number): string[];
}

/** Groups as DevTools' summary does: objects by constructor, closures by name, strings and arrays together. */
function groupOf(type: string, name: string): string {
  switch (type) {
    case 'object':
    case 'native':
      return name;
    case 'closure':
      return `(closure) ${name || 'anonymous'}`;
    case 'string':
    case 'concatenated string':
    case 'sliced string':
      return '(string)';
    case 'array':
    case 'hidden':
      return `(${type}) ${name.slice(0, 60)}`;
    default:
      return `(${type})`;
  }
}

export function readHeapSnapshot(text: string): HeapSnapshot {
  const raw = JSON.parse(text) as RawSnapshot;
  const { node_fields, node_types, edge_fields, edge_types } = raw.snapshot.meta;
  const nodeWidth = node_fields.length;
  const edgeWidth = edge_fields.length;
  const [typeAt, nameAt, idAt, sizeAt, edgeCountAt] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((field) =>
    node_fields.indexOf(field),
  ) as [number, number, number, number, number];
  const [edgeTypeAt, edgeNameAt, edgeToAt] = ['type', 'name_or_index', 'to_node'].map((field) =>
    edge_fields.indexOf(field),
  ) as [number, number, number];
  const nodeTypes = node_types[0];
  const edgeTypes = edge_types[0];
  const { nodes, edges, strings } = raw;
  const count = nodes.length / nodeWidth;
  const groupAt = (n: number): string =>
    groupOf(
      nodeTypes[nodes[n * nodeWidth + typeAt] as number] ?? '?',
      strings[nodes[n * nodeWidth + nameAt] as number] ?? '',
    );
  const idOf = (n: number): number => nodes[n * nodeWidth + idAt] as number;
  const sizeOf = (n: number): number => nodes[n * nodeWidth + sizeAt] as number;
  const firstEdge = new Uint32Array(count + 1);
  for (let n = 0; n < count; n++)
    firstEdge[n + 1] = (firstEdge[n] as number) + (nodes[n * nodeWidth + edgeCountAt] as number);

  const summarize = (keep: (n: number) => boolean): Map<string, Group> => {
    const groups = new Map<string, Group>();
    for (let n = 0; n < count; n++) {
      if (!keep(n)) continue;
      const key = groupAt(n);
      const group = groups.get(key) ?? { count: 0, bytes: 0 };
      group.count += 1;
      group.bytes += sizeOf(n);
      groups.set(key, group);
    }
    return groups;
  };

  let maxId = 0;
  let bytes = 0;
  for (let n = 0; n < count; n++) {
    maxId = Math.max(maxId, idOf(n));
    bytes += sizeOf(n);
  }

  /** Parents on the shortest strong path from the root (node 0), by breadth-first search. */
  let parents: Int32Array | undefined;
  const parentEdges = new Int32Array(count).fill(-1);
  const shortestPaths = (): Int32Array => {
    if (parents) return parents;
    parents = new Int32Array(count).fill(-1);
    parents[0] = 0;
    const queue = new Uint32Array(count);
    let head = 0;
    let tail = 0;
    queue[tail++] = 0;
    while (head < tail) {
      const n = queue[head++] as number;
      for (let e = firstEdge[n] as number; e < (firstEdge[n + 1] as number); e++) {
        if (edgeTypes[edges[e * edgeWidth + edgeTypeAt] as number] === 'weak') continue;
        const to = (edges[e * edgeWidth + edgeToAt] as number) / nodeWidth;
        if (parents[to] !== -1) continue;
        parents[to] = n;
        parentEdges[to] = e;
        queue[tail++] = to;
      }
    }
    return parents;
  };
  const edgeName = (e: number): string => {
    const type = edgeTypes[edges[e * edgeWidth + edgeTypeAt] as number];
    const name = edges[e * edgeWidth + edgeNameAt] as number;
    return type === 'element' || type === 'hidden' ? `[${name}]` : (strings[name] ?? '?').slice(0, 40);
  };

  return {
    nodes: count,
    bytes,
    maxId,
    groups: summarize(() => true),
    newerThan: (id) => summarize((n) => idOf(n) > id),
    pathTo(group, id, samples) {
      const from = shortestPaths();
      const lines: string[] = [];
      for (let n = count - 1; n > 0 && lines.length < samples; n--) {
        if (idOf(n) <= id || groupAt(n) !== group || from[n] === -1) continue;
        const steps: string[] = [];
        for (let at = n; at !== 0 && steps.length < 40; at = from[at] as number) {
          steps.unshift(`.${edgeName(parentEdges[at] as number)} (${groupAt(at)})`);
        }
        lines.push(`(root)${steps.join('')}`);
      }
      return lines;
    },
  };
}

/** The `limit` largest groups of `groups` by bytes, as table rows. */
export function largestGroups(groups: Map<string, Group>, limit: number): [string, Group][] {
  return [...groups].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, limit);
}
