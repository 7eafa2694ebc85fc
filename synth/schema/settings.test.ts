import { describe, expect, it } from "vitest";
import { parseDocuments } from "../codec/read-documents.ts";
import { readSettings } from "../site/settings.ts";
import { DEFAULT_SETTINGS, SiteSettingsSchema } from "./settings.ts";

const HEADER = { apiVersion: "metalsynth.io/v1alpha1", kind: "SiteSettings" };

function accepts(settings: Record<string, unknown>): boolean {
  return SiteSettingsSchema.safeParse({ ...HEADER, ...settings }).success;
}

describe("site settings: values that go verbatim into Jobs, the ApplicationSet and Flux objects", () => {
  it("accepts the defaults and what Kubernetes, Argo CD and Flux accept", () => {
    expect(DEFAULT_SETTINGS.images.haproxy).toBe("haproxy:2.3.2");
    for (const image of [
      "haproxy",
      "quay.io/airshipit/jump-host:latest",
      "registry.local:5000/team/kud:v1",
      "localhost/kud",
      `ghcr.io/a/b@sha256:${"0".repeat(64)}`,
    ])
      expect(accepts({ images: { kudInstaller: image } }), image).toBe(true);
    for (const repoURL of [
      "https://git.example.com/site.git",
      "ssh://git@host:22/site",
      "git@host:org/site.git",
    ])
      expect(accepts({ gitops: { argocd: { repoURL } } }), repoURL).toBe(true);
    expect(
      accepts({
        sshKeySecret: "kud-ssh.key",
        gitops: {
          argocd: { project: "edge", revision: "release/1.2", namespace: "argo" },
          flux: { interval: "1h30m", dependsOn: [{ name: "site-inventory", namespace: "flux-system" }] },
        },
        git: { authorName: "Site Bot", authorEmail: "bot@example.com" },
        inventory: {
          namespaces: ["metal3"],
          selector: "site=edge-a,tier in (gold)",
          fileLabel: "vino.airshipit.org/rack",
          labelledNetworkData: true,
        },
      }),
    ).toBe(true);
    expect(DEFAULT_SETTINGS.inventory).toEqual({ labelledNetworkData: false });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ["an image with a space", { images: { kubectl: "bitnami/kubectl:1.27 --x" } }, "images.kubectl"],
    ["an image with upper case", { images: { haproxy: "HAProxy:2" } }, "images.haproxy"],
    ["a Secret name with _", { sshKeySecret: "ssh_key" }, "sshKeySecret"],
    ["a project with a space", { gitops: { argocd: { project: "edge site" } } }, "gitops.argocd.project"],
    [
      "a repoURL without a scheme",
      { gitops: { argocd: { repoURL: "example.com/site" } } },
      "gitops.argocd.repoURL",
    ],
    ["a revision with ..", { gitops: { argocd: { revision: "a..b" } } }, "gitops.argocd.revision"],
    [
      "a destination that is no URL",
      { gitops: { argocd: { destinationServer: "kubernetes" } } },
      "gitops.argocd.destinationServer",
    ],
    ["a namespace with a dot", { gitops: { argocd: { namespace: "argo.cd" } } }, "gitops.argocd.namespace"],
    [
      "a sourceRef name with upper case",
      { gitops: { flux: { sourceRef: { name: "Site" } } } },
      "gitops.flux.sourceRef.name",
    ],
    [
      "a Flux namespace over 63 characters",
      { gitops: { flux: { namespace: "n".repeat(64) } } },
      "gitops.flux.namespace",
    ],
    ["an interval in words", { gitops: { flux: { interval: "ten minutes" } } }, "gitops.flux.interval"],
    [
      "a dependsOn name with _",
      { gitops: { flux: { dependsOn: [{ name: "site_inventory" }] } } },
      "gitops.flux.dependsOn[0].name",
    ],
    ["an author e-mail with <", { git: { authorEmail: "a <b@c>" } }, "git.authorEmail"],
    [
      "an inventory namespace with a dot",
      { inventory: { namespaces: ["metal.3"] } },
      "inventory.namespaces[0]",
    ],
    ["a file label that is no label key", { inventory: { fileLabel: "rack label" } }, "inventory.fileLabel"],
  ])("refuses %s, at its line", (_name, settings, path) => {
    const text = JSON.stringify({ ...HEADER, ...settings }, null, 2);
    const { issues } = readSettings(parseDocuments("metalsynth.yaml", text).documents);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ rule: "schema", path, source: { file: "metalsynth.yaml" } });
    expect(issues[0]?.source?.line).toBeGreaterThan(1);
    expect(issues[0]?.message).toMatch(/^".*" is not /);
  });
});
