import { describe, expect, it } from "vitest";
import { SiteSettingsSchema, type SiteSettingsSpec } from "../schema/settings.ts";
import { resolvePathPrefix, type RenderedPlace } from "./path-prefix.ts";

function parsed(gitops: SiteSettingsSpec["gitops"] = {}) {
  return SiteSettingsSchema.parse({ apiVersion: "metalsynth.io/v1alpha1", kind: "SiteSettings", gitops });
}

const inWorkTree = (path: string): RenderedPlace => ({ kind: "work-tree", path });

describe("resolvePathPrefix: where the wiring looks for the cluster directories (decision 0055)", () => {
  it.each<[string, RenderedPlace, string]>([
    ["rendered/ at the root of the repository", inWorkTree("rendered"), "rendered/clusters"],
    ["a site in a subdirectory", inWorkTree("sites/a/rendered"), "sites/a/rendered/clusters"],
    ["--out elsewhere in the repository", inWorkTree("out/edge-a"), "out/edge-a/clusters"],
    ["--out the top of the work tree itself", inWorkTree(""), "clusters"],
  ])("follows %s", (_, place, pathPrefix) => {
    const resolved = resolvePathPrefix(parsed(), place);
    expect(resolved).toEqual({ settings: expect.anything() });
    expect(resolved.settings.gitops.pathPrefix).toBe(pathPrefix);
  });

  it("keeps a prefix the settings give, wherever rendered/ is, and asks nothing else", () => {
    const settings = parsed({ pathPrefix: "rendered/clusters", targets: ["flux"] });
    for (const place of [
      inWorkTree("sites/a/rendered"),
      { kind: "unknown", reason: "x" } as const,
      undefined,
    ])
      expect(resolvePathPrefix(settings, place)).toEqual({
        settings: { ...settings, gitops: { ...settings.gitops, pathPrefix: "rendered/clusters" } },
      });
  });

  it.each<[string, RenderedPlace, RegExp]>([
    [
      "outside any Git work tree",
      { kind: "unknown", reason: "/tmp/x/rendered is not inside a Git work tree" },
      /^\/tmp\/x\/rendered is not inside a Git work tree, so the Argo CD and Flux wiring look for the cluster directories in rendered\/clusters\/ at the root of the repository; .*set gitops\.pathPrefix in metalsynth\.yaml$/,
    ],
    [
      "at a path the setting's grammar refuses",
      inWorkTree("my sites/a/rendered"),
      /^"my sites\/a\/rendered\/clusters", where the cluster directories are in the Git work tree, is not a path gitops\.pathPrefix accepts .*, so the Argo CD and Flux wiring look for the cluster directories in rendered\/clusters\//,
    ],
  ])("falls back to rendered/clusters with a note when rendered/ is %s", (_, place, note) => {
    const resolved = resolvePathPrefix(parsed(), place);
    expect(resolved.settings.gitops.pathPrefix).toBe("rendered/clusters");
    expect(resolved.note).toMatch(note);
  });

  it("is told the place when the settings have no prefix: leaving it out is a bug", () => {
    expect(() => resolvePathPrefix(parsed(), undefined)).toThrow(/no place was given/);
  });
});
