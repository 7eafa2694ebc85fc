/**
 * Issue #39's provider run by a real kubelet (decisions 0058, 0060): two SIPClusters' rendered `auth`
 * objects, applied unchanged by Flux's apply, and Dex started by the kubelet from the `dex` stand-in
 * image (the binary `test/e2e/setup.sh dex` builds, at the path the rendered command starts).
 *
 * - Both tenants' issuers are the node's address and a NodePort of their own, so both providers run
 *   at once, each in its pod. Tenant A's serving certificate is issued as cert-manager would for the
 *   rendered Certificate, by the CA in the Secret the rendered Issuer names (`caSecret`); tenant B's
 *   is the operator's (`tlsSecret`). The static users' password hashes and tenant A's GitHub
 *   connector secret are in Secrets the pod references by name: the kubelet resolves them.
 * - Each pod becomes Ready (the kubelet's probes of Dex's telemetry port), and through the Service's
 *   NodePort a password grant returns an ID token whose claims are what the rendered
 *   AuthenticationConfiguration maps.
 * - The issuer's host is the node, whose NodePorts answer its own processes too: a kube-apiserver
 *   started with tenant A's rendered `authentication-config.yaml` (the tenant's control plane, beside
 *   the hub) reads the keys of the pod's Dex, `kubectl auth whoami` shows the mapped user and groups,
 *   the rendered tenant RBAC grants what it binds, and tenant B's token is refused.
 *
 * No cert-manager runs here: its CRDs are the e2e suite's stand-ins, so the Issuer and Certificate
 * are stored as rendered, and the test writes the Secret the Certificate asks for. Only Flux's apply
 * is run: the objects have no hooks, and Argo CD's waves would only apply the SIPCluster before them.
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parse, stringify } from "yaml";
import { REPO } from "../../harness.ts";
import { jwtClaims, PASSWORD_HASH } from "../../support/dex.ts";
import { createTestCa, issueServerCertificate, type TestCa } from "../../webhook/tls-fixture.ts";
import { fluxApply } from "../support/agents.ts";
import { startControlPlane, type ControlPlane } from "../support/control-plane.ts";
import {
  ensureNamespaces,
  exec,
  installCrds,
  kubectlFor,
  must,
  type KubeObject,
  type Kubectl,
} from "../support/kube.ts";
import {
  accepted,
  authTenant,
  renderedObject,
  STATIC_USERS,
  staticUserToken,
  whoami,
} from "../support/tenant-identity.ts";
import { build, objectsOf } from "./support/site.ts";
import { waitForPort } from "./support/test-hosts.ts";
import { available, deleteNamespace, fluxInventory, planeOf, provideImages } from "./support/workloads.ts";

const info = inject("e2eNode");
const kubectl = kubectlFor(info.kubeconfig);
const NAMESPACE = "tenants";
/** The stand-ins of cert-manager's Issuer and Certificate CRDs (no controller runs). */
const CERT_MANAGER_CRDS = path.join(REPO, "test", "e2e", "fixtures", "operator-crds.yaml");

interface Tenant {
  readonly name: string;
  /** The issuer's port: below the ephemeral ports the e2e suite's servers are given. */
  readonly nodePort: number;
  readonly ca: TestCa;
  /** Its rendered cluster directory, as the agents read it. */
  readonly directory: string;
  /** The objects of its kustomize build. */
  objects: KubeObject[];
}

/** A Secret as an operator or cert-manager writes it. */
async function applySecret(name: string, type: string, data: Record<string, string>): Promise<void> {
  const secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: NAMESPACE },
    type,
    stringData: data,
  };
  await must(kubectl, ["apply", "-f", "-"], stringify(secret));
}

/** The JWT authenticator of a rendered AuthenticationConfiguration, as far as the test reads it. */
interface JwtAuthenticator {
  readonly issuer: { readonly url: string; readonly audiences: readonly string[] };
  readonly claimMappings: {
    readonly username: { readonly claim: string; readonly prefix: string };
    readonly groups: { readonly claim: string; readonly prefix: string };
  };
}

/** `data` of the rendered ConfigMap `name` of `t`. */
function configMapData(t: Tenant, name: string): Record<string, string> {
  return renderedObject(t.objects, "ConfigMap", name)["data"] as Record<string, string>;
}

