package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

// StreamRequest is one timing request of the -bench-stream mode: run `runs` cycles of this pod on the
// cluster built from the first line. With Sample, Filter stops once percentageOfNodesToScore's adaptive
// count of feasible nodes is found, as kube-scheduler's findNodesThatPassFilters does, starting where the
// previous cycle stopped; Candidates then lists the feasible nodes of the last cycle (what kube-scheduler
// sends to an extender).
type StreamRequest struct {
	Pod    json.RawMessage `json:"pod"`
	Runs   int             `json:"runs"`
	Sample bool            `json:"sample"`
}

// StreamResult answers a StreamRequest.
type StreamResult struct {
	Error      *string   `json:"error"`
	Feasible   int       `json:"feasible"`
	Millis     []float64 `json:"millis"`
	Candidates []string  `json:"candidates,omitempty"`
}

// numFeasibleNodesToFind is kube-scheduler's adaptive percentageOfNodesToScore (schedule_one.go): all
// nodes below 100, else 50% minus 1% per 125 nodes, at least 5% and at least 100 nodes.
func numFeasibleNodesToFind(all int) int {
	if all < 100 {
		return all
	}
	percentage := 50 - all/125
	if percentage < 5 {
		percentage = 5
	}
	if n := all * percentage / 100; n >= 100 {
		return n
	}
	return 100
}

// BenchStream builds the cluster of the first scenario line once, then answers one StreamRequest per
// further line, so that a caller can interleave these timings with its own (A B A B) on a busy machine.
func BenchStream(in *bufio.Reader, enc *json.Encoder, flush func() error) error {
	line, err := in.ReadBytes('\n')
	if err != nil && len(bytes.TrimSpace(line)) == 0 {
		return fmt.Errorf("reading the scenario: %w", err)
	}
	var sc Scenario
	if err := json.Unmarshal(line, &sc); err != nil {
		return fmt.Errorf("decoding scenario: %w", err)
	}
	env, err := build(&sc, 16)
	if err != nil {
		return err
	}
	defer env.close()
	if err := enc.Encode(map[string]any{"ready": true, "nodes": len(env.nodeInfos)}); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	next := 0
	for {
		line, readErr := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if err := enc.Encode(streamRun(env, line, &next)); err != nil {
				return err
			}
			if err := flush(); err != nil {
				return err
			}
		}
		if readErr == io.EOF {
			return nil
		}
		if readErr != nil {
			return readErr
		}
	}
}

func streamRun(env *env, line []byte, next *int) *StreamResult {
	fail := func(err error) *StreamResult { msg := err.Error(); return &StreamResult{Error: &msg} }
	var req StreamRequest
	if err := json.Unmarshal(line, &req); err != nil {
		return fail(fmt.Errorf("decoding request: %w", err))
	}
	obj, _, err := objectDecoder.Decode(req.Pod, &schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, nil)
	if err != nil {
		return fail(fmt.Errorf("pod: %w", err))
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return fail(fmt.Errorf("pod: got %T", obj))
	}
	defaultPod(pod)
	all := len(env.nodeInfos)
	limit := all
	if req.Sample {
		limit = numFeasibleNodesToFind(all)
	}
	res := &StreamResult{}
	for r := 0; r < req.Runs; r++ {
		start := time.Now()
		state := framework.NewCycleState()
		var feasible []fwk.NodeInfo
		if _, status, _ := env.fw.RunPreFilterPlugins(env.ctx, state, pod); status.IsSuccess() {
			found := make([]fwk.NodeInfo, limit)
			var count, processed int32
			ctx, cancel := context.WithCancel(env.ctx)
			first := *next
			env.fw.Parallelizer().Until(ctx, all, func(i int) {
				ni := env.nodeInfos[(first+i)%all]
				atomic.AddInt32(&processed, 1)
				if env.fw.RunFilterPlugins(ctx, state, pod, ni).IsSuccess() {
					if n := atomic.AddInt32(&count, 1); n > int32(limit) {
						cancel()
						atomic.AddInt32(&count, -1)
					} else {
						found[n-1] = ni
					}
				}
			}, "Filter")
			cancel()
			feasible = found[:count]
			*next = (first + int(processed)) % all
			if len(feasible) > 1 {
				if s := env.fw.RunPreScorePlugins(env.ctx, state, pod, feasible); s.IsSuccess() {
					_, _ = env.fw.RunScorePlugins(env.ctx, state, pod, feasible)
				}
			}
		}
		res.Millis = append(res.Millis, float64(time.Since(start).Microseconds())/1000)
		res.Feasible = len(feasible)
		if req.Sample && r == req.Runs-1 {
			for _, ni := range feasible {
				res.Candidates = append(res.Candidates, ni.Node().Name)
			}
		}
	}
	return res
}
