package model

// ParamType is the declared type of a parameter. Maestro accepts the names
// case-insensitively ("lonG", "string_array"); ParseParamType normalises them.
type ParamType string

// The ten parameter types of Maestro's ParamDefinition.
const (
	TypeString       ParamType = "STRING"
	TypeLong         ParamType = "LONG"
	TypeDouble       ParamType = "DOUBLE"
	TypeBoolean      ParamType = "BOOLEAN"
	TypeStringMap    ParamType = "STRING_MAP"
	TypeStringArray  ParamType = "STRING_ARRAY"
	TypeLongArray    ParamType = "LONG_ARRAY"
	TypeDoubleArray  ParamType = "DOUBLE_ARRAY"
	TypeBooleanArray ParamType = "BOOLEAN_ARRAY"
	TypeMap          ParamType = "MAP"
)

// ParamTypes lists every parameter type in declaration order.
var ParamTypes = []ParamType{
	TypeString, TypeLong, TypeDouble, TypeBoolean, TypeStringMap,
	TypeStringArray, TypeLongArray, TypeDoubleArray, TypeBooleanArray, TypeMap,
}

// ParamMode says when a parameter may be changed by run or restart params.
type ParamMode string

// Parameter modes; MUTABLE is the default.
const (
	ModeConstant              ParamMode = "CONSTANT"
	ModeImmutable             ParamMode = "IMMUTABLE"
	ModeMutable               ParamMode = "MUTABLE"
	ModeMutableOnStart        ParamMode = "MUTABLE_ON_START"
	ModeMutableOnStartRestart ParamMode = "MUTABLE_ON_START_RESTART"
)

// ParamDefinition is one parameter as written in a definition or in run params.
//
// Exactly one of Value (HasValue true) or Expression is set in a valid definition.
// The Go type of Value depends on Type:
//
//	STRING        string
//	LONG          int64
//	DOUBLE        float64 (the literal text is kept in Raw for an exact round trip)
//	BOOLEAN       bool
//	STRING_MAP    map[string]string (key order in Keys)
//	STRING_ARRAY  []string
//	LONG_ARRAY    []int64
//	DOUBLE_ARRAY  []float64
//	BOOLEAN_ARRAY []bool
//	MAP           map[string]*ParamDefinition (nested definitions; key order in Keys)
//
// LONG and DOUBLE literals (and their array elements) may also be written as
// JSON strings holding a number ("10.229999999999"), as Jackson accepts them.
// A literal whose JSON shape does not fit Type, or whose Type is unknown, is
// kept as decoded JSON (nil, bool, json.Number, string, []any or
// map[string]any) so that validation, not decoding, reports it with its path.
type ParamDefinition struct {
	Type       ParamType
	Value      any
	HasValue   bool
	Expression string
	Validator  string
	Mode       ParamMode // empty means the default, MUTABLE
	Tags       TagList
	// Meta holds every key Maestro does not model (e.g. "source",
	// "internal_mode"), kept verbatim for the round trip.
	Meta map[string]RawJSON
	// Raw is the literal JSON text of a numeric Value (LONG, DOUBLE,
	// LONG_ARRAY, DOUBLE_ARRAY) as it was read, when writing Value would not
	// give the same text back (a number written as a string, "12.30", 1E3).
	// Encoding uses it only while it still decodes to Value.
	Raw RawJSON
	// Keys lists the keys of a STRING_MAP or MAP literal in definition order
	// (Go maps have none); encoding writes keys missing from it sorted, after it.
	Keys []string
}
