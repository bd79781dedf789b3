package main

// What an EC2NodeClass's status becomes once its subnets change in AWS (a printed `aws ec2 create-tags`)
// or its selector does (a `kubectl patch ec2nodeclass`): the snapshot's VPC subnets are served by the
// provider's own fake EC2 API (its DescribeSubnets filters as EC2 does), and Karpenter's own subnet
// reconciler (controllers/nodeclass NewSubnetReconciler over the real subnet provider) writes the
// class's status.subnets and SubnetsReady, which rolls up into Ready as the controller's would.

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/patrickmn/go-cache"
	"github.com/samber/lo"
	"k8s.io/utils/clock"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	awscache "github.com/aws/karpenter-provider-aws/pkg/cache"
	"github.com/aws/karpenter-provider-aws/pkg/controllers/nodeclass"
	"github.com/aws/karpenter-provider-aws/pkg/fake"
	"github.com/aws/karpenter-provider-aws/pkg/providers/subnet"
)

// vpcSubnet is a subnet of the cluster's VPC as a why snapshot keeps it (src/why/types.ts VpcSubnet).
type vpcSubnet struct {
	ID           string            `json:"id"`
	Zone         string            `json:"zone"`
	ZoneID       string            `json:"zoneId,omitempty"`
	VpcID        string            `json:"vpcId,omitempty"`
	AvailableIPs int32             `json:"availableIps"`
	Public       bool              `json:"public,omitempty"`
	Tags         map[string]string `json:"tags"`
}

// ResolvedClass is one EC2NodeClass's status as Karpenter's subnet reconciler leaves it.
type ResolvedClass struct {
	Name   string                   `json:"name"`
	Status awsv1.EC2NodeClassStatus `json:"status"`
}

func resolveFile(ctx context.Context, path string) ([]ResolvedClass, error) {
	snap, err := loadSnapshot(path)
	if err != nil {
		return nil, err
	}
	if snap.Subnets == nil || !snap.Subnets.OK {
		return nil, fmt.Errorf("%s: no VPC subnets to resolve the EC2NodeClasses from", path)
	}
	api := fake.NewEC2API()
	for _, s := range snap.Subnets.Value {
		api.Subnets.Store(s.ID, ec2types.Subnet{
			SubnetId:                aws.String(s.ID),
			AvailabilityZone:        aws.String(s.Zone),
			AvailabilityZoneId:      aws.String(lo.Ternary(s.ZoneID != "", s.ZoneID, "zid-"+s.Zone)),
			AvailableIpAddressCount: aws.Int32(s.AvailableIPs),
			MapPublicIpOnLaunch:     aws.Bool(s.Public),
			VpcId:                   aws.String(lo.Ternary(s.VpcID != "", s.VpcID, "vpc-1")),
			Tags: lo.MapToSlice(s.Tags, func(k, v string) ec2types.Tag {
				return ec2types.Tag{Key: aws.String(k), Value: aws.String(v)}
			}),
		})
	}
	newCache := func() *cache.Cache { return cache.New(awscache.DefaultTTL, awscache.DefaultCleanupInterval) }
	var out []ResolvedClass
	for i := range snap.Kube.NodeClasses.Value {
		nc := snap.Kube.NodeClasses.Value[i].DeepCopy()
		// The provider caches by the class's UID and generation, which a snapshot does not keep: one
		// provider per class, as each class of a live cluster has its own UID.
		reconciler := nodeclass.NewSubnetReconciler(clock.RealClock{}, subnet.NewDefaultProvider(api, newCache(), newCache()))
		if _, err := reconciler.Reconcile(ctx, nc); err != nil {
			return nil, fmt.Errorf("EC2NodeClass %s: %w", nc.Name, err)
		}
		out = append(out, ResolvedClass{Name: nc.Name, Status: nc.Status})
	}
	return out, nil
}
