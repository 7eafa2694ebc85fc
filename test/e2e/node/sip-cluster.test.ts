/**
 * The SIPCluster's services run by a real kubelet (issue #37, decision 0060), applied unchanged by
 * each GitOps agent, against test hosts at the addresses the inventory gives its BareMetalHosts:
 *
 * - the control-plane load balancer (HAProxy, NodePort) forwards to every tenant API server that is
 *   up, passing TLS through, and its health check takes a stopped one out within `fall` × `inter`
 *   (plus one check's timeout) of the rendered haproxy.cfg;
 * - the worker load balancer forwards each port of its range to every worker, and no other port;
 * - the jump host lets in the operators' keys only, `ssh -J` through it reaches every host with the
 *   key of the Secret the Deployment references, and from inside it each host answers by its name
 *   with that Secret's key as mounted (the rendered ssh_config and host aliases).
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect as connectTcp } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect as connectTls } from "node:tls";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { stringify } from "yaml";
import { WORKER_PORTS } from "../../support/trust-site.ts";
import { ensureNamespaces, installCrds, kubectlFor, must, type KubeObject } from "../support/kube.ts";
import { applySecret, build, objectsOf, renderNodeSite, type NodeSite } from "./support/site.ts";
import { startTestHosts, type TestHosts } from "./support/test-hosts.ts";
import {
  AGENTS,
  applyAs,
  available,
  deleteNamespace,
  fluxInventory,
  provideImages,
} from "./support/workloads.ts";

const info = inject("e2eNode");
const kubectl = kubectlFor(info.kubeconfig);

/** What a TLS request through the control-plane load balancer got: the body and who served it. */
async function throughControlPlane(port: number): Promise<{ body: string; servedBy: string }> {
  return new Promise((resolve, reject) => {
    const socket = connectTls({ host: info.address, port, rejectUnauthorized: false }, () => {
      const servedBy = String(socket.getPeerCertificate().subject?.CN ?? "");
      socket.write("GET / HTTP/1.1\r\nHost: tenant\r\nConnection: close\r\n\r\n");
      let response = "";
      socket.on("data", (chunk: Buffer) => (response += chunk.toString()));
      socket.on("end", () => resolve({ body: response.split("\r\n\r\n")[1]?.trim() ?? "", servedBy }));
    });
    socket.setTimeout(10_000, () => socket.destroy(new Error("timed out")));
    socket.on("error", reject);
  });
}

/** The line a worker's port server wrote through the worker load balancer. */
async function throughWorkerPort(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp({ host: info.address, port });
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
    socket.on("end", () => resolve(text.trim()));
    socket.setTimeout(10_000, () => socket.destroy(new Error("timed out")));
    socket.on("error", reject);
  });
}

/** `ssh args…`: its exit code, what the remote command printed, and what ssh said. */
function ssh(args: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile("ssh", args, { timeout: 60_000 }, (error, out, err) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out, err }),
    );
  });
}

