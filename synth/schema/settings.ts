import { z } from "zod";
import { EXPECTED, parseDnsLabel, parseDnsSubdomain, parseImageReference } from "../checked.ts";
import { labelKeyProblem } from "../inventory/selector.ts";

/**
 * A string setting in a format Kubernetes, Argo CD or Flux accept. Settings go verbatim into Jobs,
 * the ApplicationSet and Flux objects, so a value the API server or a GitOps agent would refuse is
 * caught here, at `metalsynth.yaml`'s line, instead of at apply time.
 */
function setting(
  pattern: RegExp | ((value: string) => string | undefined),
  expected: string,
  maxLength = 253,
) {
  const accepts = (value: string) =>
    pattern instanceof RegExp ? pattern.test(value) : pattern(value) !== undefined;
  return z.string().refine((value) => value.length <= maxLength && accepts(value), {
    error: (found) => `${JSON.stringify(found.input)} is not ${expected}`,
  });
}

/** A Kubernetes namespace: a DNS-1123 label. */
const namespaceName = () =>
  setting(parseDnsLabel, "a namespace name (a DNS-1123 label: a-z, 0-9 and '-')", 63);
/** A Kubernetes object name (Secret, AppProject, Kustomization, GitRepository): a DNS-1123 subdomain. */
const objectName = () =>
  setting(parseDnsSubdomain, "an object name (a DNS-1123 subdomain: a-z, 0-9, '-' and '.')");
/** An image: checked by the same parser as a SIP service's, so charts take only an `ImageReference`. */
const image = () =>
  z.string().transform((value, context) => {
    const checked = parseImageReference(value);
    if (checked === undefined)
      context.addIssue({ code: "custom", message: `${JSON.stringify(value)} is not ${EXPECTED.image}` });
    return checked ?? z.NEVER;
  });
const url = (schemes: string) =>
  setting(
    new RegExp(`^(${schemes})://(?:[^\\s/?#@]+@)?[^\\s/?#@]+(?:[/?#]\\S*)?$`),
    `a ${schemes.split("|").join(" or ")} URL`,
  );

/**
 * `gitops.pathPrefix`'s grammar: a relative POSIX path of plain names that stays inside the
 * repository (no `.`, `..`, empty or absolute segments), as Argo CD's and Flux's paths are.
 */
export const PATH_PREFIX = /^(?!\.\.?(\/|$))[\w.-]+(\/(?!\.\.?(\/|$))[\w.-]+)*$/;

/** The path prefix of a site whose `rendered/` is at the root of its repository. */
export const DEFAULT_PATH_PREFIX = "rendered/clusters";

/**
 * `metalsynth.yaml`: the site's settings (docs/contract.md §6.1). Every field has a default, so a site without the
 * file works; the file is validated like a CR (unknown fields are errors).
 */
