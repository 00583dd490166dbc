package main

import (
	"sort"
	"sync/atomic"
	"time"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// BenchResult is the time of full scheduling cycles of one scenario through the framework runtime.
type BenchResult struct {
	ID       string    `json:"id"`
	Error    *string   `json:"error"`
	Nodes    int       `json:"nodes"`
	Feasible int       `json:"feasible"`
	Millis   []float64 `json:"millis"` // one per run, in run order
	P50      float64   `json:"p50"`
}

// Bench times `runs` cycles as kube-scheduler runs them for one pod, without percentageOfNodesToScore
// sampling: RunPreFilterPlugins, RunFilterPlugins on every node in parallel (16 workers, the default),
// RunPreScorePlugins and RunScorePlugins on the feasible nodes. The framework is built once (as
// kube-scheduler's is), so the figure is the per-pod cost, comparable with the extender's per-request time.
func Bench(sc *Scenario, runs int) (*BenchResult, error) {
	env, err := build(sc, 16)
	if err != nil {
		return nil, err
	}
	defer env.close()
	res := &BenchResult{ID: sc.ID, Nodes: len(env.nodeInfos)}
	for i := 0; i < runs; i++ {
		start := time.Now()
		state := framework.NewCycleState()
		feasible := []fwk.NodeInfo{}
		if _, status, _ := env.fw.RunPreFilterPlugins(env.ctx, state, env.pod); status.IsSuccess() {
			passed := make([]bool, len(env.nodeInfos))
			var count int32
			env.fw.Parallelizer().Until(env.ctx, len(env.nodeInfos), func(i int) {
				if env.fw.RunFilterPlugins(env.ctx, state, env.pod, env.nodeInfos[i]).IsSuccess() {
					passed[i] = true
					atomic.AddInt32(&count, 1)
				}
			}, "Filter")
			for i, ok := range passed {
				if ok {
					feasible = append(feasible, env.nodeInfos[i])
				}
			}
			if len(feasible) > 1 {
				if s := env.fw.RunPreScorePlugins(env.ctx, state, env.pod, feasible); s.IsSuccess() {
					_, _ = env.fw.RunScorePlugins(env.ctx, state, env.pod, feasible)
				}
			}
		}
		res.Millis = append(res.Millis, float64(time.Since(start).Microseconds())/1000)
		res.Feasible = len(feasible)
	}
	sorted := append([]float64(nil), res.Millis...)
	sort.Float64s(sorted)
	if len(sorted) > 0 {
		res.P50 = sorted[len(sorted)/2]
	}
	return res, nil
}
