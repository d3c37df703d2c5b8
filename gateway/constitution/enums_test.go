package constitution

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fintech/platform/schemas"
)

// TestEnumTagsAreTheKeys: the binder checks regime and goal against their
// enum tags, so the tags must list exactly the regimes and metrics.
func TestEnumTagsAreTheKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ   reflect.Type
		field string
		want  []string
	}{
		{reflect.TypeFor[listArtifactsRequest](), "Regime", RegimeKeys()},
		{reflect.TypeFor[aiRequest](), "Goal", schemas.MetricKeys},
	} {
		f, ok := tc.typ.FieldByName(tc.field)
		if !ok {
			t.Fatalf("%s has no field %s", tc.typ, tc.field)
		}
		if got := f.Tag.Get("enum"); got != strings.Join(tc.want, ",") {
			t.Errorf("%s.%s enum %q, want %q", tc.typ, tc.field, got, strings.Join(tc.want, ","))
		}
	}
}
