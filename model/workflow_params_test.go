package model

import (
	"reflect"
	"testing"
)

// TestParamsMerged: over's definitions win by name; base's names keep their
// order, over's new ones follow in theirs; neither input changes.
func TestParamsMerged(t *testing.T) {
	def := func(v string) *ParamDefinition { return &ParamDefinition{Type: TypeString, Value: v, HasValue: true} }
	base := Params{Names: []string{"a", "b"}, Defs: map[string]*ParamDefinition{"a": def("a0"), "b": def("b0")}}
	over := Params{Names: []string{"c", "a"}, Defs: map[string]*ParamDefinition{"c": def("c1"), "a": def("a1")}}
	got := base.Merged(over)
	if want := []string{"a", "b", "c"}; !reflect.DeepEqual(got.Names, want) {
		t.Errorf("names %v, want %v", got.Names, want)
	}
	if got.Defs["a"].Value != "a1" || got.Defs["b"].Value != "b0" || got.Defs["c"].Value != "c1" {
		t.Errorf("defs %v", got.Defs)
	}
	if len(base.Names) != 2 || base.Defs["a"].Value != "a0" || len(over.Names) != 2 {
		t.Error("an input changed")
	}
	if e := (Params{}); !reflect.DeepEqual(base.Merged(e), base) || !reflect.DeepEqual(e.Merged(over), over) {
		t.Error("merging with nothing changes something")
	}
}
