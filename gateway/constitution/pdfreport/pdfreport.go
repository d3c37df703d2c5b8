// Package pdfreport draws a constitution scenario's one-page PDF report
// (POST /api/constitution/pdf) with go-pdf/fpdf and the embedded Go fonts.
// It prints what it is given; the regime and the labels come from the
// constitution package's rules.
package pdfreport

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
)

// Scenario is what a report shows, already in words: the constitution
// package names the regime and labels the sliders and metrics from its
// rules, so this package draws and knows no rule.
type Scenario struct {
	Title     string
	Regime    Regime
	Sliders   []Bar
	Metrics   []Metric
	Tags      []string
	CreatedAt time.Time
}

// Regime is the scenario's regime as the report names it.
type Regime struct {
	Label, Description string
	// Rule is the regime's rule as text, printed in the footer.
	Rule string
}

// Bar is one slider: its label, its key (printed under the label) and its
// value, 0..100.
type Bar struct {
	Label, Key string
	Value      int
}

// Metric is one metric's bar, coloured by how healthy its value is.
type Metric struct {
	Bar
	HigherIsBetter bool
}

type rgb struct{ r, g, b int }

var (
	colInk     = rgb{33, 37, 41}
	colMuted   = rgb{108, 117, 125}
	colNavy    = rgb{24, 44, 84}
	colAccent  = rgb{52, 101, 196}
	colTrack   = rgb{231, 235, 241}
	colGrid    = rgb{206, 212, 218}
	colGood    = rgb{46, 160, 90}
	colMedium  = rgb{232, 163, 23}
	colBad     = rgb{214, 69, 65}
	colPanel   = rgb{243, 246, 251}
	colOnNavy  = rgb{255, 255, 255}
	colSubNavy = rgb{178, 196, 230}
)

