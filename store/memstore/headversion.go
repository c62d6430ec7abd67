package memstore

import (
	"reflect"
	"unsafe"

	"github.com/maestro-serverless/maestro/store"
)

// A store.WorkflowHead carries the version of the head item it was read
// at in an unexported field: UpdateProperties is conditioned on it, and a
// copy of the head carries it along. Package store offers no way to set or
// read it from outside, so the memstore reaches it by its offset, found by
// reflection. Should package store rename or retype the field, New panics
// saying so (and the contract suite fails) rather than conditioning every
// update on version 0.

// headVersionField is the name of store.WorkflowHead's version field.
const headVersionField = "v"

// headVersionOffset returns the field's offset, ok false when store.
// WorkflowHead has no such int64 field.
func headVersionOffset() (uintptr, bool) {
	f, ok := reflect.TypeFor[store.WorkflowHead]().FieldByName(headVersionField)
	if !ok || f.Type.Kind() != reflect.Int64 {
		return 0, false
	}
	return f.Offset, true
}

func checkHeadVersion() {
	if _, ok := headVersionOffset(); !ok {
		panic("memstore: store.WorkflowHead has no int64 field " + headVersionField + ": update memstore/headversion.go")
	}
}

// headV returns the version h was read at (0 for a head built by hand, as
// package store reads it).
func headV(h *store.WorkflowHead) int64 {
	off, _ := headVersionOffset()
	return *(*int64)(unsafe.Add(unsafe.Pointer(h), off))
}

// setHeadV records in h the version it is read at.
func setHeadV(h *store.WorkflowHead, v int64) {
	off, _ := headVersionOffset()
	*(*int64)(unsafe.Add(unsafe.Pointer(h), off)) = v
}
