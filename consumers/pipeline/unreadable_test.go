package pipeline

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/fintech/platform/schemas"
)

func TestUnreadable(t *testing.T) {
	t.Parallel()
	o := Unreadable("x is not a mask command")
	var body schemas.ErrorBody
	if err := json.Unmarshal(o.Body, &body); err != nil {
		t.Fatal(err)
	}
	if o.Status != http.StatusBadRequest || body.Error != schemas.CodeInvalidCommand ||
		body.Message != "the command could not be read: x is not a mask command" {
		t.Fatalf("Unreadable = %d %s", o.Status, o.Body)
	}
}
