/** A path into a parsed object, as the YAML parser addresses nodes: keys and list indexes. */
export type FieldPath = readonly (string | number)[];

/**
 * Formats a path the way users read it in messages: `spec.masters[0].master-1.mac-address`.
 * Keys that would be ambiguous in dotted form (dots, brackets, spaces) are quoted.
 */
export function formatPath(path: FieldPath): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else if (/^[A-Za-z0-9_/-]+$/.test(segment)) text += text === "" ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}
