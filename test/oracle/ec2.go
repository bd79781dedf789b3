package main

// EC2 as Karpenter's AWS provider sees it: the snapshot's instance types and offerings are served by the
// provider's own fake EC2 API as DescribeInstanceTypes / DescribeInstanceTypeOfferings answers, and the
// real instance-type provider (labels, capacity, kube-reserved, eviction thresholds, ENI-limited pods,
// offerings) builds Karpenter's InstanceTypes from them.

import (
	"context"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/patrickmn/go-cache"
	"github.com/samber/lo"
	"k8s.io/utils/clock"

	awscache "github.com/aws/karpenter-provider-aws/pkg/cache"
	"github.com/aws/karpenter-provider-aws/pkg/fake"
	"github.com/aws/karpenter-provider-aws/pkg/providers/arczonalshift"
	"github.com/aws/karpenter-provider-aws/pkg/providers/capacityreservation"
	"github.com/aws/karpenter-provider-aws/pkg/providers/instancetype"
	"github.com/aws/karpenter-provider-aws/pkg/providers/placementgroup"
	"github.com/aws/karpenter-provider-aws/pkg/providers/subnet"
)

// toEC2 turns a snapshot's trimmed type back into the DescribeInstanceTypes entry it was read from. What
// the snapshot does not hold (CPU manufacturer, clock speed, hypervisor, bandwidths, GPU memory) stays
// unset, as it would for a type EC2 describes without it.
func toEC2(t instanceTypeInfo) ec2types.InstanceTypeInfo {
	info := ec2types.InstanceTypeInfo{
		InstanceType:  ec2types.InstanceType(t.Name),
		VCpuInfo:      &ec2types.VCpuInfo{DefaultVCpus: aws.Int32(t.VCPUs)},
		MemoryInfo:    &ec2types.MemoryInfo{SizeInMiB: aws.Int64(t.MemoryMiB)},
		ProcessorInfo: &ec2types.ProcessorInfo{},
		NetworkInfo: &ec2types.NetworkInfo{
			MaximumNetworkInterfaces:  aws.Int32(t.MaxENIs),
			Ipv4AddressesPerInterface: aws.Int32(t.IPv4PerENI),
			DefaultNetworkCardIndex:   aws.Int32(0),
			NetworkCards: []ec2types.NetworkCardInfo{{
				NetworkCardIndex:         aws.Int32(0),
				MaximumNetworkInterfaces: aws.Int32(t.MaxENIs),
			}},
		},
		SupportedVirtualizationTypes: []ec2types.VirtualizationType{ec2types.VirtualizationTypeHvm},
	}
	for _, a := range t.Architectures {
		info.ProcessorInfo.SupportedArchitectures = append(info.ProcessorInfo.SupportedArchitectures, ec2types.ArchitectureType(a))
	}
	for _, u := range t.UsageClasses {
		info.SupportedUsageClasses = append(info.SupportedUsageClasses, ec2types.UsageClassType(u))
	}
	if len(t.GPUs) > 0 {
		info.GpuInfo = &ec2types.GpuInfo{}
		for _, g := range t.GPUs {
			info.GpuInfo.Gpus = append(info.GpuInfo.Gpus, ec2types.GpuDeviceInfo{
				Manufacturer: aws.String(g.Manufacturer), Name: aws.String(g.Name), Count: aws.Int32(g.Count),
				MemoryInfo: &ec2types.GpuDeviceMemoryInfo{SizeInMiB: aws.Int32(0)},
			})
		}
	}
	if len(t.NeuronDevices) > 0 {
		info.NeuronInfo = &ec2types.NeuronInfo{}
		for _, n := range t.NeuronDevices {
			info.NeuronInfo.NeuronDevices = append(info.NeuronInfo.NeuronDevices, ec2types.NeuronDeviceInfo{
				Count:    aws.Int32(n.Count),
				Name:     aws.String(neuronName(t.Name)),
				CoreInfo: &ec2types.NeuronDeviceCoreInfo{Count: aws.Int32(n.CoresPerDevice)},
			})
		}
	}
	if t.EFAInterfaces > 0 {
		info.NetworkInfo.EfaSupported = aws.Bool(true)
		info.NetworkInfo.EfaInfo = &ec2types.EfaInfo{MaximumEfaInterfaces: aws.Int32(t.EFAInterfaces)}
	}
	if t.InstanceStorageGB > 0 {
		info.InstanceStorageSupported = aws.Bool(true)
		info.InstanceStorageInfo = &ec2types.InstanceStorageInfo{
			TotalSizeInGB: aws.Int64(t.InstanceStorageGB),
			NvmeSupport:   ec2types.EphemeralNvmeSupportRequired,
		}
	}
	applyDetails(&info, t.Details)
	return info
}

