import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { main, type Console } from "../../bin/cli.ts";
import { customResourceDefinitions } from "../../synth/schema/crds.ts";
import { REPO } from "../harness.ts";
import { DEPLOY_FILE, deployYaml } from "./deploy-file.ts";

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: Console = { out: (text) => void (out += text), err: (text) => void (err += text) };
  return { code: await main(argv, io), out, err };
}

describe("deploy/metalsynth.yaml", () => {
  it("is up to date (run `npm run manifests`)", () => {
    expect(readFileSync(`${REPO}/${DEPLOY_FILE}`, "utf8")).toBe(deployYaml());
  });

  it("is what `metalsynth manifests` prints, CRDs identical to deploy/crds.yaml's", async () => {
    const result = await run("manifests");
    expect(result).toMatchObject({ code: 0, err: "" });
    expect(result.out).toBe(deployYaml());
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

  it.each([
    [["manifests", "--namespace", "Bad_Name"], /--namespace must be a DNS-1123 label/],
    [["manifests", "--image", "has space"], /--image must be an image reference/],
    [["webhook", "--tls-cert", "a", "--tls-key", "b"], /either --inventory PATH… or --from-cluster/],
    [["webhook", "--from-cluster", "--inventory", "x", "--tls-cert", "a", "--tls-key", "b"], /either/],
    [["webhook", "--from-cluster"], /needs --tls-cert FILE and --tls-key FILE/],
    [
      ["webhook", "--inventory", "/nonexistent", "--tls-cert", "a", "--tls-key", "b"],
      /\/nonexistent: no such file/,
    ],
  ])("refuses %j with a usage error", async (argv, message) => {
    const result = await run(...argv);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
  });
});
