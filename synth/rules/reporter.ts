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
  return (rule, path, message) =>
    issue(rule, formatPath(path), message, {
      source: resource.document.position([...resource.basePath, ...path]),
      object: resource.key,
      ...(cluster === undefined ? {} : { cluster }),
    });
}
