// Command karmada-oracle runs Karmada v1.18.2's own scheduling on one case read as JSON from stdin
// and prints the answer as JSON on stdout.
//
// Input, one JSON object per line: {"clusters": [Cluster...], "placement": Placement (optional),
// "binding": ResourceBinding}. Output, one line per case: {"clusters": [{"name","replicas"}],
// "error": "...", "affinityName": "...", "filtered": {cluster: [reason...]}, "invalid": [...]}.
//
// What runs is Karmada's code: core.NewGenericScheduler over a cache.NewCache snapshot, the in-tree
// filter and score plugins, SelectClusters with spread constraints, AssignReplicas with the general
// estimator (registered by pkg/estimator/client's init), helper's webhook defaults and the webhook's
// placement validation (pkg/util/validation). The glue
// written here, and why, is listed in ../README.md ("Glue").
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	clusterlister "github.com/karmada-io/karmada/pkg/generated/listers/cluster/v1alpha1"
	schedcache "github.com/karmada-io/karmada/pkg/scheduler/cache"
	"github.com/karmada-io/karmada/pkg/scheduler/core"
	"github.com/karmada-io/karmada/pkg/scheduler/framework"
	"github.com/karmada-io/karmada/pkg/scheduler/framework/plugins"
	"github.com/karmada-io/karmada/pkg/scheduler/framework/plugins/apienablement"
	"github.com/karmada-io/karmada/pkg/scheduler/framework/plugins/clusteraffinity"
	"github.com/karmada-io/karmada/pkg/scheduler/framework/plugins/clustereviction"
	"github.com/karmada-io/karmada/pkg/scheduler/framework/plugins/clusterlocality"
	"github.com/karmada-io/karmada/pkg/scheduler/framework/plugins/spreadconstraint"
	"github.com/karmada-io/karmada/pkg/scheduler/framework/plugins/tainttoleration"
	"github.com/karmada-io/karmada/pkg/scheduler/framework/runtime"
	"github.com/karmada-io/karmada/pkg/util/helper"
	"github.com/karmada-io/karmada/pkg/util/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

type input struct {
	Clusters  []clusterv1alpha1.Cluster    `json:"clusters"`
	Placement *policyv1alpha1.Placement    `json:"placement"`
	Binding   workv1alpha2.ResourceBinding `json:"binding"`
}

type target struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas"`
}

type output struct {
	Clusters     []target            `json:"clusters"`
	Error        string              `json:"error"`
	AffinityName string              `json:"affinityName"`
	Filtered     map[string][]string `json:"filtered"`
	// Invalid lists karmada-webhook's validation errors; a placement with any is never scheduled.
	Invalid []fieldError `json:"invalid,omitempty"`
}

type fieldError struct {
	Field  string `json:"field"`
	Type   string `json:"type"`
	Detail string `json:"detail"`
	Error  string `json:"error"`
}

// filterOrder is the declaration order of plugins.NewInTreeRegistry. Upstream's framework runs the
// filters in Go map order (random) and stops at the first rejection, so a cluster failing two filters
// is counted under either reason from one run to the next; the oracle fixes the order to this one.
var filterOrder = []string{apienablement.Name, tainttoleration.Name, clusteraffinity.Name, spreadconstraint.Name, clustereviction.Name}

// orderedFilters runs the in-tree filter plugins in filterOrder (glue: see filterOrder).
type orderedFilters struct{ plugins []framework.FilterPlugin }

func (o *orderedFilters) Name() string { return "OrderedInTreeFilters" }

func (o *orderedFilters) Filter(ctx context.Context, spec *workv1alpha2.ResourceBindingSpec,
	status *workv1alpha2.ResourceBindingStatus, cluster *clusterv1alpha1.Cluster) *framework.Result {
	for _, p := range o.plugins {
		if r := p.Filter(ctx, spec, status, cluster); !r.IsSuccess() {
			return r
		}
	}
	return framework.NewResult(framework.Success)
}

// scoreOnly hides a plugin's Filter so that it is registered for scoring only.
type scoreOnly struct{ framework.ScorePlugin }

func inTreeFilters() []framework.FilterPlugin {
	reg := plugins.NewInTreeRegistry()
	var out []framework.FilterPlugin
	for _, name := range filterOrder {
		p, err := reg[name]()
		if err != nil {
			panic(err)
		}
		out = append(out, p.(framework.FilterPlugin))
	}
	return out
}

// orderedRegistry is the in-tree registry with its filters wrapped in filterOrder; score plugins
// (ClusterAffinity's constant score and ClusterLocality) are registered as they are.
func orderedRegistry() runtime.Registry {
	reg := plugins.NewInTreeRegistry()
	out := runtime.Registry{
		"OrderedInTreeFilters": func() (framework.Plugin, error) { return &orderedFilters{inTreeFilters()}, nil },
	}
	for _, name := range []string{clusteraffinity.Name, clusterlocality.Name} {
		factory := reg[name]
		out[name] = func() (framework.Plugin, error) {
			p, err := factory()
			if err != nil {
				return nil, err
			}
			return scoreOnly{p.(framework.ScorePlugin)}, nil
		}
	}
	return out
}

// sortedLister lists clusters by name; upstream's informer lister lists in map order.
type sortedLister struct {
	clusterlister.ClusterLister
	clusters []*clusterv1alpha1.Cluster
}

func (s sortedLister) List(_ labels.Selector) ([]*clusterv1alpha1.Cluster, error) {
	return s.clusters, nil
}

