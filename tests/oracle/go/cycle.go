package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
)

// Cycle is what kube-scheduler's own scheduling cycle concludes for the pod (schedule_one.go's
// schedulingAlgorithm): the framework's RunPreFilterPlugins, RunFilterPluginsWithNominatedPods on each
// node (first rejection only), and, when no node fits, RunPostFilterPlugins and FitError.Error(), which
// is the pod's PodScheduled message.
type Cycle struct {
	Status     string         `json:"status"` // Gated (a PreEnqueue plugin), Schedulable, Unschedulable or SchedulerError
	Message    string         `json:"message"`
	Feasible   []string       `json:"feasible"`
	PostFilter *PostFilterOut `json:"postFilter,omitempty"`
}

// PostFilterOut is RunPostFilterPlugins' status, the nomination it sets (absent: left as it is) and the
// writes its plugins made: pods preempted, claims deallocated (status updated) or deleted.
type PostFilterOut struct {
	Code        string   `json:"code"`
	Message     string   `json:"message"`
	Nominated   *string  `json:"nominatedNode,omitempty"`
	Victims     []string `json:"victims"`
	Deallocated []string `json:"deallocated"`
	Deleted     []string `json:"deleted"`
}

// noNominator stands for the scheduling queue's nominator: no other pod is nominated anywhere.
type noNominator struct{}

func (noNominator) AddNominatedPod(klog.Logger, fwk.PodInfo, *fwk.NominatingInfo) {}
func (noNominator) DeleteNominatedPodIfExists(*v1.Pod)                            {}
func (noNominator) UpdateNominatedPod(klog.Logger, *v1.Pod, fwk.PodInfo)          {}
func (noNominator) NominatedPodsForNode(string) []fwk.PodInfo                     { return nil }

// recordVictims replaces the preemption executor's API calls with a record of the pods it would evict.
func recordVictims(env *env) *[]string {
	victims := &[]string{}
	pl, ok := env.instances[defaultpreemption.Name].(*defaultpreemption.DefaultPreemption)
	if !ok {
		return victims
	}
	done := make(chan string, 1024)
	recordPreemptPod(pl.Executor, func(victim *v1.Pod) { done <- victim.Namespace + "/" + victim.Name })
	env.drainVictims = func() {
		// Asynchronous preemption evicts from a goroutine: wait until it has finished.
		deadline := time.Now().Add(10 * time.Second)
		for pl.Executor.IsPodRunningPreemption(env.pod.UID) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		for {
			select {
			case v := <-done:
				*victims = append(*victims, v)
			default:
				sort.Strings(*victims)
				return
			}
		}
	}
	return victims
}

// runSchedulingCycle runs one cycle as kube-scheduler does, on a fresh CycleState.
func runSchedulingCycle(ctx context.Context, env *env) *Cycle {
	fw, pod, nodes := env.fw, env.pod, env.nodeInfos
	out := &Cycle{Feasible: []string{}}
	// The scheduling queue runs the PreEnqueue plugins first: a rejection keeps the pod out of any cycle.
	for _, pl := range fw.PreEnqueuePlugins() {
		if st := pl.PreEnqueue(ctx, pod); !st.IsSuccess() {
			out.Status, out.Message = "Gated", pl.Name()+": "+st.Message()
			return out
		}
	}
	if len(nodes) == 0 {
		out.Status, out.Message = "Unschedulable", "no nodes available to schedule pods"
		return out
	}
	state := framework.NewCycleState()
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	preRes, s, unscheduled := fw.RunPreFilterPlugins(ctx, state, pod)
	diagnosis.UnschedulablePlugins = unscheduled
	if !s.IsSuccess() {
		if !s.IsRejected() {
			out.Status, out.Message = "SchedulerError", s.AsError().Error()
			return out
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(s)
		diagnosis.PreFilterMsg = s.Message()
	} else {
		candidates := nodes
		if !preRes.AllNodes() {
			candidates = nil
			for _, ni := range nodes {
				if preRes.NodeNames.Has(ni.Node().Name) {
					candidates = append(candidates, ni)
				}
			}
			diagnosis.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
				fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unscheduled))))
		}
		for _, ni := range candidates {
			st := fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			if st.IsSuccess() {
				out.Feasible = append(out.Feasible, ni.Node().Name)
				continue
			}
			if st.Code() == fwk.Error {
				out.Status, out.Message, out.Feasible = "SchedulerError", st.AsError().Error(), []string{}
				return out
			}
			diagnosis.NodeToStatus.Set(ni.Node().Name, st)
		}
		if len(out.Feasible) > 0 {
			out.Status = "Schedulable"
			if len(out.Feasible) > 1 { // prioritizeNodes: a single feasible node is not scored
				feasible := make([]fwk.NodeInfo, 0, len(out.Feasible))
				for _, ni := range candidates {
					if sets.New(out.Feasible...).Has(ni.Node().Name) {
						feasible = append(feasible, ni)
					}
				}
				if st := fw.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
					out.Status, out.Message = "SchedulerError", st.AsError().Error()
				} else if _, st := fw.RunScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
					out.Status, out.Message = "SchedulerError", st.AsError().Error()
				}
			}
			return out
		}
	}
	out.Status = "Unschedulable"
	fitErr := &framework.FitError{Pod: pod, NumAllNodes: len(nodes), Diagnosis: diagnosis}
	if fw.HasPostFilterPlugins() {
		victims := recordVictims(env)
		client := env.client
		client.ClearActions()
		result, status := fw.RunPostFilterPlugins(ctx, state, pod, diagnosis.NodeToStatus)
		fitErr.Diagnosis.PostFilterMsg = status.Message()
		pf := &PostFilterOut{Code: status.Code().String(), Message: status.Message(), Victims: []string{},
			Deallocated: []string{}, Deleted: []string{}}
		if result != nil && result.NominatingInfo != nil && result.Mode() == fwk.ModeOverride {
			name := result.NominatedNodeName
			pf.Nominated = &name
		}
		if env.drainVictims != nil {
			env.drainVictims()
			pf.Victims = append(pf.Victims, *victims...)
		}
		for _, action := range client.Actions() {
			if action.GetResource().Resource != "resourceclaims" {
				continue
			}
			switch a := action.(type) {
			case k8stesting.UpdateAction:
				if a.GetSubresource() == "status" {
					obj := a.GetObject()
					if claim, ok := obj.(interface {
						GetNamespace() string
						GetName() string
					}); ok {
						pf.Deallocated = append(pf.Deallocated, claim.GetNamespace()+"/"+claim.GetName())
					}
				}
			case k8stesting.DeleteAction:
				pf.Deleted = append(pf.Deleted, a.GetNamespace()+"/"+a.GetName())
			}
		}
		out.PostFilter = pf
	}
	out.Message = fitErr.Error()
	return out
}
