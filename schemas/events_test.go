package schemas

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// notEvents are the registry's message types that are neither events nor
// commands: replies, analytics change records, the bundle carrier. Commands
// (and appended records) are not listed: commandTypes derives them from
// their data types' doc comments.
var notEvents = map[string]bool{
	TypeReply: true,
	// Analytics change records (topics.Analytics*), never delivered.
	TypeWebhookDeliveryUpdated: true,
	// The carrier of bundled events, expanded before delivery.
	TypeEventBundle: true,
	// The outcome journals' records (topics.OutcomesOf), read by appliers only.
	TypeCommandOutcome: true,
}

// commandTypes reads this package's source for the message types that
// travel on command and append topics: those whose data type is documented
// "X is the data of a TypeX command" (or "record", for ledger.append and
// reputation.event), the convention of every module's schemas file.
func commandTypes(t *testing.T) map[string]bool {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	values, named := map[string]string{}, map[string]bool{}
	dataOf := regexp.MustCompile(`is the data of an? (Type\w+) (command|record)`)
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok {
					continue
				}
				for _, spec := range gd.Specs {
					switch sp := spec.(type) {
					case *ast.ValueSpec:
						for i, id := range sp.Names {
							if lit, ok := valueAt(sp, i).(*ast.BasicLit); ok && lit.Kind == token.STRING {
								v, err := strconv.Unquote(lit.Value)
								if err != nil {
									t.Fatal(err)
								}
								values[id.Name] = v
							}
						}
					case *ast.TypeSpec:
						doc := sp.Doc
						if doc == nil {
							doc = gd.Doc
						}
						if m := dataOf.FindStringSubmatch(strings.Join(strings.Fields(doc.Text()), " ")); m != nil {
							named[m[1]] = true
						}
					}
				}
			}
		}
	}
	out := map[string]bool{}
	for c := range named {
		v, ok := values[c]
		if !ok {
			t.Fatalf("a data type is documented as the data of %s, which is no string constant", c)
		}
		out[v] = true
	}
	return out
}

func valueAt(sp *ast.ValueSpec, i int) ast.Expr {
	if i < len(sp.Values) {
		return sp.Values[i]
	}
	return nil
}

// TestEventCatalogIsComplete fails when the registry knows a message type
// that is neither in the event catalog (GET /api/platform/events) nor a
// command: a new event type must be described before it is delivered.
func TestEventCatalogIsComplete(t *testing.T) {
	commands := commandTypes(t)
	if len(commands) < 18 {
		t.Fatalf("found only %d command types: the doc convention walk is broken", len(commands))
	}
	listed := map[string]bool{}
	for _, e := range EventCatalog() {
		if listed[e.Type] {
			t.Errorf("%s is listed twice", e.Type)
		}
		listed[e.Type] = true
		if e.Module == "" || e.Meaning == "" || e.Data == nil {
			t.Errorf("%s lacks a module, meaning or data type", e.Type)
		}
	}
	for _, m := range moduleVersions {
		for typ := range m {
			if !listed[typ] && !notEvents[typ] && !commands[typ] {
				t.Errorf("message type %s is neither in EventCatalog nor a command: README \"Adding a module\", "+
					"step 1 — an event gets its EventCatalog entry; a command's data type is documented "+
					"\"<Data> is the data of a Type<Name> command\", naming the constant whose value is %q", typ, typ)
			}
			if listed[typ] && (notEvents[typ] || commands[typ]) {
				t.Errorf("%s is both an event and a command", typ)
			}
		}
	}
	// The spec's Events table, every type of it.
	for _, typ := range strings.Fields(`transfer.completed transfer.failed request.paid request.expired
		deposit.completed merchant.charge.success donation.received campaign.goal_reached mask.created
		charge.authorized charge.declined score.updated rank.promoted proposal.passed proposal.rejected
		ledger.entry_added ledger.chain_verified`) {
		if !listed[typ] {
			t.Errorf("the spec's %s is not listed", typ)
		}
	}
}
