package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

// objectDecoder decodes Kubernetes objects strictly (unknown or duplicate
// fields are errors), without defaulting: the scheduler sees stored objects.
var objectDecoder = serializer.NewCodecFactory(clientgoscheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// Run evaluates one scenario.
func Run(sc *Scenario) (*Result, error) {
	env, err := build(sc, 1)
	if err != nil {
		return nil, err
	}
	defer env.close()
	res := runCycle(env.ctx, env.fw.ListPlugins(), env.instances, env.pod, env.nodeInfos)
	res.ID = sc.ID
	res.Cycle = runSchedulingCycle(env.ctx, env)
	return res, nil
}

// env is a framework built for one scenario, ready to run cycles.
type env struct {
	ctx       context.Context
	fw        framework.Framework
	instances map[string]fwk.Plugin
	pod       *v1.Pod
	nodeInfos []fwk.NodeInfo
	client    *fake.Clientset
	// drainVictims collects the pods preemption evicted (set by recordVictims).
	drainVictims func()
	close        func()
}

// build decodes a scenario and builds the framework runtime over a snapshot of it, with the given
// parallelism (1 for verdicts, kube-scheduler's default 16 for timing).
func build(sc *Scenario, parallelism int) (*env, error) {
	metrics.Register() // the framework's instrumentation needs it (idempotent)
	ctx, cancel := context.WithCancel(context.Background())

	objs, nodes, assigned, pod, err := decodeObjects(sc)
	if err != nil {
		cancel()
		return nil, err
	}
	profile, err := loadProfile(sc.Profile)
	if err != nil {
		cancel()
		return nil, err
	}

	// The informers see every object; the scheduler's own pod informer
	// drops terminal pods, so they are left out here too.
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	draManager, draSynced, err := newDRAManager(ctx, client, factory)
	if err != nil {
		cancel()
		return nil, err
	}
	csiManager := nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())
	snapshot := internalcache.NewSnapshot(assigned, nodes)

	// Wrap the in-tree registry to keep a handle on each plugin instance:
	// the framework does not expose them, and each must be run on its own.
	instances := map[string]fwk.Plugin{}
	registry := frameworkplugins.NewInTreeRegistry()
	for name, factoryFn := range registry {
		registry[name] = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			p, err := factoryFn(ctx, args, h)
			if err == nil {
				instances[name] = p
			}
			return p, err
		}
	}

	options := append(snapshotListers(snapshot),
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithSharedDRAManager(draManager),
		frameworkruntime.WithSharedCSIManager(csiManager),
		frameworkruntime.WithEventRecorder(events.NewFakeRecorder(100)),
		frameworkruntime.WithParallelism(parallelism),
		frameworkruntime.WithPodNominator(noNominator{}),
	)
	fw, err := frameworkruntime.NewFramework(ctx, registry, profile, options...)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("building framework: %w", err)
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			_ = fw.Close()
			cancel()
			return nil, fmt.Errorf("informer for %v did not sync", typ)
		}
	}
	// The DRA manager's own views (allocated devices, the extended resource cache, the slice tracker)
	// are filled by event handlers, which run after the informers' stores synced.
	if !cache.WaitForCacheSync(ctx.Done(), draSynced...) {
		_ = fw.Close()
		cancel()
		return nil, fmt.Errorf("DRA manager did not sync")
	}

	nodeInfos := make([]fwk.NodeInfo, 0, len(nodes))
	for _, n := range nodes {
		ni, err := snapshot.NodeInfos().Get(n.Name)
		if err != nil {
			_ = fw.Close()
			cancel()
			return nil, err
		}
		nodeInfos = append(nodeInfos, ni)
	}
	return &env{ctx: ctx, fw: fw, instances: instances, pod: pod, nodeInfos: nodeInfos, client: client,
		close: func() { _ = fw.Close(); cancel() }}, nil
}

