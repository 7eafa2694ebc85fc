/**
 * Judges a SIPCluster's rendered `auth.yaml` by its real readers (issue #39, decision 0058): Dex
 * reads its `config.yaml`, started as the Deployment starts it (./dex.ts) on ports of its own, and is
 * asked what it read: the issuer it serves, the clients and redirect URIs it lets a login return to,
 * where its GitHub connector sends a browser (the client id and callback it was configured with), and
 * the claims of the static user's ID token. The tenant API server's AuthenticationConfiguration and
 * the tenant's RBAC are read by kubectl, whose decoder (sigs.k8s.io/yaml, YAML 1.1) is the one
 * kube-apiserver loads its file with and `kubectl apply` reads the bindings with, and held to the plan.
 * Dex refusing to start is a problem like any reader's refusal.
 */
import { createHash } from "node:crypto";
import { parseAllDocuments } from "yaml";
import { createTestCa, issueServerCertificate, type TestCa } from "../webhook/tls-fixture.ts";
import {
  DexExited,
  dexBinary,
  httpsRequest,
  jwtClaims,
  layOutPod,
  passwordGrant,
  PASSWORD,
  PASSWORD_HASH,
  startDexPod,
  type HttpsAnswer,
} from "./dex.ts";
import { freePort } from "./free-port.ts";
import { kubectlObjects } from "./readers.ts";
import type { PlannedAuth } from "./trust-site.ts";

type Json = Record<string, unknown>;

let binary: string | undefined | null = null;
/** The dex binary, built or found once per run; `undefined` without Go. */
export function dex(): string | undefined {
  if (binary === null) binary = dexBinary();
  return binary;
}

let ca: Promise<{ ca: TestCa; cert: string; key: string }> | undefined;
/** A CA and a serving certificate for 127.0.0.1, made once: the judge talks to Dex on loopback. */
function servingCertificate(): Promise<{ ca: TestCa; cert: string; key: string }> {
  ca ??= createTestCa().then(async (authority) => {
    const serving = await issueServerCertificate(authority, "dex-judge", ["127.0.0.1"]);
    return { ca: authority, cert: serving.cert, key: serving.key };
  });
  return ca;
}

/** Verdicts by the rendered file and the plan: most fuzz inputs leave `auth.yaml` as it was. */
const verdicts = new Map<string, Promise<string[]>>();

/**
 * The problems Dex and kubectl find in `text`, the rendered `auth.yaml` at `file`; scratch files go
 * under `dir`.
 */
export function judgeAuth(file: string, text: string, planned: PlannedAuth, dir: string): Promise<string[]> {
  const key = createHash("sha256")
    .update(JSON.stringify([text, planned]))
    .digest("hex");
  let verdict = verdicts.get(key);
  if (verdict === undefined) {
    verdict = judge(file, text, planned, dir);
    verdicts.set(key, verdict);
  }
  return verdict;
}

async function judge(file: string, text: string, planned: PlannedAuth, dir: string): Promise<string[]> {
  const problems: string[] = [];
  const objects = parseAllDocuments(text).map((document) => document.toJS() as Json);
  const named = (kind: string, prefix: string) =>
    objects.find(
      (object) => object["kind"] === kind && String((object["metadata"] as Json)["name"]).startsWith(prefix),
    );
  const deployment = named("Deployment", "auth-");
  const data = (prefix: string) => (named("ConfigMap", prefix)?.["data"] ?? {}) as Record<string, string>;
  if (!deployment) return [`${file}: no Deployment of Dex`];
  problems.push(
    ...(await judgeDex(file, objects, String((deployment["metadata"] as Json)["name"]), planned)),
  );

  const inner = [
    [
      `${file} authentication-config.yaml`,
      data("authentication-config-")["authentication-config.yaml"] ?? "",
    ],
    [`${file} rbac.yaml`, data("tenant-rbac-")["rbac.yaml"] ?? ""],
  ] as const;
  const reading = await kubectlObjects(inner, dir);
  if (!reading.ok) return [...problems, `${file}: kubectl refuses the tenant's files: ${reading.why}`];
  const [authentication, ...rbac] = reading.objects as Json[];
  const jwt = (authentication?.["jwt"] as Json[] | undefined)?.[0] ?? {};
  const issuer = (jwt["issuer"] ?? {}) as Json;
  const mappings = (jwt["claimMappings"] ?? {}) as Record<string, Json>;
  const found = JSON.stringify({
    url: issuer["url"],
    audiences: issuer["audiences"],
    certificateAuthority: issuer["certificateAuthority"],
    username: mappings["username"],
    groups: mappings["groups"],
  });
  const wanted = JSON.stringify({
    url: planned.issuer,
    audiences: planned.clients.map((client) => client.id),
    certificateAuthority: planned.certificateAuthority,
    username: { claim: "email", prefix: planned.usernamePrefix },
    groups: { claim: "groups", prefix: planned.groupsPrefix },
  });
  if (found !== wanted)
    problems.push(`${file}: the AuthenticationConfiguration says ${found}, planned ${wanted}`);

  const bindings: Record<string, string[]> = {};
  for (const binding of rbac) {
    const role = String((binding["roleRef"] as Json | undefined)?.["name"]);
    bindings[role] = ((binding["subjects"] as Json[] | undefined) ?? []).map((subject) =>
      String(subject["name"]),
    );
  }
  if (JSON.stringify(bindings) !== JSON.stringify(planned.bindings))
    problems.push(
      `${file}: the tenant's RBAC binds ${JSON.stringify(bindings)}, planned ${JSON.stringify(planned.bindings)}`,
    );
  return problems;
}

