package main

// The why snapshot (karpctl.why-facts/v1, see src/why/types.ts), read into the Kubernetes types
// Karpenter reads: its pods, NodePools, EC2NodeClasses, DaemonSets and volumes are Kubernetes JSON
// already (trimmed), so they decode straight into the API structs.

import (
	"encoding/json"
	"fmt"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
)

// read is karpctl's Read<T>: a value, or why it could not be read.
type read[T any] struct {
	OK    bool `json:"ok"`
	Value T    `json:"value"`
}

// instanceTypeInfo is the trimmed DescribeInstanceTypes entry of a snapshot (InstanceTypeInfo in types.ts).
type instanceTypeInfo struct {
	Name              string         `json:"name"`
	VCPUs             int32          `json:"vcpus"`
	MemoryMiB         int64          `json:"memoryMiB"`
	Architectures     []string       `json:"architectures"`
	UsageClasses      []string       `json:"usageClasses"`
	MaxENIs           int32          `json:"maxEnis"`
	IPv4PerENI        int32          `json:"ipv4PerEni"`
	GPUs              []gpu          `json:"gpus"`
	NeuronDevices     []neuronDevice `json:"neuronDevices"`
	EFAInterfaces     int32          `json:"efaInterfaces"`
	InstanceStorageGB int64          `json:"instanceStorageGB"`
	Details           *typeDetails   `json:"details,omitempty"`
}

// typeDetails is the snapshot's InstanceTypeDetails: the DescribeInstanceTypes fields the provider
// labels types by (CPU, hypervisor, encryption in transit, NVMe, EBS bandwidth, GPU memory, accelerators).
type typeDetails struct {
	Processor *struct {
		Manufacturer      string  `json:"manufacturer"`
		SustainedClockGhz float64 `json:"sustainedClockGhz"`
	} `json:"processor,omitempty"`
	Hypervisor          string        `json:"hypervisor"`
	EncryptionInTransit bool          `json:"encryptionInTransit"`
	NvmeSupport         *string       `json:"nvmeSupport,omitempty"`
	EBSBandwidthMbps    *int32        `json:"ebsBandwidthMbps,omitempty"`
	GPUMemoryMiB        []int32       `json:"gpuMemoryMiB"`
	Accelerators        []accelerator `json:"accelerators"`
	NeuronNames         []string      `json:"neuronNames"`
}

type accelerator struct {
	Name         string `json:"name"`
	Manufacturer string `json:"manufacturer"`
	Count        int32  `json:"count"`
}

type gpu struct {
	Manufacturer string `json:"manufacturer"`
	Name         string `json:"name"`
	Count        int32  `json:"count"`
}

type neuronDevice struct {
	Count          int32 `json:"count"`
	CoresPerDevice int32 `json:"coresPerDevice"`
}

type offering struct {
	InstanceType string `json:"instanceType"`
	Zone         string `json:"zone"`
}

type placedPod struct {
	Namespace string            `json:"namespace"`
	NodeName  string            `json:"nodeName"`
	Labels    map[string]string `json:"labels"`
}

type kubeNode struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
	Taints []corev1.Taint    `json:"taints"`
}

type deployment struct {
	Env map[string]string `json:"env"`
}

type snapshot struct {
	Schema string `json:"schema"`
	Meta   struct {
		ClusterName string `json:"clusterName"`
		Region      string `json:"region"`
	} `json:"meta"`
	Kube struct {
		NodePools   read[[]karpv1.NodePool]    `json:"nodePools"`
		NodeClasses read[[]awsv1.EC2NodeClass] `json:"nodeClasses"`
		Nodes       read[[]kubeNode]           `json:"nodes"`
		Deployment  read[*deployment]          `json:"deployment"`
	} `json:"kube"`
	Pods           read[[]corev1.Pod]                   `json:"pods"`
	NodeClaims     read[[]karpv1.NodeClaim]             `json:"nodeClaims"`
	DaemonSets     read[[]appsv1.DaemonSet]             `json:"daemonSets"`
	PVCs           read[[]corev1.PersistentVolumeClaim] `json:"pvcs"`
	PVs            read[[]corev1.PersistentVolume]      `json:"pvs"`
	StorageClasses read[[]storagev1.StorageClass]       `json:"storageClasses"`
	InstanceTypes  *read[[]instanceTypeInfo]            `json:"instanceTypes"`
	Offerings      *read[[]offering]                    `json:"offerings"`
	PlacedPods     *read[[]placedPod]                   `json:"placedPods"`
	Subnets        *read[[]vpcSubnet]                   `json:"subnets"`
}

func loadSnapshot(path string) (*snapshot, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &snapshot{}
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.Schema != "karpctl.why-facts/v1" {
		return nil, fmt.Errorf("%s: not a why snapshot (schema %q)", path, s.Schema)
	}
	// The oracle answers for what the snapshot holds: a read that failed leaves nothing to judge on.
	if !s.Kube.NodePools.OK || !s.Kube.NodeClasses.OK || !s.Pods.OK || s.InstanceTypes == nil ||
		!s.InstanceTypes.OK || s.Offerings == nil || !s.Offerings.OK {
		return nil, fmt.Errorf("%s: the oracle needs NodePools, EC2NodeClasses, pods, instance types and offerings", path)
	}
	return s, nil
}
