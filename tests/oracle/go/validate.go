package main

// -validate mode: checks that generated objects are what the apiserver would
// store. Each object is validated with the apiserver's create validation
// (after conversion to the internal types) and its v1 defaulting is applied
// to a copy: fields that the defaulting would add or change are listed, so
// that a generator can emit stored (already defaulted) objects.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/apps"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	"k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/policy"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	policyvalidation "k8s.io/kubernetes/pkg/apis/policy/validation"
	"k8s.io/kubernetes/pkg/apis/resource"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	resourcevalidation "k8s.io/kubernetes/pkg/apis/resource/validation"
	"k8s.io/kubernetes/pkg/apis/scheduling"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	schedulingvalidation "k8s.io/kubernetes/pkg/apis/scheduling/validation"
	"k8s.io/kubernetes/pkg/apis/storage"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	storagevalidation "k8s.io/kubernetes/pkg/apis/storage/validation"
)

// ValidationResult is one output line of -validate.
type ValidationResult struct {
	ID        string   `json:"id"`
	Error     *string  `json:"error"`
	Invalid   []string `json:"invalid"`
	Defaulted []string `json:"defaulted"`
}

// Validate checks every object of a scenario and its pod.
func Validate(sc *Scenario) *ValidationResult {
	res := &ValidationResult{ID: sc.ID, Invalid: []string{}, Defaulted: []string{}}
	raws := append(append([]json.RawMessage{}, sc.Objects...), sc.Pod)
	for i, raw := range raws {
		where := fmt.Sprintf("objects[%d]", i)
		if i == len(sc.Objects) {
			where = "pod"
		}
		obj, _, err := objectDecoder.Decode(raw, &schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, nil)
		if err != nil {
			msg := fmt.Sprintf("%s: %v", where, err)
			res.Error = &msg
			return res
		}
		if m, err := meta.Accessor(obj); err == nil {
			where += fmt.Sprintf(" %s %s", obj.GetObjectKind().GroupVersionKind().Kind, keyOf(m.GetNamespace(), m.GetName()))
		}
		for _, e := range validateObject(obj) {
			res.Invalid = append(res.Invalid, fmt.Sprintf("%s: %v", where, e))
		}
		for _, p := range defaultedPaths(obj) {
			res.Defaulted = append(res.Defaulted, fmt.Sprintf("%s: %s", where, p))
		}
	}
	return res
}

func keyOf(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// validateObject converts to the internal type and runs the create validation.
func validateObject(obj runtime.Object) field.ErrorList {
	internal, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), runtime.InternalGroupVersioner)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	switch o := internal.(type) {
	case *core.Pod:
		opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&o.Spec, nil, &o.ObjectMeta, nil)
		return corevalidation.ValidatePodCreate(o, opts)
	case *core.Node:
		return corevalidation.ValidateNode(o)
	case *core.Namespace:
		return corevalidation.ValidateNamespace(o)
	case *core.Service:
		return corevalidation.ValidateServiceCreate(o)
	case *core.ReplicationController:
		return corevalidation.ValidateReplicationController(o, podutil.GetValidationOptionsFromPodTemplate(o.Spec.Template, nil))
	case *core.PersistentVolume:
		return corevalidation.ValidatePersistentVolume(o, corevalidation.ValidationOptionsForPersistentVolume(o, nil))
	case *core.PersistentVolumeClaim:
		return corevalidation.ValidatePersistentVolumeClaim(o, corevalidation.ValidationOptionsForPersistentVolumeClaim(o, nil))
	case *apps.ReplicaSet:
		return appsvalidation.ValidateReplicaSet(o, podutil.GetValidationOptionsFromPodTemplate(&o.Spec.Template, nil))
	case *apps.StatefulSet:
		return validateStatefulSet(o, podutil.GetValidationOptionsFromPodTemplate(&o.Spec.Template, nil))
	case *storage.StorageClass:
		return storagevalidation.ValidateStorageClass(o)
	case *storage.CSINode:
		return storagevalidation.ValidateCSINode(o)
	case *resource.ResourceSlice:
		return resourcevalidation.ValidateResourceSlice(o)
	case *resource.DeviceClass:
		return resourcevalidation.ValidateDeviceClass(o)
	case *scheduling.PriorityClass:
		return schedulingvalidation.ValidatePriorityClass(o)
	case *policy.PodDisruptionBudget:
		// Its status is the disruption controller's, written through the status subresource.
		errs := policyvalidation.ValidatePodDisruptionBudget(o, policyvalidation.PodDisruptionBudgetValidationOptions{})
		return append(errs, policyvalidation.ValidatePodDisruptionBudgetStatusUpdate(o.Status,
			policy.PodDisruptionBudgetStatus{}, field.NewPath("status"), schema.GroupVersion{Group: "policy", Version: "v1"})...)
	case *resource.ResourceClaim:
		errs := resourcevalidation.ValidateResourceClaim(o)
		// A claim's status (allocation, reservedFor, device status) is written through the status
		// subresource: validate it as an update from the same claim without one.
		old := o.DeepCopy()
		old.Status = resource.ResourceClaimStatus{}
		old.ResourceVersion = "1"
		updated := o.DeepCopy()
		updated.ResourceVersion = "1"
		return append(errs, resourcevalidation.ValidateResourceClaimStatusUpdate(updated, old)...)
	}
	return nil
}

// defaultedPaths lists the JSON paths that v1 defaulting adds or changes.
func defaultedPaths(obj runtime.Object) []string {
	before, _ := json.Marshal(obj)
	copied := obj.DeepCopyObject()
	legacyscheme.Scheme.Default(copied)
	after, _ := json.Marshal(copied)
	var a, b any
	_ = json.Unmarshal(before, &a)
	_ = json.Unmarshal(after, &b)
	var out []string
	diffJSON("", a, b, &out)
	sort.Strings(out)
	return out
}

func diffJSON(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		for k, bv := range bm {
			diffJSON(path+"."+k, am[k], bv, out)
		}
		return
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range bs {
			diffJSON(fmt.Sprintf("%s[%d]", path, i), as[i], bs[i], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		before, _ := json.Marshal(a)
		after, _ := json.Marshal(b)
		*out = append(*out, fmt.Sprintf("%s: %s -> %s", strings.TrimPrefix(path, "."), before, after))
	}
}
