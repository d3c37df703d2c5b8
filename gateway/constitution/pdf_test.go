package constitution

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
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
	s := schemas.Sliders{Floor: 85, RuleOfLaw: 85, Rotation: 75, Transparency: 85, MultiStatus: 70, SkinInGame: 60, Polycentricity: 55, PositiveSum: 75}
	o := Evaluate(s)
	in := PDFInput{Title: "Nordic model — Северная модель 2030", Sliders: s, Regime: o.Regime, Metrics: o.Metrics,
		Tags: []string{"welfare", "demo"}, CreatedAt: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	raw, err := RenderPDF(in)
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
	want := []string{"Nordic model", "Северная модель", regimeByKey(o.Regime).Label, "Sliders", "Metrics"}
	for i := range schemas.SliderKeys {
		want = append(want, sliderText[i][0], schemas.SliderKeys[i])
	}
	for _, k := range schemas.MetricKeys {
		want = append(want, k)
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
	raw, err := RenderPDF(PDFInput{Title: title, Sliders: all(10), Regime: ClassifyRegime(all(10)), Metrics: ComputeMetrics(all(10)), CreatedAt: time.Now()})
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
	s := all(50)
	in := PDFInput{Title: "Benchmark", Sliders: s, Regime: ClassifyRegime(s), Metrics: ComputeMetrics(s), CreatedAt: time.Now()}
	for b.Loop() {
		if _, err := RenderPDF(in); err != nil {
			b.Fatal(err)
		}
	}
}
