import { z } from "zod";

/**
 * `metalsynth.yaml`: the site's settings (SPEC §6.1). Every field has a default, so a site without the
 * file works; the file is validated like a CR (unknown fields are errors).
 */
export const SiteSettingsSchema = z.strictObject({
  apiVersion: z.literal("metalsynth.io/v1alpha1"),
  kind: z.literal("SiteSettings"),
  images: z
    .strictObject({
      kudInstaller: z
        .string()
        .min(1)
        .default("integratedcloudnative/bpa-operator-kud:v0.4.0")
        .describe("Image running KUD's installer."),
      kubectl: z
        .string()
        .min(1)
        .default("bitnami/kubectl:1.27.4")
        .describe("Image of the step that stores the kubeconfig Secret."),
      softwareInstaller: z
        .string()
        .min(1)
        .default("integratedcloudnative/bpa-software-installer:v0.4.0")
        .describe("Image that installs Software packages over SSH."),
      haproxy: z.string().min(1).default("haproxy:2.3.2").describe("Default SIP load balancer image."),
      jumpHost: z
        .string()
        .min(1)
        .default("quay.io/airshipit/jump-host:latest")
        .describe("Default SIP jump host image."),
    })
    .prefault({}),
  sshKeySecret: z
    .string()
    .min(1)
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
        .regex(
          /^(?!\.\.?(\/|$))[\w.-]+(\/(?!\.\.?(\/|$))[\w.-]+)*$/,
          "a relative path inside the repository, such as rendered/clusters",
        )
        .default("rendered/clusters")
        .describe("Where the cluster directories are, relative to the repository root."),
      argocd: z
        .strictObject({
          project: z.string().min(1).default("default"),
          repoURL: z
            .string()
            .min(1)
            .default("https://git.example.com/site.git")
            .describe("The site repository Argo CD reads."),
          revision: z.string().min(1).default("HEAD"),
          destinationServer: z.string().min(1).default("https://kubernetes.default.svc"),
          namespace: z.string().min(1).default("argocd").describe("Namespace of the ApplicationSet."),
        })
        .prefault({}),
      flux: z
        .strictObject({
          sourceRef: z
            .strictObject({
              kind: z.enum(["GitRepository", "OCIRepository", "Bucket"]).default("GitRepository"),
              name: z.string().min(1).default("site"),
              namespace: z.string().min(1).default("flux-system"),
            })
            .prefault({}),
          namespace: z.string().min(1).default("flux-system").describe("Namespace of the Kustomizations."),
          interval: z.string().min(1).default("10m"),
          dependsOn: z
            .array(z.strictObject({ name: z.string().min(1), namespace: z.string().min(1).optional() }))
            .default([])
            .describe(
              "Kustomizations every cluster waits for, e.g. the one delivering BMHs and the SSH key.",
            ),
        })
        .prefault({}),
    })
    .prefault({}),
  git: z
    .strictObject({
      authorName: z.string().min(1).default("metalsynth"),
      authorEmail: z.string().min(1).default("metalsynth@localhost"),
    })
    .prefault({}),
});

/** Site settings as written in `metalsynth.yaml`. */
export type SiteSettingsSpec = z.input<typeof SiteSettingsSchema>;
/** Site settings with every default filled in. */
export type SiteSettings = z.output<typeof SiteSettingsSchema>;

/** The settings of a site without `metalsynth.yaml`. */
export const DEFAULT_SETTINGS: SiteSettings = SiteSettingsSchema.parse({
  apiVersion: "metalsynth.io/v1alpha1",
  kind: "SiteSettings",
});
