// Package loopitems reads the items of a foreach step's items_from object
// in S3: it implements engine.ItemsReader over byte-range reads of the
// object (Objects, and S3Objects over the AWS SDK's S3 client).
//
// An object is in one of three formats: JSON lines (one JSON object a
// line), CSV (a header naming the fields, then one row an item, every
// value a STRING) or one JSON array of objects. Every item's fields become
// an iteration's params: their names must be valid param names, none of
// the ones the loop and the runtime give every iteration
// (model.ReservedItemField), and their values params' values
// (engine.Normalize), of the types the source declares.
//
// Limits: an item (a line, a row, an array element) is at most
// engine.MaxItemBytes bytes, a CSV header at most 16 KiB, and an object
// has at most engine.MaxIterations items. The object is read in ranges of
// at most 8 MiB; a Reader holds one item (and a read buffer) at a time,
// whatever the object's size or shape, and keeps no items between calls:
// ReadItems resumes from a cursor (engine.ItemsCursor) that ScanItems and
// ReadItems return. Reads after the scan require the object's ETag to be
// the scanned one: a Reader keeps the last chunks its reads fetched (at
// most 4 MiB, by ETag), so the next rounds of a loop read on from memory,
// and a read that must fetch fails if the object changed.
//
// Only the buckets a Reader is given may be read: the stack's signals
// bucket and the buckets attached to it (attachBuckets).
package loopitems
