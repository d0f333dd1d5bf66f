package code

// OutputBuffer keeps what a program writes to one stream within a byte
// limit, the way the code tools keep their output: the first three
// quarters and the last quarter of the limit, with a note of what was
// dropped between them, the text safe to hand to a model. Other tools
// that run programs (the command tools) use it so that every program's
// output reaches a model capped the same way.
type OutputBuffer struct{ b *capBuffer }

// NewOutputBuffer returns a buffer that keeps at most limit bytes.
func NewOutputBuffer(limit int) *OutputBuffer { return &OutputBuffer{b: newCapBuffer(limit)} }

// Write keeps what fits and counts the rest; it never fails, so a copy
// into it never stops early.
func (o *OutputBuffer) Write(p []byte) (int, error) { return o.b.Write(p) }

// String returns the kept text, with a note where bytes were dropped.
func (o *OutputBuffer) String() string { return o.b.String() }

// Truncated reports whether bytes were dropped.
func (o *OutputBuffer) Truncated() bool { return o.b.Truncated() }

// Total is how many bytes were written.
func (o *OutputBuffer) Total() int64 { return o.b.Total() }

// NoOutput is what a result says when a program printed nothing, so a
// model does not wait for more.
const NoOutput = noOutput

// FormatOutput labels a program's two streams as the code tools' results
// do ("--- stdout ---", "--- stderr ---"), leaving empty ones out; with
// nothing at all it returns NoOutput.
func FormatOutput(stdout, stderr string) string { return formatOutput(stdout, stderr) }