describe("the SIPCluster's services on a real node", () => {
  let site: NodeSite;
  let hosts: TestHosts;
  let scratch: string;

  beforeAll(async () => {
    site = await renderNodeSite();
    scratch = await mkdtemp(path.join(tmpdir(), "metalsynth-e2e-node-sip-"));
    await installCrds(kubectl);
    hosts = await startTestHosts(
      info,
      [
        ...site.values.controlPlane.map((host) => ({ name: host.name, address: host.ip })),
        ...site.values.workers.map((host) => ({ name: host.name, address: host.ip, ports: WORKER_PORTS })),
      ],
      [site.nodeKey.publicKey],
    );
  });
  afterAll(async () => {
    await hosts?.stop();
    await deleteNamespace(kubectl, site.values.sipNamespace);
    await rm(site.dir, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  });

  describe.each(AGENTS)("applied by %s", (agent) => {
    let objects: KubeObject[];
    const deployment = (prefix: string) =>
      objects.find((object) => object.kind === "Deployment" && object.metadata.name.startsWith(prefix))!;
    const nodePorts = (prefix: string) =>
      (
        objects.find((object) => object.kind === "Service" && object.metadata.name.startsWith(prefix))!
          .spec as {
          ports: { nodePort: number }[];
        }
      ).ports.map((port) => port.nodePort);

    beforeAll(async () => {
      const { sipNamespace, sipName, hostNamespace } = site.values;
      await deleteNamespace(kubectl, sipNamespace);
      await ensureNamespaces(kubectl, [hostNamespace, sipNamespace]);
      await must(kubectl, ["delete", "baremetalhosts", "--all", "-n", hostNamespace]);
      await must(kubectl, ["apply", "-f", "-"], site.hosts.map((host) => stringify(host)).join("---\n"));
      // The Secret the jump host's Deployment references: the nodes' key, as an operator stores it.
      await applySecret(kubectl, sipNamespace, site.values.nodeSshPrivateKeys, {
        key: site.nodeKey.privateKey,
      });
      const manifests = await build(kubectl, site.sipDirectory);
      objects = objectsOf(manifests);
      provideImages(info, objects);
      const app = {
        name: `${sipNamespace}-${sipName}`,
        namespace: sipNamespace,
        syncOptions: ["ApplyOutOfSyncOnly=true"],
        fluxInventory: fluxInventory(scratch, agent),
      };
      const { argo } = await applyAs(agent, info, app, manifests);
      if (argo) expect(argo.phase, argo.message).toBe("Succeeded");
      for (const prefix of ["loadbalancer-controlplane-", "loadbalancer-worker-", "jumphost-"]) {
        await available(kubectl, sipNamespace, deployment(prefix).metadata.name);
      }
    });

    it("the control-plane load balancer passes TLS through to every live tenant API server", async () => {
      const [port] = nodePorts("loadbalancer-controlplane-");
      const wanted = new Set(site.values.controlPlane.map((host) => host.name));
      const seen = new Set<string>();
      for (let request = 0; request < 60 && seen.size < wanted.size; request++) {
        const { body, servedBy } = await throughControlPlane(port!);
        expect(servedBy, "the tenant API server's own certificate: TLS is not terminated on the way").toBe(
          body,
        );
        seen.add(body);
      }
      expect(seen).toEqual(wanted);
    });

    it("a stopped tenant API server is taken out by the health check within fall × inter", async () => {
      const config = (
        objects.find(
          (object) =>
            object.kind === "ConfigMap" && object.metadata.name.startsWith("loadbalancer-controlplane-"),
        )!.data as Record<string, string>
      )["haproxy.cfg"]!;
      const seconds = (pattern: RegExp) => Number(pattern.exec(config)?.[1]);
      const bound = seconds(/ fall (\d+)/) * seconds(/ inter (\d+)s/) + seconds(/timeout check (\d+)s/);
      expect(bound, "haproxy.cfg names fall, inter and timeout check").toBeGreaterThan(0);
      const [port] = nodePorts("loadbalancer-controlplane-");
      const stopped = hosts.get(site.values.controlPlane[1]!.name);
      const pods = (
        await must(kubectl, [
          "get",
          "pods",
          "-n",
          site.values.sipNamespace,
          "-l",
          `app.kubernetes.io/instance=${deployment("loadbalancer-controlplane-").metadata.name}`,
          "-o",
          "name",
        ])
      )
        .split("\n")
        .filter(Boolean);
      expect(pods.length).toBeGreaterThan(0);

      const stoppedAt = Date.now();
      await stopped.stopServices();
      try {
        // Each replica's log, with the kubelet's timestamps, says when it marked the server DOWN.
        const down = new RegExp(`Server kube-apiserver-backend/${stopped.name} is DOWN`);
        const downAt = new Map<string, number>();
        while (downAt.size < pods.length && Date.now() - stoppedAt < (bound + 30) * 1000) {
          for (const pod of pods) {
            if (downAt.has(pod)) continue;
            const log = await must(kubectl, ["logs", pod, "-n", site.values.sipNamespace, "--timestamps"]);
            const line = log.split("\n").find((entry) => down.test(entry));
            if (line) downAt.set(pod, Date.parse(line.split(" ")[0]!));
          }
          await sleep(500);
        }
        expect([...downAt.keys()].sort(), "every replica marks it DOWN").toEqual([...pods].sort());
        for (const [pod, at] of downAt) {
          expect((at - stoppedAt) / 1000, `${pod}: seconds until DOWN`).toBeLessThanOrEqual(bound);
        }
        // From then on no request goes to it, and none fails.
        const live = new Set(
          site.values.controlPlane.map((host) => host.name).filter((name) => name !== stopped.name),
        );
        const seen = new Set<string>();
        for (let request = 0; request < 20; request++) seen.add((await throughControlPlane(port!)).body);
        expect(seen).toEqual(live);
      } finally {
        await stopped.startServices();
      }
    });

    it("the worker load balancer forwards each port of its range to every worker, and no other port", async () => {
      const ports = nodePorts("loadbalancer-worker-");
      expect(ports).toEqual([...WORKER_PORTS]);
      const workers = new Set(site.values.workers.map((host) => host.name));
      for (const port of ports) {
        const seen = new Set<string>();
        for (let request = 0; request < 40 && seen.size < workers.size; request++) {
          const [name, answeredOn] = (await throughWorkerPort(port)).split(" ");
          expect(answeredOn, `the worker's own port ${port}`).toBe(String(port));
          seen.add(name!);
        }
        expect(seen, `port ${port}`).toEqual(workers);
      }
      const outside = Math.max(...ports) + 1;
      await expect(throughWorkerPort(outside), `port ${outside} is outside the range`).rejects.toThrow();
    });

    describe("the jump host", () => {
      let config: string;
      let bare: string;
      let nodeKeyFromSecret: string;

      beforeAll(async () => {
        const [port] = nodePorts("jumphost-");
        // The key an operator would fetch from the Secret the Deployment references.
        const secret = deployment("jumphost-").spec as {
          template: { spec: { volumes: { name: string; secret?: { secretName: string } }[] } };
        };
        const secretName = secret.template.spec.volumes.find((volume) => volume.name === "node-ssh-keys")
          ?.secret?.secretName;
        expect(secretName).toBe(site.values.nodeSshPrivateKeys);
        nodeKeyFromSecret = path.join(scratch, `${agent}-node-key`);
        const data = await must(kubectl, [
          "get",
          "secret",
          secretName!,
          "-n",
          site.values.sipNamespace,
          "-o",
          "jsonpath={.data.key}",
        ]);
        await writeFile(nodeKeyFromSecret, Buffer.from(data, "base64"), { mode: 0o600 });
        const sshConfig = (identities: boolean) =>
          [
            "Host jump",
            `  HostName ${info.address}`,
            `  Port ${port}`,
            "  User ubuntu",
            ...(identities ? [`  IdentityFile ${site.operatorKey.privateKeyFile}`] : []),
            "Host 10.*",
            "  User root",
            ...(identities ? [`  IdentityFile ${nodeKeyFromSecret}`] : []),
            "Host *",
            "  IdentitiesOnly yes",
            "  BatchMode yes",
            "  StrictHostKeyChecking no",
            "  UserKnownHostsFile /dev/null",
            "  LogLevel ERROR",
            "  ConnectTimeout 10",
            "",
          ].join("\n");
        config = path.join(scratch, `${agent}-ssh_config`);
        await writeFile(config, sshConfig(true));
        // For trying one key at a time: no identity but the one given with -i.
        bare = path.join(scratch, `${agent}-ssh_config-bare`);
        await writeFile(bare, sshConfig(false));
        // sshd in the pod may still be making its host keys when the Deployment is available.
        for (let attempt = 0; attempt < 20; attempt++) {
          if ((await ssh(["-F", config, "jump", "true"])).code === 0) break;
          await sleep(1000);
        }
      });

      it("ssh -J through it reaches every host with the key of the referenced Secret", async () => {
        for (const host of [...site.values.controlPlane, ...site.values.workers]) {
          const result = await ssh(["-F", config, "-J", "jump", host.ip, "hostname"]);
          expect({ code: result.code, out: result.out }, `${host.name}: ${result.err}`).toEqual({
            code: 0,
            out: `${host.name}\n`,
          });
        }
      });

      it("inside it, each host answers by its name with the Secret's key as mounted", async () => {
        for (const host of [...site.values.controlPlane, ...site.values.workers]) {
          // The rendered ssh_config gives the address and the mounted key; the pod's host aliases the name.
          const result = await ssh([
            "-F",
            config,
            "jump",
            "ssh",
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=accept-new",
            host.name,
            "hostname",
          ]);
          expect({ code: result.code, out: result.out }, `${host.name}: ${result.err}`).toEqual({
            code: 0,
            out: `${host.name}\n`,
          });
        }
      });

      it("lets in the operators' keys and nothing else", async () => {
        const as = (user: string, key: string) =>
          ssh(["-F", bare, "-o", `User=${user}`, "-i", key, "jump", "true"]);
        expect((await as("ubuntu", site.operatorKey.privateKeyFile)).code).toBe(0);
        for (const [user, key, who] of [
          ["ubuntu", site.strangerKey.privateKeyFile, "a key in no authorized_keys"],
          ["ubuntu", nodeKeyFromSecret, "the nodes' key"],
          ["root", site.operatorKey.privateKeyFile, "root, with an operator's key"],
        ] as const) {
          const result = await as(user, key);
          expect(result.code, who).toBe(255);
          expect(result.err, who).toContain("Permission denied");
        }
      });
    });
  });
});
