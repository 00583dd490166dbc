// Command wirecheck reads one JSON answer of a scheduler extender on stdin and
// checks it against the pinned k8s.io/kube-scheduler/extender/v1 types, the way
// kube-scheduler would read it, and stricter:
//
//   - the body must decode with json.Decoder.DisallowUnknownFields into the
//     named type, and hold exactly one JSON value;
//   - every object key must be spelt exactly as Go would write it (the field's
//     json tag name, or its Go name when it has no tag). Go itself matches keys
//     case-insensitively, so "nodenames" would be accepted by kube-scheduler,
//     but this project emits the exact names. The check walks the whole value,
//     including Pods and Nodes nested inside;
//   - HostPriority scores must lie in [MinExtenderPriority, MaxExtenderPriority].
//
// With -complete, every field of the top-level struct (or of each array
// element) must also be present, as Go's own encoder would write it.
//
// Usage: wirecheck [-complete] <ExtenderFilterResult|HostPriorityList|ExtenderBindingResult|ExtenderPreemptionResult>
// Exit status: 0 ok, 1 mismatch (message on stderr), 2 usage error.
package main

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"

	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

var targets = map[string]func() any{
	"ExtenderFilterResult":     func() any { return &extenderv1.ExtenderFilterResult{} },
	"HostPriorityList":         func() any { return &extenderv1.HostPriorityList{} },
	"ExtenderBindingResult":    func() any { return &extenderv1.ExtenderBindingResult{} },
	"ExtenderPreemptionResult": func() any { return &extenderv1.ExtenderPreemptionResult{} },
	// Requests too, so that recorded fixtures can be checked with the same tool.
	"ExtenderArgs":           func() any { return &extenderv1.ExtenderArgs{} },
	"ExtenderBindingArgs":    func() any { return &extenderv1.ExtenderBindingArgs{} },
	"ExtenderPreemptionArgs": func() any { return &extenderv1.ExtenderPreemptionArgs{} },
}

func typeNames() string {
	names := make([]string, 0, len(targets))
	for n := range targets {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, "|")
}

func main() {
	complete := flag.Bool("complete", false, "require every top-level field to be present")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: wirecheck [-complete] <%s> < body.json\n", typeNames())
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	mk, ok := targets[flag.Arg(0)]
	if !ok {
		fmt.Fprintf(os.Stderr, "wirecheck: unknown type %q (want one of %s)\n", flag.Arg(0), typeNames())
		os.Exit(2)
	}
	body, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "wirecheck: reading stdin: %v\n", err)
		os.Exit(2)
	}
	if err := check(body, mk(), *complete); err != nil {
		fmt.Fprintf(os.Stderr, "wirecheck %s: %v\n", flag.Arg(0), err)
		os.Exit(1)
	}
	fmt.Printf("wirecheck %s: ok\n", flag.Arg(0))
}

func check(body []byte, target any, complete bool) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(target); err != nil {
		return fmt.Errorf("strict decode: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the first JSON value")
	}

	var raw any
	rdec := json.NewDecoder(bytes.NewReader(body))
	rdec.UseNumber()
	if err := rdec.Decode(&raw); err != nil {
		return fmt.Errorf("raw decode: %w", err)
	}
	t := reflect.TypeOf(target).Elem()
	var problems []string
	walk(raw, t, "$", &problems)
	if complete {
		requireAll(raw, t, &problems)
	}
	if hl, ok := target.(*extenderv1.HostPriorityList); ok {
		for i, hp := range *hl {
			if hp.Score < extenderv1.MinExtenderPriority || hp.Score > extenderv1.MaxExtenderPriority {
				problems = append(problems, fmt.Sprintf("$[%d].Score: %d outside [%d, %d]", i, hp.Score,
					extenderv1.MinExtenderPriority, extenderv1.MaxExtenderPriority))
			}
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

var (
	jsonUnmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
)

// customDecoded reports whether t decodes itself (resource.Quantity, metav1.Time,
// intstr.IntOrString, ...): such values are opaque to the key walk.
func customDecoded(t reflect.Type) bool {
	return t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)
}

// fields maps each exact JSON key of struct type t to its field type,
// following encoding/json's rules for tags and untagged embedded structs.
func fields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for k, v := range fields(et) {
					if _, dup := out[k]; !dup {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = ft
	}
	return out
}

func walk(v any, t reflect.Type, path string, problems *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil || customDecoded(t) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return // a type error, already reported by the strict decode
		}
		fs := fields(t)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft, exact := fs[k]
			if !exact {
				want := ""
				for name := range fs {
					if strings.EqualFold(name, k) {
						want = name
					}
				}
				if want != "" {
					*problems = append(*problems, fmt.Sprintf("%s: key %q must be spelt %q", path, k, want))
				} else {
					*problems = append(*problems, fmt.Sprintf("%s: unknown key %q", path, k))
				}
				continue
			}
			walk(obj[k], ft, path+"."+k, problems)
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return
		}
		for i, e := range arr {
			walk(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), problems)
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		for k, e := range obj {
			walk(e, t.Elem(), fmt.Sprintf("%s[%q]", path, k), problems)
		}
	}
}

func requireAll(v any, t reflect.Type, problems *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	check := func(obj any, st reflect.Type, path string) {
		m, ok := obj.(map[string]any)
		if !ok {
			return
		}
		names := make([]string, 0)
		for name := range fields(st) {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if _, ok := m[name]; !ok {
				*problems = append(*problems, fmt.Sprintf("%s: missing key %q", path, name))
			}
		}
	}
	switch t.Kind() {
	case reflect.Struct:
		check(v, t, "$")
	case reflect.Slice:
		et := t.Elem()
		for et.Kind() == reflect.Pointer {
			et = et.Elem()
		}
		if arr, ok := v.([]any); ok && et.Kind() == reflect.Struct {
			for i, e := range arr {
				check(e, et, fmt.Sprintf("$[%d]", i))
			}
		}
	}
}
