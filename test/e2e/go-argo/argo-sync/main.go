// argo-sync syncs one Argo CD Application's manifests (a kustomize build on stdin) with Argo CD's own
// sync engine (gitops-engine), passing the options the application controller passes for an automated
// sync (controller/sync.go), and stands in for the kubelet: a Job the engine waits on is run here,
// unless --node says a real node runs it (test/e2e/node).
// It prints the operation's end state as JSON and exits 0 whether the sync succeeded or failed; the
// caller decides. Test tooling for the e2e suite, never part of the product.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/argoproj/argo-cd/gitops-engine/pkg/cache"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/diff"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/sync"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/sync/common"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/sync/hook"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/sync/ignore"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/utils/kube"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/utils/tracing"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2/textlogger"
)

// Argo CD's names (argo-cd common and util/argo): the tracking annotation and the manager of its
// server-side applies.
const (
	trackingAnnotation   = "argocd.argoproj.io/tracking-id"
	installationIDKey    = "argocd.argoproj.io/installation-id"
	serverSideApplyOwner = "argocd-controller"
)

// resourceResult is one entry of the operation's syncResult.resources, as Argo CD records it.
type resourceResult struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Message   string `json:"message"`
	HookType  string `json:"hookType,omitempty"`
	HookPhase string `json:"hookPhase,omitempty"`
	SyncPhase string `json:"syncPhase"`
}

// jobRun says what the kubelet stand-in did with one Job.
type jobRun struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Ran is false for a Job whose containers run an image's own program (an installer): it is
	// marked Complete without running anything.
	Ran       bool   `json:"ran"`
	Succeeded bool   `json:"succeeded"`
	Output    string `json:"output"`
}

type output struct {
	// Operation is false when the Application was already Synced: an automated sync starts no operation.
	Operation bool             `json:"operation"`
	Phase     string           `json:"phase"`
	Message   string           `json:"message"`
	Resources []resourceResult `json:"resources"`
	Jobs      []jobRun         `json:"jobs"`
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the destination cluster")
	app := flag.String("app", "", "the Application's name")
	namespace := flag.String("namespace", "", "spec.destination.namespace")
	options := flag.String("sync-options", "", "spec.syncPolicy.syncOptions, comma-separated")
	prune := flag.Bool("prune", true, "spec.syncPolicy.automated.prune")
	timeout := flag.Duration("timeout", 3*time.Minute, "how long the operation may run")
	node := flag.Bool("node", false, "a real node runs the Jobs and kube-controller-manager's garbage collector runs: no stand-in for either")
	flag.Parse()
	if *kubeconfig == "" || *app == "" {
		fail(fmt.Errorf("--kubeconfig and --app are required"))
	}
	manifests, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	result, err := run(*kubeconfig, *app, *namespace, syncOptions(*options), *prune, manifests, *timeout, *node)
	if err != nil {
		fail(err)
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", "  ")
	if err := encoder.Encode(result); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "argo-sync:", err)
	os.Exit(1)
}

// syncOptions is Argo CD's SyncOptions: HasOption and GetOptionValue over `key=value` entries.
type syncOptions string

func (o syncOptions) entries() []string {
	var out []string
	for _, entry := range strings.Split(string(o), ",") {
		if entry = strings.TrimSpace(entry); entry != "" {
			out = append(out, entry)
		}
	}
	return out
}

func (o syncOptions) has(option string) bool {
	for _, entry := range o.entries() {
		if entry == option {
			return true
		}
	}
	return false
}

func (o syncOptions) value(key string) *string {
	for _, entry := range o.entries() {
		if name, value, ok := strings.Cut(entry, "="); ok && name == key {
			return &value
		}
	}
	return nil
}

