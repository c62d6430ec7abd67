// Package logctx puts identifiers on every log line written while handling
// one message or request: a handler opens a scope in its context, fills it
// as it learns the ids (workflow, instance, run, step, attempt, trace), and
// Handler adds them to each record logged with that context (the slog
// ...Context methods), including lines written deep inside a call.
package logctx

import (
	"context"
	"log/slog"
	"sync"
)

type scope struct {
	mu     sync.Mutex
	parent *scope
	attrs  []slog.Attr
}

type key struct{}

// Scope returns ctx with a new, empty scope below ctx's own (whose
// attributes it shows too).
func Scope(ctx context.Context) context.Context {
	parent, _ := ctx.Value(key{}).(*scope)
	return context.WithValue(ctx, key{}, &scope{parent: parent})
}

// Add adds attributes (slog's key-value pairs or Attrs) to ctx's scope; a
// key already there is replaced. Without a scope it does nothing.
func Add(ctx context.Context, args ...any) {
	sc, _ := ctx.Value(key{}).(*scope)
	if sc == nil {
		return
	}
	r := slog.Record{}
	r.Add(args...)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	r.Attrs(func(a slog.Attr) bool {
		for i := range sc.attrs {
			if sc.attrs[i].Key == a.Key {
				sc.attrs[i] = a
				return true
			}
		}
		sc.attrs = append(sc.attrs, a)
		return true
	})
}

// Attrs returns the attributes of ctx's scope and its parents, outermost
// first.
func Attrs(ctx context.Context) []slog.Attr {
	sc, _ := ctx.Value(key{}).(*scope)
	var chain []*scope
	for ; sc != nil; sc = sc.parent {
		chain = append(chain, sc)
	}
	var out []slog.Attr
	for i := len(chain) - 1; i >= 0; i-- {
		chain[i].mu.Lock()
		out = append(out, chain[i].attrs...)
		chain[i].mu.Unlock()
	}
	return out
}

// Handler adds the attributes of a record's context scope to it.
type Handler struct {
	slog.Handler
}

// NewHandler wraps h.
func NewHandler(h slog.Handler) *Handler { return &Handler{Handler: h} }

// Handle adds ctx's scope attributes, then passes the record on.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if attrs := Attrs(ctx); len(attrs) > 0 {
		r = r.Clone()
		r.AddAttrs(attrs...)
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs keeps the wrapper.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{Handler: h.Handler.WithAttrs(attrs)}
}

// WithGroup keeps the wrapper.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{Handler: h.Handler.WithGroup(name)}
}

// Wrap returns a logger whose lines carry their context's scope; nil
// stays nil, and a logger already wrapped is returned as it is.
func Wrap(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	if _, ok := l.Handler().(*Handler); ok {
		return l
	}
	return slog.New(NewHandler(l.Handler()))
}
