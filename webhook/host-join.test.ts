import { describe, expect, it } from "vitest";
import { makeBmh, networkDataSecret, type RawObject } from "../test/builders/inventory.ts";
import { HostJoin } from "./host-join.ts";

/** A join over plain maps of objects by `namespace/name`, which a test changes as informers would. */
function joinOver() {
  const bmhs = new Map<string, RawObject>();
  const hardware = new Map<string, RawObject>();
  const secrets = new Map<string, RawObject>();
  const put = (map: Map<string, RawObject>, object: RawObject) => {
    const metadata = object["metadata"] as { name: string; namespace: string };
    map.set(`${metadata.namespace}/${metadata.name}`, object);
  };
  const join = new HostJoin(
    {
      bareMetalHost: (namespace, name) => bmhs.get(`${namespace}/${name}`),
      hardwareData: (namespace, name) => hardware.get(`${namespace}/${name}`),
      networkDataSecret: (namespace, name) => secrets.get(`${namespace}/${name}`),
    },
    { file: "cluster", line: 1, column: 1 },
  );
  return {
    join,
    host: (id: string) => join.inventory().byId(id),
    putBmh: (object: RawObject) => put(bmhs, object),
    putHardware: (object: RawObject) => put(hardware, object),
    putSecret: (object: RawObject) => put(secrets, object),
    removeBmh: (id: string) => bmhs.delete(id),
  };
}

const hardwareData = (name: string, cpus: number): RawObject => ({
  apiVersion: "metal3.io/v1alpha1",
  kind: "HardwareData",
  metadata: { name, namespace: "metal3" },
  spec: { hardware: { cpu: { count: cpus }, ramMebibytes: 131072, nics: [] } },
});

describe("HostJoin", () => {
  it("joins a BareMetalHost with its HardwareData and the networkData Secret it names", () => {
    const { join, host, putBmh, putHardware, putSecret } = joinOver();
    putBmh(makeBmh({ name: "node-1", hardware: false, networkData: { name: "node-1-network" } }));
    putHardware(hardwareData("node-1", 32));
    putSecret(networkDataSecret("node-1-network", "metal3", 7, true));

    expect(join.rejoin("metal3/node-1")).toEqual({ changed: true, issues: [] });

    expect(host("metal3/node-1")?.cpus).toBe(32);
    expect(host("metal3/node-1")?.networks["oam-ipv4"]).toBe("32.68.0.7");
    expect([...join.namingSecret("metal3/node-1-network")]).toEqual(["metal3/node-1"]);
    expect(join.size).toBe(1);
  });

  it("reads a Secret the BMH names in another namespace there, and none it cannot see", () => {
    const { join, host, putBmh, putSecret } = joinOver();
    putBmh(makeBmh({ name: "node-1", networkData: { name: "shared", namespace: "networks" } }));
    putBmh(makeBmh({ name: "node-2", networkData: { name: "unread", namespace: "elsewhere" } }));
    putSecret(networkDataSecret("shared", "networks", 1, false));
    join.rejoin("metal3/node-1");
    join.rejoin("metal3/node-2");

    expect(host("metal3/node-1")?.networks["oam-ipv4"]).toBe("32.68.0.1");
    expect(host("metal3/node-2")?.networks).toEqual({});
    expect([...join.namingSecret("elsewhere/unread")]).toEqual(["metal3/node-2"]);
  });

  it("keeps the host it knew over a change that touches none of its facts", () => {
    const { join, host, putBmh } = joinOver();
    const bmh = makeBmh({ name: "node-1" });
    putBmh(bmh);
    join.rejoin("metal3/node-1");
    const before = host("metal3/node-1");

    putBmh({ ...bmh, status: { ...(bmh["status"] as RawObject), lastUpdated: "2026-11-29T04:40:00Z" } });

    expect(join.rejoin("metal3/node-1").changed).toBe(false);
    expect(host("metal3/node-1")).toBe(before);
    putBmh(makeBmh({ name: "node-1", cpus: 64 }));
    expect(join.rejoin("metal3/node-1").changed).toBe(true);
    expect(host("metal3/node-1")?.cpus).toBe(64);
  });

  it("forgets a deleted host and the Secret it named", () => {
    const { join, host, putBmh, removeBmh } = joinOver();
    putBmh(makeBmh({ name: "node-1", networkData: { name: "node-1-network" } }));
    join.rejoin("metal3/node-1");

    removeBmh("metal3/node-1");

    expect(join.rejoin("metal3/node-1").changed).toBe(true);
    expect(host("metal3/node-1")).toBeUndefined();
    expect([...join.namingSecret("metal3/node-1-network")]).toEqual([]);
    expect(join.rejoin("metal3/node-1").changed).toBe(false);
  });

  it("follows a BMH that names another Secret", () => {
    const { join, putBmh } = joinOver();
    putBmh(makeBmh({ name: "node-1", networkData: { name: "old" } }));
    join.rejoin("metal3/node-1");

    putBmh(makeBmh({ name: "node-1", networkData: { name: "new" } }));
    join.rejoin("metal3/node-1");

    expect([...join.namingSecret("metal3/old")]).toEqual([]);
    expect([...join.namingSecret("metal3/new")]).toEqual(["metal3/node-1"]);
  });

  it("sets aside a host with a bad address, with the loader's finding, and lets it go when fixed", () => {
    const { join, host, putBmh } = joinOver();
    const nics = [{ name: "enp1s0", mac: "52:54:00:06:00:01", ip: "10.0.0.1 extra" }];
    putBmh(makeBmh({ name: "node-1", bootMac: "52:54:00:06:00:01", nics }));

    const { changed, issues } = join.rejoin("metal3/node-1");

    expect(changed).toBe(true);
    expect(issues.map((found) => found.rule)).toContain("address-invalid");
    expect(host("metal3/node-1")).toBeUndefined();
    expect(join.inventory().setAsideByMac("52:54:00:06:00:01")).toMatchObject({
      id: "metal3/node-1",
      rule: "address-invalid",
    });
    expect([...join.ids()]).toEqual([]);
    putBmh(makeBmh({ name: "node-1", bootMac: "52:54:00:06:00:01" }));
    expect(join.rejoin("metal3/node-1").changed).toBe(true);
    expect(join.inventory().setAsideByMac("52:54:00:06:00:01")).toBeUndefined();
    expect([...join.ids()]).toEqual(["metal3/node-1"]);
  });
});
