import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { customResourceDefinitions } from "../../synth/schema/crds.ts";
import { REPO } from "../harness.ts";
import { run } from "../run-cli.ts";
import { helmChartFiles, HELM_CHART_DIR } from "../../charts/webhook/helm.ts";
import { PACKAGE_VERSION, webhookManifestsYaml } from "../../charts/webhook/index.ts";
import { DEPLOY_FILE } from "../../scripts/deploy-files.ts";

describe("deploy/metalsynth.yaml", () => {
  it("is up to date (run `npm run manifests`)", () => {
    expect(readFileSync(`${REPO}/${DEPLOY_FILE}`, "utf8")).toBe(webhookManifestsYaml());
  });

  it("has a Helm chart beside it, up to date and nothing else in its directory (run `npm run manifests`)", () => {
    const wanted = helmChartFiles(PACKAGE_VERSION, readFileSync(path.join(REPO, "LICENSE"), "utf8"));
    const directory = path.join(REPO, HELM_CHART_DIR);
    const committed = readdirSync(directory, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(directory, path.join(entry.parentPath, entry.name)));
    expect(committed.sort()).toEqual([...wanted.keys()].sort());
    for (const [file, content] of wanted) {
      expect(readFileSync(path.join(directory, file), "utf8"), file).toBe(content);
    }
  });

  it("is what `metalsynth manifests` prints, CRDs identical to deploy/crds.yaml's", async () => {
    const result = await run("manifests");
    expect(result).toMatchObject({ code: 0, err: "" });
    expect(result.out).toBe(webhookManifestsYaml());
    const documents = parseAllDocuments(result.out).map((document) => document.toJS() as { kind: string });
    expect(documents.filter((document) => document.kind === "CustomResourceDefinition")).toEqual(
      customResourceDefinitions().map((crd) => ({
        ...crd,
        metadata: {
          ...(crd.metadata as object),
          labels: { "app.kubernetes.io/managed-by": "metalsynth", "app.kubernetes.io/part-of": "metalsynth" },
        },
      })),
    );
  });

  it("prints the manifests for --namespace and --image", async () => {
    const options = { namespace: "bare-metal", image: "registry.example/metalsynth:1.2.3" };
    const result = await run("manifests", "--namespace", options.namespace, "--image", options.image);
    expect(result).toMatchObject({ code: 0, err: "" });
    expect(result.out).toBe(webhookManifestsYaml(options));
    expect(result.out).not.toBe(webhookManifestsYaml());
  });

  it("grants and reads Secrets in each --inventory-namespace only", async () => {
    const result = await run(
      "manifests",
      "--inventory-namespace",
      "site-a",
      "--inventory-namespace",
      "site-b",
    );
    expect(result).toMatchObject({ code: 0, err: "" });
    expect(result.out).toBe(webhookManifestsYaml({ inventoryNamespaces: ["site-a", "site-b"] }));
    const documents = parseAllDocuments(result.out).map(
      (document) => document.toJS() as { kind: string; metadata: { namespace?: string } },
    );
    // One Role for Secrets in each, and the webhook's own for its admissions ConfigMap (decision 0056).
    expect(
      documents.filter((document) => document.kind === "Role").map((role) => role.metadata.namespace),
    ).toEqual(["site-a", "site-b", "metalsynth-system"]);
    expect(result.out).toContain(
      "- --secrets-namespace\n            - site-a\n            - --secrets-namespace\n            - site-b\n",
    );
  });

  it.each([
    [["manifests", "--namespace", "Bad_Name"], /--namespace must be a DNS-1123 label/],
    [["manifests", "--inventory-namespace", "Bad_Name"], /--inventory-namespace must be a DNS-1123 label/],
    [["manifests", "--allocation-namespace", "Bad_Name"], /--allocation-namespace must be a DNS-1123 label/],
    [["manifests", "--hosts", "many"], /--hosts must be a whole number, not "many"/],
    [
      [
        "webhook",
        "--inventory",
        "x",
        "--allocation-namespace",
        "edge-a",
        "--tls-cert",
        "a",
        "--tls-key",
        "b",
      ],
      /--allocation-namespace, --allocation-manager and --namespace go with --from-cluster/,
    ],
    [
      ["webhook", "--from-cluster", "--review-budget", "forever", "--tls-cert", "a", "--tls-key", "b"],
      /--review-budget must be seconds from 0.05 to 25, not "forever"/,
    ],
    [
      ["webhook", "--from-cluster", "--review-workers", "0", "--tls-cert", "a", "--tls-key", "b"],
      /--review-workers must be a number from 1 to 64, not "0"/,
    ],
    [
      ["webhook", "--inventory", "x", "--secrets-namespace", "metal3", "--tls-cert", "a", "--tls-key", "b"],
      /--secrets-namespace goes with --from-cluster/,
    ],
    [
      ["webhook", "--from-cluster", "--secrets-namespace", "Not/A/Name", "--tls-cert", "a", "--tls-key", "b"],
      /--secrets-namespace must be a namespace name, not "Not\/A\/Name"/,
    ],
    [["manifests", "--image", "has space"], /--image must be an image reference/],
    [["webhook", "--tls-cert", "a", "--tls-key", "b"], /either --inventory PATH… or --from-cluster/],
    [["webhook", "--from-cluster", "--inventory", "x", "--tls-cert", "a", "--tls-key", "b"], /either/],
    [["webhook", "--from-cluster"], /needs --tls-cert FILE and --tls-key FILE/],
    [
      ["webhook", "--inventory", "/nonexistent", "--tls-cert", "a", "--tls-key", "b"],
      /\/nonexistent: no such file/,
    ],
    // `--inventory PATH…`: the second word is a path too (a shell-expanded glob), not a stray argument.
    [
      [
        "webhook",
        "--inventory",
        "examples/site/inventory",
        "/nonexistent",
        "--tls-cert",
        "a",
        "--tls-key",
        "b",
      ],
      /\/nonexistent: no such file/,
    ],
    [
      ["webhook", "stray", "--from-cluster", "--tls-cert", "a", "--tls-key", "b"],
      /unexpected argument "stray"/,
    ],
  ])("refuses %j with a usage error", async (argv, message) => {
    const result = await run(...argv);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
  });
});
