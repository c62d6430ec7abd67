package sel

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the type of a SEL value, named as SEL names it (SelTypes) in
// errors and results.
type Kind uint8

// The kinds of SEL values.
const (
	KindNull Kind = iota
	KindVoid
	KindString
	KindLong
	KindDouble
	KindBoolean
	KindStringArray
	KindLongArray
	KindDoubleArray
	KindBooleanArray
	KindMap
	KindDateTime
	KindDateTimeZone
	KindDateTimeFormatter
	KindDateTimeProperty
	KindDays
	KindUUID
	// KindClass is a class named in an expression for its static methods
	// or fields (Math, Long, DateTimeZone, ...).
	KindClass
	// KindError is what `throw "message"` evaluates to.
	KindError
	// KindHost is an object the host provides (params, Util).
	KindHost
)

var kindNames = [...]string{
	KindNull: "NULL", KindVoid: "VOID", KindString: "STRING", KindLong: "LONG", KindDouble: "DOUBLE",
	KindBoolean: "BOOLEAN", KindStringArray: "STRING_ARRAY", KindLongArray: "LONG_ARRAY",
	KindDoubleArray: "DOUBLE_ARRAY", KindBooleanArray: "BOOLEAN_ARRAY", KindMap: "MAP",
	KindDateTime: "DATETIME", KindDateTimeZone: "DATETIME_ZONE", KindDateTimeFormatter: "DATETIME_FORMATTER",
	KindDateTimeProperty: "DATETIME_PROPERTY", KindDays: "DATETIME_DAYS", KindUUID: "UUID", KindClass: "CLASS",
	KindError: "ERROR", KindHost: "PRESET_PARAMS",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// elem is the element kind of an array kind, KindNull for others.
func (k Kind) elem() Kind {
	switch k {
	case KindStringArray:
		return KindString
	case KindLongArray:
		return KindLong
	case KindDoubleArray:
		return KindDouble
	case KindBooleanArray:
		return KindBoolean
	}
	return KindNull
}

// arrayOf is the array kind of element kind k, KindNull when SEL has none.
func arrayOf(k Kind) Kind {
	switch k {
	case KindString:
		return KindStringArray
	case KindLong:
		return KindLongArray
	case KindDouble:
		return KindDoubleArray
	case KindBoolean:
		return KindBooleanArray
	}
	return KindNull
}

// Value is a SEL value.
type Value interface {
	Kind() Kind
}

// Null is SEL's null, and the value of a String, DateTime, ... declared
// without an initializer.
type Null struct{}

// TypedNull is a box of a kind holding null: a String, Map, DateTime, ...
// variable declared without an initializer, or an element of new
// String[n]. It is null to operators, and its kind is the box's.
type TypedNull struct{ Of Kind }

// Void is the value of an expression that ends in no value (a
// declaration, an if without a value).
type Void struct{}

// String is a SEL String.
type String string

// Long is a SEL long; int and long literals and variables are longs.
type Long int64

// Double is a SEL double; float and double are doubles.
type Double float64

// Boolean is a SEL boolean.
type Boolean bool

// Array is a one-dimensional array of strings, longs, doubles or booleans.
// It is shared by reference, as in Java: b = a; b[0] = 1 changes a.
type Array struct {
	// Of is the array's kind (KindLongArray, ...).
	Of    Kind
	Items []Value
}

// Map is SEL's map (new Map(), new HashMap()): string keys in insertion
// order, shared by reference.
type Map struct {
	keys []string
	vals map[string]Value
}

// Class is a class named for its static methods and fields (Math,
// UUID, Long, String, DateTimeZone, DateTimeFormat, Days, DateTime, ...).
type Class struct{ Name string }

// Error is the value of `throw "message"`: the evaluation ends with it.
type Error struct{ Message string }

// Kind implementations.
func (Null) Kind() Kind        { return KindNull }
func (t TypedNull) Kind() Kind { return t.Of }
func (Void) Kind() Kind        { return KindVoid }
func (String) Kind() Kind      { return KindString }
func (Long) Kind() Kind        { return KindLong }
func (Double) Kind() Kind      { return KindDouble }
func (Boolean) Kind() Kind     { return KindBoolean }
func (a *Array) Kind() Kind    { return a.Of }
func (*Map) Kind() Kind        { return KindMap }
func (Class) Kind() Kind       { return KindClass }
func (Error) Kind() Kind       { return KindError }
func (e Error) Error() string  { return e.Message }

// NewMap returns an empty map.
func NewMap() *Map { return &Map{vals: map[string]Value{}} }

// Len is the number of entries.
func (m *Map) Len() int { return len(m.keys) }

// Get returns key's value and whether it is there.
func (m *Map) Get(key string) (Value, bool) {
	v, ok := m.vals[key]
	return deref(v), ok
}

// Put sets key to v and returns its previous value (Null when none).
func (m *Map) Put(key string, v Value) Value {
	prev, ok := m.vals[key]
	if !ok {
		m.keys = append(m.keys, key)
		prev = Null{}
	}
	m.vals[key] = v
	return deref(prev)
}

// ref is a variable's box put into a map: SEL's put keeps the object the
// variable holds, so a later assignment to the variable changes the
// entry (x.put('foo', y); y = 111 puts 111).
type ref struct{ s *slot }

func (r *ref) Kind() Kind { return r.s.kind }

// deref is the value v stands for.
func deref(v Value) Value {
	if r, ok := v.(*ref); ok {
		return r.s.v
	}
	return v
}

// Remove deletes key and returns its value (Null when none).
func (m *Map) Remove(key string) Value {
	prev, ok := m.vals[key]
	if !ok {
		return Null{}
	}
	delete(m.vals, key)
	for i, k := range m.keys {
		if k == key {
			m.keys = append(m.keys[:i], m.keys[i+1:]...)
			break
		}
	}
	return deref(prev)
}

// Keys returns the keys in insertion order (the caller must not change
// the slice).
func (m *Map) Keys() []string { return m.keys }

// Host is an object the host provides to expressions by name (params,
// Util): its methods, its fields and its indexing (params['x']).
type Host interface {
	Value
	Call(m *Machine, method string, args []Value) (Value, error)
	Field(m *Machine, name string) (Value, error)
	Index(m *Machine, key Value) (Value, error)
}

// JavaDouble formats f as Java's Double.toString does: at least one digit
// after the point, scientific notation ("1.0E7") outside [1e-3, 1e7), and
// the shortest digits that read back as f.
func JavaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // e.g. 1.2345e+07, 1e-05
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	neg := strings.HasPrefix(exp, "-")
	exp = strings.TrimLeft(exp, "+-")
	exp = strings.TrimLeft(exp, "0")
	if exp == "" {
		exp = "0"
	}
	if neg {
		exp = "-" + exp
	}
	return mant + "E" + exp
}

// Stringer is a value that prints itself as Java's toString would (the
// Joda types, UUID).
type Stringer interface {
	Value
	JavaString() string
}

// JavaString is v as Java's String.valueOf prints it: "null" for null,
// longs in decimal, doubles as Double.toString, arrays as
// Arrays.toString ("[1, 2]"), maps as {k=v, ...}.
func JavaString(v Value) string {
	switch x := v.(type) {
	case nil, Null, TypedNull:
		return "null"
	case Void:
		return "VOID"
	case String:
		return string(x)
	case Long:
		return strconv.FormatInt(int64(x), 10)
	case Double:
		return JavaDouble(float64(x))
	case Boolean:
		return strconv.FormatBool(bool(x))
	case *Array:
		var b strings.Builder
		b.WriteByte('[')
		for i, it := range x.Items {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(JavaString(it))
		}
		b.WriteByte(']')
		return b.String()
	case *Map:
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k)
			b.WriteByte('=')
			b.WriteString(JavaString(deref(x.vals[k])))
		}
		b.WriteByte('}')
		return b.String()
	case Class:
		return "class " + x.Name
	case Error:
		return x.Message
	case Stringer:
		return x.JavaString()
	}
	return fmt.Sprint(v)
}
