package fiat_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// fiatCommandTypes reads the schemas package's source for the command
// types of fiat.commands: every Type constant whose value starts with
// "fiat." or whose own comment says it is a command on fiat.commands.
func fiatCommandTypes(t *testing.T) []string {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), "../../schemas", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, pkg := range pkgs {
		for name, f := range pkg.Files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, id := range vs.Names {
						if !strings.HasPrefix(id.Name, "Type") || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						v, err := strconv.Unquote(lit.Value)
						if err != nil {
							t.Fatal(err)
						}
						if strings.HasPrefix(v, "fiat.") || strings.Contains(vs.Doc.Text(), "fiat.commands") {
							out = append(out, v)
						}
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestDeclarationsCoverFiatCommands fails when a command type of
// fiat.commands has no declaration in the applier (or one is declared that
// the schemas do not define), or when a declared type has no schema version
// in schemas (its records would be parked on the DLQ, never applied). Each
// failure names the README step (Adding a module, step 4).
func TestDeclarationsCoverFiatCommands(t *testing.T) {
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	want := fiatCommandTypes(t)
	if len(want) < 11 {
		t.Fatalf("found only %d fiat command types in schemas: %v", len(want), want)
	}
	got := slices.Sorted(slices.Values(h.Types()))
	for _, typ := range want {
		if !slices.Contains(got, typ) {
			t.Errorf("%s is a fiat command in schemas but not declared: README \"Adding a module\", step 4 — "+
				"its file in consumers/fiat and one line in declarations() (consumers/fiat/handler.go)", typ)
		}
	}
	for _, typ := range got {
		if !slices.Contains(want, typ) {
			t.Errorf("%s is declared but schemas define no such fiat command (a Type constant starting with "+
				"\"fiat.\" or documented as a command on fiat.commands)", typ)
		}
		env, err := schemas.New(typ, "k", "", map[string]any{}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		raw, err := schemas.Encode(env)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := schemas.Decode(raw); errors.Is(err, schemas.ErrUnknownType) {
			t.Errorf("%s has no schema version: README \"Adding a module\", step 4 — one line in the module's "+
				"versions map (fiatVersions, schemas/fiat.go); without it the consumer parks its records on the DLQ", typ)
		}
	}
}

// TestUnreadableCommands: a type without a declaration, data that does not
// decode and data that fails its type's Validate are each answered 400
// invalid_command, beside the batch's other commands, and change nothing.
func TestUnreadableCommands(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	a, b := fund(t, pool, "ra", 10_000), fund(t, pool, "rb", 0)
	camp := campaign(t, pool, 1_000, nil)
	invalid := donateCmd(t, camp, a, "ra", 0, false) // amountKzt must be positive
	garbled := transferCmd(t, a, b, "ra", "rb", 1)
	garbled.Env.Data = []byte(`{"amount":"ten"}`)
	unknown := command(t, "fiat.unknown", a, map[string]any{})
	outs := applyBatch(t, pool, h, []pipeline.Command{invalid, garbled, unknown, transferCmd(t, a, b, "ra", "rb", 100)})
	for i, o := range outs[:3] {
		if o.Status != http.StatusBadRequest || errCode(o) != schemas.CodeInvalidCommand || len(o.Emit) != 0 {
			t.Fatalf("command %d: %d %s, want 400 invalid_command", i, o.Status, o.Body)
		}
	}
	if outs[3].Status != http.StatusOK || balance(t, pool, b) != 100 {
		t.Fatalf("the readable transfer: %d %s", outs[3].Status, outs[3].Body)
	}
}