// runCycle runs PreFilter, Filter (every plugin on every node), PreScore,
// Score and NormalizeScore, mirroring frameworkImpl's Run*Plugins.
func runCycle(ctx context.Context, enabled *config.Plugins, instances map[string]fwk.Plugin,
	pod *v1.Pod, nodeInfos []fwk.NodeInfo) *Result {
	res := &Result{ID: "", PreFilter: map[string]Status{}, Nodes: map[string]*NodeResult{}}
	for _, ni := range nodeInfos {
		res.Nodes[ni.Node().Name] = &NodeResult{Filters: map[string]Status{}, Scores: map[string]Score{}}
	}
	state := framework.NewCycleState()

	// PreFilter, as RunPreFilterPlugins: stop at UnschedulableAndUnresolvable
	// or Error, go on after Unschedulable; Skip disables the coupled Filter.
	skipFilter := sets.New[string]()
	var preRes *fwk.PreFilterResult
	pluginsWithNodes := sets.New[string]()
	nodeSets := map[string]sets.Set[string]{}
	rejected := false
	for _, p := range enabled.PreFilter.Enabled {
		pl := instances[p.Name].(fwk.PreFilterPlugin)
		r, s := pl.PreFilter(ctx, state, pod, nodeInfos)
		res.PreFilter[p.Name] = toStatus(s)
		if s.IsSkip() {
			skipFilter.Insert(p.Name)
			continue
		}
		if !s.IsSuccess() {
			rejected = true
			if s.Code() == fwk.Unschedulable {
				continue
			}
			break
		}
		if !r.AllNodes() {
			pluginsWithNodes.Insert(p.Name)
			nodeSets[p.Name] = r.NodeNames
		}
		preRes = preRes.Merge(r)
		if !preRes.AllNodes() && len(preRes.NodeNames) == 0 {
			// RunPreFilterPlugins names them sorted (sets.List), in both releases.
			msg := fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", sets.List(pluginsWithNodes))
			if len(pluginsWithNodes) == 1 {
				msg = fmt.Sprintf("node(s) didn't satisfy plugin %v", sets.List(pluginsWithNodes)[0])
			}
			for name := range pluginsWithNodes {
				res.PreFilter[name] = Status{Code: fwk.UnschedulableAndUnresolvable.String(), Reasons: []string{msg}}
			}
			rejected = true
			break
		}
	}
	if rejected {
		return res
	}

	// Filter: every plugin on every node, no early exit.
	var feasible []fwk.NodeInfo
	for _, ni := range nodeInfos {
		nr := res.Nodes[ni.Node().Name]
		ok := true
		for _, p := range enabled.Filter.Enabled {
			if skipFilter.Has(p.Name) {
				nr.Filters[p.Name] = Status{Code: fwk.Skip.String(), Reasons: []string{}}
				continue
			}
			s := instances[p.Name].(fwk.FilterPlugin).Filter(ctx, state, pod, ni)
			if !s.IsSuccess() && !s.IsRejected() {
				s = fwk.AsStatus(fmt.Errorf("running %q filter plugin: %w", p.Name, s.AsError()))
			}
			nr.Filters[p.Name] = toStatus(s)
			ok = ok && s.IsSuccess()
		}
		// A node outside the PreFilterResult is not evaluated by kube-scheduler.
		if !preRes.AllNodes() && !preRes.NodeNames.Has(ni.Node().Name) {
			ok = false
			for name, set := range nodeSets {
				if !set.Has(ni.Node().Name) && nr.Filters[name].Code == fwk.Success.String() {
					nr.Filters[name] = Status{Code: fwk.UnschedulableAndUnresolvable.String(),
						Reasons: []string{fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(pluginsWithNodes))}}
				}
			}
		}
		nr.Feasible = ok
		if ok {
			feasible = append(feasible, ni)
		}
	}
	if len(feasible) == 0 {
		return res
	}
	if err := runScores(ctx, enabled, instances, state, pod, feasible, res); err != nil {
		msg := err.Error()
		res.Error = &msg
	}
	return res
}

