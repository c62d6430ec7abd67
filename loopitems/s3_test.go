package loopitems

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/model"
)

// s3Emulator finds or starts the AWS emulator (moto_server when
// AWS_ENDPOINT_URL is unset and LocalStack does not run), stopped when t
// ends, and returns an S3 client on it with a bucket of its own. Only S3
// is used: DynamoDB Local is not started beside moto. Without an emulator
// the test fails; it does not skip.
func s3Emulator(t *testing.T) (*s3.Client, string) {
	t.Helper()
	ctx := context.Background()
	em, err := localstack.Discover(ctx, localstack.DiscoverOptions{Getenv: func(k string) string {
		if k == localstack.EnvDynamoDBLocal {
			return "off"
		}
		return os.Getenv(k)
	}})
	require.NoError(t, err, "these tests need an AWS emulator")
	t.Cleanup(func() { require.NoError(t, em.Close()) })
	client := s3.NewFromConfig(em.TestConfig(t), localstack.UsePathStyle)
	bucket := fmt.Sprintf("loopitems-%08x", rand.Uint32())
	_, err = client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	require.NoError(t, err)
	return client, bucket
}

// s3Env is a bucket in the emulator and a Reader of it.
type s3Env struct {
	client  *s3.Client
	bucket  string
	objects *S3Objects
	r       *Reader
}

// put stores body at key and returns the source of it, its format
// following key's ending.
func (e *s3Env) put(t *testing.T, key string, body []byte) engine.ItemsSource {
	t.Helper()
	_, err := e.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
	require.NoError(t, err)
	return engine.ItemsSource{URI: "s3://" + e.bucket + "/" + key, Format: (&model.ItemsFrom{}).ItemsFormat(key)}
}

// TestS3 reads objects in the emulator's S3 through S3Objects, over the
// SDK: items in batches from cursors, a missing object, an object changed
// after its scan, the edges of GetRange.
func TestS3(t *testing.T) {
	t.Parallel()
	client, bucket := s3Emulator(t)
	objects := NewS3Objects(client)
	e := &s3Env{client: client, bucket: bucket, objects: objects, r: NewReader(objects, []string{bucket})}
	t.Run("jsonl in batches", func(t *testing.T) { testS3Batches(t, e) })
	t.Run("csv and json", func(t *testing.T) { testS3Formats(t, e) })
	t.Run("a missing object", func(t *testing.T) {
		src := engine.ItemsSource{URI: "s3://" + bucket + "/none.jsonl", Format: model.ItemsJSONL}
		_, err := e.r.ScanItems(context.Background(), src)
		requireItemsError(t, err, src, ": no such object")
	})
	t.Run("changed after the scan", func(t *testing.T) {
		src := e.put(t, "changing.jsonl", []byte("{\"a\":1}\n{\"a\":2}\n"))
		obj, err := e.r.ScanItems(context.Background(), src)
		require.NoError(t, err)
		e.put(t, "changing.jsonl", []byte("{\"a\":1}\n{\"a\":3}\n"))
		_, _, err = e.r.ReadItems(context.Background(), src, obj, obj.First, []int64{1})
		requireItemsError(t, err, src, ": changed since the loop started")
	})
	t.Run("GetRange", func(t *testing.T) { testS3GetRange(t, e) })
}

func testS3Batches(t *testing.T, e *s3Env) {
	ctx := context.Background()
	var b bytes.Buffer
	for i := range 5000 {
		fmt.Fprintf(&b, "{\"i\":%d,\"big\":9007199254740993,\"name\":\"item ✓ %d\",\"x\":%d.5}\r\n", i, i, i)
		if i%1000 == 0 {
			b.WriteString("\n")
		}
	}
	src := e.put(t, "in.jsonl", b.Bytes())
	src.Fields = map[string]model.ParamType{"i": model.TypeLong, "x": model.TypeDouble}
	obj, err := e.r.ScanItems(ctx, src)
	require.NoError(t, err)
	require.Equal(t, int64(5000), obj.Total)
	require.Equal(t, int64(b.Len()), obj.Size)
	at := obj.First
	for i := int64(0); i < obj.Total; i += 700 {
		items, next, err := e.r.ReadItems(ctx, src, obj, at, upto(min(i+700, obj.Total))[i:])
		require.NoError(t, err)
		for k, item := range items {
			n := i + int64(k)
			require.Equal(t, engine.Values{"i": n, "big": int64(9007199254740993),
				"name": fmt.Sprintf("item ✓ %d", n), "x": float64(n) + 0.5}, item)
		}
		at = next
	}
	require.Equal(t, obj.Total, at.Index)
	require.Equal(t, obj.Size, at.Offset)
}

func testS3Formats(t *testing.T, e *s3Env) {
	src := e.put(t, "in.csv", []byte("name,note\r\nada,\"says \"\"hi\"\", twice\"\r\ngrace,\"two\nlines\"\r\n"))
	_, items := readAll(t, e.r, src)
	require.Equal(t, []engine.Values{{"name": "ada", "note": `says "hi", twice`}, {"name": "grace", "note": "two\nlines"}}, items)

	src = e.put(t, "in.json", []byte(` [ {"x": 1.5}, {"x": 2.5, "tags": ["a", "b"]} , {"x": 3} ] `))
	_, items = readAll(t, e.r, src)
	require.Equal(t, []engine.Values{{"x": 1.5}, {"x": 2.5, "tags": []string{"a", "b"}}, {"x": int64(3)}}, items)

	// S3 answers any range of an empty object with 416 InvalidRange.
	src = e.put(t, "empty.json", []byte{})
	obj, err := e.r.ScanItems(context.Background(), src)
	require.NoError(t, err)
	require.Equal(t, engine.ItemsObject{ETag: obj.ETag, First: engine.ItemsCursor{Line: 1}}, obj)
}

func testS3GetRange(t *testing.T, e *s3Env) {
	ctx := context.Background()
	e.put(t, "ten", []byte("0123456789"))
	e.put(t, "empty", []byte{})
	_, _, etag, err := e.objects.GetRange(ctx, e.bucket, "ten", 0, -1, "")
	require.NoError(t, err)
	tests := []struct {
		name, key string
		from, to  int64
		ifMatch   string
		body      string
		size      int64
		err       error
	}{
		{"a range", "ten", 2, 4, etag, "234", 10, nil},
		{"to the end", "ten", 7, -1, "", "789", 10, nil},
		{"past the end", "ten", 5, 100, "", "56789", 10, nil},
		{"at the end", "ten", 10, 20, etag, "", 10, nil},
		{"an empty object", "empty", 0, 1 << 20, "", "", 0, nil},
		{"another ETag", "ten", 0, 4, `"0123"`, "", 0, ErrChanged},
		{"no such key", "none", 0, 4, "", "", 0, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, size, _, err := e.objects.GetRange(ctx, e.bucket, tt.key, tt.from, tt.to, tt.ifMatch)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			defer body.Close()
			got, err := io.ReadAll(body)
			require.NoError(t, err)
			require.Equal(t, tt.body, string(got))
			require.Equal(t, tt.size, size)
		})
	}
	// The emulator itself refuses another ETag (412), as S3 does.
	_, _, _, err = e.objects.GetRange(ctx, e.bucket, "ten", 0, 4, `"0123"`)
	var api smithy.APIError
	require.ErrorAs(t, err, &api)
	require.Equal(t, "PreconditionFailed", api.ErrorCode())

	_, _, _, err = e.objects.GetRange(ctx, "no-such-bucket-"+strings.ToLower(e.bucket), "k", 0, 1, "")
	require.ErrorIs(t, err, ErrNotFound)
}