func run(kubeconfig, app, namespace string, options syncOptions, prune bool, manifests []byte, timeout time.Duration, node bool) (*output, error) {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	log := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(os.Stderr), textlogger.Verbosity(0)))
	targets, err := kube.SplitYAML(manifests)
	if err != nil {
		return nil, fmt.Errorf("manifests: %w", err)
	}
	// CompareAppState's SetAppInstance: the default tracking method (annotation), on every target.
	for _, target := range targets {
		annotations := target.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		delete(annotations, installationIDKey)
		ns := target.GetNamespace()
		if ns == "" {
			ns = namespace
		}
		gvk := target.GroupVersionKind()
		annotations[trackingAnnotation] = fmt.Sprintf("%s:%s/%s:%s/%s", app, gvk.Group, gvk.Kind, ns, target.GetName())
		target.SetAnnotations(annotations)
	}

	// The application controller's live state cache: every resource, and which Application it belongs
	// to by its tracking annotation.
	clusterCache := cache.NewClusterCache(config,
		cache.SetLogr(log),
		cache.SetPopulateResourceInfoHandler(func(un *unstructured.Unstructured, _ bool) (any, bool) {
			owner, _, _ := strings.Cut(un.GetAnnotations()[trackingAnnotation], ":")
			return owner, owner != ""
		}))
	if err := clusterCache.EnsureSynced(); err != nil {
		return nil, fmt.Errorf("cluster cache: %w", err)
	}
	defer clusterCache.Invalidate()
	isManaged := func(r *cache.Resource) bool { return r.Info == app }
	kubectl := &kube.KubectlCmd{Log: log, Tracer: tracing.NopTracer{}}
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	kubelet := &kubelet{kubeconfig: kubeconfig, clientset: clientset, done: map[types.UID]bool{}}
	collector, err := newGarbageCollector(config)
	if err != nil {
		return nil, err
	}

	out := &output{}
	var phase common.OperationPhase
	var message string
	var results []common.ResourceSyncResult
	startedAt := metav1.Now()
	deadline := time.Now().Add(timeout)
	for {
		// Each reconciliation re-reads the live state and drives the operation one step, as the
		// controller's processRequestedAppOperation does.
		live, err := clusterCache.GetManagedLiveObjs(targets, isManaged)
		if err != nil {
			return nil, err
		}
		reconciliation := sync.Reconcile(targets, live, namespace, clusterCache)
		diffs, err := diff.DiffArray(reconciliation.Target, reconciliation.Live, diff.WithLogr(log), diff.WithManager(serverSideApplyOwner))
		if err != nil {
			return nil, err
		}
		if phase == "" {
			// Automated sync starts an operation only when the Application is OutOfSync.
			if !outOfSync(reconciliation, diffs) {
				out.Phase, out.Message = string(common.OperationSucceeded), "already synced: no operation"
				return out, nil
			}
			out.Operation = true
		}
		opts := []sync.SyncOpt{
			sync.WithLogr(log),
			sync.WithOperationSettings(false, prune, false, false),
			sync.WithManifestValidation(!options.has(common.SyncOptionsDisableValidation)),
			sync.WithSyncWaveHook(func(common.SyncPhase, int, bool) error { return nil }),
			sync.WithPruneLast(options.has(common.SyncOptionPruneLast)),
			sync.WithResourceModificationChecker(options.has("ApplyOutOfSyncOnly=true"), diffs),
			sync.WithPrunePropagationPolicy(ptr(metav1.DeletePropagationForeground)),
			sync.WithReplace(options.has(common.SyncOptionReplace)),
			sync.WithServerSideApply(options.has(common.SyncOptionServerSideApply)),
			sync.WithServerSideApplyManager(serverSideApplyOwner),
			sync.WithClientSideApplyMigration(!options.has(common.SyncOptionDisableClientSideApplyMigration), common.DefaultClientSideApplyMigrationManager),
			sync.WithPruneConfirmed(false),
			sync.WithDefaultPruneOption(options.value("Prune")),
			sync.WithSkipDryRunOnMissingResource(options.has(common.SyncOptionSkipDryRunOnMissingResource)),
		}
		if phase != "" {
			opts = append(opts, sync.WithInitialState(phase, message, results, startedAt))
		}
		syncCtx, cleanup, err := sync.NewSyncContext("HEAD", reconciliation, config, config, kubectl, namespace, opts...)
		if err != nil {
			return nil, err
		}
		syncCtx.Sync()
		phase, message, results = syncCtx.GetState()
		cleanup()
		if phase.Completed() {
			break
		}
		if time.Now().After(deadline) {
			phase, message = common.OperationError, fmt.Sprintf("argo-sync: still %s after %s: %s", phase, timeout, message)
			break
		}
		if !node {
			ran, err := kubelet.runJobs(context.Background(), results)
			if err != nil {
				return nil, err
			}
			out.Jobs = append(out.Jobs, ran...)
			if err := collector.finishForegroundDeletions(context.Background(), clusterCache); err != nil {
				return nil, err
			}
		}
		// The controller re-drives a running operation when a managed resource changes or after a few
		// seconds; the cache's watches deliver what the engine and the Jobs just wrote.
		time.Sleep(time.Second)
	}
	out.Phase, out.Message = string(phase), message
	for _, res := range results {
		out.Resources = append(out.Resources, resourceResult{
			Group: res.ResourceKey.Group, Kind: res.ResourceKey.Kind, Namespace: res.ResourceKey.Namespace,
			Name: res.ResourceKey.Name, Status: string(res.Status), Message: res.Message,
			HookType: string(res.HookType), HookPhase: string(res.HookPhase), SyncPhase: string(res.SyncPhase),
		})
	}
	return out, nil
}

