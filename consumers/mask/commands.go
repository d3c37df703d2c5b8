package mask

import (
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
)

// declarations lists every command type the handler reads on
// mask.commands. Adding a command type is its type here (or in a file of
// its own) and one line in this list.
func declarations() []pipeline.Declaration[*batch] {
	return []pipeline.Declaration[*batch]{
		pipeline.Declare[*batch, issue](schemas.TypeMaskIssue),
		pipeline.Declare[*batch, revoke](schemas.TypeMaskRevoke),
		pipeline.Declare[*batch, charge](schemas.TypeMaskCharge),
	}
}

// issue creates a mask. It locks nothing: the mask is new.
type issue struct{ schemas.MaskIssue }

func (*issue) Lock(*batch) {}

func (c *issue) Decide(b *batch, env schemas.Envelope) (pipeline.Outcome, error) {
	return b.issue(env, c.MaskIssue)
}

// revoke soft-revokes one of the caller's masks.
type revoke struct{ schemas.MaskRevoke }

func (c *revoke) Lock(b *batch) { b.lockIDs = append(b.lockIDs, c.MaskID) }

func (c *revoke) Decide(b *batch, _ schemas.Envelope) (pipeline.Outcome, error) {
	return b.revoke(c.MaskRevoke), nil
}

// charge decides one charge against a mask: it locks the mask and reads
// its recent history (load).
type charge struct{ schemas.MaskCharge }

func (c *charge) Lock(b *batch) {
	b.lockIDs = append(b.lockIDs, c.MaskID)
	b.charged = append(b.charged, &c.MaskCharge)
}

func (c *charge) Decide(b *batch, env schemas.Envelope) (pipeline.Outcome, error) {
	return b.charge(env, c.MaskCharge)
}