// applyDetails puts the snapshot's details back where DescribeInstanceTypes has them; without details
// (facts of an older karpctl) those fields stay unset, as toEC2 says.
func applyDetails(info *ec2types.InstanceTypeInfo, d *typeDetails) {
	if d == nil {
		return
	}
	if d.Processor != nil {
		info.ProcessorInfo.Manufacturer = aws.String(d.Processor.Manufacturer)
		info.ProcessorInfo.SustainedClockSpeedInGhz = aws.Float64(d.Processor.SustainedClockGhz)
	}
	info.Hypervisor = ec2types.InstanceTypeHypervisor(d.Hypervisor)
	info.NetworkInfo.EncryptionInTransitSupported = aws.Bool(d.EncryptionInTransit)
	if info.InstanceStorageInfo != nil && d.NvmeSupport != nil {
		info.InstanceStorageInfo.NvmeSupport = ec2types.EphemeralNvmeSupport(*d.NvmeSupport)
	}
	if d.EBSBandwidthMbps != nil {
		info.EbsInfo = &ec2types.EbsInfo{
			EbsOptimizedSupport: ec2types.EbsOptimizedSupportDefault,
			EbsOptimizedInfo:    &ec2types.EbsOptimizedInfo{MaximumBandwidthInMbps: d.EBSBandwidthMbps},
		}
	}
	if info.GpuInfo != nil {
		for i := range info.GpuInfo.Gpus {
			if i < len(d.GPUMemoryMiB) {
				info.GpuInfo.Gpus[i].MemoryInfo.SizeInMiB = aws.Int32(d.GPUMemoryMiB[i])
			}
		}
	}
	if len(d.Accelerators) > 0 {
		info.InferenceAcceleratorInfo = &ec2types.InferenceAcceleratorInfo{}
		for _, a := range d.Accelerators {
			info.InferenceAcceleratorInfo.Accelerators = append(info.InferenceAcceleratorInfo.Accelerators, ec2types.InferenceDeviceInfo{
				Name: aws.String(a.Name), Manufacturer: aws.String(a.Manufacturer), Count: aws.Int32(a.Count),
			})
		}
	}
	if info.NeuronInfo != nil {
		for i := range info.NeuronInfo.NeuronDevices {
			if i < len(d.NeuronNames) {
				info.NeuronInfo.NeuronDevices[i].Name = aws.String(d.NeuronNames[i])
			}
		}
	}
}