// runScores mirrors RunPreScorePlugins and RunScorePlugins on the feasible nodes.
func runScores(ctx context.Context, enabled *config.Plugins, instances map[string]fwk.Plugin,
	state fwk.CycleState, pod *v1.Pod, feasible []fwk.NodeInfo, res *Result) error {
	skipScore := sets.New[string]()
	for _, p := range enabled.PreScore.Enabled {
		s := instances[p.Name].(fwk.PreScorePlugin).PreScore(ctx, state, pod, feasible)
		if s.IsSkip() {
			skipScore.Insert(p.Name)
			continue
		}
		if !s.IsSuccess() {
			return fmt.Errorf("running PreScore plugin %q: %w", p.Name, s.AsError())
		}
	}
	for _, p := range enabled.Score.Enabled {
		if skipScore.Has(p.Name) {
			for _, ni := range feasible {
				res.Nodes[ni.Node().Name].Scores[p.Name] = Score{Skipped: true}
			}
			continue
		}
		pl := instances[p.Name].(fwk.ScorePlugin)
		list := make(fwk.NodeScoreList, len(feasible))
		raw := make([]int64, len(feasible))
		for i, ni := range feasible {
			v, s := pl.Score(ctx, state, pod, ni)
			if !s.IsSuccess() {
				return fmt.Errorf("plugin %q failed with: %w", p.Name, s.AsError())
			}
			list[i] = fwk.NodeScore{Name: ni.Node().Name, Score: v}
			raw[i] = v
		}
		if ext := pl.ScoreExtensions(); ext != nil {
			if s := ext.NormalizeScore(ctx, state, pod, list); !s.IsSuccess() {
				return fmt.Errorf("plugin %q failed with: %w", p.Name, s.AsError())
			}
		}
		for i, ns := range list {
			if ns.Score > fwk.MaxNodeScore || ns.Score < fwk.MinNodeScore {
				return fmt.Errorf("plugin %q returns an invalid score %v, it should in the range of [%v, %v] after normalizing",
					p.Name, ns.Score, fwk.MinNodeScore, fwk.MaxNodeScore)
			}
			nr := res.Nodes[ns.Name]
			w := ns.Score * int64(p.Weight)
			nr.Scores[p.Name] = Score{Raw: raw[i], Normalized: ns.Score, Weighted: w}
			nr.Total += w
		}
	}
	return nil
}

func toStatus(s *fwk.Status) Status {
	reasons := []string{}
	if s != nil && s.Reasons() != nil {
		reasons = s.Reasons()
	}
	return Status{Code: s.Code().String(), Reasons: reasons}
}

// decodeObjects decodes the scenario's objects and pod. It returns every
// object for the fake clientset, the nodes (input order), the pods bound to
// existing nodes and the incoming pod.
func decodeObjects(sc *Scenario) (objs []runtime.Object, nodes []*v1.Node, assigned []*v1.Pod, pod *v1.Pod, err error) {
	nodeNames := sets.New[string]()
	var pods []*v1.Pod
	for i, raw := range sc.Objects {
		obj, _, err := objectDecoder.Decode(raw, nil, nil)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("objects[%d]: %w", i, err)
		}
		switch o := obj.(type) {
		case *v1.Node:
			nodes = append(nodes, o)
			nodeNames.Insert(o.Name)
		case *v1.Pod:
			defaultPod(o)
			if o.Status.Phase == v1.PodSucceeded || o.Status.Phase == v1.PodFailed {
				continue
			}
			pods = append(pods, o)
		}
		objs = append(objs, obj)
	}
	for _, p := range pods {
		if p.Spec.NodeName != "" && nodeNames.Has(p.Spec.NodeName) {
			assigned = append(assigned, p)
		}
	}
	if len(sc.Pod) == 0 || string(sc.Pod) == "null" {
		return nil, nil, nil, nil, fmt.Errorf("scenario has no pod")
	}
	obj, _, err := objectDecoder.Decode(sc.Pod, &schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, nil)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("pod: %w", err)
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, nil, nil, nil, fmt.Errorf("pod: got %T", obj)
	}
	defaultPod(pod)
	// A pod to schedule that is also one of the objects (a bound pod whose resize is deferred) is that object:
	// the cluster holds it once.
	if !slices.ContainsFunc(pods, func(p *v1.Pod) bool { return p.Namespace == pod.Namespace && p.Name == pod.Name }) {
		objs = append(objs, pod)
	}
	return objs, nodes, assigned, pod, nil
}

