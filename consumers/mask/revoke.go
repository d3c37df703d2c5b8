package mask

import (
	"net/http"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
)

// revoke soft-revokes one of the caller's masks; revoking a revoked mask
// answers the same.
type revoke struct{ schemas.MaskRevoke }

func (c *revoke) Lock(b *batch) { b.lockIDs = append(b.lockIDs, c.MaskID) }

func (c *revoke) Decide(b *batch, _ schemas.Envelope) (pipeline.Outcome, error) {
	st := b.owned(c.MaskID, c.UserID)
	if st == nil {
		return notFound(), nil
	}
	if st.row.Status != schemas.MaskStatusRevoked {
		now := b.now
		st.row.Status, st.row.RevokedAt, st.dirty = schemas.MaskStatusRevoked, &now, true
	}
	return pipeline.JSON(http.StatusOK, st.row.View(b.now)), nil
}
