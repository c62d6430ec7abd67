package images

import (
	"reflect"
	"strings"
	"testing"
)

const (
	testECR = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func TestParseReferenceNormalizes(t *testing.T) {
	for in, want := range map[string]Reference{
		"python":                           {Registry: "docker.io", Repository: "library/python"},
		"python:3.12":                      {Registry: "docker.io", Repository: "library/python", Tag: "3.12"},
		"bitnami/spark":                    {Registry: "docker.io", Repository: "bitnami/spark"},
		"docker.io/python":                 {Registry: "docker.io", Repository: "library/python"},
		"index.docker.io/library/python":   {Registry: "docker.io", Repository: "library/python"},
		"Public.ECR.aws/docker/library/x":  {Registry: "public.ecr.aws", Repository: "docker/library/x"},
		"localhost/etl":                    {Registry: "localhost", Repository: "etl"},
		"registry.example.com:5000/a/b:1":  {Registry: "registry.example.com:5000", Repository: "a/b", Tag: "1"},
		testECR + "/etl/job@" + digestA:    {Registry: testECR, Repository: "etl/job", Digest: digestA},
		testECR + "/etl/job:v1@" + digestA: {Registry: testECR, Repository: "etl/job", Tag: "v1", Digest: digestA},
		"a__b_c-d---e/f.g":                 {Registry: "docker.io", Repository: "a__b_c-d---e/f.g"},
	} {
		got, err := ParseReference(in)
		if err != nil || got != want {
			t.Errorf("ParseReference(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
}

func TestParseReferenceRefuses(t *testing.T) {
	for _, in := range []string{
		"", " python", "python ", "py thon", "python\n", "Python:3", // upper case in a path
		"etl/../evil", "etl//job", "etl/", "/etl", "etl/job/", "Registry/ETL",
		"etl:tag:tag", "etl:", "etl:-x", "etl:" + strings.Repeat("a", 129),
		"etl@sha256:abc", "etl@md5:0123", "etl@" + strings.ToUpper(digestA), "etl@" + digestA + "@" + digestB,
		"user@host.example.com/etl", "https://registry.example.com/etl", "host.example.com:port/etl",
		"-host.example.com/etl", "host_.example.com/etl", "e--/x", "_etl", "etl_", "etl..x", "etl___x",
		strings.Repeat("a", 256),
	} {
		if ref, err := ParseReference(in); err == nil {
			t.Errorf("ParseReference(%q) = %+v, want an error", in, ref)
		}
	}
}

func TestParseAllowListRefusesAmbiguousEntries(t *testing.T) {
	for entry, why := range map[string]string{
		"python":                                 "name the registry",
		"etl/job":                                "name the registry",
		"library/python":                         "name the registry",
		testECR:                                  "name the registry",
		"https://" + testECR + "/etl/":           "without a scheme",
		testECR + "/etl:latest":                  "a tag can be moved",
		"registry.example.com:5000/etl:1":        "a tag can be moved",
		testECR + "/etl/@" + digestA:             "a digest pins one repository",
		testECR + "/@" + digestA:                 "a digest pins one repository",
		testECR + "/etl@sha256:0123":             "digest",
		testECR + "/ETL/":                        "path component",
		testECR + "/etl//job":                    "path component",
		testECR + "//":                           "repository path is empty",
		testECR + "/etl/../":                     "path component",
		"docker.io/python":                       "docker.io/library/python",
		"reg istry.example.com/etl":              "no spaces",
		"bad_host.example.com/etl":               "host name label",
		"registry.example.com:50x0/etl":          "port",
		testECR + "/" + strings.Repeat("a", 250): "more than 255",
	} {
		_, err := ParseAllowList([]string{"docker.io/library/busybox", entry})
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), entry) {
			t.Errorf("entry %q: %v; want an error naming it and %q", entry, err, why)
		}
	}
	// Every refused entry is reported.
	_, err := ParseAllowList([]string{"python", "", "  ", testECR + "/etl:1"})
	if err == nil || !strings.Contains(err.Error(), `"python"`) || !strings.Contains(err.Error(), `"`+testECR+`/etl:1"`) {
		t.Errorf("two bad entries: %v", err)
	}
}

func TestAllowListMatchesWholeComponents(t *testing.T) {
	list, err := ParseAllowList([]string{
		testECR + "/etl/",                      // under etl/
		testECR + "/tools/spark",               // tools/spark and under it
		testECR + "/pinned/base@" + digestA,    // one digest
		"public.ecr.aws/docker/library/python", // ECR Public
		"docker.io/library/busybox",            // Docker Hub's library
		"registry.example.com:5000/",           // a whole registry
		"INDEX.docker.io/bitnami/",             // Docker Hub's legacy host, a namespace
	})
	if err != nil {
		t.Fatal(err)
	}
	for image, want := range map[string]bool{
		testECR + "/etl/job":                  true,
		testECR + "/etl/job:v1":               true,
		testECR + "/etl/a/b@" + digestB:       true,
		testECR + "/etl":                      false, // "etl/" admits what is under etl/ only
		testECR + "/etl-evil/job":             false,
		testECR + "/etlx":                     false,
		testECR + "/tools/spark":              true,
		testECR + "/tools/spark:3.5":          true,
		testECR + "/tools/spark/submit":       true,
		testECR + "/tools/spark-evil":         false,
		testECR + "/tools/sparkx/job":         false,
		testECR + "/tools":                    false,
		testECR + "/pinned/base@" + digestA:   true,
		testECR + "/pinned/base:1@" + digestA: true,
		testECR + "/pinned/base":              false, // a tag can move; only the digest is allowed
		testECR + "/pinned/base:1":            false,
		testECR + "/pinned/base@" + digestB:   false,
		testECR + "/pinned/base/x@" + digestA: false,
		"123456789012.dkr.ecr.us-east-1.amazonaws.com.evil.example/etl/job": false,
		"210987654321.dkr.ecr.us-east-1.amazonaws.com/etl/job":              false,
		"public.ecr.aws/docker/library/python:3.12":                         true,
		"PUBLIC.ecr.aws/docker/library/python":                              true,
		"public.ecr.aws/docker/library/python-evil":                         false,
		"public.ecr.aws/docker/library":                                     false,
		"busybox":                                                           true,
		"busybox:1.36":                                                      true,
		"docker.io/busybox":                                                 true,
		"library/busybox":                                                   true,
		"index.docker.io/library/busybox@" + digestA:                        true,
		"busybox-evil":                                                      false,
		"evil/busybox":                                                      false,
		"registry.example.com:5000/anything/at/all":                         true,
		"registry.example.com/anything":                                     false, // another port is another registry
		"registry.example.com:5001/anything":                                false,
		"bitnami/spark":                                                     true,
		"bitnami":                                                           false,
		"python":                                                            false,
		"etl/../etl/job":                                                    false,
	} {
		if err := list.Check(image); (err == nil) != want {
			t.Errorf("Check(%q) = %v, want allowed %v", image, err, want)
		}
	}
}

func TestCheckNamesTheImageAndTheList(t *testing.T) {
	list, err := ParseAllowList([]string{testECR + "/etl/"})
	if err != nil {
		t.Fatal(err)
	}
	err = list.Check("python:3.12")
	if err == nil || !strings.Contains(err.Error(), `"python:3.12"`) || !strings.Contains(err.Error(), "docker.io/library/python:3.12") ||
		!strings.Contains(err.Error(), testECR+"/etl/") {
		t.Errorf("Check = %v", err)
	}
	if err := list.Check("etl/../x"); err == nil || !strings.Contains(err.Error(), "not a valid image reference") {
		t.Errorf("Check(invalid) = %v", err)
	}
}

func TestEmptyAndNilListsAdmitNothing(t *testing.T) {
	empty, err := ParseAllowList(nil)
	if err != nil {
		t.Fatal(err)
	}
	var none *AllowList
	for _, l := range []*AllowList{empty, none} {
		if err := l.Check("busybox"); err == nil || !strings.Contains(err.Error(), "no image may run") {
			t.Errorf("Check on %v = %v", l, err)
		}
	}
	if err := AnyImage().Check("anything.example.com/at/all:1"); err != nil {
		t.Errorf("AnyImage: %v", err)
	}
	if err := AnyImage().Check("etl/../x"); err == nil {
		t.Error("AnyImage admits an invalid reference")
	}
}

func TestECRRepositories(t *testing.T) {
	list, err := ParseAllowList([]string{
		testECR + "/etl/",
		testECR + "/tools/spark",
		"210987654321.dkr.ecr.eu-west-1.amazonaws.com/shared/base@" + digestA,
		"public.ecr.aws/docker/library/python",
		"docker.io/library/busybox",
		testECR + "/etl/", // a duplicate
		"333333333333.dkr.ecr-fips.us-gov-west-1.amazonaws.com/",
		"444444444444.dkr.ecr.cn-north-1.amazonaws.com.cn/cn/app",
		"555555555555.dkr-ecr.ap-south-1.on.aws/dual/",
		"123456789012.dkr.ecr.us-east-1.amazonaws.com:443/ported/", // with a port: not how ECR is named
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []ECRRepositories{
		{Account: "123456789012", Region: "us-east-1", Names: []string{"etl/*", "tools/spark", "tools/spark/*"}},
		{Account: "210987654321", Region: "eu-west-1", Names: []string{"shared/base"}},
		{Account: "333333333333", Region: "us-gov-west-1", Names: []string{"*"}},
		{Account: "444444444444", Region: "cn-north-1", Names: []string{"cn/app", "cn/app/*"}},
		{Account: "555555555555", Region: "ap-south-1", Names: []string{"dual/*"}},
	}
	if got := list.ECR(); !reflect.DeepEqual(got, want) {
		t.Errorf("ECR() =\n%+v\nwant\n%+v", got, want)
	}
	public, err := ParseAllowList([]string{"public.ecr.aws/docker/library/python", "docker.io/library/busybox"})
	if err != nil {
		t.Fatal(err)
	}
	if got := public.ECR(); got != nil {
		t.Errorf("ECR() of a list without ECR entries = %+v", got)
	}
	if got := AnyImage().ECR(); got != nil {
		t.Errorf("AnyImage().ECR() = %+v", got)
	}
}
