package localstack

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	logstypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
)

// ECSResources are what ECS steps run on in the local stack: a cluster, a
// network of one subnet and security group, and the log group of the task
// definitions the worker registers. In AWS the stack's configuration names
// them (see infra).
type ECSResources struct {
	Cluster       string `json:"cluster"`
	ClusterARN    string `json:"cluster_arn"`
	VPC           string `json:"vpc"`
	Subnet        string `json:"subnet"`
	SecurityGroup string `json:"security_group"`
	LogGroup      string `json:"log_group"`
	ExecutionRole string `json:"execution_role"`
	Family        string `json:"family"`
}

// ProvisionECS creates stage's ECS resources on the emulator. Nothing runs
// on them: the emulator records RunTask and StopTask, and a task's end
// arrives as the state-change event EventBridge would send (the local
// stack's POST /local/job-events).
func ProvisionECS(ctx context.Context, cfg aws.Config, stage string) (*ECSResources, error) {
	name := "maestro-" + stage
	e2 := ec2.NewFromConfig(cfg)
	vpc, err := e2.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16")})
	if err != nil {
		return nil, fmt.Errorf("provision ECS: VPC: %w", err)
	}
	vpcID := aws.ToString(vpc.Vpc.VpcId)
	sn, err := e2.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: aws.String(vpcID), CidrBlock: aws.String("10.0.1.0/24")})
	if err != nil {
		return nil, fmt.Errorf("provision ECS: subnet: %w", err)
	}
	sg, err := e2.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{
		GroupName: aws.String(name + "-tasks"), Description: aws.String("Maestro ECS steps"), VpcId: aws.String(vpcID),
	})
	if err != nil {
		return nil, fmt.Errorf("provision ECS: security group: %w", err)
	}
	cl, err := ecs.NewFromConfig(cfg).CreateCluster(ctx, &ecs.CreateClusterInput{ClusterName: aws.String(name)})
	if err != nil {
		return nil, fmt.Errorf("provision ECS: cluster: %w", err)
	}
	group := "/maestro/" + stage + "/ecs"
	_, err = cloudwatchlogs.NewFromConfig(cfg).CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String(group)})
	var exists *logstypes.ResourceAlreadyExistsException
	if err != nil && !errors.As(err, &exists) {
		return nil, fmt.Errorf("provision ECS: log group: %w", err)
	}
	return &ECSResources{
		Cluster: name, ClusterARN: aws.ToString(cl.Cluster.ClusterArn), VPC: vpcID,
		Subnet: aws.ToString(sn.Subnet.SubnetId), SecurityGroup: aws.ToString(sg.GroupId), LogGroup: group,
		ExecutionRole: "arn:aws:iam::000000000000:role/" + name + "-ecs-execution", Family: name + "-task",
	}, nil
}
