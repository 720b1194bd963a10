package main

import (
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/shared/llm"
)

// vpcPlacement is where VPC-placed functions run: the studio's existing VPC,
// subnets and security groups, imported by ID (no lookup at synth).
type vpcPlacement struct {
	vpc     awsec2.IVpc
	subnets *awsec2.SubnetSelection
	groups  []awsec2.ISecurityGroup
	all     bool // every function, not only fetch
}

// newVPCPlacement imports the configured VPC (nil without one) and, with
// createEndpoints, adds the endpoints the placed functions need so that no
// AWS call leaves the VPC through a NAT.
func newVPCPlacement(stack awscdk.Stack, cfg EnvConfig) *vpcPlacement {
	v := cfg.VPC
	if v == nil {
		return nil
	}
	vpc := awsec2.Vpc_FromVpcAttributes(stack, jsii.String("Vpc"), &awsec2.VpcAttributes{
		VpcId: jsii.String(v.VpcID),
		// Placeholder AZs: subnets are given explicitly, so nothing selects by AZ.
		AvailabilityZones: awscdk.Fn_GetAzs(nil),
	})
	// Both warnings are about lookups this stack never makes: subnets are
	// named by ID (nothing selects by AZ), and the gateway endpoints take
	// routeTableIds from the configuration, not from the subnets.
	awscdk.Annotations_Of(stack).AcknowledgeWarning(jsii.String("@aws-cdk/aws-ec2:vpcAttributeIsListTokenavailabilityZones"),
		jsii.String("subnets are given by ID; nothing selects by availability zone"))
	awscdk.Annotations_Of(stack).AcknowledgeWarning(jsii.String("@aws-cdk/aws-ec2:noSubnetRouteTableId"),
		jsii.String("gateway endpoints use vpc.routeTableIds"))
	pl := &vpcPlacement{vpc: vpc, all: v.AllFunctions}
	var subnets []awsec2.ISubnet
	for i, id := range v.SubnetIDs {
		subnets = append(subnets, awsec2.Subnet_FromSubnetId(stack, jsii.String("Subnet"+strconv.Itoa(i)), jsii.String(id)))
	}
	pl.subnets = &awsec2.SubnetSelection{Subnets: &subnets}
	for i, id := range v.SecurityGroupIDs {
		pl.groups = append(pl.groups, awsec2.SecurityGroup_FromSecurityGroupId(stack, jsii.String("FunctionSecurityGroup"+strconv.Itoa(i)), jsii.String(id), nil))
	}
	if v.CreateEndpoints {
		newVPCEndpoints(stack, cfg)
	}
	return pl
}

// endpointServices are the AWS services the VPC-placed functions call:
// gateway endpoints (free, route-table based) and interface endpoints.
func endpointServices(cfg EnvConfig) (gateway, iface []string) {
	gateway = []string{"dynamodb", "s3"}      // jobs table; artifacts
	iface = []string{"sqs", "secretsmanager"} // stage queues; p4/LLM/webhook secrets
	if cfg.KMSKey != "" {
		iface = append(iface, "kms")
	}
	if f, _ := llm.FamilyOf(cfg.LLMProvider); f.Endpoint != "" && (cfg.VPC.AllFunctions || cfg.swarmIsPrivate()) {
		// llm in the VPC (with every function, or as a caller of a private
		// Swarm) calling an AWS family: the code never leaves AWS's network.
		iface = append(iface, f.Endpoint)
	}
	return gateway, iface
}

// newVPCEndpoints creates the gateway and interface endpoints, the latter
// behind a security group that admits HTTPS from the functions' groups only.
func newVPCEndpoints(stack awscdk.Stack, cfg EnvConfig) {
	v := cfg.VPC
	gateway, iface := endpointServices(cfg)
	endpoint := func(name string, p *awsec2.CfnVPCEndpointProps) {
		id := "VpcEndpoint" + endpointID(name)
		p.VpcId = jsii.String(v.VpcID)
		p.ServiceName = awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("com.amazonaws."), awscdk.Aws_REGION(), jsii.String("." + name)})
		awsec2.NewCfnVPCEndpoint(stack, jsii.String(id), p).OverrideLogicalId(jsii.String(id))
	}
	for _, name := range gateway {
		endpoint(name, &awsec2.CfnVPCEndpointProps{VpcEndpointType: jsii.String("Gateway"), RouteTableIds: jsii.Strings(v.RouteTableIDs...)})
	}
	var ingress []*awsec2.CfnSecurityGroup_IngressProperty
	for _, sg := range v.SecurityGroupIDs {
		ingress = append(ingress, &awsec2.CfnSecurityGroup_IngressProperty{
			IpProtocol: jsii.String("tcp"), FromPort: jsii.Number(443), ToPort: jsii.Number(443),
			SourceSecurityGroupId: jsii.String(sg), Description: jsii.String("HTTPS from the Criticizer functions"),
		})
	}
	sg := awsec2.NewCfnSecurityGroup(stack, jsii.String("VpcEndpointSecurityGroup"), &awsec2.CfnSecurityGroupProps{
		GroupDescription:     jsii.String("Criticizer interface endpoints: HTTPS from the functions only"),
		VpcId:                jsii.String(v.VpcID),
		SecurityGroupIngress: &ingress,
		// Endpoints answer; they start nothing. One unroutable rule replaces the default allow-all egress.
		SecurityGroupEgress: &[]*awsec2.CfnSecurityGroup_EgressProperty{{
			IpProtocol: jsii.String("icmp"), FromPort: jsii.Number(252), ToPort: jsii.Number(86),
			CidrIp: jsii.String("255.255.255.255/32"), Description: jsii.String("no egress"),
		}},
	})
	sg.OverrideLogicalId(jsii.String("VpcEndpointSecurityGroup"))
	for _, name := range iface {
		endpoint(name, &awsec2.CfnVPCEndpointProps{VpcEndpointType: jsii.String("Interface"), SubnetIds: jsii.Strings(v.SubnetIDs...),
			SecurityGroupIds: &[]*string{sg.AttrGroupId()}, PrivateDnsEnabled: jsii.Bool(true)})
	}
}

// endpointID turns "bedrock-runtime" into "BedrockRuntime".
func endpointID(name string) string {
	var b strings.Builder
	for _, w := range strings.Split(name, "-") {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}
