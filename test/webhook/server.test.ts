/**
 * The webhook over real HTTPS: the server of main.ts on 127.0.0.1 with a test CA, called by a client
 * that verifies the certificate for the Service name, fed from a copy of the example site.
 */
import { X509Certificate } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import { Agent, request } from "node:https";
import path from "node:path";
import { connect } from "node:tls";
import { stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { makeBmh } from "../builders/inventory.ts";
import { TIMEOUT_SECONDS } from "../../charts/webhook/index.ts";
import { REQUEST_TIMEOUT_MS } from "../../webhook/main.ts";
import { postJson, readReply, send, type Reply } from "./client.ts";
import { eventually, startTestWebhook, type TestWebhook } from "./harness.ts";
import { admissionReview, provisioning, sipCluster, software, type Cr } from "../builders/reviews.ts";
import { SERVICE_NAME, issueServerCertificate, rotate } from "./tls-fixture.ts";

/** The response part of an AdmissionReview answer. */
interface Answer {
  uid: string;
  allowed: boolean;
  status?: { code: number; reason: string; message: string };
  warnings?: string[];
}

async function review(webhook: TestWebhook, object: Cr, options: Parameters<typeof admissionReview>[1] = {}) {
  const path = `/validate/${object.kind.toLowerCase()}`;
  const { status, json } = await postJson(webhook.target, path, admissionReview(object, options));
  expect(status).toBe(200);
  expect(json).toMatchObject({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" });
  return (json as { response: Answer }).response;
}

/** Hosts of the example site by their data-NIC MAC. */
const MAC = {
  r01node04: "3c:fd:fe:13:f8:b8", // cluster-east master-1
  r01node07: "3c:fd:fe:ca:f9:a0", // spare, 96 CPUs, SR-IOV
  r01node08: "3c:fd:fe:ad:77:d0", // spare, no SR-IOV
  r02node08: "3c:fd:fe:87:80:3c", // spare, state "available"
  r03node04: "b8:ce:f6:79:ea:c0", // spare, 16 CPUs, 128Gi
  r03node06: "b8:ce:f6:f8:2b:04", // spare, no SR-IOV
  r03node07: "b8:ce:f6:ac:d5:ac", // spare, SR-IOV
} as const;

describe("the webhook over TLS", () => {
  let webhook: TestWebhook;
  beforeAll(async () => {
    webhook = await startTestWebhook();
  });
  afterAll(async () => {
    await webhook.running.shutdown();
  });

  it("answers /healthz and /readyz, and presents a certificate for the Service name", async () => {
    const health = await send(webhook.target, "GET", "/healthz");
    expect(health).toMatchObject({ status: 200, text: "ok\n" });
    expect(health.certificate?.subjectaltname).toBe("DNS:metalsynth-webhook.metalsynth-system.svc");
    const ready = await send(webhook.target, "GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.text).toMatch(/^files: 24 hosts, 5 known objects, read \d+s ago\n$/);
  });

  it("is refused by a client that expects another name", async () => {
    const failure = await new Promise<Error>((resolve) => {
      request(
        {
          host: "127.0.0.1",
          port: webhook.target.port,
          path: "/healthz",
          ca: webhook.ca.cert,
          servername: "evil.example",
        },
        () => resolve(new Error("connected")),
      )
        .on("error", resolve)
        .end();
    });
    expect(failure.message).toMatch(/does not match certificate's altnames/);
  });

  it("refuses a client that offers nothing newer than TLS 1.1", async () => {
    const failure = await new Promise<NodeJS.ErrnoException>((resolve) => {
      const socket = connect(
        {
          host: "127.0.0.1",
          port: webhook.target.port,
          ca: webhook.ca.cert,
          servername: SERVICE_NAME,
          minVersion: "TLSv1",
          maxVersion: "TLSv1.1",
          // OpenSSL's default security level would stop the client from offering TLS 1.1 at all;
          // lowered, the refusal (a protocol_version alert) must come from the server.
          ciphers: "DEFAULT@SECLEVEL=0",
        },
        () => {
          socket.end();
          resolve(new Error(`connected with ${socket.getProtocol()}`));
        },
      );
      socket.on("error", resolve);
    });
    expect(failure.code).toBe("ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION");
  });

  it("cuts off a request whose body stalls, before the API server's timeoutSeconds", async () => {
    expect(REQUEST_TIMEOUT_MS).toBeLessThan(TIMEOUT_SECONDS * 1000);
    const reply = await new Promise<Reply>((resolve, reject) => {
      const outgoing = request({
        host: "127.0.0.1",
        port: webhook.target.port,
        method: "POST",
        path: "/validate/provisioning",
        ca: webhook.ca.cert,
        servername: SERVICE_NAME,
        agent: false,
        headers: { "content-type": "application/json", "content-length": "1000" },
      });
      outgoing.on("response", (response) => readReply(response).then(resolve, reject));
      outgoing.on("error", reject);
      // Part of the body, and then nothing: the server must not wait for the rest forever.
      outgoing.write('{"apiVersion": "admission.k8s.io/v1", ');
    });
    expect(reply.status).toBe(408);
  }, 15_000);

  it("allows a CR that fits free hosts, echoing the uid", async () => {
    const cr = provisioning({
      name: "cluster-north",
      namespace: "edge-b",
      masters: [["master-1", { "mac-address": MAC.r01node07, cpu: 64 }]],
      workers: [["worker-1", { "mac-address": MAC.r03node07, sriov: true }]],
    });
    expect(await review(webhook, cr, { uid: "0f6b4d3e-allow" })).toEqual({
      uid: "0f6b4d3e-allow",
      allowed: true,
    });
  });

  it.each<[string, Cr, string]>([
    [
      "unknown MAC, with the closest one",
      provisioning({ name: "c1", masters: [["master-1", { "mac-address": "b8:ce:f6:79:e4:c0" }]] }),
      "spec.masters[0].master-1.mac-address: b8:ce:f6:79:e4:c0 matches no BareMetalHost (closest: b8:ce:f6:79:ea:c0 on metal3/r03-node-04)",
    ],
    [
      "a host another cluster already has",
      provisioning({ name: "cluster-zulu", masters: [["master-1", { "mac-address": MAC.r01node04 }]] }),
      "spec.masters[0].master-1.mac-address: host metal3/r01-node-04 (3c:fd:fe:13:f8:b8) is already requested by mac-address for cluster edge-a/cluster-east in Provisioning edge-a/cluster-east; a host belongs to at most one cluster",
    ],
    [
      "cpu and memory the host does not have, every error at once",
      provisioning({
        name: "c1",
        masters: [["master-1", { "mac-address": MAC.r03node04, cpu: 64, memory: "256Gi" }]],
      }),
      "spec.masters[0].master-1.cpu: host metal3/r03-node-04 has 16 CPUs, 64 requested; spec.masters[0].master-1.memory: host metal3/r03-node-04 has 128Gi memory, 256Gi requested",
    ],
    [
      "SR-IOV on a host without it",
      provisioning({
        name: "c1",
        masters: [["master-1", { "mac-address": MAC.r01node08 }]],
        workers: [["worker-1", { "mac-address": MAC.r03node06, sriov: true }]],
      }),
      'spec.workers[0].worker-1.sriov: host metal3/r03-node-06 is not SR-IOV capable: it is not labelled feature.metalsynth.io/sriov: "true"',
    ],
    [
      "a SIP role no set of free hosts can fill",
      sipCluster({ name: "tenant-b", workers: 3 }),
      "spec.nodes.Worker: role Worker needs 3 hosts (active 3 + standby 0), found 1: 1/24 hosts fit: 20 not matching the labelSelector, 3 claimed by other clusters",
    ],
    [
      "a schema error, with the field path",
      provisioning({ name: "c1", masters: [["master-1", { "mac-adress": MAC.r01node07 }]] }),
      'spec.masters[0].master-1.mac-adress: unknown field "mac-adress" (did you mean mac-address?)',
    ],
  ])("denies %s with 403 and the exact message", async (_name, cr, message) => {
    expect(await review(webhook, cr)).toEqual({
      uid: `uid-${cr.metadata.name}`,
      allowed: false,
      status: { code: 403, reason: "Forbidden", message },
    });
  });

  it("gives each of several requests that arrive together its own decision", async () => {
    // Sent at once over connections already open (the API server keeps its connections), requests
    // arrive in one tick of the server's event loop and are reviewed as one batch (decision 0028).
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const fits = provisioning({
      name: "together-a",
      masters: [["master-1", { "mac-address": MAC.r01node07 }]],
    });
    const taken = provisioning({
      name: "together-b",
      masters: [["master-1", { "mac-address": MAC.r01node04 }]],
    });
    const sendTogether = () =>
      Promise.all(
        Array.from({ length: 8 }, async (_, index) => {
          const cr = index % 2 === 0 ? fits : taken;
          const body = admissionReview(cr, { uid: `together-${index}` });
          const { json } = await postJson({ ...webhook.target, agent }, "/validate/provisioning", body);
          const { uid, allowed } = (json as { response: Answer }).response;
          return [uid, allowed];
        }),
      );
    try {
      await sendTogether(); // opens the connections
      expect(await sendTogether()).toEqual(
        Array.from({ length: 8 }, (_, index) => [`together-${index}`, index % 2 === 0]),
      );
    } finally {
      agent.destroy();
    }
  });

  it("denies a CR that would take a host from a CR already known, naming that CR", async () => {
    // cluster-alpha sorts before cluster-east, so planning gives it the host and the conflict lands
    // on cluster-east: an error the reviewed CR causes, reported against it.
    const cr = provisioning({
      name: "cluster-alpha",
      masters: [["master-1", { "mac-address": MAC.r01node04 }]],
    });
    expect((await review(webhook, cr)).status?.message).toBe(
      "Provisioning edge-a/cluster-east spec.masters[0].master-1.mac-address: host metal3/r01-node-04 (3c:fd:fe:13:f8:b8) is already requested by mac-address for cluster edge-a/cluster-alpha in Provisioning edge-a/cluster-alpha; a host belongs to at most one cluster",
    );
  });

  it("never reports a known CR as conflicting with itself (UPDATE, or CREATE of a CR the site has)", async () => {
    const east = provisioning({
      name: "cluster-east",
      masters: [
        ["master-1", { "mac-address": MAC.r01node04, cpu: 32, memory: "128Gi" }],
        ["master-2", { "mac-address": "3c:fd:fe:0c:62:48" }],
        ["master-3", { "mac-address": "b8:ce:f6:25:e2:64" }],
      ],
      workers: [
        [
          "worker-1",
          { "mac-address": "3c:fd:fe:59:a6:b4", cpu: 64, memory: "256Gi", sriov: true, qat: true },
        ],
        ["worker-2", { "mac-address": "3c:fd:fe:ff:1f:b8" }],
      ],
    });
    expect((await review(webhook, east, { operation: "UPDATE", oldObject: east })).allowed).toBe(true);
    expect((await review(webhook, east, { operation: "CREATE" })).allowed).toBe(true);
    // Taking tenant-a's control-plane host leaves that SIPCluster one host short: an error the
    // update causes on another CR, so the update is denied with it.
    const taking = provisioning({
      name: "cluster-east",
      masters: [["master-1", { "mac-address": "3c:fd:fe:d1:a6:e4" }]],
    });
    expect((await review(webhook, taking, { operation: "UPDATE", oldObject: east })).status?.message).toBe(
      "SIPCluster edge-sip/tenant-a spec.nodes.ControlPlane: role ControlPlane needs 3 hosts (active 2 + standby 1), found 2: 2/24 hosts fit: 21 not matching the labelSelector, 1 claimed by other clusters",
    );
  });

  it("allows DELETE without looking at the object", async () => {
    const broken = provisioning({
      name: "c1",
      masters: [["master-1", { "mac-address": "00:00:00:00:00:01" }]],
    });
    expect(await review(webhook, broken, { operation: "DELETE", oldObject: broken })).toEqual({
      uid: "uid-c1",
      allowed: true,
    });
  });

  it("decides dryRun requests exactly like real ones", async () => {
    const good = provisioning({ name: "c1", masters: [["master-1", { "mac-address": MAC.r01node07 }]] });
    const bad = provisioning({ name: "c1", masters: [["master-1", { "mac-address": "00:00:00:00:00:01" }]] });
    for (const [cr, allowed] of [
      [good, true],
      [bad, false],
    ] as const) {
      const dryRun = await review(webhook, cr, { dryRun: true });
      expect(dryRun.allowed).toBe(allowed);
      expect(dryRun).toEqual(await review(webhook, cr, { dryRun: false }));
    }
  });

  it("allows with warnings when only warnings are found", async () => {
    const cr = provisioning({ name: "c1", masters: [["master-1", { "mac-address": MAC.r02node08 }]] });
    expect(await review(webhook, cr)).toEqual({
      uid: "uid-c1",
      allowed: true,
      warnings: [
        'spec.masters[0].master-1: host metal3/r02-node-08 is in provisioning state "available"; KUD needs an installed OS (provisioned or externally provisioned)',
      ],
    });
  });

  it.each<[string, number, RegExp, string | object]>([
    ["malformed JSON", 400, /^request body is not JSON: /, '{"apiVersion": "admission.k8s.io/v1", "kind": '],
    [
      "JSON that is not an object",
      400,
      /^not an admission\.k8s\.io\/v1 AdmissionReview: body: /,
      "[1, 2, 3]",
    ],
    [
      "the wrong AdmissionReview version",
      400,
      /^not an admission\.k8s\.io\/v1 AdmissionReview: apiVersion: expected admission\.k8s\.io\/v1, found "admission\.k8s\.io\/v1beta1"$/,
      {
        ...admissionReview(provisioning({ name: "c1", masters: [] })),
        apiVersion: "admission.k8s.io/v1beta1",
      },
    ],
    [
      "a body over 3 MiB",
      413,
      /^request body is larger than 3145728 bytes \(3 MiB\)$/,
      { ...admissionReview(provisioning({ name: "c1", masters: [] })), padding: "x".repeat(4 * 1024 * 1024) },
    ],
  ])("refuses %s with HTTP %i and a message", async (_name, status, message, body) => {
    const reply = await send(webhook.target, "POST", "/validate/provisioning", body);
    expect(reply.status).toBe(status);
    expect(JSON.parse(reply.text)).toEqual({ error: expect.stringMatching(message) });
  });

  it("answers 404 for paths it does not serve", async () => {
    expect((await send(webhook.target, "POST", "/validate/machines", {})).status).toBe(404);
    expect((await send(webhook.target, "GET", "/nothing")).status).toBe(404);
  });

  it("logs one JSON line per admission request and counts requests by kind and result", async () => {
    const before = webhook.logs().length;
    await review(
      webhook,
      provisioning({ name: "logged", masters: [["master-1", { "mac-address": MAC.r01node07 }]] }),
    );
    // The line is written once the response has gone out, which may be after the client has it.
    await vi.waitFor(() => expect(webhook.logs().length).toBeGreaterThan(before));
    const lines = webhook.logs().slice(before);
    expect(lines).toEqual([
      expect.objectContaining({
        level: "info",
        msg: "admission",
        kind: "Provisioning",
        uid: "uid-logged",
        operation: "CREATE",
        result: "allowed",
        status: 200,
        durationMs: expect.any(Number),
      }),
    ]);
    const metrics = (await send(webhook.target, "GET", "/metrics")).text;
    expect(metrics).toMatch(
      /^metalsynth_webhook_requests_total\{kind="Provisioning",result="allowed"\} \d+$/m,
    );
    expect(metrics).toMatch(
      /^metalsynth_webhook_requests_total\{kind="Provisioning",result="denied"\} \d+$/m,
    );
    expect(metrics).toMatch(
      /^metalsynth_webhook_requests_total\{kind="Provisioning",result="too-large"\} 1$/m,
    );
    expect(metrics).toMatch(/^metalsynth_webhook_request_duration_seconds_count\{kind="SIPCluster"\} \d+$/m);
    expect(metrics).toMatch(/^metalsynth_webhook_inventory_hosts 24$/m);
    expect(metrics).toMatch(/^metalsynth_webhook_inventory_age_seconds \d/m);
  });
});

describe("the webhook when its rules throw", () => {
  let webhook: TestWebhook;
  beforeAll(async () => {
    webhook = await startTestWebhook({
      knowledge: (state) => ({
        readiness: () => state.readiness(),
        staleness: () => state.staleness(),
        inventoryStats: () => state.inventoryStats(),
        hold: (object) => state.hold(object),
        holdCount: () => state.holdCount(),
        holdsAdmitted: state.holdsAdmitted,
        unchanged: (object) => state.unchanged(object),
        allocationReviewer: () => state.allocationReviewer(),
        reviewer: () => {
          const reviewer = state.reviewer();
          if (reviewer === undefined) return undefined;
          return {
            review: (object: unknown) => {
              if (JSON.stringify(object).includes('"name":"boom"'))
                throw new TypeError("a rule tripped over something");
              return reviewer.review(object);
            },
          };
        },
      }),
    });
  });
  afterAll(async () => {
    await webhook.running.shutdown();
  });

  it("denies with an internal error, logs the stack, and keeps serving", async () => {
    const answer = await review(webhook, provisioning({ name: "boom", masters: [] }), { uid: "u-boom" });
    expect(answer).toEqual({
      uid: "u-boom",
      allowed: false,
      status: {
        code: 500,
        reason: "InternalError",
        message:
          "internal error: metalsynth could not check this Provisioning (request u-boom; the webhook log has the details)",
      },
    });
    const logged = await vi.waitFor(() => {
      const line = webhook.logs().find((candidate) => candidate.uid === "u-boom");
      if (line === undefined) throw new Error("no log line for u-boom yet");
      return line;
    });
    expect(logged).toMatchObject({ level: "error", result: "internal-error" });
    expect((logged.error as { stack: string }).stack).toMatch(
      /TypeError: a rule tripped over something\n\s+at /,
    );
    const next = provisioning({ name: "fine", masters: [["master-1", { "mac-address": MAC.r01node07 }]] });
    expect((await review(webhook, next)).allowed).toBe(true);
  });
});

describe("the webhook's files changing under it", () => {
  let webhook: TestWebhook;
  beforeAll(async () => {
    webhook = await startTestWebhook();
  });
  afterAll(async () => {
    await webhook.running.shutdown();
  });

  const newHostMac = "3c:fd:fe:00:04:01";
  const wantsNewHost = provisioning({ name: "c1", masters: [["master-1", { "mac-address": newHostMac }]] });

  it("re-reads the inventory; keeps serving the last good read while a file is broken", async () => {
    expect((await review(webhook, wantsNewHost)).allowed).toBe(false);
    const bmh = makeBmh({
      name: "r04-node-01",
      bootMac: newHostMac,
      nics: [{ name: "ens1f0", mac: newHostMac, ip: "10.23.4.11" }],
    });
    await writeFile(path.join(webhook.site, "inventory", "rack-r04.yaml"), stringify(bmh));
    await eventually(async () => (await review(webhook, wantsNewHost)).allowed, "the new host to be read");

    const broken = path.join(webhook.site, "inventory", "rack-r05.yaml");
    await writeFile(broken, "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata: [\n");
    const stale = await eventually(async () => {
      const ready = await send(webhook.target, "GET", "/readyz");
      return ready.text.includes("re-read failed") ? ready : undefined;
    }, "the failed re-read to show in /readyz");
    expect(stale.status).toBe(200);
    // At the end of the line whose `[` is never closed.
    expect(stale.text).toMatch(/rack-r05\.yaml:3:12: error\[yaml-syntax\] Flow sequence .* end with a \]/);
    expect(webhook.logs()).toContainEqual(
      expect.objectContaining({ level: "error", msg: "files not re-read; serving the previous read" }),
    );
    expect((await review(webhook, wantsNewHost)).allowed).toBe(true);

    await rm(broken);
    await eventually(async () => {
      const ready = await send(webhook.target, "GET", "/readyz");
      return !ready.text.includes("re-read failed") ? ready : undefined;
    }, "the files to be read again");
    expect((await send(webhook.target, "GET", "/metrics")).text).toMatch(
      /^metalsynth_webhook_inventory_hosts 25$/m,
    );
  });

  it("does not tell a Software its Provisioning is missing when the site's Provisioning fails its schema", async () => {
    const north = software({ cluster: "cluster-north" });
    // A missing Provisioning warns (it may be applied next, decision 0011)…
    expect(await review(webhook, north)).toEqual({
      uid: "uid-cluster-north-software",
      allowed: true,
      warnings: [
        "metadata.labels.cluster: no Provisioning for cluster edge-a/cluster-north: Software installs on a cluster's hosts, so the cluster must be provisioned here (not refused: it may be applied next)",
      ],
    });
    const typo = provisioning({
      name: "cluster-north",
      masters: [["master-1", { "mac-adress": MAC.r01node07 }]],
    });
    const file = path.join(webhook.site, "specs", "cluster-north.yaml");
    await writeFile(file, stringify(typo));
    await eventually(
      async () =>
        webhook
          .logs()
          .some((line) => line.msg === "file finding" && String(line.finding).includes("mac-adress")),
      "the invalid Provisioning to be read",
    );
    // …and an invalid one is the site's to fix: the Software is fine, without a warning.
    expect(await review(webhook, north)).toEqual({ uid: "uid-cluster-north-software", allowed: true });
    await rm(file);
  });

  it("serves a rotated certificate to new connections without dropping a request", async () => {
    const next = await issueServerCertificate(webhook.ca, "rotated");
    const expected = new X509Certificate(next.cert).fingerprint256;
    const answers: number[] = [];
    let seen = "";
    let rotated = false;
    const load = (async () => {
      // Requests keep arriving before, during and after the swap.
      while (seen !== expected) {
        const reply = await send(webhook.target, "GET", "/healthz");
        answers.push(reply.status);
        seen = reply.certificate?.fingerprint256 ?? "";
        if (!rotated) {
          rotated = true;
          await rotate(webhook.certificate, next);
        }
      }
    })();
    await Promise.race([
      load,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error("rotated certificate never served")), 10_000),
      ),
    ]);
    expect(answers.length).toBeGreaterThan(1);
    expect(answers.every((status) => status === 200)).toBe(true);
    expect(webhook.logs()).toContainEqual(
      expect.objectContaining({ msg: "tls certificate loaded", fingerprint256: expected }),
    );
  });
});
