package agent

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/jarvis-workbench/jarvis/engine"
)

// Input is what a run answers: the person's text and the images attached
// to it, or (Again) the conversation's last question once more.
type Input struct {
	Text   string
	Images []engine.Image
	// Again answers the user message the conversation ends with instead
	// of appending a new one: a retry, or a question edited in place
	// whose later turns were taken away. Text and Images are ignored.
	Again bool
}

// hasImages reports whether any message carries an image.
func hasImages(msgs []engine.Message) bool {
	for _, m := range msgs {
		if len(m.Images) > 0 {
			return true
		}
	}
	return false
}

// maxVisionProbe bounds how many of the server's models are asked about
// their capabilities when looking for ones that read images.
const maxVisionProbe = 64

// CheckVision returns an *engine.VisionUnsupportedError, naming the
// server's models that can read images, when model cannot. When the
// model's capabilities cannot be read, or the server does not say them,
// it returns nil: the server then answers the request itself (and says
// what is wrong).
func CheckVision(ctx context.Context, eng engine.InferenceEngine, model string) error {
	caps, err := eng.Capabilities(ctx, model)
	if err != nil || caps == nil || slices.Contains(caps, engine.CapVision) {
		return nil
	}
	return &engine.VisionUnsupportedError{Model: model, Capable: VisionModels(ctx, eng)}
}

