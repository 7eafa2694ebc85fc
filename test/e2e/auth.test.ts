/**
 * Issue #39's proof on a real API server (docs/contract.md §4.2, §9; decision 0058): a SIPCluster's
 * tenant identity, as synth renders it, logs a user in.
 *
 * - The rendered provider runs: Dex v2.45.1 built from its Go module (`test/e2e/setup.sh`), started
 *   as the rendered Deployment starts it — its command and arguments, its working directory with the
 *   rendered ConfigMap and the serving certificate mounted where the pod mounts them, its
 *   environment with each `secretKeyRef` resolved — behind the rendered Service's NodePort (a
 *   forwarder stands in for kube-proxy). The serving certificate is issued as cert-manager would for
 *   the rendered Certificate, by the CA of the rendered Issuer's Secret (`caSecret`).
 * - It issues ID tokens to static users by the password grant.
 * - kube-apiserver 1.34, started with the rendered `authentication-config.yaml` (as the tenant's
 *   control plane mounts it), accepts a token as the user and groups the claim mappings say
 *   (`kubectl auth whoami`), grants what the rendered tenant RBAC binds, and refuses tokens from
 *   another tenant's provider, and claims re-signed by it.
 *
 * One Dex runs at a time: both tenants' Dex listen on the container port (in the cluster, each in its
 * own pod); the other tenant's is stopped before this tenant's starts.
 */
import { readFile, writeFile, mkdir, mkdtemp } from "node:fs/promises";
import { createServer, connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parse, parseAllDocuments, stringify } from "yaml";
import { run } from "../run-cli.ts";
import {
  jwtClaims,
  layOutPod,
  PASSWORD_HASH,
  startDexPod,
  type RunningDex,
  type SecretData,
} from "../support/dex.ts";
import { createTestCa, issueServerCertificate, type TestCa } from "../webhook/tls-fixture.ts";
import { startControlPlane, type ControlPlane } from "./support/control-plane.ts";
import { kubectlFor, must, type Kubectl } from "./support/kube.ts";
import {
  accepted,
  authTenant,
  renderedObject,
  STATIC_USERS,
  staticUserToken,
  whoami as whoamiOn,
} from "./support/tenant-identity.ts";

type Json = Record<string, unknown>;

/** A NodePort from the Service range that nothing on this machine listens on. */
async function freeNodePort(taken: readonly number[] = []): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 30000 + Math.floor(Math.random() * 2768);
    if (taken.includes(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error("no free port in 30000–32767");
}

/**
 * kube-proxy's part: connections to the node's `nodePort` go to the pod's `targetPort`. Closing it
 * ends the connections it carries too (kube-apiserver keeps its connection to the issuer open).
 */
async function forwardNodePort(nodePort: number, targetPort: number): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(nodePort, "127.0.0.1", resolve));
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

interface Tenant {
  readonly name: string;
  readonly nodePort: number;
  readonly ca: TestCa;
  /** The objects of its rendered `auth.yaml`. */
  readonly objects: Json[];
}

