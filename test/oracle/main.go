// The oracle for `karpctl why`: Karpenter v1.14.1's own scheduler, run as a library on a why snapshot.
//
//	oracle SNAPSHOT.json…  → one JSON line per snapshot on stdout: pod by pod, NodePool by NodePool, whether
//	                         Karpenter would launch a NodeClaim for the pod from that NodePool, and its own
//	                         reason when not (many files per run: the runner asks about thousands of cases)
//	oracle resolve SNAPSHOT.json → the EC2NodeClasses' status as Karpenter's own subnet reconciler writes it
//	                         from the snapshot's VPC subnets (after a printed fix changed them in AWS)
//	oracle catalog         → the AWS provider's test catalogue (real DescribeInstanceTypes answers) in the
//	                         snapshot's InstanceTypeInfo shape, for the case generator
//
// Nothing here re-implements a scheduling rule: the snapshot is turned into the Kubernetes and EC2 objects
// Karpenter reads (a controller-runtime fake client, the AWS instance-type provider over its fake EC2 API,
// Karpenter's cluster state), and Karpenter's Provisioner.Validate, VolumeTopology, NewTopology,
// NewScheduler and Solve give the answer. Each (pod, NodePool) is solved alone: `why` judges every
// NodePool for every pod on its own, so that is the question the oracle answers.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/controller-runtime/pkg/log"
)

func main() {
	log.SetLogger(discardLogger())
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: oracle SNAPSHOT.json... | oracle resolve SNAPSHOT.json... | oracle catalog")
		os.Exit(2)
	}
	ctx := context.Background()
	enc := json.NewEncoder(os.Stdout)
	if os.Args[1] == "catalog" {
		out, err := catalog(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "oracle:", err)
			os.Exit(1)
		}
		_ = enc.Encode(out)
		return
	}
	if os.Args[1] == "resolve" {
		for _, path := range os.Args[2:] {
			line := struct {
				File        string          `json:"file"`
				NodeClasses []ResolvedClass `json:"nodeClasses,omitempty"`
				Error       string          `json:"error,omitempty"`
			}{File: path}
			if r, err := resolveFile(ctx, path); err != nil {
				line.Error = err.Error()
			} else {
				line.NodeClasses = r
			}
			_ = enc.Encode(line)
		}
		return
	}
	for _, path := range os.Args[1:] {
		line := struct {
			File   string  `json:"file"`
			Answer *Answer `json:"answer,omitempty"`
			Error  string  `json:"error,omitempty"`
		}{File: path}
		if a, err := judgeFile(ctx, path); err != nil {
			line.Error = err.Error()
		} else {
			line.Answer = a
		}
		if err := enc.Encode(line); err != nil {
			fmt.Fprintln(os.Stderr, "oracle:", err)
			os.Exit(1)
		}
	}
}