// Render draws the one-page A4 report of a scenario: title, regime with its
// rule, the sliders as a bar chart and the metrics as coloured bars. The
// fonts (Go Regular and Bold) are embedded, so any Unicode title that the Go
// fonts cover prints as written.
func Render(in Scenario) ([]byte, error) {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.AddUTF8FontFromBytes("go", "", goregular.TTF)
	pdf.AddUTF8FontFromBytes("go", "B", gobold.TTF)
	pdf.SetTitle(in.Title, true)
	pdf.SetCreator("platform constitution", true)
	pdf.SetCreationDate(in.CreatedAt)
	pdf.SetModificationDate(in.CreatedAt)
	pdf.SetMargins(18, 18, 18)
	pdf.SetAutoPageBreak(false, 0)
	pdf.AddPage()
	pageW, pageH := pdf.GetPageSize()
	left, width := 18.0, pageW-36

	fill := func(c rgb) { pdf.SetFillColor(c.r, c.g, c.b) }
	text := func(c rgb) { pdf.SetTextColor(c.r, c.g, c.b) }
	draw := func(c rgb) { pdf.SetDrawColor(c.r, c.g, c.b) }

	// Header band with the title.
	// The title shrinks (20, 16, then 13 pt) until it fits in three lines;
	// a 200-character title always fits at 13 pt.
	titleSize := 20.0
	var titleLines []string
	for _, size := range []float64{20, 16, 13} {
		titleSize = size
		pdf.SetFont("go", "B", size)
		if titleLines = pdf.SplitText(in.Title, width); len(titleLines) <= 3 {
			break
		}
	}
	lineH := titleSize * 0.45
	bandH := 22.0 + lineH*float64(len(titleLines))
	fill(colNavy)
	pdf.Rect(0, 0, pageW, bandH, "F")
	pdf.SetFont("go", "", 9)
	text(colSubNavy)
	pdf.SetXY(left, 9)
	pdf.CellFormat(width/2, 5, "CONSTITUTION SCENARIO", "", 0, "L", false, 0, "")
	pdf.CellFormat(width/2, 5, in.CreatedAt.UTC().Format("2 January 2006"), "", 1, "R", false, 0, "")
	pdf.SetFont("go", "B", titleSize)
	text(colOnNavy)
	pdf.SetXY(left, 16)
	for _, l := range titleLines {
		pdf.CellFormat(width, lineH, l, "", 1, "L", false, 0, "")
		pdf.SetX(left)
	}
	y := bandH + 8

	// Regime panel.
	reg := in.Regime
	fill(colPanel)
	draw(colPanel)
	pdf.RoundedRect(left, y, width, 26, 3, "1234", "F")
	fill(colAccent)
	pdf.Rect(left, y, 2.2, 26, "F")
	pdf.SetXY(left+7, y+4)
	pdf.SetFont("go", "", 8.5)
	text(colMuted)
	pdf.CellFormat(40, 4, "REGIME", "", 1, "L", false, 0, "")
	pdf.SetX(left + 7)
	pdf.SetFont("go", "B", 16)
	text(colNavy)
	pdf.CellFormat(width-14, 8, reg.Label, "", 1, "L", false, 0, "")
	pdf.SetX(left + 7)
	pdf.SetFont("go", "", 9)
	text(colInk)
	pdf.CellFormat(width-14, 5, reg.Description, "", 1, "L", false, 0, "")
	y += 26 + 4
	if len(in.Tags) > 0 {
		pdf.SetXY(left, y)
		pdf.SetFont("go", "", 8.5)
		text(colMuted)
		pdf.CellFormat(width, 5, "Tags: "+strings.Join(in.Tags, " · "), "", 1, "L", false, 0, "")
		y += 6
	}
	y += 4

	// A horizontal bar chart: label, track, bar, value.
	labelW, valueW := 52.0, 12.0
	trackX := left + labelW
	trackW := width - labelW - valueW
	section := func(title, note string) {
		pdf.SetXY(left, y)
		pdf.SetFont("go", "B", 12.5)
		text(colNavy)
		pdf.CellFormat(width/2, 7, title, "", 0, "L", false, 0, "")
		pdf.SetFont("go", "", 8.5)
		text(colMuted)
		pdf.CellFormat(width/2, 7, note, "", 1, "R", false, 0, "")
		y += 9
		// Scale with grid lines at 0, 25, 50, 75, 100.
		pdf.SetFont("go", "", 7)
		for _, t := range []int{0, 25, 50, 75, 100} {
			x := trackX + trackW*float64(t)/100
			pdf.SetXY(x-5, y)
			pdf.CellFormat(10, 3.5, fmt.Sprint(t), "", 0, "C", false, 0, "")
		}
		y += 4.5
	}
	bars := func(labels []string, sub []string, values []int, color func(i int) rgb) {
		const rowH, barH = 10.5, 5.0
		top := y
		for i, v := range values {
			ry := y + float64(i)*rowH
			pdf.SetXY(left, ry+0.6)
			pdf.SetFont("go", "B", 9.5)
			text(colInk)
			pdf.CellFormat(labelW-3, 4.5, labels[i], "", 2, "L", false, 0, "")
			pdf.SetX(left)
			pdf.SetFont("go", "", 7)
			text(colMuted)
			pdf.CellFormat(labelW-3, 3.5, sub[i], "", 0, "L", false, 0, "")
			fill(colTrack)
			pdf.RoundedRect(trackX, ry+1.5, trackW, barH, 1.2, "1234", "F")
			if v > 0 {
				fill(color(i))
				w := trackW * float64(v) / 100
				pdf.RoundedRect(trackX, ry+1.5, w, barH, min(1.2, w/2), "1234", "F")
			}
			pdf.SetXY(trackX+trackW, ry+1.5)
			pdf.SetFont("go", "B", 10)
			text(colInk)
			pdf.CellFormat(valueW, barH, fmt.Sprint(v), "", 0, "R", false, 0, "")
		}
		// Dashed grid lines over the tracks.
		draw(colGrid)
		pdf.SetLineWidth(0.2)
		pdf.SetDashPattern([]float64{0.8, 0.8}, 0)
		for _, t := range []int{25, 50, 75} {
			x := trackX + trackW*float64(t)/100
			pdf.Line(x, top, x, top+float64(len(values))*rowH)
		}
		pdf.SetDashPattern([]float64{}, 0)
		y = top + float64(len(values))*rowH + 6
	}

	labels, subs, vals := make([]string, len(in.Sliders)), make([]string, len(in.Sliders)), make([]int, len(in.Sliders))
	for i, b := range in.Sliders {
		labels[i], subs[i], vals[i] = b.Label, b.Key, b.Value
	}
	section("Sliders", "0 = absent · 100 = fully present")
	bars(labels, subs, vals, func(int) rgb { return colAccent })

	mlabels, msubs, mvals := make([]string, len(in.Metrics)), make([]string, len(in.Metrics)), make([]int, len(in.Metrics))
	for i, m := range in.Metrics {
		mlabels[i], mvals[i] = m.Label, m.Value
		msubs[i] = m.Key + " · lower is better"
		if m.HigherIsBetter {
			msubs[i] = m.Key + " · higher is better"
		}
	}
	section("Metrics", "green = healthy · amber = watch · red = at risk")
	bars(mlabels, msubs, mvals, func(i int) rgb {
		good := mvals[i]
		if !in.Metrics[i].HigherIsBetter {
			good = 100 - good
		}
		switch {
		case good >= 60:
			return colGood
		case good >= 40:
			return colMedium
		default:
			return colBad
		}
	})

	// Footer.
	draw(colGrid)
	pdf.SetLineWidth(0.2)
	pdf.Line(left, pageH-18, left+width, pageH-18)
	pdf.SetXY(left, pageH-16)
	pdf.SetFont("go", "", 7.5)
	text(colMuted)
	pdf.MultiCell(width, 3.6, "Regime and metrics are computed from the sliders by the platform's published deterministic rules "+
		"(GET /api/constitution/public/regimes and /public/sliders-spec). Regime rule: "+reg.Rule+".", "", "L", false)

	if pdf.Err() {
		return nil, fmt.Errorf("render pdf: %w", pdf.Error())
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("render pdf: %w", err)
	}
	return buf.Bytes(), nil
}
