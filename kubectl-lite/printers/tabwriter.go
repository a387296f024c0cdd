package printers

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// kubectl's tab writer settings (cli-runtime's GetNewTabWriter).
const (
	tabMinWidth = 6
	tabPadding  = 3
)

// TabWriter lays out tab-separated cells in columns as kubectl's tab writer
// does: text/tabwriter's layout (minimum width 6, padding 3 spaces, the
// last cell of a line outside any column) with kubectl's RememberWidths:
// a column is never narrower than it was at an earlier Flush, so the rows
// of a watch, flushed one by one, stay aligned with the table above them.
type TabWriter struct {
	out io.Writer
	buf bytes.Buffer
	// widths are the widest each column has been, padding included.
	widths []int
}

// NewTabWriter returns a TabWriter writing to out.
func NewTabWriter(out io.Writer) *TabWriter { return &TabWriter{out: out} }

// Write buffers text until Flush.
func (w *TabWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }

// ResetWidths forgets the remembered widths, for a new table.
func (w *TabWriter) ResetWidths() { w.widths = nil }

// Flush lays out and writes what was buffered.
func (w *TabWriter) Flush() error {
	text := w.buf.String()
	w.buf.Reset()
	if text == "" {
		return nil
	}
	lines := splitLines(text)
	var out bytes.Buffer
	w.format(&out, lines, 0, len(lines), nil)
	_, err := w.out.Write(out.Bytes())
	return err
}

// splitLines splits text into lines (ended by \n or \f) of cells (ended
// by \t or \v); the text after the last line break is a last line of its
// own, written without a newline.
func splitLines(text string) [][]string {
	var lines [][]string
	start := 0
	var cells []string
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\t', '\v':
			cells = append(cells, text[start:i])
			start = i + 1
		case '\n', '\f':
			lines = append(lines, append(cells, text[start:i]))
			cells, start = nil, i+1
		}
	}
	return append(lines, append(cells, text[start:]))
}

// format writes lines [line0, line1) whose columns left of column have
// the given widths: each run of consecutive lines with a cell in column
// (not counting a line's last cell) is a column block, whose width is its
// widest cell plus padding, at least the minimum and what was remembered.
func (w *TabWriter) format(out *bytes.Buffer, lines [][]string, line0, line1 int, widths []int) {
	column := len(widths)
	for this := line0; this < line1; this++ {
		if column >= len(lines[this])-1 {
			continue
		}
		w.writeLines(out, lines, line0, this, widths)
		line0 = this
		width := tabMinWidth
		for ; this < line1 && column < len(lines[this])-1; this++ {
			width = max(width, utf8.RuneCountInString(lines[this][column])+tabPadding)
		}
		for len(w.widths) <= column {
			w.widths = append(w.widths, 0)
		}
		width = max(width, w.widths[column])
		w.widths[column] = width
		w.format(out, lines, line0, this, append(widths, width))
		line0 = this
	}
	w.writeLines(out, lines, line0, line1, widths)
}

func (w *TabWriter) writeLines(out *bytes.Buffer, lines [][]string, line0, line1 int, widths []int) {
	for i := line0; i < line1; i++ {
		for j, c := range lines[i] {
			out.WriteString(c)
			if j < len(widths) {
				out.WriteString(strings.Repeat(" ", widths[j]-utf8.RuneCountInString(c)))
			}
		}
		if i+1 < len(lines) {
			out.WriteByte('\n')
		}
	}
}
