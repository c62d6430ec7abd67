package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// Job template items:
//
//	JT  T#<job type>#<version>  job_type, version, request (the create
//	                            request's JSON), meta (its metadata's JSON),
//	                            create_time
//
// One partition holds the registry: a list reads it whole (job templates
// are few — one per job type and version — as in Maestro, which lists them
// unpaged). A version is one item, so a template past MaxItemBytes is
// refused with an *ItemTooLargeError.
const (
	attrJobType    = "job_type"
	attrTplVersion = "version"
	attrRequest    = "request"
	attrMeta       = "meta"
	attrCreateTime = "create_time"
)

// JobTemplate is a stored job template version.
type JobTemplate struct {
	JobType, Version string
	// Request is the create request as JSON; Meta the metadata the
	// orchestrator made of it (owner, version_author, create_time, ...).
	Request, Meta []byte
	CreateTime    int64
}

// PutJobTemplate stores a job template version, replacing the one of the
// same job type and version.
func (s *Templates) PutJobTemplate(ctx context.Context, t JobTemplate) error {
	item := key(layout.JobTemplatePK, layout.JobTemplateSK(t.JobType, t.Version))
	item[attrJobType], item[attrTplVersion] = str(t.JobType), str(t.Version)
	item[attrRequest], item[attrMeta] = str(string(t.Request)), str(string(t.Meta))
	item[attrCreateTime] = num(t.CreateTime)
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}); err != nil {
		return fmt.Errorf("store: put job template %s@%s: %w", t.JobType, t.Version, err)
	}
	return nil
}

// GetJobTemplate returns a job template version, or ErrNotFound.
func (s *Templates) GetJobTemplate(ctx context.Context, jobType, version string) (*JobTemplate, error) {
	item, err := s.getItem(ctx, key(layout.JobTemplatePK, layout.JobTemplateSK(jobType, version)), "get job template %s@%s", jobType, version)
	if err != nil {
		return nil, err
	}
	return jobTemplateFromItem(item), nil
}

// ListJobTemplates returns the job templates of a version, by job type;
// version "" lists every version.
func (s *Templates) ListJobTemplates(ctx context.Context, version string) ([]JobTemplate, error) {
	var out []JobTemplate
	in := s.prefixQuery(layout.JobTemplatePK, "T#")
	in.ConsistentRead = aws.Bool(true)
	if version != "" {
		in.FilterExpression = aws.String("#v = :v")
		in.ExpressionAttributeNames = map[string]string{"#v": attrTplVersion}
		in.ExpressionAttributeValues[":v"] = str(version)
	}
	err := s.queryAll(ctx, in, func(item map[string]types.AttributeValue) error {
		out = append(out, *jobTemplateFromItem(item))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list job templates: %w", err)
	}
	return out, nil
}

// DeleteJobTemplate deletes a job template version, or every version of
// the job type when version is "", and returns how many it deleted.
func (s *Templates) DeleteJobTemplate(ctx context.Context, jobType, version string) (int, error) {
	var sks []string
	if version != "" {
		sks = []string{layout.JobTemplateSK(jobType, version)}
	} else {
		in := s.prefixQuery(layout.JobTemplatePK, layout.JobTemplateSK(jobType, ""))
		in.ConsistentRead = aws.Bool(true)
		in.ProjectionExpression = aws.String("sk")
		err := s.queryAll(ctx, in, func(item map[string]types.AttributeValue) error {
			sks = append(sks, getS(item, attrSK))
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("store: delete job template %s: %w", jobType, err)
		}
	}
	n := 0
	for _, sk := range sks {
		out, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: aws.String(s.table), Key: key(layout.JobTemplatePK, sk), ReturnValues: types.ReturnValueAllOld,
		})
		if err != nil {
			return n, fmt.Errorf("store: delete job template %s: %w", sk, err)
		}
		if len(out.Attributes) > 0 {
			n++
		}
	}
	return n, nil
}

func jobTemplateFromItem(item map[string]types.AttributeValue) *JobTemplate {
	return &JobTemplate{
		JobType: getS(item, attrJobType), Version: getS(item, attrTplVersion),
		Request: []byte(getS(item, attrRequest)), Meta: []byte(getS(item, attrMeta)),
		CreateTime: getN(item, attrCreateTime),
	}
}