describe("a SIPCluster's tenant identity, Dex run by the kubelet", () => {
  let site: string;
  let a: Tenant;
  let b: Tenant;
  let plane: ControlPlane | undefined;
  let tenantKubectl: Kubectl;
  /** Tenant A's rendered AuthenticationConfiguration: its one issuer. */
  let mapped: JwtAuthenticator;
  const tokens = new Map<string, string>();

  /** An ID token of `t`'s Dex for `email`, through the node's NodePort as kubelogin would ask. */
  const token = (t: Tenant, email: string) =>
    staticUserToken(`https://${info.address}:${t.nodePort}`, t.ca.cert, email);

  beforeAll(async () => {
    site = await mkdtemp(path.join(tmpdir(), "metalsynth-e2e-node-auth-"));
    const directory = (name: string) => path.join(site, "rendered", "clusters", NAMESPACE, name);
    a = {
      name: "tenant-a",
      nodePort: 30556,
      ca: await createTestCa(),
      directory: directory("tenant-a"),
      objects: [],
    };
    b = {
      name: "tenant-b",
      nodePort: 30557,
      ca: await createTestCa(),
      directory: directory("tenant-b"),
      objects: [],
    };
    await mkdir(path.join(site, "specs"));
    await mkdir(path.join(site, "inventory"));
    await writeFile(
      path.join(site, "specs", "tenants.yaml"),
      [
        authTenant(a.name, {
          clusterIP: info.address,
          nodePort: a.nodePort,
          caSecret: "tenant-a-auth-ca",
          certificateAuthority: a.ca.cert,
          connectors: [
            {
              type: "github",
              id: "github",
              name: "GitHub",
              config: { clientID: "metalsynth-tenant-a" },
              secretKeyRefs: { clientSecret: { name: "tenant-a-github", key: "client-secret" } },
            },
          ],
          staticUsers: STATIC_USERS,
          roleBindings: [{ group: "tenant-admins", clusterRole: "cluster-admin" }],
        }),
        authTenant(b.name, {
          clusterIP: info.address,
          nodePort: b.nodePort,
          tlsSecret: "tenant-b-auth-tls",
          certificateAuthority: b.ca.cert,
          staticUsers: STATIC_USERS,
        }),
      ]
        .map((object) => stringify(object))
        .join("---\n"),
    );
    // A site without hosts: the tenants ask for none.
    await writeFile(path.join(site, "inventory", "hosts.yaml"), "apiVersion: v1\nkind: List\nitems: []\n");
    const synth = await exec(process.execPath, [
      path.join(REPO, "bin", "metalsynth.js"),
      "synth",
      "--site",
      site,
    ]);
    expect(synth.code, synth.stderr).toBe(0);

    await installCrds(kubectl);
    await must(kubectl, ["apply", "--server-side", "-f", CERT_MANAGER_CRDS]);
    await must(kubectl, ["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"]);
    await deleteNamespace(kubectl, NAMESPACE);
    await ensureNamespaces(kubectl, [NAMESPACE]);
    for (const t of [a, b]) t.objects = objectsOf(await build(kubectl, t.directory));

    // What the operator stores: tenant A's CA (the rendered Issuer's `ca.secretName`), tenant B's
    // serving certificate, the users' password hashes and the GitHub connector's client secret.
    const issuer = renderedObject(a.objects, "Issuer", `auth-${a.name}`);
    expect((issuer["spec"] as Record<string, unknown>)["ca"]).toEqual({ secretName: "tenant-a-auth-ca" });
    await applySecret("tenant-a-auth-ca", "kubernetes.io/tls", {
      "tls.crt": a.ca.cert,
      "tls.key": await readFile(a.ca.keyFile, "utf8"),
    });
    const servingB = await issueServerCertificate(b.ca, "tenant-b-serving", [info.address]);
    await applySecret("tenant-b-auth-tls", "kubernetes.io/tls", {
      "tls.crt": servingB.cert,
      "tls.key": servingB.key,
    });
    await applySecret("tenant-users", "Opaque", { alice: PASSWORD_HASH, bob: PASSWORD_HASH });
    await applySecret("tenant-a-github", "Opaque", { "client-secret": randomBytes(20).toString("hex") });
    // cert-manager's part: the CA Issuer's Secret signs what the rendered Certificate asks for.
    const certificate = renderedObject(a.objects, "Certificate", `auth-${a.name}`)["spec"] as {
      secretName: string;
      ipAddresses: string[];
      issuerRef: { name: string };
    };
    expect(certificate.issuerRef.name).toBe(`auth-${a.name}`);
    const servingA = await issueServerCertificate(a.ca, "tenant-a-serving", certificate.ipAddresses);
    await applySecret(certificate.secretName, "kubernetes.io/tls", {
      "tls.crt": servingA.cert,
      "tls.key": servingA.key,
      "ca.crt": a.ca.cert,
    });

    for (const t of [a, b]) {
      provideImages(info, t.objects);
      await fluxApply(
        planeOf(info),
        `${NAMESPACE}-${t.name}`,
        await build(kubectl, t.directory),
        fluxInventory(site, t.name),
      );
    }
    for (const t of [a, b]) {
      await available(kubectl, NAMESPACE, `auth-${t.name}`);
      // Ready pods, then kube-proxy's next sync opens the NodePort: on a loaded node, seconds later.
      await waitForPort(info.address, t.nodePort, 60_000);
    }
    tokens.set("a:alice", await token(a, "alice@example.com"));
    tokens.set("a:bob", await token(a, "bob@example.com"));
    tokens.set("b:alice", await token(b, "alice@example.com"));

    // Tenant A's API server, started with the rendered file as the tenant's control plane mounts it.
    const authenticationConfigText = configMapData(a, "authentication-config-tenant-a")[
      "authentication-config.yaml"
    ]!;
    const { jwt } = parse(authenticationConfigText) as { jwt: JwtAuthenticator[] };
    expect(jwt).toHaveLength(1);
    mapped = jwt[0]!;
    const authenticationConfig = path.join(site, "authentication-config.yaml");
    await writeFile(authenticationConfig, authenticationConfigText);
    plane = await startControlPlane(info.binDir, {
      apiServerFlags: [`--authentication-config=${authenticationConfig}`],
    });
    tenantKubectl = kubectlFor(plane.kubeconfig);
    // The tenant's RBAC, as a ClusterResourceSet would apply it in the tenant cluster.
    await must(tenantKubectl, ["apply", "-f", "-"], configMapData(a, "tenant-rbac-tenant-a")["rbac.yaml"]!);
    await accepted(tenantKubectl, tokens.get("a:alice")!, "tenant A's Dex on the node");
  });

  afterAll(async () => {
    await plane?.stop();
    await deleteNamespace(kubectl, NAMESPACE);
    await rm(site, { recursive: true, force: true });
  });

  it("runs each tenant's Dex from the image the rendered Deployment names, Ready, as rendered", async () => {
    for (const t of [a, b]) {
      const pods = JSON.parse(
        await must(kubectl, [
          "get",
          "pods",
          "-n",
          NAMESPACE,
          "-l",
          `app.kubernetes.io/instance=auth-${t.name}`,
          "-o",
          "json",
        ]),
      ) as {
        items: {
          spec: { containers: { image: string; command: string[] }[] };
          status: { conditions?: { type: string; status: string }[] };
        }[];
      };
      const rendered = (
        renderedObject(t.objects, "Deployment", `auth-${t.name}`)["spec"] as {
          template: { spec: { containers: { image: string; command: string[] }[] } };
        }
      ).template.spec.containers[0]!;
      expect(pods.items).toHaveLength(1);
      const [pod] = pods.items;
      expect(pod!.spec.containers[0]).toMatchObject({ image: rendered.image, command: rendered.command });
      expect(pod!.status.conditions?.find((condition) => condition.type === "Ready")?.status).toBe("True");
    }
  });

  it("issues, through the NodePort, ID tokens with the claims the rendered AuthenticationConfiguration maps", () => {
    expect(mapped.issuer.url).toBe(`https://${info.address}:${a.nodePort}`);
    for (const [key, email, groups] of [
      ["a:alice", "alice@example.com", ["tenant-admins", "viewers"]],
      ["a:bob", "bob@example.com", ["viewers"]],
    ] as const) {
      const claims = jwtClaims(tokens.get(key)!);
      expect(claims["iss"]).toBe(mapped.issuer.url);
      expect(mapped.issuer.audiences).toContain(claims["aud"]);
      expect(claims[mapped.claimMappings.username.claim]).toBe(email);
      expect(claims[mapped.claimMappings.groups.claim]).toEqual(groups);
    }
    expect(jwtClaims(tokens.get("b:alice")!)["iss"]).toBe(`https://${info.address}:${b.nodePort}`);
  });

  it("a kube-apiserver with the rendered file takes the token as the mapped user and groups", async () => {
    const { username, groups } = mapped.claimMappings;
    expect(username.prefix).toBe("oidc:");
    expect(await whoami(tenantKubectl, tokens.get("a:alice")!)).toEqual({
      username: `${username.prefix}alice@example.com`,
      groups: [`${groups.prefix}tenant-admins`, `${groups.prefix}viewers`, "system:authenticated"],
    });
    expect(await whoami(tenantKubectl, tokens.get("a:bob")!)).toEqual({
      username: `${username.prefix}bob@example.com`,
      groups: [`${groups.prefix}viewers`, "system:authenticated"],
    });
    const can = async (key: string) =>
      (
        await tenantKubectl(["auth", "can-i", "delete", "nodes", `--token=${tokens.get(key)!}`])
      ).stdout.trim();
    expect(await can("a:alice")).toBe("yes");
    expect(await can("a:bob")).toBe("no");
  });

  it("refuses a token of the other tenant's Dex", async () => {
    expect(await whoami(tenantKubectl, tokens.get("b:alice")!)).toEqual({
      refused: expect.stringMatching(/Unauthorized/),
    });
  });
});
