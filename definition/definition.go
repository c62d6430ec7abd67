// Package definition loads workflow definitions: it decodes JSON or YAML,
// validates the structure and type-checks every expression, returning all
// problems at once. The CLI and the API use it so that a definition is
// judged the same way everywhere.
package definition

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/definition/dsl"
	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/model"
)

// Format is the encoding of a definition document.
type Format int

// Encodings.
const (
	JSON Format = iota
	YAML
)

// String returns "json" or "yaml".
func (f Format) String() string {
	if f == YAML {
		return "yaml"
	}
	return "json"
}

// FormatFromName picks the encoding from a file name's extension.
func FormatFromName(name string) Format {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml":
		return YAML
	}
	return JSON
}

// MaxSize is the largest definition document accepted, Maestro's
// WORKFLOW_CREATE_REQUEST_DATA_SIZE_LIMIT (256 KB).
const MaxSize = 256 * 1024

// Errors is the list of problems found in a definition, each naming a JSON path.
type Errors = model.Errors

// Checker decodes and validates definitions.
type Checker struct {
	lang *expression.Language
	now  func() time.Time

	// policies are a deployment's rules, applied after validation (policy.go).
	policies []policy

	// jobTypes resolves DSL job types that are not built-in step types.
	jobTypes dsl.TypeResolver
}

// Option configures a Checker.
type Option func(*Checker)

// WithClock sets the clock used for time-trigger checks (default time.Now).
func WithClock(now func() time.Time) Option {
	return func(c *Checker) {
		if now != nil {
			c.now = now
		}
	}
}

// WithJobTypes sets how the YAML DSL resolves a job type that is not a
// built-in step type (Maestro's job templates): the job runs as the step
// type returned, with its own type as the sub_type. Without it such job
// types are rejected.
func WithJobTypes(r dsl.TypeResolver) Option { return func(c *Checker) { c.jobTypes = r } }

// WithLanguage sets the expression language (default expression.DefaultLimits()).
func WithLanguage(l *expression.Language) Option { return func(c *Checker) { c.lang = l } }

// NewChecker returns a Checker.
func NewChecker(opts ...Option) *Checker {
	c := &Checker{now: time.Now}
	for _, o := range opts {
		o(c)
	}
	if c.lang == nil {
		c.lang = expression.New(expression.DefaultLimits())
	}
	return c
}

// With returns a copy of c with opts applied; c is unchanged.
func (c *Checker) With(opts ...Option) *Checker {
	d := *c
	d.policies = slices.Clip(d.policies)
	for _, o := range opts {
		o(&d)
	}
	return &d
}

// Language returns the expression language the checker uses.
func (c *Checker) Language() *expression.Language { return c.lang }

// Check decodes data and validates it. On failure the error is an Errors
// listing every problem found (decoding problems first).
func (c *Checker) Check(data []byte, f Format) (*model.Definition, error) {
	if len(data) > MaxSize {
		return nil, Errors{{Path: "$", Msg: fmt.Sprintf("definition is %d bytes, more than the %d-byte limit", len(data), MaxSize)}}
	}
	var def *model.Definition
	var err error
	var src *dsl.SourceMap
	if f == YAML {
		def, src, err = c.decodeYAML(data)
	} else {
		def, err = model.ParseDefinition(data)
	}
	if err != nil {
		var list model.Errors
		if !errors.As(err, &list) {
			list = Errors{{Path: "$", Msg: err.Error()}}
		}
		return nil, locate(list, src)
	}
	// Checking is budgeted like a decision: a definition's expressions cost
	// at most DefaultBudgetCPU units to compile, regular expressions included.
	budget := expression.NewBudget(0, 0)
	if errs := model.Validate(def, model.ValidateOptions{Expressions: c.lang.Checker(budget), Now: c.now}); len(errs) > 0 {
		return nil, locate(errs, src)
	}
	if errs := c.applyPolicies(def); len(errs) > 0 {
		return nil, locate(errs, src)
	}
	return def, nil
}

// decodeYAML decodes a YAML definition: Maestro's DSL (a Workflow mapping
// with jobs) is translated to the JSON structure first, and its source map
// returned so that later errors name the YAML line; other YAML is read as
// the JSON structure. Either way the document is first held to
// dsl.DefaultLimits (nesting, aliases, expanded size).
func (c *Checker) decodeYAML(data []byte) (*model.Definition, *dsl.SourceMap, error) {
	doc, err := dsl.Parse(data, dsl.DefaultLimits())
	if err != nil {
		return nil, nil, err
	}
	if !doc.IsDSL() {
		def, err := model.ParseDefinitionYAML(data)
		return def, nil, err
	}
	out, src, err := doc.Translate(dsl.Options{Resolve: c.jobTypes})
	if err != nil {
		return nil, nil, err
	}
	def, err := model.ParseDefinition(out)
	return def, src, err
}

// locate rewrites errors found in a translated DSL document to name the
// DSL field and YAML line they come from; without a source map they are
// returned unchanged.
func locate(errs model.Errors, src *dsl.SourceMap) model.Errors {
	if src == nil {
		return errs
	}
	out := make(model.Errors, len(errs))
	for i, e := range errs {
		line, field, ok := src.Locate(e.Path)
		if !ok {
			out[i] = e
			continue
		}
		out[i] = &model.FieldError{Path: field, Msg: fmt.Sprintf("line %d: %s (at %s)", line, e.Msg, e.Path)}
	}
	return out
}
