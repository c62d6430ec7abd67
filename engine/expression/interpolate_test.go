package expression

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func interpVars() map[string]any {
	return map[string]any{
		"a": "A", "b": "B", "n": int64(15), "d": 1.0, "e": 1e7, "t": true,
		"job1__sleep_seconds": int64(15), "job.2__param1": "P", "x-y/z": "XYZ",
		"arr": []int64{1, 2}, "m": map[string]string{"k": "v"}, "ü": "U",
		"a.b": "AB",
	}
}

func lookupIn(vars map[string]any) func(string) (any, bool) {
	return func(name string) (any, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func TestInterpolate(t *testing.T) {
	tests := []struct {
		in, want string
		refs     []string
	}{
		{"", "", nil},
		{"plain", "plain", nil},
		{"$", "$", nil},
		{"$$", "$", nil},
		{"$$$a", "$A", []string{"a"}},
		{"$$a", "$a", nil},
		{"$${a}", "${a}", nil},
		{"${", "${", nil},
		{"${}", "${}", nil},
		{"${a", "${a", nil},
		{"a$", "a$", nil},
		{"$1", "$1", nil}, // a shell positional parameter stays
		{"$ a", "$ a", nil},
		{"$a", "A", []string{"a"}},
		{"${a}", "A", []string{"a"}},
		{"${a}b", "Ab", []string{"a"}},
		{"$a.b", "A.b", []string{"a"}},
		{"${a.b}", "AB", []string{"a.b"}},
		{"$a$b", "AB", []string{"a", "b"}},
		{"${a}${b}$a", "ABA", []string{"a", "b"}},
		{"$n + 1", "15 + 1", []string{"n"}},
		{"${job1__sleep_seconds} + 1", "15 + 1", []string{"job1__sleep_seconds"}},
		{"${job.2__param1}", "P", []string{"job.2__param1"}},
		{"${x-y/z}!", "XYZ!", []string{"x-y/z"}},
		{"$d/$e/$t", "1.0/1.0E7/true", []string{"d", "e", "t"}},
		{"$arr $m", `[1,2] {"k":"v"}`, []string{"arr", "m"}},
		{"ü$a€", "üA€", []string{"a"}},
		{"${ü}", "${ü}", nil}, // names are ASCII, as in Maestro
		{"echo $$MAESTRO_OUTPUT_START$1$$MAESTRO_OUTPUT_END", "echo $MAESTRO_OUTPUT_START$1$MAESTRO_OUTPUT_END", nil},
		{"echo error retries: $${error_retries}", "echo error retries: ${error_retries}", nil},
		{"${bar}s", "Bs", []string{"bar"}},
	}
	vars := interpVars()
	vars["bar"] = "B"
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Interpolate(tt.in, lookupIn(vars))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.refs, InterpolationRefs(tt.in))
		})
	}
}

func TestInterpolateUnknown(t *testing.T) {
	for _, in := range []string{"$fat", "${fat}", "x ${fat} y", "$a$fat"} {
		_, err := Interpolate(in, lookupIn(interpVars()))
		require.Error(t, err, in)
		assert.ErrorIs(t, err, ErrUnknownParam)
		assert.Contains(t, err.Error(), `unknown parameter "fat"`)
	}
}