/** Dex started on its rendered config, and asked what it read. */
async function judgeDex(
  file: string,
  objects: readonly Json[],
  name: string,
  planned: PlannedAuth,
): Promise<string[]> {
  const binary = dex();
  if (binary === undefined) return [`${file}: no dex binary to judge with (Go is missing)`];
  const { ca, cert, key } = await servingCertificate();
  // Whatever Secret the pod names: the serving certificate's keys, a password hash, a client secret.
  const secrets = (_: string, item: string, variable?: string): string =>
    variable?.startsWith("AUTH_USER_")
      ? PASSWORD_HASH
      : item === "tls.crt"
        ? cert
        : item === "tls.key"
          ? key
          : "judge-secret";
  const pod = await layOutPod(objects, name, secrets);
  const [https, telemetry] = [await freePort(), await freePort()];
  let running;
  try {
    running = await startDexPod(binary, pod, {
      extraArgs: [`--web-https-addr=127.0.0.1:${https}`, `--telemetry-addr=127.0.0.1:${telemetry}`],
      readinessPort: telemetry,
    });
  } catch (error) {
    if (error instanceof DexExited)
      return [`${file}: dex refuses config.yaml: ${error.log.trim().slice(-1500)}`];
    throw error;
  }
  const problems: string[] = [];
  const base = `https://127.0.0.1:${https}`;
  try {
    const discovery = await httpsRequest(`${base}/.well-known/openid-configuration`, ca.cert);
    const issuer = (JSON.parse(discovery.body) as { issuer?: string }).issuer;
    if (issuer !== planned.issuer)
      problems.push(
        `${file}: Dex serves issuer ${JSON.stringify(issuer)}, planned ${JSON.stringify(planned.issuer)}`,
      );

    /**
     * A login of `clientId` back to `redirectUri` through the planned connector: Dex's `/auth` sends it
     * to `/auth/<connector>`, which checks the client and the redirect URI and, for GitHub, sends the
     * browser on to GitHub with the connector's client id and callback.
     */
    const login = async (clientId: string, redirectUri: string): Promise<HttpsAnswer | undefined> => {
      const query = new URLSearchParams({
        client_id: clientId,
        redirect_uri: redirectUri,
        response_type: "code",
        scope: "openid",
        state: "judge",
        connector_id: planned.connector.id,
      });
      const chosen = await httpsRequest(`${base}/auth?${query}`, ca.cert);
      if (chosen.status !== 302 || chosen.location === undefined) return undefined;
      return httpsRequest(new URL(chosen.location, base).href, ca.cert);
    };
    const first = planned.clients[0]!;
    for (const client of planned.clients) {
      for (const uri of client.redirectURIs) {
        const answer = await login(client.id, uri);
        if (answer?.status !== 302)
          problems.push(
            `${file}: Dex refuses a login of client ${JSON.stringify(client.id)} back to ${JSON.stringify(uri)} through connector ${JSON.stringify(planned.connector.id)}: ${answer?.status ?? "no connector"}`,
          );
      }
    }
    if ((await login(`${first.id}-unplanned`, first.redirectURIs[0] ?? ""))?.status === 302)
      problems.push(`${file}: Dex takes a client it was never given`);

    const upstream = await login(first.id, first.redirectURIs[0] ?? "");
    const sentTo = upstream?.location === undefined ? undefined : new URL(upstream.location);
    const sent = {
      host: sentTo?.host,
      clientId: sentTo?.searchParams.get("client_id"),
      redirectUri: sentTo?.searchParams.get("redirect_uri"),
    };
    const wanted = {
      host: "github.com",
      clientId: planned.connector.clientId,
      redirectUri: planned.connector.redirectUri,
    };
    if (JSON.stringify(sent) !== JSON.stringify(wanted))
      problems.push(
        `${file}: Dex's connector ${JSON.stringify(planned.connector.id)} sends a login to ${JSON.stringify(sent)}, planned ${JSON.stringify(wanted)}`,
      );

    const granted = await passwordGrant(base, ca.cert, {
      clientId: first.id,
      username: planned.user.email,
      password: PASSWORD,
    });
    if ("refused" in granted)
      problems.push(
        `${file}: Dex refuses the static user's password grant: ${granted.refused.status} ${granted.refused.body}`,
      );
    else {
      const claims = jwtClaims(granted.idToken);
      const found = {
        iss: claims["iss"],
        email: claims["email"],
        name: claims["name"],
        groups: claims["groups"],
      };
      const wantedClaims = { iss: planned.issuer, ...planned.user };
      if (JSON.stringify(found) !== JSON.stringify(wantedClaims))
        problems.push(
          `${file}: Dex's token says ${JSON.stringify(found)}, planned ${JSON.stringify(wantedClaims)}`,
        );
    }
  } finally {
    await running.stop();
  }
  return problems;
}
