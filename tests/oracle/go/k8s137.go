//go:build k8s137

// What differs between the two releases' Go APIs, v1.37.2 side (built with -tags k8s137 by tests/oracle/build).
package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/informers"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/kubernetes/pkg/apis/apps"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	apivalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// setTaintInformers: v1.37 scheduler.go reads DeviceTaintRules as resource.k8s.io/v1 (DRADeviceTaintRules is GA).
func setTaintInformers(opts *resourceslicetracker.Options, factory informers.SharedInformerFactory) {
	opts.TaintInformer = factory.Resource().V1().DeviceTaintRules()
}

func validateStatefulSet(o *apps.StatefulSet, opts apivalidation.PodValidationOptions) field.ErrorList {
	return appsvalidation.ValidateStatefulSet(o, appsvalidation.StatefulSetValidationOptions{}, opts)
}

// recordPreemptPod replaces the executor's evictions with a record of each victim (v1.37: PreemptPod
// also says whether the victim was preempted in memory only, without a delete call).
func recordPreemptPod(exec *preemption.Executor, record func(*v1.Pod)) {
	exec.PreemptPod = func(_ context.Context, _ preemption.Candidate, _ preemption.ExecutorPreemptor,
		victim *v1.Pod, _ string) (bool, error) {
		record(victim)
		return false, nil
	}
}

// snapshotListers: v1.37's preemption reads the nodes through the MutableSnapshotSharedLister, which
// scheduler.go sets to the same snapshot (WithMutableSnapshotLister beside WithSnapshotSharedLister).
func snapshotListers(snapshot *internalcache.Snapshot) []frameworkruntime.Option {
	return []frameworkruntime.Option{frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithMutableSnapshotLister(snapshot)}
}
