// Command oracle runs kube-scheduler's in-tree plugins (k8s.io/kubernetes
// v1.36.3, or v1.37.2 when built with go.1.37.mod) on scenarios read as JSON Lines from stdin and prints, for each
// scenario, one JSON line with every plugin's verdict and score on every node.
//
// Input line:  {"id": "...", "objects": [...], "pod": {...}, "profile": {...}}
// Output line: {"id": "...", "error": null, "prefilter": {...}, "nodes": {...}}
//
// The plugins are built by the real framework runtime (NewFramework with the
// in-tree registry and the v1 defaulted profile). Unlike kube-scheduler, every
// filter plugin is run on every node (no early exit, no node sampling), so that
// each plugin's verdict can be compared on its own. See tests/oracle/README.md.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// kubernetesVersion is the release this binary is built from (set by tests/oracle/build).
var kubernetesVersion = "unknown"

var validateMode = flag.Bool("validate", false, "check that the scenarios' objects are valid and already defaulted, instead of scheduling")
var benchStream = flag.Bool("bench-stream", false, "build the cluster of the first scenario line once, then time each further line's {pod, runs, sample} on it (see BenchStream)")
var benchRuns = flag.Int("bench", 0, "time this many full scheduling cycles per scenario through the framework runtime, instead of reporting verdicts")
var featureGates = flag.String("feature-gates", "", "feature gates to set, as kube-scheduler's --feature-gates (A=true,B=false)")
var listGates = flag.Bool("list-feature-gates", false, "print every feature gate of this release (default, stage, locked) and their dependencies as JSON, then exit")

func main() {
	flag.Parse()
	if os.Getenv("ORACLE_VERBOSE") == "" {
		klog.SetLogger(logr.Discard())
	}
	if *listGates {
		if err := dumpGates(os.Stdout, kubernetesVersion); err != nil {
			fmt.Fprintln(os.Stderr, "oracle:", err)
			os.Exit(2)
		}
		return
	}
	if err := setGates(*featureGates); err != nil {
		fmt.Fprintln(os.Stderr, "oracle:", err)
		os.Exit(2)
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	if *benchStream {
		if err := BenchStream(in, enc, out.Flush); err != nil {
			fmt.Fprintln(os.Stderr, "oracle: bench-stream:", err)
			os.Exit(2)
		}
		return
	}
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var res any
			if *validateMode {
				res = validateLine(line)
			} else if *benchRuns > 0 {
				res = benchLine(line, *benchRuns)
			} else {
				res = runLine(line)
			}
			if encErr := enc.Encode(res); encErr != nil {
				fmt.Fprintln(os.Stderr, "oracle: encode:", encErr)
				os.Exit(2)
			}
			// Flush per scenario so that a caller streaming lines sees results promptly.
			if flushErr := out.Flush(); flushErr != nil {
				os.Exit(2)
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "oracle: read:", err)
			os.Exit(2)
		}
	}
}

// runLine decodes and runs one scenario; it never panics: a panic inside the
// plugins is reported as the scenario's error.
func runLine(line []byte) (res *Result) {
	var sc Scenario
	if err := json.Unmarshal(line, &sc); err != nil {
		return errorResult("", fmt.Errorf("decoding scenario: %w", err))
	}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "oracle: scenario %q: panic: %v\n%s", sc.ID, r, debug.Stack())
			res = errorResult(sc.ID, fmt.Errorf("panic: %v", r))
		}
	}()
	res, err := Run(&sc)
	if err != nil {
		return errorResult(sc.ID, err)
	}
	return res
}

func benchLine(line []byte, runs int) *BenchResult {
	var sc Scenario
	if err := json.Unmarshal(line, &sc); err != nil {
		msg := fmt.Sprintf("decoding scenario: %v", err)
		return &BenchResult{Error: &msg}
	}
	res, err := Bench(&sc, runs)
	if err != nil {
		msg := err.Error()
		return &BenchResult{ID: sc.ID, Error: &msg}
	}
	return res
}

func validateLine(line []byte) (res *ValidationResult) {
	var sc Scenario
	fail := func(msg string) *ValidationResult {
		return &ValidationResult{ID: sc.ID, Error: &msg, Invalid: []string{}, Defaulted: []string{}}
	}
	if err := json.Unmarshal(line, &sc); err != nil {
		return fail(fmt.Sprintf("decoding scenario: %v", err))
	}
	defer func() {
		if r := recover(); r != nil {
			res = fail(fmt.Sprintf("panic: %v", r))
		}
	}()
	return Validate(&sc)
}

func errorResult(id string, err error) *Result {
	msg := err.Error()
	return &Result{ID: id, Error: &msg, PreFilter: map[string]Status{}, Nodes: map[string]*NodeResult{}}
}
