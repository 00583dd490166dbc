//go:build k8s136

// What differs between the two releases' Go APIs, v1.36.3 side (built with -tags k8s136 by tests/oracle/build).
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

// setTaintInformers: v1.36 scheduler.go reads DeviceTaintRules as resource.k8s.io/v1beta2 and needs DeviceClasses.
func setTaintInformers(opts *resourceslicetracker.Options, factory informers.SharedInformerFactory) {
	opts.TaintInformer = factory.Resource().V1beta2().DeviceTaintRules()
	opts.ClassInformer = factory.Resource().V1().DeviceClasses()
}

func validateStatefulSet(o *apps.StatefulSet, opts apivalidation.PodValidationOptions) field.ErrorList {
	return appsvalidation.ValidateStatefulSet(o, opts)
}

// recordPreemptPod replaces the executor's evictions with a record of each victim (v1.36: PreemptPod
// returns an error only).
func recordPreemptPod(exec *preemption.Executor, record func(*v1.Pod)) {
	exec.PreemptPod = func(_ context.Context, _ preemption.Candidate, _ preemption.ExecutorPreemptor,
		victim *v1.Pod, _ string) error {
		record(victim)
		return nil
	}
}

// snapshotListers: v1.36's framework reads the snapshot through its SharedLister only.
func snapshotListers(snapshot *internalcache.Snapshot) []frameworkruntime.Option {
	return []frameworkruntime.Option{frameworkruntime.WithSnapshotSharedLister(snapshot)}
}