// outOfSync is the Application's sync status as CompareAppState computes it: hooks, `Skip` manifests
// and live objects marked IgnoreExtraneous do not count; a difference, a missing or an extra object does.
func outOfSync(reconciliation sync.ReconciliationResult, diffs *diff.DiffResultList) bool {
	for i, target := range reconciliation.Target {
		live := reconciliation.Live[i]
		object := target
		if object == nil {
			object = live
		}
		if hook.IsHook(object) || ignore.Ignore(object) || (target != nil && hook.Skip(target)) {
			continue
		}
		if diffs.Diffs[i].Modified || target == nil || live == nil {
			return true
		}
	}
	return false
}

func ptr[T any](value T) *T { return &value }

// kubelet stands in for the kubelet no e2e cluster has: a Job the engine created or applied and now
// waits on is run once, here, and its outcome written to its status, as the Job controller would.
type kubelet struct {
	kubeconfig string
	clientset  kubernetes.Interface
	done       map[types.UID]bool
}

func (k *kubelet) runJobs(ctx context.Context, results []common.ResourceSyncResult) ([]jobRun, error) {
	var runs []jobRun
	for _, res := range results {
		if res.ResourceKey.Group != "batch" || res.ResourceKey.Kind != "Job" || res.HookPhase != common.OperationRunning {
			continue
		}
		jobs := k.clientset.BatchV1().Jobs(res.ResourceKey.Namespace)
		job, err := jobs.Get(ctx, res.ResourceKey.Name, metav1.GetOptions{})
		if err != nil || k.done[job.UID] || finished(job) {
			continue
		}
		k.done[job.UID] = true
		run := k.run(ctx, job)
		runs = append(runs, run)
		now := metav1.Now()
		job.Status.StartTime = &now
		if run.Succeeded {
			job.Status.Succeeded = 1
			job.Status.CompletionTime = &now
			job.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
			}
		} else {
			job.Status.Failed = 1
			job.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: run.Output, LastTransitionTime: now, LastProbeTime: now},
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: run.Output, LastTransitionTime: now, LastProbeTime: now},
			}
		}
		if _, err := jobs.UpdateStatus(ctx, job, metav1.UpdateOptions{}); err != nil {
			return nil, fmt.Errorf("job %s/%s status: %w", job.Namespace, job.Name, err)
		}
	}
	return runs, nil
}

