package memstore

import (
	"context"
	"slices"

	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// PutTagPermitInfo is PutTagPermit that also replaces the permit's extra
// info; an empty extraInfo removes it.
func (s *Gates) PutTagPermitInfo(ctx context.Context, tag string, maxAllowed, now int64, extraInfo []byte) (*store.TagPermit, error) {
	info := slices.Clone(extraInfo)
	if len(info) == 0 {
		info = nil
	}
	return s.putPermit(ctx, layout.PermitPK(tag), layout.PermitSK, tag, func(p *permitItem) {
		p.maxAllowed, p.extraInfo = maxAllowed, info
	}, now)
}