// defaultPod fills what the apiserver always sets and the framework keys on.
func defaultPod(p *v1.Pod) {
	if p.Namespace == "" {
		p.Namespace = "default"
	}
	if p.UID == "" {
		p.UID = types.UID(p.Namespace + "/" + p.Name)
	}
}

// loadProfile decodes a v1 KubeSchedulerProfile exactly as kube-scheduler
// loads its config file (strict, v1 defaulting, conversion, validation).
func loadProfile(raw json.RawMessage) (*config.KubeSchedulerProfile, error) {
	profiles := "[]"
	if len(raw) > 0 && string(raw) != "null" {
		profiles = "[" + string(raw) + "]"
	}
	data := `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":` + profiles + `}`
	obj, _, err := scheme.Codecs.UniversalDecoder().Decode([]byte(data), nil, nil)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	cfg, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("profile: got %T", obj)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	if len(cfg.Profiles) != 1 {
		return nil, fmt.Errorf("profile: expected 1 profile, got %d", len(cfg.Profiles))
	}
	p := &cfg.Profiles[0]
	ensurePlugin(&p.Plugins.QueueSort, p.Plugins.MultiPoint, names.PrioritySort)
	ensurePlugin(&p.Plugins.Bind, p.Plugins.MultiPoint, names.DefaultBinder)
	return p, nil
}

// ensurePlugin enables a mandatory plugin (one queue sort, one binder) that a
// restricted profile (multiPoint disabled "*") left out, for convenience.
func ensurePlugin(set *config.PluginSet, multi config.PluginSet, name string) {
	has := func(ps []config.Plugin) bool {
		return slices.ContainsFunc(ps, func(p config.Plugin) bool { return p.Name == name })
	}
	if len(set.Enabled) == 0 && !has(multi.Enabled) {
		set.Enabled = append(set.Enabled, config.Plugin{Name: name})
	}
}

// newDRAManager builds the DRA manager as scheduler.New does (several
// plugins, NodeResourcesFit included, consult it for extended resources).
func newDRAManager(ctx context.Context, client *fake.Clientset, factory informers.SharedInformerFactory) (fwk.SharedDRAManager, []cache.InformerSynced, error) {
	if !feature.DefaultFeatureGate.Enabled(features.DynamicResourceAllocation) {
		return nil, nil, nil
	}
	claimCache := assumecache.NewAssumeCache(klog.FromContext(ctx), factory.Resource().V1().ResourceClaims().Informer(),
		"ResourceClaim", "", nil)
	opts := resourceslicetracker.Options{
		EnableDeviceTaintRules:   feature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
		EnableConsumableCapacity: feature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
		SliceInformer:            factory.Resource().V1().ResourceSlices(),
		KubeClient:               client,
	}
	if opts.EnableDeviceTaintRules {
		setTaintInformers(&opts, factory) // as scheduler.go of the release does (k8s136.go / k8s137.go)
	}
	tracker, err := resourceslicetracker.StartTracker(ctx, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("resource slice tracker: %w", err)
	}
	manager := dynamicresources.NewDRAManager(ctx, claimCache, tracker, factory)
	// The claim cache's registration with its informer: synced once every claim reached the
	// allocated-devices view (the assume cache notifies its handlers synchronously).
	synced := []cache.InformerSynced{claimCache.AddEventHandler(cache.ResourceEventHandlerFuncs{}).HasSynced, tracker.HasSynced}
	// As scheduler.New's event handlers do: DeviceClass events feed the extended resource cache.
	if erCache, ok := manager.DeviceClassResolver().(*extendedresourcecache.ExtendedResourceCache); ok && erCache != nil {
		reg, err := factory.Resource().V1().DeviceClasses().Informer().AddEventHandler(erCache)
		if err != nil {
			return nil, nil, fmt.Errorf("device class handler: %w", err)
		}
		synced = append(synced, reg.HasSynced)
	}
	return manager, synced, nil
}
