import {
  DEFAULT_PATH_PREFIX,
  PATH_PREFIX,
  type ParsedSiteSettings,
  type SiteSettings,
} from "../schema/settings.ts";

/**
 * Where a site's `rendered/` sits, as the CLI's edge asked Git (decision 0055): its path from the top
 * of the work tree that holds it, or why that is not known.
 */
export type RenderedPlace =
  | {
      readonly kind: "work-tree";
      /**
       * POSIX, relative to the work tree's top (`sites/a/rendered`), `""` for the top itself. Never
       * absolute: the wiring must not depend on where the clone is.
       */
      readonly path: string;
    }
  | {
      readonly kind: "unknown";
      /** Why, as a clause: `/tmp/out is not inside a Git work tree`. */
      readonly reason: string;
    };

/** Settings with the wiring's path prefix resolved. */
export interface ResolvedSettings {
  readonly settings: SiteSettings;
  /** Set when the prefix is the default for want of a better one: why, and how to settle it. */
  readonly note?: string;
}

/**
 * `gitops.pathPrefix`, where the Argo CD and Flux wiring look for the cluster directories (decision
 * 0055): the setting when `metalsynth.yaml` has one; else `clusters` below `rendered/`'s path in
 * its Git work tree (`sites/a/rendered/clusters`); else the default `rendered/clusters`, with a
 * note, since a wrong path is otherwise silent until the agents find no cluster directory. `place`
 * is read only when the settings have no prefix, so the edge asks Git only then.
 */
export function resolvePathPrefix(
  settings: ParsedSiteSettings,
  place: RenderedPlace | undefined,
): ResolvedSettings {
  const set = settings.gitops.pathPrefix;
  if (set !== undefined) return { settings: withPathPrefix(settings, set) };
  if (place === undefined)
    throw new Error("resolvePathPrefix: the settings set no path prefix, and no place was given");
  const fallback = (why: string): ResolvedSettings => ({
    settings: withPathPrefix(settings, DEFAULT_PATH_PREFIX),
    note:
      `${why}, so the Argo CD and Flux wiring look for the cluster directories in ` +
      `${DEFAULT_PATH_PREFIX}/ at the root of the repository; if they are elsewhere in the ` +
      `repository the agents read, set gitops.pathPrefix in metalsynth.yaml`,
  });
  if (place.kind === "unknown") return fallback(place.reason);
  const derived = place.path === "" ? "clusters" : `${place.path}/clusters`;
  // Git allows names the setting refuses (spaces, `:`): such a path is told, not rendered.
  if (!PATH_PREFIX.test(derived))
    return fallback(
      `${JSON.stringify(derived)}, where the cluster directories are in the Git work tree, is not a ` +
        `path gitops.pathPrefix accepts (names of letters, digits, '.', '_' and '-')`,
    );
  return { settings: withPathPrefix(settings, derived) };
}

function withPathPrefix(settings: ParsedSiteSettings, pathPrefix: string): SiteSettings {
  return { ...settings, gitops: { ...settings.gitops, pathPrefix } };
}
