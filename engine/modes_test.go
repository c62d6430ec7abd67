package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/maestro-serverless/maestro/model"
)

func TestCheckRunParamModes(t *testing.T) {
	withMode := func(m model.ParamMode) *model.ParamDefinition {
		d := literal(model.TypeLong, int64(1))
		d.Mode = m
		return d
	}
	defined := params(
		"c", withMode(model.ModeConstant), "i", withMode(model.ModeImmutable), "m", withMode(""),
		"mu", withMode(model.ModeMutable), "s", withMode(model.ModeMutableOnStart), "sr", withMode(model.ModeMutableOnStartRestart),
	)
	tests := []struct {
		param          string
		start, restart bool // allowed?
	}{
		{"c", false, false}, {"i", false, false}, {"m", true, true}, {"mu", true, true},
		{"s", true, false}, {"sr", true, true}, {"new_param", true, true},
	}
	for _, tc := range tests {
		run := params(tc.param, literal(model.TypeLong, int64(2)))
		assert.Equal(t, tc.start, len(CheckRunParamModes(defined, run, false)) == 0, "%s at start", tc.param)
		got := CheckRunParamModes(defined, run, true)
		assert.Equal(t, tc.restart, len(got) == 0, "%s at restart", tc.param)
		if len(got) > 0 {
			assert.Contains(t, got[0], "run_params."+tc.param)
		}
	}
}