// VisionModels lists the server's models that can read images, in the
// server's order (empty when none can or the list cannot be read).
func VisionModels(ctx context.Context, eng engine.InferenceEngine) []string {
	infos, err := eng.ListModels(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for i, m := range infos {
		if i == maxVisionProbe || ctx.Err() != nil {
			break
		}
		if caps, err := eng.Capabilities(ctx, m.Name); err == nil && slices.Contains(caps, engine.CapVision) {
			out = append(out, m.Name)
		}
	}
	return out
}

// What an image costs a model's prompt. A vision model turns a picture
// into a number of embedding positions that take room in the context like
// tokens; prompt_eval_count counts them. The number depends on the model
// family, and for some on the picture's size. The figures below follow
// how Ollama's runners process images (v0.17): the estimate of a request
// with images adds them to its text estimate, and the whole is calibrated
// against what the server counts, like the rest of the budget.
//
//	gemma3, gemma3n            256 soft tokens, plus the markers around them
//	llama3.2-vision (mllama)   1: the image reaches the model through cross-attention
//	qwen2.5-VL, qwen3-VL       one per 28×28 pixels after the model's resize (at most about 2.1 megapixels)
//	mistral-small3.x, pixtral  one per 28×28 pixels after a resize to 1540 pixels at most, plus a break per row
//	moondream                  729 (a 27×27 grid)
//	minicpm-v                  640 (up to ten slices of 64)
//	llava 1.5 derivatives      576 (a 24×24 grid: bakllava, llava-llama3, llava-phi3)
//	llava 1.6                  2,880 (up to five tiles of 576)
//	any other                  1,024, on the high side: an overestimate costs an early compaction, an underestimate a refused request
type imageCost struct {
	// names match the model's name; families its family as the server
	// reports it.
	names, families []string
	tokens          func(width, height int) int
}

// DefaultImageTokens is the estimate for an image sent to a model family
// the table does not know.
const DefaultImageTokens = 1024

func fixedCost(n int) func(int, int) int { return func(int, int) int { return n } }

var imageCosts = []imageCost{
	{names: []string{"gemma3"}, families: []string{"gemma3", "gemma3n"}, tokens: fixedCost(260)},
	{names: []string{"llama3.2-vision"}, families: []string{"mllama"}, tokens: fixedCost(1)},
	{names: []string{"qwen2.5vl", "qwen2.5-vl", "qwen2-vl", "qwen3-vl", "qwen3vl"}, families: []string{"qwen25vl", "qwen2vl", "qwen3vl", "qwen3vlmoe"}, tokens: qwenVLTokens},
	{names: []string{"mistral-small3", "pixtral", "magistral"}, families: []string{"mistral3"}, tokens: mistral3Tokens},
	{names: []string{"moondream"}, tokens: fixedCost(729)},
	{names: []string{"minicpm-v"}, tokens: fixedCost(640)},
	{names: []string{"bakllava", "llava-llama3", "llava-phi3"}, tokens: fixedCost(576)},
	{names: []string{"llava"}, tokens: fixedCost(2880)},
}

// ImageTokens estimates what one image of width×height pixels costs the
// model (named model, of family as the server reports it; either may be
// empty), before calibration.
func ImageTokens(model, family string, width, height int) int {
	name := strings.ToLower(model)
	name = name[strings.LastIndex(name, "/")+1:]
	family = strings.ToLower(family)
	for _, c := range imageCosts {
		if slices.Contains(c.families, family) {
			return c.tokens(width, height)
		}
	}
	for _, c := range imageCosts {
		for _, n := range c.names {
			if strings.Contains(name, n) {
				return c.tokens(width, height)
			}
		}
	}
	return DefaultImageTokens
}

// qwenVLTokens follows Qwen2.5-VL's resize: each side to a multiple of
// 28, the area kept between 56×56 and 2 Mi pixels; one position per
// 28×28 block, and the vision start and end markers.
func qwenVLTokens(w, h int) int {
	const factor, minPixels, maxPixels = 28, 56 * 56, 2 << 20
	if w <= 0 || h <= 0 {
		return DefaultImageTokens
	}
	hBar := int(math.RoundToEven(float64(h)/factor)) * factor
	wBar := int(math.RoundToEven(float64(w)/factor)) * factor
	switch {
	case hBar*wBar > maxPixels:
		beta := math.Sqrt(float64(h*w) / maxPixels)
		hBar = int(math.Floor(float64(h)/beta/factor)) * factor
		wBar = int(math.Floor(float64(w)/beta/factor)) * factor
	case hBar*wBar < minPixels:
		beta := math.Sqrt(minPixels / float64(h*w))
		hBar = int(math.Ceil(float64(h)*beta/factor)) * factor
		wBar = int(math.Ceil(float64(w)*beta/factor)) * factor
	}
	return max(hBar/factor, 1)*max(wBar/factor, 1) + 2
}

// mistral3Tokens follows Mistral 3's processing: the longer side cut to
// 1540 pixels, 14-pixel patches merged two by two, and a break (or the
// end marker) after each row.
func mistral3Tokens(w, h int) int {
	const longest, patch = 1540, 14
	if w <= 0 || h <= 0 {
		return DefaultImageTokens
	}
	if ratio := max(float64(w), float64(h)) / longest; ratio > 1 {
		w, h = int(math.Floor(float64(w)/ratio)), int(math.Floor(float64(h)/ratio))
	}
	cols, rows := max(((w-1)/patch+1)/2, 1), max(((h-1)/patch+1)/2, 1)
	return cols*rows + rows
}

// imageFamily returns the model's family as the server reports it (""
// when it cannot say), asking once per model.
func (v *ModelView) imageFamily(ctx context.Context, model string) string {
	v.mu.Lock()
	f, ok := v.families[model]
	v.mu.Unlock()
	if ok {
		return f
	}
	d, isDescriber := v.eng.(engine.Describer)
	if !isDescriber {
		return ""
	}
	details, err := d.Show(ctx, model)
	if err != nil {
		if errors.Is(err, engine.ErrUnreachable) || ctx.Err() != nil {
			return "" // not remembered: the next request asks again
		}
	}
	v.mu.Lock()
	v.families[model] = details.Family
	v.mu.Unlock()
	return details.Family
}

// imagesEstimate is the uncalibrated cost of m's images for model.
func (v *ModelView) imagesEstimate(ctx context.Context, model string, m engine.Message) int {
	if len(m.Images) == 0 {
		return 0
	}
	family := v.imageFamily(ctx, model)
	n := 0
	for _, im := range m.Images {
		n += ImageTokens(model, family, im.Width, im.Height)
	}
	return n
}