// detailsOf is applyDetails' reverse, for `oracle catalog`.
func detailsOf(info ec2types.InstanceTypeInfo) *typeDetails {
	d := &typeDetails{
		Hypervisor:          string(info.Hypervisor),
		EncryptionInTransit: info.NetworkInfo != nil && lo.FromPtr(info.NetworkInfo.EncryptionInTransitSupported),
		GPUMemoryMiB:        []int32{},
		Accelerators:        []accelerator{},
		NeuronNames:         []string{},
	}
	if p := info.ProcessorInfo; p != nil {
		d.Processor = &struct {
			Manufacturer      string  `json:"manufacturer"`
			SustainedClockGhz float64 `json:"sustainedClockGhz"`
		}{lo.FromPtr(p.Manufacturer), lo.FromPtr(p.SustainedClockSpeedInGhz)}
	}
	if s := info.InstanceStorageInfo; s != nil {
		d.NvmeSupport = lo.ToPtr(string(s.NvmeSupport))
	}
	if e := info.EbsInfo; e != nil && e.EbsOptimizedInfo != nil && e.EbsOptimizedSupport == ec2types.EbsOptimizedSupportDefault {
		d.EBSBandwidthMbps = lo.ToPtr(lo.FromPtr(e.EbsOptimizedInfo.MaximumBandwidthInMbps))
	}
	if info.GpuInfo != nil {
		for _, g := range info.GpuInfo.Gpus {
			mem := int32(0)
			if g.MemoryInfo != nil {
				mem = lo.FromPtr(g.MemoryInfo.SizeInMiB)
			}
			d.GPUMemoryMiB = append(d.GPUMemoryMiB, mem)
		}
	}
	if info.InferenceAcceleratorInfo != nil {
		for _, a := range info.InferenceAcceleratorInfo.Accelerators {
			d.Accelerators = append(d.Accelerators, accelerator{lo.FromPtr(a.Name), lo.FromPtr(a.Manufacturer), lo.FromPtr(a.Count)})
		}
	}
	if info.NeuronInfo != nil {
		for _, n := range info.NeuronInfo.NeuronDevices {
			d.NeuronNames = append(d.NeuronNames, lo.FromPtr(n.Name))
		}
	}
	return d
}

func neuronName(instanceType string) string {
	if strings.HasPrefix(instanceType, "trn") {
		return "Trainium"
	}
	return "Inferentia2"
}

// fromEC2 is the reverse, for `oracle catalog`: the snapshot shape of a DescribeInstanceTypes entry.
func fromEC2(info ec2types.InstanceTypeInfo) instanceTypeInfo {
	t := instanceTypeInfo{
		Name:          string(info.InstanceType),
		VCPUs:         lo.FromPtr(info.VCpuInfo.DefaultVCpus),
		MemoryMiB:     lo.FromPtr(info.MemoryInfo.SizeInMiB),
		MaxENIs:       lo.FromPtr(info.NetworkInfo.MaximumNetworkInterfaces),
		IPv4PerENI:    lo.FromPtr(info.NetworkInfo.Ipv4AddressesPerInterface),
		Architectures: []string{},
		UsageClasses:  []string{},
	}
	// Empty lists, not absent ones: `why` reads an absent list as "devices unknown" (an older snapshot).
	t.GPUs = []gpu{}
	t.NeuronDevices = []neuronDevice{}
	for _, a := range info.ProcessorInfo.SupportedArchitectures {
		t.Architectures = append(t.Architectures, string(a))
	}
	for _, u := range info.SupportedUsageClasses {
		t.UsageClasses = append(t.UsageClasses, string(u))
	}
	if info.GpuInfo != nil {
		for _, g := range info.GpuInfo.Gpus {
			t.GPUs = append(t.GPUs, gpu{lo.FromPtr(g.Manufacturer), lo.FromPtr(g.Name), lo.FromPtr(g.Count)})
		}
	}
	if info.NeuronInfo != nil {
		for _, n := range info.NeuronInfo.NeuronDevices {
			cores := int32(0)
			if n.CoreInfo != nil {
				cores = lo.FromPtr(n.CoreInfo.Count)
			}
			t.NeuronDevices = append(t.NeuronDevices, neuronDevice{lo.FromPtr(n.Count), cores})
		}
	}
	if info.NetworkInfo.EfaInfo != nil {
		t.EFAInterfaces = lo.FromPtr(info.NetworkInfo.EfaInfo.MaximumEfaInterfaces)
	}
	if info.InstanceStorageInfo != nil {
		t.InstanceStorageGB = lo.FromPtr(info.InstanceStorageInfo.TotalSizeInGB)
	}
	t.Details = detailsOf(info)
	return t
}