describe("a SIPCluster's tenant identity on a real API server", () => {
  const dex = path.join(inject("e2eBinDir"), "dex");
  let site: string;
  let a: Tenant;
  let b: Tenant;
  let running: RunningDex | undefined;
  let forwarder: { close(): Promise<void> } | undefined;
  let plane: ControlPlane | undefined;
  let kubectl: Kubectl;
  const tokens = new Map<string, string>();
  const whoami = (bearer: string) => whoamiOn(kubectl, bearer);

  /**
   * Starts tenant `t`'s Dex as its Deployment would run, its serving certificate as cert-manager
   * would issue it for the rendered Certificate (`caSecret`) or as the operator would bring it
   * (`tlsSecret`), its NodePort forwarded. Stops the one running before.
   */
  async function startTenantDex(t: Tenant): Promise<void> {
    await stopDex();
    const service = renderedObject(t.objects, "Service", `auth-${t.name}`);
    const port = ((service["spec"] as Json)["ports"] as Json[])[0]!;
    expect(port["nodePort"]).toBe(t.nodePort);
    const volumes = (
      ((renderedObject(t.objects, "Deployment", `auth-${t.name}`)["spec"] as Json)["template"] as Json)[
        "spec"
      ] as Json
    )["volumes"] as Json[];
    const tlsSecret = (volumes.find((volume) => volume["name"] === "tls")!["secret"] as Json)[
      "secretName"
    ] as string;
    const certificate = t.objects.find((object) => object["kind"] === "Certificate");
    if (certificate) {
      // cert-manager: the CA Issuer's Secret signs what the Certificate asks for, into its Secret.
      const issuer = renderedObject(t.objects, "Issuer", `auth-${t.name}`);
      expect((issuer["spec"] as Json)["ca"]).toEqual({ secretName: `${t.name}-auth-ca` });
      expect((certificate["spec"] as Json)["secretName"]).toBe(tlsSecret);
    }
    const addresses = certificate
      ? ((certificate["spec"] as Json)["ipAddresses"] as string[])
      : ["127.0.0.1"];
    const serving = await issueServerCertificate(t.ca, `${t.name}-serving`, addresses);
    const secrets: SecretData = new Map<string, Record<string, string>>([
      [tlsSecret, { "tls.crt": serving.cert, "tls.key": serving.key, "ca.crt": t.ca.cert }],
      ["tenant-users", { alice: PASSWORD_HASH, bob: PASSWORD_HASH }],
    ]);
    const pod = await layOutPod(t.objects, `auth-${t.name}`, secrets);
    expect(pod.argv).toEqual(["/usr/local/bin/dex", "serve", "config/config.yaml"]);
    running = await startDexPod(dex, pod);
    forwarder = await forwardNodePort(t.nodePort, Number(port["targetPort"]));
  }

  async function stopDex(): Promise<void> {
    await running?.stop();
    running = undefined;
    await forwarder?.close();
    forwarder = undefined;
  }

  /** An ID token of tenant `t`'s Dex for `email`, through its NodePort as kubelogin would ask. */
  const token = (t: Tenant, email: string) =>
    staticUserToken(`https://127.0.0.1:${t.nodePort}`, t.ca.cert, email);

  beforeAll(async () => {
    const [caA, caB] = [await createTestCa(), await createTestCa()];
    const portA = await freeNodePort();
    const portB = await freeNodePort([portA]);
    site = path.join(await mkdtemp(path.join(tmpdir(), "metalsynth-auth-")), "site");
    await mkdir(path.join(site, "specs"), { recursive: true });
    await mkdir(path.join(site, "inventory"), { recursive: true });
    await writeFile(
      path.join(site, "specs", "tenants.yaml"),
      [
        authTenant("tenant-a", {
          clusterIP: "127.0.0.1",
          nodePort: portA,
          caSecret: "tenant-a-auth-ca",
          certificateAuthority: caA.cert,
          staticUsers: STATIC_USERS,
          roleBindings: [
            { group: "tenant-admins", clusterRole: "cluster-admin" },
            { group: "viewers", clusterRole: "pod-reader" },
            { group: "viewers", clusterRole: "secret-reader", namespace: "apps" },
          ],
        }),
        authTenant("tenant-b", {
          clusterIP: "127.0.0.1",
          nodePort: portB,
          tlsSecret: "tenant-b-auth-tls",
          certificateAuthority: caB.cert,
          staticUsers: STATIC_USERS,
          roleBindings: [{ group: "tenant-admins", clusterRole: "cluster-admin" }],
        }),
      ]
        .map((object) => stringify(object))
        .join("---\n"),
    );
    // A site without hosts: the tenants ask for none.
    await writeFile(path.join(site, "inventory", "hosts.yaml"), "apiVersion: v1\nkind: List\nitems: []\n");
    const synthesised = await run("synth", "--site", site);
    expect(synthesised, synthesised.err).toMatchObject({ code: 0 });
    const rendered = async (name: string) =>
      parseAllDocuments(
        await readFile(path.join(site, "rendered", "clusters", "tenants", name, "auth.yaml"), "utf8"),
      ).map((document) => document.toJS() as Json);
    a = { name: "tenant-a", nodePort: portA, ca: caA, objects: await rendered("tenant-a") };
    b = { name: "tenant-b", nodePort: portB, ca: caB, objects: await rendered("tenant-b") };

    // Tenant B's provider first: its tokens, for tenant A's API server to refuse.
    await startTenantDex(b);
    tokens.set("b:alice", await token(b, "alice@example.com"));
    await startTenantDex(a);
    tokens.set("a:alice", await token(a, "alice@example.com"));
    tokens.set("a:bob", await token(a, "bob@example.com"));

    // Tenant A's API server, started with the rendered file as the tenant's control plane mounts it.
    const configMap = renderedObject(a.objects, "ConfigMap", "authentication-config-tenant-a");
    const authenticationConfig = path.join(path.dirname(site), "authentication-config.yaml");
    await writeFile(
      authenticationConfig,
      (configMap["data"] as Record<string, string>)["authentication-config.yaml"]!,
    );
    plane = await startControlPlane(inject("e2eBinDir"), {
      apiServerFlags: [`--authentication-config=${authenticationConfig}`],
    });
    kubectl = kubectlFor(plane.kubeconfig);
    // The tenant's RBAC, as a ClusterResourceSet would apply it in the tenant cluster. The roles it
    // binds are the tenant's own (the aggregated view and edit are filled by kube-controller-manager,
    // which does not run here).
    await must(kubectl, ["create", "namespace", "apps"]);
    await must(kubectl, ["create", "clusterrole", "pod-reader", "--verb=get,list", "--resource=pods"]);
    await must(kubectl, ["create", "clusterrole", "secret-reader", "--verb=get", "--resource=secrets"]);
    const rbac = (
      renderedObject(a.objects, "ConfigMap", "tenant-rbac-tenant-a")["data"] as Record<string, string>
    )["rbac.yaml"]!;
    await must(kubectl, ["apply", "-f", "-"], rbac);
    await accepted(kubectl, tokens.get("a:alice")!, "tenant A's provider");
  }, 240_000);

  afterAll(async () => {
    await plane?.stop();
    await stopDex();
  });

  it("renders Dex for the issuer on the tenant's address and NodePort, and the API server's file for it", () => {
    const config = parse(
      (renderedObject(a.objects, "ConfigMap", "auth-tenant-a")["data"] as Record<string, string>)[
        "config.yaml"
      ]!,
    ) as Json;
    expect(config["issuer"]).toBe(`https://127.0.0.1:${a.nodePort}`);
    expect(jwtClaims(tokens.get("a:alice")!)).toMatchObject({
      iss: `https://127.0.0.1:${a.nodePort}`,
      aud: "kubectl",
      email: "alice@example.com",
      email_verified: true,
      name: "Alice",
      groups: ["tenant-admins", "viewers"],
    });
    expect(jwtClaims(tokens.get("b:alice")!)).toMatchObject({ iss: `https://127.0.0.1:${b.nodePort}` });
  });

  it("accepts the provider's token as the user and groups the claim mappings say", async () => {
    expect(await whoami(tokens.get("a:alice")!)).toEqual({
      username: "oidc:alice@example.com",
      groups: ["oidc:tenant-admins", "oidc:viewers", "system:authenticated"],
    });
    expect(await whoami(tokens.get("a:bob")!)).toEqual({
      username: "oidc:bob@example.com",
      groups: ["oidc:viewers", "system:authenticated"],
    });
  });

  it("grants what the rendered tenant RBAC binds to each group, and nothing more", async () => {
    const can = async (bearer: string, ...args: string[]) =>
      (await kubectl(["auth", "can-i", ...args, `--token=${bearer}`])).stdout.trim();
    expect(await can(tokens.get("a:alice")!, "delete", "nodes")).toBe("yes");
    expect(await can(tokens.get("a:bob")!, "list", "pods", "-A")).toBe("yes");
    expect(await can(tokens.get("a:bob")!, "delete", "pods", "-n", "default")).toBe("no");
    expect(await can(tokens.get("a:bob")!, "get", "secrets", "-n", "apps")).toBe("yes");
    expect(await can(tokens.get("a:bob")!, "get", "secrets", "-n", "default")).toBe("no");
  });

  it("refuses a token of another tenant's provider, and claims re-signed by it", async () => {
    expect(await whoami(tokens.get("b:alice")!)).toEqual({ refused: expect.stringMatching(/Unauthorized/) });
    // Tenant B's signature over claims that name tenant A's issuer (what a forger with B's keys makes).
    const [header, payload, signature] = tokens.get("b:alice")!.split(".");
    const claims = JSON.parse(Buffer.from(payload!, "base64url").toString("utf8")) as Json;
    const forged = Buffer.from(
      JSON.stringify({ ...claims, iss: `https://127.0.0.1:${a.nodePort}` }),
    ).toString("base64url");
    expect(await whoami(`${header}.${forged}.${signature}`)).toEqual({
      refused: expect.stringMatching(/Unauthorized/),
    });
    // Tenant A's own token with a group added: its signature no longer holds.
    const [headerA, payloadA, signatureA] = tokens.get("a:bob")!.split(".");
    const claimsA = JSON.parse(Buffer.from(payloadA!, "base64url").toString("utf8")) as Json;
    const widened = Buffer.from(JSON.stringify({ ...claimsA, groups: ["tenant-admins"] })).toString(
      "base64url",
    );
    expect(await whoami(`${headerA}.${widened}.${signatureA}`)).toEqual({
      refused: expect.stringMatching(/Unauthorized/),
    });
  });

  it("keeps the pod's secrets out of Git: the rendered files hold no password hash or key", async () => {
    const directory = path.join(site, "rendered", "clusters", "tenants", "tenant-a");
    const text =
      (await readFile(path.join(directory, "auth.yaml"), "utf8")) +
      (await readFile(path.join(directory, "specs.yaml"), "utf8"));
    expect(text).not.toContain(PASSWORD_HASH);
    expect(text).not.toMatch(/PRIVATE KEY/);
    expect(text).toContain("hashFromEnv: AUTH_USER_0_HASH");
  });
});
