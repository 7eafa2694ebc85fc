import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS, SiteSettingsSchema, type SiteSettingsSpec } from "../synth/schema/settings.ts";
import { resolvePathPrefix } from "../synth/site/path-prefix.ts";
import { ArgoApplicationSetChart, FluxKustomizationChart } from "./gitops-wiring.ts";
import { synthObjects, testApp, validateKubernetesObject } from "../test/support/charts.ts";
import { dnsLabel } from "../test/builders/inventory.ts";

/** Settings of a site whose `rendered/` is at the root of its repository. */
function siteSettings(gitops: SiteSettingsSpec["gitops"] = {}) {
  const parsed = SiteSettingsSchema.parse({
    apiVersion: "metalsynth.io/v1alpha1",
    kind: "SiteSettings",
    gitops,
  });
  return resolvePathPrefix(parsed, { kind: "work-tree", path: "rendered" }).settings;
}

describe("ArgoApplicationSetChart", () => {
  it("generates one Application per cluster directory from the site's settings", () => {
    const settings = siteSettings({
      pathPrefix: "sites/edge-a/rendered/clusters",
      argocd: { project: "edge", repoURL: "https://git.example.com/site.git", revision: "main" },
    });
    const [applicationSet, ...rest] = synthObjects(
      new ArgoApplicationSetChart(testApp(), "argocd", { settings }),
    );
    expect(rest).toEqual([]);
    validateKubernetesObject(applicationSet!);
    expect(applicationSet).toEqual({
      apiVersion: "argoproj.io/v1alpha1",
      kind: "ApplicationSet",
      metadata: {
        labels: { "app.kubernetes.io/managed-by": "metalsynth" },
        name: "metalsynth-clusters",
        namespace: "argocd",
      },
      spec: {
        generators: [
          {
            git: {
              directories: [{ path: "sites/edge-a/rendered/clusters/*/*" }],
              repoURL: "https://git.example.com/site.git",
              revision: "main",
            },
          },
        ],
        goTemplate: true,
        goTemplateOptions: ["missingkey=error"],
        syncPolicy: { preserveResourcesOnDeletion: false },
        template: {
          metadata: {
            finalizers: ["resources-finalizer.argocd.argoproj.io"],
            labels: {
              "app.kubernetes.io/managed-by": "metalsynth",
              "metalsynth.io/cluster": "{{ .path.basename }}",
            },
            // clusterDirectoryName over the namespace (the segment after the four of the prefix) and
            // the cluster; decision 0033 says how it was checked against Go's text/template and sprig.
            name: [
              "{{- $ns := index .path.segments 4 -}}",
              '{{- $name := printf "%s%s%s" $ns (ternary "." "-" (contains "-" $ns)) .path.basename -}}',
              "{{- if lt (len $name) 63 }}{{ $name }}{{ else -}}",
              '{{ regexReplaceAll "[.]$" (trunc 54 $name) "-" }}-{{ trunc 8 (sha256sum $name) }}{{ end -}}',
            ].join(""),
          },
          spec: {
            destination: {
              namespace: "{{ index .path.segments 4 }}",
              server: "https://kubernetes.default.svc",
            },
            project: "edge",
            source: {
              path: "{{ .path.path }}",
              repoURL: "https://git.example.com/site.git",
              targetRevision: "main",
            },
            syncPolicy: {
              automated: { prune: true, selfHeal: true },
              syncOptions: ["ApplyOutOfSyncOnly=true"],
            },
          },
        },
      },
    });
  });
});

describe("FluxKustomizationChart", () => {
  it("syncs one cluster directory with pruning, from the configured source", () => {
    const objects = synthObjects(
      new FluxKustomizationChart(testApp(), "flux", {
        settings: DEFAULT_SETTINGS,
        namespace: dnsLabel("edge-a"),
        cluster: dnsLabel("cluster-east"),
      }),
    );
    expect(objects).toEqual([
      {
        apiVersion: "kustomize.toolkit.fluxcd.io/v1",
        kind: "Kustomization",
        metadata: {
          labels: { "app.kubernetes.io/managed-by": "metalsynth", "metalsynth.io/cluster": "cluster-east" },
          name: "edge-a.cluster-east",
          namespace: "flux-system",
        },
        spec: {
          interval: "10m",
          path: "./rendered/clusters/edge-a/cluster-east",
          prune: true,
          sourceRef: { kind: "GitRepository", name: "site", namespace: "flux-system" },
        },
      },
    ]);
    objects.forEach(validateKubernetesObject);
  });

  it("waits for the Kustomizations the site names in dependsOn", () => {
    const settings = siteSettings({
      flux: { dependsOn: [{ name: "site-inventory" }, { name: "keys", namespace: "ops" }] },
    });
    const [kustomization] = synthObjects(
      new FluxKustomizationChart(testApp(), "flux", {
        settings,
        namespace: dnsLabel("edge-a"),
        cluster: dnsLabel("cluster-east"),
      }),
    );
    validateKubernetesObject(kustomization!);
    expect(kustomization?.["spec"]).toMatchObject({
      dependsOn: [{ name: "site-inventory" }, { name: "keys", namespace: "ops" }],
    });
  });
});

describe("site settings", () => {
  it("refuses a path prefix that is absolute or climbs out of the repository", () => {
    for (const pathPrefix of ["/rendered/clusters", "../rendered", "rendered//clusters"]) {
      expect(
        SiteSettingsSchema.safeParse({
          apiVersion: "metalsynth.io/v1alpha1",
          kind: "SiteSettings",
          gitops: { pathPrefix },
        }).success,
        pathPrefix,
      ).toBe(false);
    }
  });
});
