package reputation

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
)

// reputationEvent applies one reputation.event command: a weighted event of
// a module whose trigger has no event of its own (mask risk flags,
// governance, campaign approval), at most once per (user, kind, sourceId).
type reputationEvent struct {
	schemas.ReputationEvent
	meta []byte // the encoded meta (Validate)
}

// Validate checks the data's fields and that its meta is a JSON object of
// at most 16 KiB; a record that fails answers 400 invalid_command, as on
// every table (the gateway answers a client's 422 before publishing).
func (e *reputationEvent) Validate() error {
	fields := schemas.FieldProblems{}
	var problems schemas.FieldProblems
	if errors.As(e.ReputationEvent.Validate(), &problems) {
		fields = problems
	}
	if e.Meta != nil {
		meta, err := json.Marshal(e.Meta)
		switch {
		case err != nil:
			fields["meta"] = "must be a JSON object"
		case len(meta) > schemas.ReputationMaxMeta:
			fields["meta"] = "must be at most 16 KiB"
		}
		e.meta = meta
	}
	if len(fields) > 0 {
		return fields
	}
	return nil
}

func (e *reputationEvent) Lock(b *batch) { b.note(e.ReputationEvent, "") }

// Decide answers 201 with the new score; a (user, kind, sourceId) applied
// before, in the table or earlier in the batch, 200 with the original
// result (changing nothing); an unknown user 404 user_not_found.
func (e *reputationEvent) Decide(b *batch, env schemas.Envelope) (pipeline.Outcome, error) {
	c, err := b.credit(e.ReputationEvent, e.meta, "", env)
	switch {
	case err != nil:
		return pipeline.Outcome{}, err
	case c.noUser:
		return pipeline.Reject(http.StatusNotFound, schemas.CodeUserNotFound, "no user with this id", nil), nil
	case c.prev != nil:
		r := resultOf(*c.prev)
		r.Idempotent = true
		o := pipeline.JSON(http.StatusOK, r)
		o.Unrecorded = true
		return o, nil
	}
	o := pipeline.JSON(http.StatusCreated, c.result)
	o.Emit = c.emit
	// With a source, the unique (user, kind, source) answers a redelivery:
	// no processed-command row is needed.
	o.Unrecorded = e.SourceID != ""
	return o, nil
}
