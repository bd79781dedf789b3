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
	return info
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