export const SiteSettingsSchema = z.strictObject({
  apiVersion: z.literal("metalsynth.io/v1alpha1"),
  kind: z.literal("SiteSettings"),
  images: z
    .strictObject({
      kudInstaller: image()
        .prefault("integratedcloudnative/bpa-operator-kud:v0.4.0")
        .describe("Image running KUD's installer."),
      kubectl: image()
        .prefault("bitnami/kubectl:1.27.4")
        .describe(
          "Image with kubectl and /bin/sh: the step that stores the kubeconfig Secret, the SIP label Job.",
        ),
      softwareInstaller: image()
        .prefault("integratedcloudnative/bpa-software-installer:v0.4.0")
        .describe("Image that installs Software packages over SSH."),
      haproxy: image().prefault("haproxy:2.3.2").describe("Default SIP load balancer image."),
      jumpHost: image()
        .prefault("quay.io/airshipit/jump-host:latest")
        .describe("Default SIP jump host image."),
      auth: image()
        .prefault("ghcr.io/dexidp/dex:v2.45.1")
        .describe("Default image of a SIPCluster's auth service (Dex; its binary at /usr/local/bin/dex)."),
    })
    .prefault({}),
  sshKeySecret: objectName()
    .default("ssh-key-secret")
    .describe("Secret (key `id_rsa`) the installer Jobs SSH with; referenced, never read."),
  job: z
    .strictObject({
      imagePullPolicy: z.enum(["Always", "IfNotPresent", "Never"]).default("IfNotPresent"),
      hostNetwork: z.boolean().default(true).describe("KUD reaches the hosts from the node's network."),
      privileged: z.boolean().default(false),
      backoffLimit: z.int().min(0).default(0).describe("Installer Jobs are not retried blindly."),
    })
    .prefault({}),
  gitops: z
    .strictObject({
      targets: z
        .array(z.enum(["argocd", "flux"]))
        .default(["argocd", "flux"])
        .describe("Which GitOps wiring to render."),
      pathPrefix: z
        .string()
        .regex(PATH_PREFIX, "a relative path inside the repository, such as rendered/clusters")
        .optional()
        .describe(
          "Where the cluster directories are, relative to the repository root; by default where rendered/clusters sits in its Git work tree (decision 0055).",
        ),
      argocd: z
        .strictObject({
          project: objectName().default("default"),
          repoURL: setting(
            // scp-like syntax too, as `git clone` and Argo CD accept it: git@host:org/repo.git
            /^(?:(?:https?|ssh|git):\/\/(?:[^\s/?#@]+@)?[^\s/?#@]+(?:[/?#]\S*)?|[\w.-]+@[\w.-]+:\S+)$/,
            "a Git repository URL (https://…, ssh://… or git@host:path)",
            2048,
          )
            .default("https://git.example.com/site.git")
            .describe("The site repository Argo CD reads."),
          revision: setting(
            /^(?![-/.])(?!.*(\.\.|\/\/|@\{|\.lock$|[/.]$))[^\s~^:?*[\\\p{Cc}]+$/u,
            "a Git branch, tag or commit",
          ).default("HEAD"),
          destinationServer: url("https|http").default("https://kubernetes.default.svc"),
          namespace: namespaceName().default("argocd").describe("Namespace of the ApplicationSet."),
        })
        .prefault({}),
      flux: z
        .strictObject({
          sourceRef: z
            .strictObject({
              kind: z.enum(["GitRepository", "OCIRepository", "Bucket"]).default("GitRepository"),
              name: objectName().default("site"),
              namespace: namespaceName().default("flux-system"),
            })
            .prefault({}),
          namespace: namespaceName().default("flux-system").describe("Namespace of the Kustomizations."),
          interval: setting(
            /^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/,
            "a Go duration such as 10m or 1h30m",
            64,
          ).default("10m"),
          dependsOn: z
            .array(z.strictObject({ name: objectName(), namespace: namespaceName().optional() }))
            .default([])
            .describe(
              "Kustomizations every cluster waits for, e.g. the one delivering BMHs and the SSH key.",
            ),
        })
        .prefault({}),
    })
    .prefault({}),
  inventory: z
    .strictObject({
      namespaces: z
        .array(namespaceName())
        .min(1)
        .optional()
        .describe("Namespaces `metalsynth inventory pull` reads (default: all); --namespace overrides."),
      selector: z
        .string()
        .min(1)
        .max(1024)
        .optional()
        .describe(
          "Label selector of the BareMetalHosts the site uses (kubectl syntax); --selector overrides.",
        ),
      fileLabel: z
        .string()
        .refine((key) => labelKeyProblem(key) === undefined, {
          error: (found) =>
            `${JSON.stringify(found.input)} is not a label key: ${labelKeyProblem(String(found.input))}`,
        })
        .optional()
        .describe(
          "Label (e.g. a rack label) whose value names a host's snapshot file: inventory/<namespace>/<value>.yaml.",
        ),
      labelledNetworkData: z
        .boolean()
        .default(false)
        .describe(
          "Read only networkData Secrets labelled metalsynth.io/network-data=true, as the webhook does.",
        ),
    })
    .prefault({})
    .describe("How `metalsynth inventory pull` takes the snapshot (decision 0023)."),
  git: z
    .strictObject({
      // Both end up between Git's own "Name <email>" brackets.
      authorName: setting(/^[^<>\n]*\S[^<>\n]*$/, "one line without < or >", 1024).default("metalsynth"),
      authorEmail: setting(/^[^<>\s]+$/, "an e-mail address without spaces, < or >", 1024).default(
        "metalsynth@localhost",
      ),
    })
    .prefault({}),
});

/** Site settings as written in `metalsynth.yaml`. */
export type SiteSettingsSpec = z.input<typeof SiteSettingsSchema>;
/**
 * Site settings as read: every default filled in but `gitops.pathPrefix`, undefined unless
 * `metalsynth.yaml` sets it, since its default depends on where `rendered/` sits in Git
 * (`resolvePathPrefix`, decision 0055).
 */
export type ParsedSiteSettings = z.output<typeof SiteSettingsSchema>;
/** Site settings ready to render: every default filled in, the path prefix too. */
export type SiteSettings = ParsedSiteSettings & { readonly gitops: { readonly pathPrefix: string } };

/** The settings of a site without `metalsynth.yaml`, as read. */
export const UNSET_SETTINGS: ParsedSiteSettings = SiteSettingsSchema.parse({
  apiVersion: "metalsynth.io/v1alpha1",
  kind: "SiteSettings",
});

/** The settings of a site without `metalsynth.yaml` whose `rendered/` is at its repository's root. */
export const DEFAULT_SETTINGS: SiteSettings = {
  ...UNSET_SETTINGS,
  gitops: { ...UNSET_SETTINGS.gitops, pathPrefix: DEFAULT_PATH_PREFIX },
};
