// flux-apply applies Kubernetes objects the way Flux's kustomize-controller applies a Kustomization:
// the same library (github.com/fluxcd/pkg/ssa), the same field manager, owner labels, apply options,
// managed-fields cleanup and garbage collection (kustomize-controller's apply and prune functions).
// The e2e suite uses it to prove what rendered/ does to a live cluster under Flux. Test tooling only.
//
//	flux-apply --kubeconfig F --name N [--namespace NS] [--inventory F] < objects.yaml
//
// Objects are read from standard input (the output of `kubectl kustomize <dir>`). With --inventory,
// the file holds the objects applied last time (Flux keeps them in the Kustomization's status);
// objects no longer present are garbage-collected as with `prune: true`, and the file is rewritten.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/normalize"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kustomize-controller's field manager and the API group of its labels and annotations.
const (
	controllerName = "kustomize-controller"
	group          = "kustomize.toolkit.fluxcd.io"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the target cluster")
	name := flag.String("name", "", "name of the Flux Kustomization doing the apply")
	namespace := flag.String("namespace", "flux-system", "namespace of the Flux Kustomization")
	inventoryFile := flag.String("inventory", "", "file holding the previously applied objects (enables pruning)")
	flag.Parse()
	if *kubeconfig == "" || *name == "" {
		fmt.Fprintln(os.Stderr, "usage: flux-apply --kubeconfig F --name N [--namespace NS] [--inventory F] < objects.yaml")
		os.Exit(2)
	}
	if err := run(*kubeconfig, *name, *namespace, *inventoryFile); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(kubeconfig, name, namespace, inventoryFile string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	kubeClient, err := client.New(config, client.Options{})
	if err != nil {
		return err
	}
	poller := polling.NewStatusPoller(kubeClient, kubeClient.RESTMapper(), polling.Options{})
	manager := ssa.NewResourceManager(kubeClient, poller, ssa.Owner{Field: controllerName, Group: group})

	objects, err := ssautil.ReadObjects(os.Stdin)
	if err != nil {
		return err
	}
	if err := normalize.UnstructuredList(objects); err != nil {
		return err
	}
	manager.SetOwnerLabels(objects, name, namespace)

	changes, err := manager.ApplyAllStaged(ctx, objects, applyOptions())
	if err != nil {
		return err
	}
	report := map[string]string{}
	for _, entry := range changes.Entries {
		report[entry.Subject] = entry.Action.String()
	}

	if inventoryFile != "" {
		pruned, err := prune(ctx, manager, inventoryFile, objects, name, namespace)
		if err != nil {
			return err
		}
		for subject, action := range pruned {
			report[subject] = action
		}
	}
	return json.NewEncoder(os.Stdout).Encode(report)
}

// applyOptions are kustomize-controller's (spec.force false, no --override-manager flags).
func applyOptions() ssa.ApplyOptions {
	opts := ssa.DefaultApplyOptions()
	opts.ExclusionSelector = map[string]string{group + "/reconcile": "disabled", group + "/ssa": "Ignore"}
	opts.IfNotPresentSelector = map[string]string{group + "/ssa": "IfNotPresent"}
	opts.ForceSelector = map[string]string{group + "/force": "enabled"}
	opts.Cleanup = ssa.ApplyCleanupOptions{
		Annotations: []string{corev1.LastAppliedConfigAnnotation, group + "/checksum", "fluxcd.io/sync-checksum"},
		Labels:      []string{"fluxcd.io/sync-gc-mark"},
		FieldManagers: []ssa.FieldManager{
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationApply},
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationUpdate},
			{Name: "before-first-apply", OperationType: metav1.ManagedFieldsOperationUpdate},
			{Name: controllerName, OperationType: metav1.ManagedFieldsOperationUpdate},
		},
		Exclusions: map[string]string{group + "/ssa": "Merge"},
	}
	return opts
}

// prune deletes what was applied last time and is gone now, with kustomize-controller's options,
// then records the objects applied this time.
func prune(ctx context.Context, manager *ssa.ResourceManager, file string, objects []*unstructured.Unstructured,
	name, namespace string) (map[string]string, error) {
	var previous []*unstructured.Unstructured
	if data, err := os.ReadFile(file); err == nil {
		if err := json.Unmarshal(data, &previous); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}

	current := map[string]bool{}
	refs := make([]*unstructured.Unstructured, 0, len(objects))
	for _, o := range objects {
		current[ssautil.FmtUnstructured(o)] = true
		ref := &unstructured.Unstructured{}
		ref.SetGroupVersionKind(o.GroupVersionKind())
		ref.SetNamespace(o.GetNamespace())
		ref.SetName(o.GetName())
		refs = append(refs, ref)
	}
	var stale []*unstructured.Unstructured
	for _, o := range previous {
		if !current[ssautil.FmtUnstructured(o)] {
			stale = append(stale, o)
		}
	}

	report := map[string]string{}
	if len(stale) > 0 {
		changes, err := manager.DeleteAll(ctx, stale, ssa.DeleteOptions{
			PropagationPolicy: metav1.DeletePropagationBackground,
			Inclusions:        manager.GetOwnerLabels(name, namespace),
			Exclusions:        map[string]string{group + "/prune": "disabled", group + "/reconcile": "disabled"},
		})
		if err != nil {
			return nil, err
		}
		for _, entry := range changes.Entries {
			report[entry.Subject] = entry.Action.String()
		}
	}

	data, err := json.Marshal(refs)
	if err != nil {
		return nil, err
	}
	return report, os.WriteFile(file, data, 0o644)
}
