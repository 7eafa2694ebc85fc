/**
 * What the e2e proofs of a SIPCluster's tenant identity share (issue #39, decision 0058): the
 * tenants' CRs, their static users, the rendered objects they read, and the tenant API server's
 * answer to `kubectl auth whoami`. Used by `test/e2e/auth.test.ts` (Dex as a local process) and
 * `test/e2e/node/auth.test.ts` (Dex run by the kubelet).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { passwordGrant, PASSWORD } from "../../support/dex.ts";
import type { Kubectl } from "./kube.ts";

type Json = Record<string, unknown>;

/** A SIPCluster of namespace `namespace` with only an auth service. */
export function authTenant(name: string, auth: Json, namespace = "tenants"): Json {
  return {
    apiVersion: "airship.airshipit.org/v1",
    kind: "SIPCluster",
    metadata: { name, namespace },
    spec: { nodes: {}, services: { auth: [auth] } },
  };
}

/** The users every tenant's Dex knows: both with the same password hash, from one Secret. */
export const STATIC_USERS = [
  {
    email: "alice@example.com",
    username: "Alice",
    groups: ["tenant-admins", "viewers"],
    passwordHash: { name: "tenant-users", key: "alice" },
  },
  { email: "bob@example.com", groups: ["viewers"], passwordHash: { name: "tenant-users", key: "bob" } },
];

/**
 * An ID token of the Dex at `base` (trusting `ca`) for static user `email` (of {@link STATIC_USERS}),
 * by the password grant of the `kubectl` client, as kubelogin asks for one.
 */
export async function staticUserToken(base: string, ca: string, email: string): Promise<string> {
  const granted = await passwordGrant(base, ca, { clientId: "kubectl", username: email, password: PASSWORD });
  if ("refused" in granted)
    throw new Error(`Dex refused the password grant: ${JSON.stringify(granted.refused)}`);
  return granted.idToken;
}

/** The rendered object of `kind` named `name` among `objects`; fails when it was not rendered. */
export function renderedObject(objects: readonly Json[], kind: string, name: string): Json {
  const found = objects.find(
    (object) => object["kind"] === kind && (object["metadata"] as Json)["name"] === name,
  );
  if (!found) throw new Error(`no ${kind} ${name} rendered`);
  return found;
}

/** `kubectl auth whoami` with a bearer token: the user the API server took it for, or its refusal. */
export async function whoami(
  kubectl: Kubectl,
  bearer: string,
): Promise<{ username?: string; groups?: string[]; refused?: string }> {
  const result = await kubectl(["auth", "whoami", "-o", "json", `--token=${bearer}`]);
  if (result.code !== 0) return { refused: result.stderr.trim() };
  const { userInfo } = (
    JSON.parse(result.stdout) as { status: { userInfo: { username: string; groups: string[] } } }
  ).status;
  return { username: userInfo.username, groups: userInfo.groups };
}

/**
 * Waits until the API server accepts `bearer`: its JWT authenticator reads the issuer's discovery
 * and keys in the background after it starts.
 */
export async function accepted(kubectl: Kubectl, bearer: string, issuer: string): Promise<void> {
  for (let attempt = 0; (await whoami(kubectl, bearer)).refused !== undefined; attempt++) {
    if (attempt === 120) throw new Error(`kube-apiserver never accepted a token of ${issuer}`);
    await sleep(250);
  }
}