func finished(job *batchv1.Job) bool {
	for _, condition := range job.Status.Conditions {
		if (condition.Type == batchv1.JobComplete || condition.Type == batchv1.JobFailed) && condition.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// run runs the pod's containers in order, as the pod's ServiceAccount: `kubectl` and inline shell
// scripts (`sh -c`) run with a `kubectl` on PATH that impersonates it. A Job with any other program
// (an image's own) counts as complete without running: Ran says so in the output.
func (k *kubelet) run(ctx context.Context, job *batchv1.Job) jobRun {
	run := jobRun{Namespace: job.Namespace, Name: job.Name, Ran: true, Succeeded: true}
	pod := job.Spec.Template.Spec
	account := pod.ServiceAccountName
	if account == "" {
		account = "default"
	}
	bin, err := os.MkdirTemp("", "argo-sync-kubectl-")
	if err != nil {
		return failed(run, err.Error())
	}
	defer os.RemoveAll(bin)
	real, err := exec.LookPath("kubectl")
	if err != nil {
		return failed(run, err.Error())
	}
	wrapper := fmt.Sprintf("#!/bin/sh\nexec %q --kubeconfig=%q --as=system:serviceaccount:%s:%s \"$@\"\n", real, k.kubeconfig, job.Namespace, account)
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(wrapper), 0o755); err != nil {
		return failed(run, err.Error())
	}
	containers := append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...)
	// A container that runs an image's own program (an installer) cannot run here, and the pod's
	// other containers may depend on what it leaves behind: none of them runs.
	for _, container := range containers {
		if !runnable(container) {
			run.Ran = false
			run.Output += fmt.Sprintf("[%s] not run (no kubelet): %s\n", container.Name, strings.Join(append(container.Command, container.Args...), " "))
		}
	}
	if !run.Ran {
		return run
	}
	for _, container := range containers {
		argv := append(append([]string{}, container.Command...), container.Args...)
		command := exec.CommandContext(ctx, argv[0], argv[1:]...)
		command.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		for _, variable := range container.Env {
			command.Env = append(command.Env, variable.Name+"="+variable.Value)
		}
		if argv[0] == "kubectl" {
			command.Path = filepath.Join(bin, "kubectl")
		}
		text, err := command.CombinedOutput()
		run.Output += fmt.Sprintf("[%s] %s", container.Name, text)
		if err != nil {
			return failed(run, "")
		}
	}
	return run
}

func runnable(container corev1.Container) bool {
	argv := append(append([]string{}, container.Command...), container.Args...)
	if len(argv) == 0 {
		return false
	}
	switch filepath.Base(argv[0]) {
	case "kubectl":
		return true
	case "sh", "bash":
		return len(argv) > 2 && argv[1] == "-c"
	}
	return false
}

func failed(run jobRun, output string) jobRun {
	run.Succeeded = false
	run.Output += output
	return run
}

// garbageCollector stands in for kube-controller-manager's garbage collector, which no e2e cluster
// runs: the engine deletes a hook (BeforeHookCreation) and prunes with foreground propagation, and
// such an object stays, with the `foregroundDeletion` finalizer, until its dependents are gone. No
// dependents exist here (no controller makes pods or ReplicaSets), so the finalizer is removed.
type garbageCollector struct {
	dynamic dynamic.Interface
	mapper  *restmapper.DeferredDiscoveryRESTMapper
}

func newGarbageCollector(config *rest.Config) (*garbageCollector, error) {
	client, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	discovery, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, err
	}
	return &garbageCollector{dynamic: client, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery))}, nil
}

func (g *garbageCollector) finishForegroundDeletions(ctx context.Context, clusterCache cache.ClusterCache) error {
	deleting := clusterCache.FindResources("", func(r *cache.Resource) bool {
		return r.Resource != nil && r.Resource.GetDeletionTimestamp() != nil && slices.Contains(r.Resource.GetFinalizers(), metav1.FinalizerDeleteDependents)
	})
	for _, resource := range deleting {
		object := resource.Resource
		mapping, err := g.mapper.RESTMapping(object.GroupVersionKind().GroupKind(), object.GroupVersionKind().Version)
		if err != nil {
			return err
		}
		remaining := slices.DeleteFunc(slices.Clone(object.GetFinalizers()), func(f string) bool { return f == metav1.FinalizerDeleteDependents })
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": remaining, "resourceVersion": object.GetResourceVersion()}})
		if err != nil {
			return err
		}
		_, err = g.dynamic.Resource(mapping.Resource).Namespace(object.GetNamespace()).Patch(ctx, object.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("finishing the deletion of %s %s/%s: %w", object.GetKind(), object.GetNamespace(), object.GetName(), err)
		}
	}
	return nil
}
