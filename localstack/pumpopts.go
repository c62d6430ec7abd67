package localstack

import "log/slog"

// positiveOr is a pump option's value v (a count or a time.Duration) when
// it is positive, else def (the option was left unset).
func positiveOr[T ~int | ~int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// pumpLogger is log (nil: one that discards) with the pump's attributes.
func pumpLogger(log *slog.Logger, attrs ...any) *slog.Logger {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return log.With(attrs...)
}
