/**
 * How the install's Deployments run: as the distroless image's `nonroot` user, with the runtime's
 * default seccomp profile, nothing to escalate to and a read-only root. The webhook and the status
 * reporter share it, so the two can't drift apart in what the restricted Pod Security level asks.
 */
import type { k8s } from "cdk8s-plus-27";

/** The user the image runs as (distroless `nonroot`). */
const NONROOT_UID = 65532;

/** The pod's `securityContext`. */
export const POD_SECURITY: k8s.PodSecurityContext = {
  runAsNonRoot: true,
  runAsUser: NONROOT_UID,
  runAsGroup: NONROOT_UID,
  fsGroup: NONROOT_UID,
  seccompProfile: { type: "RuntimeDefault" },
};

/** Each container's `securityContext`. */
export const CONTAINER_SECURITY: k8s.SecurityContext = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ["ALL"] },
};
