/**
 * Metric labels never come from a client verbatim: an operation is labelled with its name only
 * when that name belongs to a document of the persisted-documents manifest (the operations the
 * project's own clients send), capped in length; every other request counts as `other`. The
 * number of series is then bounded by the manifest, whatever clients send.
 */
import { Kind, parse } from 'graphql';

export const OTHER_OPERATION = 'other';
export const MAX_LABEL_LENGTH = 64;

/** The operation names of the manifest's documents (documents that do not parse are skipped). */
export function manifestOperationNames(documents: Iterable<string>): Set<string> {
  const names = new Set<string>();
  for (const source of documents) {
    try {
      for (const definition of parse(source).definitions) {
        if (definition.kind === Kind.OPERATION_DEFINITION && definition.name) names.add(definition.name.value);
      }
    } catch {
      // A broken manifest entry labels nothing.
    }
  }
  return names;
}

/** Pure: the label for `operationName`, given the names the manifest knows. */
export function operationLabel(operationName: string | null | undefined, known: ReadonlySet<string>): string {
  if (!operationName || !known.has(operationName)) return OTHER_OPERATION;
  return operationName.slice(0, MAX_LABEL_LENGTH);
}
