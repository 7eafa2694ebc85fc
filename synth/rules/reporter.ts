import { formatPath } from "../field-path.ts";
import { issue } from "../issue.ts";
import type { Reporter, Resource } from "../model/resource.ts";

/**
 * Builds issues about a resource: resolves the field path to a line and column and tags the issue
 * with the object it is about.
 */
export function reporter(
  resource: Pick<Resource, "document" | "basePath" | "key">,
  cluster?: string,
): Reporter {
  const { basePath } = resource;
  return (rule, path, message) =>
    issue(rule, formatPath(path), message, {
      // The path as given when the CR is a document of its own: the document remembers the position
      // of each path it was asked about, and a review asks about the same paths again (decision 0042).
      source: resource.document.position(basePath.length === 0 ? path : [...basePath, ...path]),
      object: resource.key,
      ...(cluster === undefined ? {} : { cluster }),
    });
}
