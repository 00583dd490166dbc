package main

import "encoding/json"

// Scenario is one input line.
type Scenario struct {
	ID      string            `json:"id"`
	Objects []json.RawMessage `json:"objects"`
	Pod     json.RawMessage   `json:"pod"`
	// Profile is a KubeSchedulerProfile in kubescheduler.config.k8s.io/v1
	// shape; absent or null means the release's default profile.
	Profile json.RawMessage `json:"profile,omitempty"`
}

// Status is one plugin's verdict.
type Status struct {
	Code    string   `json:"code"`
	Reasons []string `json:"reasons"`
}

// Score is one score plugin's result on one node.
type Score struct {
	Raw        int64 `json:"raw"`
	Normalized int64 `json:"normalized"`
	Weighted   int64 `json:"weighted"`
	// Skipped is set when the plugin's PreScore returned Skip.
	Skipped bool `json:"skipped,omitempty"`
}

// NodeResult is everything known about one node.
type NodeResult struct {
	Filters  map[string]Status `json:"filters"`
	Feasible bool              `json:"feasible"`
	Scores   map[string]Score  `json:"scores"`
	Total    int64             `json:"total"`
}

// Result is one output line.
type Result struct {
	ID        string                 `json:"id"`
	Error     *string                `json:"error"`
	PreFilter map[string]Status      `json:"prefilter"`
	Nodes     map[string]*NodeResult `json:"nodes"`
	// Cycle is kube-scheduler's own cycle: first rejections only, then PostFilter (see cycle.go).
	Cycle *Cycle `json:"cycle,omitempty"`
}
