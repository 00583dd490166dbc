package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

// GateSpec is one feature gate as this kube-scheduler release sees it at its own version.
type GateSpec struct {
	Default    bool   `json:"default"`
	PreRelease string `json:"preRelease"`
	Locked     bool   `json:"lockToDefault"`
}

// GateTable is every feature gate kube-scheduler's --feature-gates accepts, with the gates each
// one needs enabled (AddDependencies).
type GateTable struct {
	Version      string              `json:"version"`
	Gates        map[string]GateSpec `json:"gates"`
	Dependencies map[string][]string `json:"dependencies"`
}

// dumpGates writes the feature gate table of the release this oracle is built from.
func dumpGates(w io.Writer, version string) error {
	table := GateTable{Version: version, Gates: map[string]GateSpec{}, Dependencies: map[string][]string{}}
	for name, spec := range feature.DefaultMutableFeatureGate.GetAll() {
		table.Gates[string(name)] = GateSpec{Default: spec.Default, PreRelease: string(spec.PreRelease), Locked: spec.LockToDefault}
	}
	for name, deps := range feature.DefaultMutableFeatureGate.Dependencies() {
		if len(deps) == 0 {
			continue
		}
		list := make([]string, 0, len(deps))
		for _, d := range deps {
			list = append(list, string(d))
		}
		sort.Strings(list)
		table.Dependencies[string(name)] = list
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(table)
}

// setGates applies a --feature-gates style list ("A=true,B=false") to the process's gates, as
// kube-scheduler's flag does.
func setGates(value string) error {
	if strings.TrimSpace(value) == "" {
		return nil
	}
	if err := feature.DefaultMutableFeatureGate.Set(value); err != nil {
		return fmt.Errorf("--feature-gates: %w", err)
	}
	return nil
}

var _ featuregate.Feature // the package is the gates' type
