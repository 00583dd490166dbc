//go:build k8s136

// What differs between the two releases' Go APIs, v1.36.3 side (built with -tags k8s136 by tests/oracle/build).
package main

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/informers"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	apivalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/apps"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
)

// setTaintInformers: v1.36 scheduler.go reads DeviceTaintRules as resource.k8s.io/v1beta2 and needs DeviceClasses.
func setTaintInformers(opts *resourceslicetracker.Options, factory informers.SharedInformerFactory) {
	opts.TaintInformer = factory.Resource().V1beta2().DeviceTaintRules()
	opts.ClassInformer = factory.Resource().V1().DeviceClasses()
}

func validateStatefulSet(o *apps.StatefulSet, opts apivalidation.PodValidationOptions) field.ErrorList {
	return appsvalidation.ValidateStatefulSet(o, opts)
}
