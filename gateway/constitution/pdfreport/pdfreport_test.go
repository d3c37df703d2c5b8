package pdfreport

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// popplerTool finds a poppler-utils program. Without it the test fails
// (never skips): `apt-get install -y poppler-utils` provides it.
func popplerTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: install poppler-utils (apt-get install -y poppler-utils) to check the PDF", name)
	}
	return p
}

// TestRenderPDF renders a report, checks its text with pdftotext and renders
// page 1 to PNG with pdftoppm (kept in $PDF_PREVIEW_DIR when set, for a
// person to look at).
func TestRenderPDF(t *testing.T) {
	t.Parallel()
	in := sample("Nordic model — Северная модель 2030")
	in.Tags = []string{"welfare", "demo"}
	raw, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), "%PDF-") {
		t.Fatalf("not a PDF: %q", raw[:min(len(raw), 16)])
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "report.pdf")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(popplerTool(t, "pdftotext"), "-layout", file, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v: %s", err, out)
	}
	txt := string(out)
	want := []string{"Nordic model", "Северная модель", in.Regime.Label, in.Regime.Description, "Sliders", "Metrics",
		"welfare · demo", "23 November 2026", "higher is better", "lower is better"}
	for _, b := range in.Sliders {
		want = append(want, b.Label, b.Key)
	}
	for _, m := range in.Metrics {
		want = append(want, m.Label, m.Key)
	}
	for _, w := range want {
		if !strings.Contains(txt, w) {
			t.Errorf("pdftotext output lacks %q:\n%s", w, txt)
		}
	}
	if out, err := exec.Command(popplerTool(t, "pdftoppm"), "-png", "-r", "80", "-singlefile", file, filepath.Join(dir, "page")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v: %s", err, out)
	}
	png, err := os.ReadFile(filepath.Join(dir, "page.png"))
	if err != nil || len(png) < 1000 {
		t.Fatalf("pdftoppm produced no image: %v", err)
	}
	if d := os.Getenv("PDF_PREVIEW_DIR"); d != "" {
		_ = os.WriteFile(filepath.Join(d, "constitution-report.png"), png, 0o644)
		_ = os.WriteFile(filepath.Join(d, "constitution-report.pdf"), raw, 0o644)
	}
}

// TestRenderPDFLongTitle prints a 200-character title in full.
func TestRenderPDFLongTitle(t *testing.T) {
	t.Parallel()
	words := strings.Repeat("constitution ", 20)
	title := strings.TrimSpace(words[:180]) + " end-marker"
	raw, err := Render(sample(title))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "long.pdf")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(popplerTool(t, "pdftotext"), file, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "end-marker") {
		t.Fatalf("the end of the title is missing:\n%s", out)
	}
	if d := os.Getenv("PDF_PREVIEW_DIR"); d != "" {
		_ = os.WriteFile(filepath.Join(d, "constitution-long-title.pdf"), raw, 0o644)
	}
}

func BenchmarkRenderPDF(b *testing.B) {
	in := sample("Benchmark")
	for b.Loop() {
		if _, err := Render(in); err != nil {
			b.Fatal(err)
		}
	}
}

// sample is a scenario report as the constitution package builds one.
func sample(title string) Scenario {
	return Scenario{
		Title:     title,
		Regime:    Regime{Label: "Social democracy", Description: "Rotating, transparent government with a high social floor.", Rule: "floor >= 70"},
		CreatedAt: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC),
		Sliders: []Bar{{"Social floor", "floor", 85}, {"Rule of law", "ruleOfLaw", 85}, {"Rotation of power", "rotation", 75},
			{"Transparency", "transparency", 85}, {"Multiple status ladders", "multiStatus", 70}, {"Skin in the game", "skinInGame", 60},
			{"Polycentricity", "polycentricity", 55}, {"Positive-sum economy", "positiveSum", 75}},
		Metrics: []Metric{{Bar{"Elite fear", "eliteFear", 20}, false}, {Bar{"Internal conflict", "intraConflict", 50}, false},
			{Bar{"Resentment", "resentment", 80}, false}, {Bar{"Innovation", "innovation", 70}, true},
			{Bar{"Stability", "stability", 45}, true}, {Bar{"Legitimacy", "legitimacy", 10}, true}},
	}
}