// catalog prints the provider's test catalogue: real DescribeInstanceTypes answers (us-west-2) and the
// zones EC2 offers each in.
func catalog(ctx context.Context) (any, error) {
	api := fake.NewEC2API()
	types, err := api.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{})
	if err != nil {
		return nil, err
	}
	offers, err := api.DescribeInstanceTypeOfferings(ctx, &ec2.DescribeInstanceTypeOfferingsInput{})
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"instanceTypes": lo.Map(types.InstanceTypes, func(i ec2types.InstanceTypeInfo, _ int) instanceTypeInfo { return fromEC2(i) }),
		"offerings": lo.Map(offers.InstanceTypeOfferings, func(o ec2types.InstanceTypeOffering, _ int) offering {
			return offering{InstanceType: string(o.InstanceType), Zone: lo.FromPtr(o.Location)}
		}),
	}, nil
}

// staticPrices prices every type (the snapshot holds no prices, and an offering without a price is one
// Karpenter never launches): by size, spot below on-demand, so Karpenter's cheapest-first order is sane.
type staticPrices struct {
	byType map[ec2types.InstanceType]float64
}

func (p staticPrices) LivenessProbe(*http.Request) error { return nil }
func (p staticPrices) InstanceTypes() []ec2types.InstanceType {
	return lo.Keys(p.byType)
}
func (p staticPrices) OnDemandPrice(t ec2types.InstanceType) (float64, bool) {
	v, ok := p.byType[t]
	return v, ok
}
func (p staticPrices) SpotPrice(t ec2types.InstanceType, _ string) (float64, bool) {
	v, ok := p.byType[t]
	return v * 0.4, ok
}
func (p staticPrices) UpdateOnDemandPricing(context.Context) error { return nil }
func (p staticPrices) UpdateSpotPricing(context.Context) error     { return nil }

// instanceTypeProvider is the AWS provider's real instance-type provider over the snapshot's EC2 answers.
func instanceTypeProvider(ctx context.Context, region string, types []instanceTypeInfo, offers []offering) (*instancetype.DefaultProvider, error) {
	api := fake.NewEC2API()
	infos := lo.Map(types, func(t instanceTypeInfo, _ int) ec2types.InstanceTypeInfo { return toEC2(t) })
	api.DescribeInstanceTypesOutput.Set(&ec2.DescribeInstanceTypesOutput{InstanceTypes: infos})
	api.DescribeInstanceTypeOfferingsOutput.Set(&ec2.DescribeInstanceTypeOfferingsOutput{
		InstanceTypeOfferings: lo.Map(offers, func(o offering, _ int) ec2types.InstanceTypeOffering {
			return ec2types.InstanceTypeOffering{
				InstanceType: ec2types.InstanceType(o.InstanceType),
				Location:     aws.String(o.Zone),
				LocationType: ec2types.LocationTypeAvailabilityZone,
			}
		}),
	})
	prices := staticPrices{byType: map[ec2types.InstanceType]float64{}}
	for _, t := range types {
		prices.byType[ec2types.InstanceType(t.Name)] = 0.01*float64(t.VCPUs) + 0.002*float64(t.MemoryMiB)/1024
	}
	newCache := func() *cache.Cache { return cache.New(awscache.DefaultTTL, awscache.DefaultCleanupInterval) }
	clk := clock.RealClock{}
	p := instancetype.NewDefaultProvider(
		newCache(), newCache(), newCache(), api,
		subnet.NewDefaultProvider(api, newCache(), newCache()),
		prices,
		capacityreservation.NewProvider(api, clk, newCache(), newCache()),
		placementgroup.NewProvider(api, newCache(), newCache()),
		awscache.NewUnavailableOfferings(),
		instancetype.NewDefaultResolver(region),
		arczonalshift.NewProvider(fake.NewARCZonalShiftAPI(), clk, ""),
		nil,
	)
	if err := p.UpdateInstanceTypes(ctx); err != nil {
		return nil, err
	}
	if err := p.UpdateInstanceTypeOfferings(ctx); err != nil {
		return nil, err
	}
	return p, nil
}
