import { ApiObject } from "cdk8s";
import { k8s } from "cdk8s-plus-27";
import { Construct } from "constructs";
import { SELECTOR, serviceHost, TLS_SECRET, WEBHOOK_NAME, WEBHOOK_PORT } from "./names.ts";

/** Props of {@link WebhookNetworkPolicy}. */
export interface WebhookNetworkPolicyProps {
  /** The webhook's namespace. */
  readonly namespace: string;
  /** Where the API server calls from (it is no pod a selector could name). */
  readonly apiServerCidrs: readonly string[];
  /** The label of the namespaces whose Prometheus may scrape `/metrics`. */
  readonly metricsNamespaceLabel: Readonly<Record<string, string>>;
}

/**
 * A NetworkPolicy that admits traffic to the webhook's port only, from the API server's addresses
 * and from the monitoring namespaces; nothing else reaches the pods.
 */
export class WebhookNetworkPolicy extends Construct {
  constructor(scope: Construct, id: string, props: WebhookNetworkPolicyProps) {
    super(scope, id);
    const port = [{ protocol: "TCP", port: k8s.IntOrString.fromNumber(WEBHOOK_PORT) }];
    new k8s.KubeNetworkPolicy(this, "network-policy", {
      metadata: { name: WEBHOOK_NAME, namespace: props.namespace },
      spec: {
        podSelector: { matchLabels: SELECTOR },
        policyTypes: ["Ingress"],
        ingress: [
          // Admission reviews (and the kubelet's probes, which no policy filters).
          { ports: port, from: props.apiServerCidrs.map((cidr) => ({ ipBlock: { cidr } })) },
          // /metrics shares the port: scrapes from the monitoring namespaces.
          { ports: port, from: [{ namespaceSelector: { matchLabels: { ...props.metricsNamespaceLabel } } }] },
        ],
      },
    });
  }
}

/** Props of {@link WebhookServiceMonitor}. */
export interface WebhookServiceMonitorProps {
  /** The webhook's namespace. */
  readonly namespace: string;
}

/** A prometheus-operator ServiceMonitor scraping the webhook's `/metrics` over the Service's TLS. */
export class WebhookServiceMonitor extends Construct {
  constructor(scope: Construct, id: string, props: WebhookServiceMonitorProps) {
    super(scope, id);
    const { namespace } = props;
    new ApiObject(this, "service-monitor", {
      apiVersion: "monitoring.coreos.com/v1",
      kind: "ServiceMonitor",
      metadata: { name: WEBHOOK_NAME, namespace },
      spec: {
        selector: { matchLabels: SELECTOR },
        endpoints: [
          {
            port: "https",
            scheme: "https",
            path: "/metrics",
            // The serving certificate's own Secret holds the CA that issued it.
            tlsConfig: {
              serverName: serviceHost(namespace),
              ca: { secret: { name: TLS_SECRET, key: "ca.crt" } },
            },
          },
        ],
      },
    });
  }
}
