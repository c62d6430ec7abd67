// Package definition loads workflow definitions: it decodes JSON or YAML,
// validates the structure and type-checks every expression, returning all
// problems at once. The CLI and the API use it so that a definition is
// judged the same way everywhere.
package definition

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v2"

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

// isMaestroDSL reports whether a YAML document uses Maestro's YAML DSL: a
// top-level "Workflow" key, or a "workflow" whose steps are "jobs".
func isMaestroDSL(data []byte) bool {
	var doc map[string]any
	if yaml.Unmarshal(data, &doc) != nil {
		return false
	}
	if _, ok := doc["Workflow"]; ok {
		return true
	}
	wf, ok := doc["workflow"].(map[any]any)
	if !ok {
		return false
	}
	_, jobs := wf["jobs"]
	_, steps := wf["steps"]
	return jobs && !steps
}

// Checker decodes and validates definitions.
type Checker struct {
	lang *expression.Language
	now  func() time.Time

	// policies are a deployment's rules, applied after validation (policy.go).
	policies []policy
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

// Language returns the expression language the checker uses.
func (c *Checker) Language() *expression.Language { return c.lang }

// Check decodes data and validates it. On failure the error is an Errors
// listing every problem found (decoding problems first).
func (c *Checker) Check(data []byte, f Format) (*model.Definition, error) {
	if len(data) > MaxSize {
		return nil, Errors{{Path: "$", Msg: fmt.Sprintf("definition is %d bytes, more than the %d-byte limit", len(data), MaxSize)}}
	}
	if f == YAML && isMaestroDSL(data) {
		return nil, Errors{{Path: "$", Msg: "Maestro's YAML DSL (Workflow/workflow with jobs:) is not supported; " +
			"write the definition's JSON structure in YAML (properties:, workflow: {id, steps: [...]})"}}
	}
	var def *model.Definition
	var err error
	if f == YAML {
		def, err = model.ParseDefinitionYAML(data)
	} else {
		def, err = model.ParseDefinition(data)
	}
	if err != nil {
		var list model.Errors
		if !errors.As(err, &list) {
			list = Errors{{Path: "$", Msg: err.Error()}}
		}
		return nil, list
	}
	// Checking is budgeted like a decision: a definition's expressions cost
	// at most DefaultBudgetCPU units to compile, regular expressions included.
	budget := expression.NewBudget(0, 0)
	if errs := model.Validate(def, model.ValidateOptions{Expressions: c.lang.Checker(budget), Now: c.now}); len(errs) > 0 {
		return nil, errs
	}
	if errs := c.applyPolicies(def); len(errs) > 0 {
		return nil, errs
	}
	return def, nil
}