// applyDefaults does what the API server (CRD default replicaSchedulingType: Divided) and
// karmada-webhook's PropagationPolicy mutation do to a placement before the scheduler sees it.
func applyDefaults(p *policyv1alpha1.Placement) {
	if p.ReplicaScheduling != nil && p.ReplicaScheduling.ReplicaSchedulingType == "" {
		p.ReplicaScheduling.ReplicaSchedulingType = policyv1alpha1.ReplicaSchedulingTypeDivided
	}
	helper.SetDefaultSpreadConstraints(p.SpreadConstraints)
	helper.SetReplicaDivisionPreferenceWeighted(p)
}

// allReasons runs every filter on every non-deleting cluster and keeps all rejections, for
// comparison as a set per cluster.
func allReasons(filters []framework.FilterPlugin, clusters []*clusterv1alpha1.Cluster,
	spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) map[string][]string {
	out := map[string][]string{}
	for _, c := range clusters {
		if !c.DeletionTimestamp.IsZero() {
			continue
		}
		for _, f := range filters {
			if r := f.Filter(context.TODO(), spec, status, c); !r.IsSuccess() {
				out[c.Name] = append(out[c.Name], r.Reasons()...)
			}
		}
		sort.Strings(out[c.Name])
	}
	return out
}

func run(in input) output {
	clusters := make([]*clusterv1alpha1.Cluster, len(in.Clusters))
	for i := range in.Clusters {
		clusters[i] = &in.Clusters[i]
	}
	sort.Slice(clusters, func(i, j int) bool { return clusters[i].Name < clusters[j].Name })
	rb := in.Binding.DeepCopy()
	if in.Placement != nil {
		rb.Spec.Placement = in.Placement.DeepCopy()
	}
	if rb.Spec.Placement == nil {
		return output{Error: "spec.placement: the binding has no placement and no policy was given"}
	}
	applyDefaults(rb.Spec.Placement)
	// karmada-webhook validates after mutating; ValidatePropagationSpec checks the placement with this.
	if errs := validation.ValidatePlacement(*rb.Spec.Placement, field.NewPath("placement")); len(errs) > 0 {
		out := output{Filtered: map[string][]string{}}
		for _, e := range errs {
			out.Invalid = append(out.Invalid, fieldError{e.Field, string(e.Type), e.Detail, e.Error()})
		}
		out.Error = errs.ToAggregate().Error()
		return out
	}

	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	schedCache := schedcache.NewCache(sortedLister{clusters: clusters}, indexer, 0)
	algo, err := core.NewGenericScheduler(schedCache, orderedRegistry())
	if err != nil {
		panic(err)
	}
	filters := inTreeFilters()
	opt := &core.ScheduleAlgorithmOption{EnableEmptyWorkloadPropagation: false}
	out := output{Filtered: map[string][]string{}}

	// pkg/scheduler/scheduler.go scheduleResourceBinding: clusterAffinities != nil picks the loop.
	if rb.Spec.Placement.ClusterAffinities == nil {
		res, err := algo.Schedule(context.TODO(), &rb.Spec, &rb.Status, opt)
		out.Filtered = allReasons(filters, clusters, &rb.Spec, &rb.Status)
		if err != nil {
			out.Error = err.Error()
			return out
		}
		out.Clusters = targets(res.SuggestedClusters)
		return out
	}
	// scheduleResourceBindingWithClusterAffinities: from the observed term on, the first term that
	// schedules wins; when none does, the first error is the answer.
	terms := rb.Spec.Placement.ClusterAffinities
	if len(terms) == 0 {
		// No term to try: upstream returns a nil error without patching, spec.clusters stays.
		out.Clusters = targets(rb.Spec.Clusters)
		return out
	}
	index := 0
	for i, t := range terms {
		if rb.Status.SchedulerObservedAffinityName != "" && t.AffinityName == rb.Status.SchedulerObservedAffinityName {
			index = i
			break
		}
	}
	var firstErr error
	var firstFiltered map[string][]string
	var firstName string
	for ; index < len(terms); index++ {
		status := rb.Status.DeepCopy()
		status.SchedulerObservedAffinityName = terms[index].AffinityName
		res, err := algo.Schedule(context.TODO(), &rb.Spec, status, opt)
		filtered := allReasons(filters, clusters, &rb.Spec, status)
		if err == nil {
			out.Clusters = targets(res.SuggestedClusters)
			out.AffinityName = status.SchedulerObservedAffinityName
			out.Filtered = filtered
			return out
		}
		if firstErr == nil {
			firstErr, firstFiltered, firstName = err, filtered, status.SchedulerObservedAffinityName
		}
	}
	out.Error = firstErr.Error()
	out.Filtered = firstFiltered
	out.AffinityName = firstName
	return out
}

func targets(in []workv1alpha2.TargetCluster) []target {
	out := make([]target, 0, len(in))
	for _, t := range in {
		out = append(out, target{t.Name, t.Replicas})
	}
	return out
}

func main() {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	dec := json.NewDecoder(os.Stdin)
	enc := json.NewEncoder(os.Stdout)
	// One case per line (JSON Lines) in, one answer per line out.
	for {
		var in input
		if err := dec.Decode(&in); err == io.EOF {
			return
		} else if err != nil {
			fmt.Fprintf(os.Stderr, "karmada-oracle: bad input: %v\n", err)
			os.Exit(2)
		}
		if err := enc.Encode(run(in)); err != nil {
			fmt.Fprintf(os.Stderr, "karmada-oracle: %v\n", err)
			os.Exit(1)
		}
	}
}
