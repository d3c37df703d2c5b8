package main

import (
	"bytes"
	"embed"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/template"
)

// templates are the one Patroni and the one pgBackRest configuration:
// deploy/local/cluster.sh and stack.sh render theirs on every 'up', and
// compose's files (deploy/patroni/) are renderings kept equal to them by
// TestRenderedComposeFiles.
//
//go:embed templates/*.tmpl
var templates embed.FS

// renderKinds maps `platform render KIND` to its template.
var renderKinds = map[string]string{
	"patroni":    "templates/patroni.yml.tmpl",
	"pgbackrest": "templates/pgbackrest.conf.tmpl",
}

// runRender is `platform render patroni|pgbackrest [--stdin] [NAME=VALUE ...]`:
// the values come from the arguments and, with --stdin, from NAME=VALUE
// lines on stdin (passwords: never on a command line, which every local
// user can read).
func runRender(in *invocation) error {
	const use = "render: usage: platform render patroni|pgbackrest [--stdin] [NAME=VALUE ...]"
	if len(in.args) == 0 || renderKinds[in.args[0]] == "" {
		return usageError{use}
	}
	var stdin bool
	rest, err := parseFlags("render", in.args[1:], func(fs *flag.FlagSet) {
		fs.BoolVar(&stdin, "stdin", false, "read NAME=VALUE lines from stdin too")
	})
	if err != nil {
		return err
	}
	values := map[string]string{}
	if stdin {
		if values, err = parseEnvFile(os.Stdin); err != nil {
			return usageError{"render: stdin: " + err.Error()}
		}
	}
	for _, a := range rest {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return usageError{use}
		}
		values[k] = v
	}
	out, err := render(in.args[0], values)
	if err != nil {
		return err
	}
	_, err = in.stdout.Write(out)
	return err
}

// render fills template kind with values; a value the template needs and
// was not given is an error naming it.
func render(kind string, values map[string]string) ([]byte, error) {
	t, err := template.New(kind).Option("missingkey=error").Funcs(template.FuncMap{
		"readfile": func(path string) (string, error) {
			b, err := os.ReadFile(path)
			return strings.TrimSpace(string(b)), err
		},
	}).ParseFS(templates, renderKinds[kind])
	if err != nil {
		return nil, err
	}
	data := map[string]any{}
	for k, v := range values {
		data[k] = v
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, strings.TrimPrefix(renderKinds[kind], "templates/"), data); err != nil {
		return nil, usageError{fmt.Sprintf("render %s: %v", kind, err)}
	}
	if !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}
