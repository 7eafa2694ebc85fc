import { ApiObject } from "cdk8s";
import { Construct } from "constructs";
import { CA_NAME, ROOT_ISSUER, serviceHost, TLS_SECRET, WEBHOOK_NAME } from "./names.ts";

/** Props of {@link ServingCertificate}. */
export interface ServingCertificateProps {
  /** The webhook's namespace: the Issuers', the Certificates' and their Secrets'. */
  readonly namespace: string;
}

/**
 * The webhook's TLS, as cert-manager advises for webhooks (decision 0037): a self-signed root, a CA
 * Issuer of that root, and the serving certificate it issues into {@link TLS_SECRET}. The CA bundle
 * the API server trusts is the root's certificate, so renewing the serving certificate (new key each
 * time) changes nothing the API server holds; and the root renews with the same key, so a serving
 * certificate issued before a root renewal verifies against the renewed root too: no request is
 * refused at either renewal.
 */
export class ServingCertificate extends Construct {
  constructor(scope: Construct, id: string, props: ServingCertificateProps) {
    super(scope, id);
    const { namespace } = props;
    const service = serviceHost(namespace);
    const certManager = (id: string, kind: string, name: string, spec: Record<string, unknown>) =>
      new ApiObject(this, id, {
        apiVersion: "cert-manager.io/v1",
        kind,
        metadata: { name, namespace },
        spec,
      });

    certManager("root-issuer", "Issuer", ROOT_ISSUER, { selfSigned: {} });
    certManager("ca-certificate", "Certificate", CA_NAME, {
      isCA: true,
      commonName: CA_NAME,
      secretName: CA_NAME,
      // Five years, renewed a year early; the key is kept (see above).
      duration: "43800h",
      renewBefore: "8760h",
      issuerRef: { name: ROOT_ISSUER, kind: "Issuer" },
      privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Never" },
    });
    certManager("issuer", "Issuer", WEBHOOK_NAME, { ca: { secretName: CA_NAME } });
    certManager("certificate", "Certificate", WEBHOOK_NAME, {
      secretName: TLS_SECRET,
      dnsNames: [service, `${service}.cluster.local`],
      issuerRef: { name: WEBHOOK_NAME, kind: "Issuer" },
      privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Always" },
    });
  }
}
