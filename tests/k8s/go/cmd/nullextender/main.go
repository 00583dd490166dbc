// Command nullextender is a scheduler extender that does no scheduling work: it
// passes every candidate node, scores each 0 and binds where kube-scheduler says.
// The benchmark runs kube-scheduler with it to measure what the extender protocol
// itself costs (kube-scheduler's HTTP client, its JSON, the round trips and the
// Binding POST), the ceiling that no real extender can pass on the same machine.
//
// Usage: nullextender -listen 127.0.0.1:PORT -kubeconfig FILE
package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve on")
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster to bind in")
	flag.Parse()
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatalf("kubeconfig: %v", err)
	}
	config.QPS, config.Burst = 5000, 5000 // as the benchmark sets kube-scheduler's own client
	client := kubernetes.NewForConfigOrDie(config)

	answer := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(v); err != nil {
			log.Printf("write: %v", err)
		}
	}
	http.HandleFunc("/filter", func(w http.ResponseWriter, r *http.Request) {
		var args extenderv1.ExtenderArgs
		if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
			answer(w, extenderv1.ExtenderFilterResult{Error: err.Error()})
			return
		}
		answer(w, extenderv1.ExtenderFilterResult{NodeNames: args.NodeNames, Nodes: args.Nodes})
	})
	http.HandleFunc("/prioritize", func(w http.ResponseWriter, r *http.Request) {
		var args extenderv1.ExtenderArgs
		if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var hosts []string
		if args.NodeNames != nil {
			hosts = *args.NodeNames
		} else if args.Nodes != nil {
			for _, n := range args.Nodes.Items {
				hosts = append(hosts, n.Name)
			}
		}
		scores := make(extenderv1.HostPriorityList, len(hosts))
		for i, h := range hosts {
			scores[i] = extenderv1.HostPriority{Host: h}
		}
		answer(w, scores)
	})
	http.HandleFunc("/bind", func(w http.ResponseWriter, r *http.Request) {
		var args extenderv1.ExtenderBindingArgs
		if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
			answer(w, extenderv1.ExtenderBindingResult{Error: err.Error()})
			return
		}
		binding := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: args.PodNamespace, Name: args.PodName, UID: args.PodUID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: args.Node},
		}
		result := extenderv1.ExtenderBindingResult{}
		if err := client.CoreV1().Pods(args.PodNamespace).Bind(r.Context(), binding, metav1.CreateOptions{}); err != nil {
			result.Error = err.Error()
		}
		answer(w, result)
	})
	http.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	log.Fatal(http.ListenAndServe(*listen, nil))
}
