package sel

import "fmt"

// Method calls, fields and constructors, dispatched by the receiver's
// kind to the files that implement each family of types: basic.go (String,
// Long, Double, Boolean, arrays, Map, Math, UUID, Arrays, System,
// DateTimeConstants) and joda.go (DateTime, DateTimeZone, DateTimeFormat,
// DateTimeFormatter, Property, Days).

// object is a value with methods of its own (the Joda types, UUID).
type object interface {
	Value
	call(m *Machine, name string, args []Value) (Value, error)
}

// classes are the class names an expression may use, as SEL's
// STATIC_OBJECTS has them; any other name that is not a variable is null.
var classes = map[string]bool{
	"int": true, "long": true, "Integer": true, "Long": true, "float": true, "double": true, "Float": true,
	"Double": true, "boolean": true, "Boolean": true, "String": true, "Map": true, "HashMap": true,
	"LinkedHashMap": true, "DateTime": true, "DateTimeZone": true, "DateTimeFormatter": true,
	"DateTimeFormat": true, "Property": true, "Days": true, "UUID": true, "DateTimeConstants": true,
	"System": true, "Arrays": true, "Math": true,
}

// typeKinds are the kinds the type names of declarations and casts stand
// for (SelTypeUtil's JAVA_CLAZZ_NAME_TO_SEL_TYPES).
var typeKinds = map[string]Kind{
	"int": KindLong, "long": KindLong, "Integer": KindLong, "Long": KindLong,
	"float": KindDouble, "double": KindDouble, "Float": KindDouble, "Double": KindDouble,
	"boolean": KindBoolean, "Boolean": KindBoolean, "String": KindString,
	"Map": KindMap, "HashMap": KindMap, "LinkedHashMap": KindMap,
	"DateTime": KindDateTime, "DateTimeZone": KindDateTimeZone, "DateTimeFormatter": KindDateTimeFormatter,
	"DateTimeFormat": KindDateTimeFormatter, "Property": KindDateTimeProperty, "Days": KindDays, "UUID": KindUUID,
}

// call calls method name of recv with args.
func (m *Machine) call(recv Value, name string, args []Value) (Value, error) {
	switch x := recv.(type) {
	case String:
		return callString(m, x, name, args)
	case Long:
		return callLong(m, x, name, args)
	case Double:
		return callDouble(m, x, name, args)
	case Boolean:
		return callBoolean(m, x, name, args)
	case *Array:
		return callArray(m, x, name, args)
	case *Map:
		return callMap(m, x, name, args)
	case Class:
		if v, ok, err := callStaticBasic(m, x.Name, name, args); ok || err != nil {
			return v, err
		}
		if v, ok, err := callStaticJoda(m, x.Name, name, args); ok || err != nil {
			return v, err
		}
		return nil, Unsupported("%s has no method %s", x.Name, name)
	case Host:
		return x.Call(m, name, args)
	case Null:
		return nil, Unsupported("cannot call %s on null", name)
	case TypedNull:
		// SelMap answers size and containsKey with its map null; every
		// other method of a null box fails, as Java's would.
		if x.Of == KindMap && name == "size" && len(args) == 0 {
			return Long(0), nil
		}
		if x.Of == KindMap && name == "containsKey" && len(args) == 1 {
			return Boolean(false), nil
		}
		return nil, fmt.Errorf("cannot call %s on a null %s", name, x.Of)
	case object:
		return x.call(m, name, args)
	}
	return nil, Unsupported("%s has no method %s", recv.Kind(), name)
}

// field reads field name of recv (array.length, DateTimeZone.UTC, a host
// object's field).
func (m *Machine) field(recv Value, name string) (Value, error) {
	switch x := recv.(type) {
	case Class:
		if v, ok, err := fieldStaticBasic(m, x.Name, name); ok || err != nil {
			return v, err
		}
		if v, ok, err := fieldStaticJoda(m, x.Name, name); ok || err != nil {
			return v, err
		}
		return nil, Unsupported("%s has no field %s", x.Name, name)
	case *Array:
		if name == "length" {
			return Long(len(x.Items)), nil
		}
	case Host:
		return x.Field(m, name)
	}
	return nil, Unsupported("%s has no field %s", recv.Kind(), name)
}

// construct evaluates new class(args...).
func (m *Machine) construct(class string, args []Value) (Value, error) {
	if v, ok, err := constructBasic(m, class, args); ok || err != nil {
		return v, err
	}
	if v, ok, err := constructJoda(m, class, args); ok || err != nil {
		return v, err
	}
	return nil, Unsupported("cannot create a new %s", class)
}

// IsClass reports whether name is a class an expression may name (Math,
// Long, DateTimeZone, ...).
func IsClass(name string) bool { return classes[name] }
