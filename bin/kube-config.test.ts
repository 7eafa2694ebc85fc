import { KubeConfig } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { UsageError } from "../gitops/errors.ts";
import { loadKubeConfig, type KubeConfigPlaces } from "./kube-config.ts";

const nowhere: KubeConfigPlaces = {
  environment: undefined,
  homeConfig: "/home/ops/.kube/config",
  serviceAccountToken: "/var/run/secrets/kubernetes.io/serviceaccount/token",
  exists: () => false,
};

describe("loadKubeConfig", () => {
  it("says where it looked when there is no kubeconfig, instead of calling localhost:8080", () => {
    const load = () => loadKubeConfig(new KubeConfig(), {}, nowhere);
    expect(load).toThrow(UsageError);
    expect(load).toThrow(
      "no kubeconfig found (looked in KUBECONFIG: not set; /home/ops/.kube/config: no such file; /var/run/secrets/kubernetes.io/serviceaccount/token: not in a pod): pass --kubeconfig FILE or set KUBECONFIG",
    );
  });

  it.each([
    ["~/.kube/config", (file: string) => file === nowhere.homeConfig],
    ["a pod's service account", (file: string) => file === nowhere.serviceAccountToken],
  ])("goes on to the client library's own loading when %s is there", (_where, exists) => {
    expect(() => loadKubeConfig(new KubeConfig(), {}, { ...nowhere, exists })).not.toThrow(
      /no kubeconfig found/,
    );
  });
});
