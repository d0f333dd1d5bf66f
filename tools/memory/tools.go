// Package memory holds the built-in tools over jarvis's long-term memory
// (store/memory): retrieval, memory_store, memory_retrieve, memory_search
// and memory_index, and IndexPath, the file-tree indexer that memory_index
// and `jarvis memory index` share.
//
// Every tool takes the memory as a dependency that may be nil (no database
// configured): the tool is still listed and described, and a call fails
// with a message saying memory is not available.
package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/jarvis-workbench/jarvis/store"
	memstore "github.com/jarvis-workbench/jarvis/store/memory"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/files"
)

// Result counts.
const (
	DefaultTopK = 5
	MaxTopK     = 50
)

// MaxContentSize bounds what memory_store takes in one call: file_read's
// limit, the size of the largest file memory_index takes.
const MaxContentSize = files.MaxFileSize

// noResults is the (successful) answer when nothing matches.
const noResults = "No relevant results found."

// unavailable is the answer of every tool when no memory is configured.
const unavailable = "Memory is not available: no memory database is configured for this session."

// Options are the memory tools' settings from [memory] in the config.
type Options struct {
	// MaxFileBytes is the largest file memory_index takes; 0 means
	// DefaultMaxFileBytes.
	MaxFileBytes int64
}

// Register adds the five memory tools to r, all working on s (nil: memory
// not configured).
func Register(r *tools.Registry, s *memstore.Store, opts Options) error {
	for name, f := range map[string]tools.Factory{
		"retrieval":       func(tools.Deps) (tools.Tool, error) { return NewRetrieval(s), nil },
		"memory_store":    func(tools.Deps) (tools.Tool, error) { return NewStore(s), nil },
		"memory_retrieve": func(tools.Deps) (tools.Tool, error) { return NewRetrieve(s), nil },
		"memory_search":   func(tools.Deps) (tools.Tool, error) { return NewSearch(s), nil },
		"memory_index":    func(d tools.Deps) (tools.Tool, error) { return NewIndex(s, d, opts), nil },
	} {
		if err := r.Register(name, f); err != nil {
			return err
		}
	}
	return nil
}

var queryParams = tools.Params(
	tools.StringParam("query", "Search query", true),
	tools.IntegerParam("top_k", fmt.Sprintf("Number of results (default: %d, at most %d)", DefaultTopK, MaxTopK), false),
)

// searchArgs reads query and top_k, returning a failure message when they
// are unusable.
func searchArgs(args tools.Args) (string, int, string) {
	q := args.String("query")
	if strings.TrimSpace(q) == "" {
		return "", 0, "No query provided."
	}
	k, given, err := args.Int("top_k")
	switch {
	case err != nil:
		return "", 0, fmt.Sprintf("Invalid arguments: %s.", err)
	case !given:
		k = DefaultTopK
	case k < 1:
		return "", 0, fmt.Sprintf("Invalid arguments: top_k must be at least 1, got %d.", k)
	}
	return q, min(k, MaxTopK), ""
}

// search runs a query for one of the search tools.
func search(ctx context.Context, s *memstore.Store, args tools.Args) (memstore.Results, tools.Result, bool) {
	if s == nil {
		return memstore.Results{}, tools.Fail(unavailable), false
	}
	q, k, msg := searchArgs(args)
	if msg != "" {
		return memstore.Results{}, tools.Fail("%s", msg), false
	}
	res, err := s.Search(ctx, q, k)
	if err != nil {
		return res, tools.Fail("Memory search failed: %v", err), false
	}
	return res, tools.Result{}, true
}

// finish adds the common metadata to a search tool's result.
func finish(r tools.Result, res memstore.Results) tools.Result {
	r = r.WithMeta("num_results", len(res.Hits))
	if res.Semantic {
		r = r.WithMeta("semantic", true)
	}
	if res.Warning != "" {
		r = r.WithMeta("warning", res.Warning)
	}
	return r
}

// score formats a 0..1 score with two decimals.
func score(h memstore.Hit) string { return fmt.Sprintf("%.2f", h.Score) }

// SearchTool is one of the three tools that search memory: retrieval,
// memory_retrieve and memory_search. They differ only in how they write
// the hits, in the reference's formats.
type SearchTool struct {
	s      *memstore.Store
	spec   tools.Spec
	format func(hits []memstore.Hit) string
}

// Spec returns the tool's spec.
func (t *SearchTool) Spec() tools.Spec { return t.spec }

// Execute searches and writes the hits in the tool's format.
func (t *SearchTool) Execute(ctx context.Context, args tools.Args) tools.Result {
	res, fail, ok := search(ctx, t.s, args)
	if !ok {
		return fail
	}
	if len(res.Hits) == 0 {
		return finish(tools.OK(noResults), res)
	}
	return finish(tools.OK(t.format(res.Hits)), res)
}

func searchSpec(name, description string) tools.Spec {
	return tools.Spec{Name: name, Description: description, Parameters: queryParams, Category: "memory"}
}

// NewRetrieval builds retrieval over s (nil: not configured): context for
// a question as `[Source: SRC] CONTENT` blocks (content alone without a
// source) separated by a blank line.
func NewRetrieval(s *memstore.Store) *SearchTool {
	return &SearchTool{s: s,
		spec: searchSpec("retrieval", "Search the memory for context relevant to a question; returns the best passages with their sources."),
		format: func(hits []memstore.Hit) string {
			blocks := make([]string, len(hits))
			for i, h := range hits {
				if h.Source != "" {
					blocks[i] = "[Source: " + h.Source + "] " + h.Content
				} else {
					blocks[i] = h.Content
				}
			}
			return strings.Join(blocks, "\n\n")
		}}
}

// NewRetrieve builds memory_retrieve over s (nil: not configured): passages
// as `[0.87] CONTENT` separated by `---` lines.
func NewRetrieve(s *memstore.Store) *SearchTool {
	return &SearchTool{s: s,
		spec: searchSpec("memory_retrieve", "Fetch the stored passages most relevant to a query, each with its relevance score (0 to 1)."),
		format: func(hits []memstore.Hit) string {
			parts := make([]string, len(hits))
			for i, h := range hits {
				parts[i] = "[" + score(h) + "] " + h.Content
			}
			return strings.Join(parts, "\n---\n")
		}}
}

// NewSearch builds memory_search over s (nil: not configured): a ranked
// list of `N. [0.87] (source: SRC) CONTENT` lines.
func NewSearch(s *memstore.Store) *SearchTool {
	return &SearchTool{s: s,
		spec: searchSpec("memory_search", "Full-text search across everything stored in memory; returns a ranked list with scores and sources. Matches any of the query's words, ignoring case and word endings."),
		format: func(hits []memstore.Hit) string {
			lines := make([]string, len(hits))
			for i, h := range hits {
				src := ""
				if h.Source != "" {
					src = "(source: " + h.Source + ") "
				}
				lines[i] = fmt.Sprintf("%d. [%s] %s%s", i+1, score(h), src, h.Content)
			}
			return strings.Join(lines, "\n")
		}}
}

// StoreTool is the memory_store tool.
type StoreTool struct{ s *memstore.Store }

// NewStore builds memory_store over s (nil: not configured).
func NewStore(s *memstore.Store) *StoreTool { return &StoreTool{s: s} }

// Spec returns memory_store's spec.
func (t *StoreTool) Spec() tools.Spec {
	return tools.Spec{
		Name:        "memory_store",
		Description: "Store text in long-term memory so that it can be found later with memory_search, memory_retrieve or retrieval.",
		Parameters: tools.Params(
			tools.StringParam("content", "The text to remember", true),
			tools.StringParam("source", "Where the text comes from (a file, URL or topic), shown with search results", false),
			tools.Param{Name: "metadata", Schema: &jsonschema.Schema{Type: "object", Description: "Extra key/value data to keep with the text"}},
		),
		Category: "memory",
	}
}

// Execute stores the content and answers `Stored as ID`.
func (t *StoreTool) Execute(ctx context.Context, args tools.Args) tools.Result {
	if t.s == nil {
		return tools.Fail(unavailable)
	}
	content := args.String("content")
	if strings.TrimSpace(content) == "" {
		return tools.Fail("No content provided.")
	}
	if len(content) > MaxContentSize {
		return tools.Fail("Content too large: %d bytes (max %d). Store it as a file and use memory_index.", len(content), MaxContentSize)
	}
	var meta map[string]any
	switch m := args["metadata"].(type) {
	case nil:
	case map[string]any:
		meta = m
	case tools.Args:
		meta = m
	default:
		return tools.Fail("Invalid arguments: parameter 'metadata' must be an object.")
	}
	in := memstore.Input{Content: content, Source: strings.TrimSpace(args.String("source")), Metadata: meta}
	added, err := t.s.Add(ctx, in)
	var locked *store.LockedError
	queued := false
	if errors.As(err, &locked) {
		// Another process held the database for the whole wait: the text
		// is written when the file is free (or by the next jarvis), never
		// dropped.
		added, err = t.s.AddQueued(ctx, in)
		queued = err == nil
	}
	if err != nil {
		return tools.Fail("Could not store the content: %v.", err)
	}
	r := tools.OK("Stored as "+added.ID).WithMeta("id", added.ID).WithMeta("chunks", added.Chunks)
	if queued {
		r = r.WithMeta("saving", "the database is busy; the text is written as soon as it is free")
	}
	if added.EmbedError != "" {
		r = r.WithMeta("warning", added.EmbedError)
	}
	return r
}

// Index is the memory_index tool.
type Index struct {
	s            *memstore.Store
	reach        *files.Reach
	maxFileBytes int64
}

// NewIndex builds memory_index over s. It reaches what file_read reaches:
// the allowed directories when configured (memory_index's own allowed_dirs
// setting when set, else file_read's), a hard limit; else the working
// directory, and anything else after confirmation. A configured directory
// that does not exist does not stop the tool from being listed; calling it
// fails with the reason.
func NewIndex(s *memstore.Store, deps tools.Deps, opts Options) *Index {
	setting, dirs := "[tool.memory_index] allowed_dirs", deps.For("memory_index").AllowedDirs
	if len(dirs) == 0 && len(deps.For("file_read").AllowedDirs) > 0 {
		setting, dirs = "[tool.file_read] allowed_dirs (or [tool.memory_index] allowed_dirs)", deps.For("file_read").AllowedDirs
	}
	return &Index{s: s, reach: files.NewReachIn(setting, dirs, deps.WorkDir), maxFileBytes: opts.MaxFileBytes}
}

// Spec returns memory_index's spec.
func (t *Index) Spec() tools.Spec {
	size, overlap := memstore.DefaultChunkSize, memstore.DefaultChunkOverlap
	if t.s != nil {
		size, overlap = t.s.ChunkDefaults()
	}
	limit := t.maxFileBytes
	if limit == 0 {
		limit = DefaultMaxFileBytes
	}
	return tools.Spec{
		Name: "memory_index",
		Description: "Index a text file, or every text file under a directory, into memory for later search. " +
			"Paths in the working directory are indexed at once; others need the user's approval, or are refused when the user limited the tool to some directories. " +
			"Binary files, sensitive files, files over " + sizeText(limit) + " and version-control or dependency directories are skipped; " +
			"a file indexed before is replaced when it changed.",
		Parameters: tools.Params(
			tools.StringParam("path", "File or directory to index", true),
			tools.IntegerParam("chunk_size", fmt.Sprintf("Words per chunk (default: %d)", size), false),
			tools.IntegerParam("chunk_overlap", fmt.Sprintf("Words shared by consecutive chunks (default: %d)", overlap), false),
		),
		Category:       "memory",
		TimeoutSeconds: 600,
	}
}

// sizeText writes a byte count the way people set it: 1 MiB, 512 KiB.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Refuse refuses, before anyone is asked, a credential file or directory
// and a path past the configured allowed directories.
func (t *Index) Refuse(args tools.Args) *tools.Refusal {
	path := args.String("path")
	if t.s == nil || strings.TrimSpace(path) == "" {
		return nil // the call fails saying why
	}
	secrets := t.reach.Secrets()
	if why := secrets.Reason(path); why != "" {
		return &tools.Refusal{Message: fmt.Sprintf("Cannot index %s: %s.", path, files.SkipReason(why, false)), By: tools.ByProtected, Rule: path + " " + why}
	}
	if why := secrets.Dir(path, t.reach.Resolve(path)); why != "" {
		return &tools.Refusal{Message: fmt.Sprintf("Cannot index %s: %s.", path, files.SkipReason(why, true)), By: tools.ByProtected, Rule: path + " " + why}
	}
	return t.reach.Refuse(path, "index")
}

// ConfirmationFor asks before indexing outside the working directory, as
// file_read asks before reading there.
func (t *Index) ConfirmationFor(args tools.Args) (bool, string) {
	if t.s == nil {
		return false, ""
	}
	return t.reach.ConfirmationFor(args.String("path"), "indexes")
}

// GrantScope is the directory indexed (or the file's): a grant covers
// indexing there.
func (t *Index) GrantScope(args tools.Args) tools.Scope {
	return t.reach.DirScope(args.String("path"), true, "indexing %s")
}

// maxListedSkips bounds the skipped files named in the result.
const maxListedSkips = 20

// Execute indexes the path and answers `Indexed N chunks from PATH`, then a
// line of file counts and the files skipped with why.
func (t *Index) Execute(ctx context.Context, args tools.Args) tools.Result {
	if t.s == nil {
		return tools.Fail(unavailable)
	}
	if err := t.reach.Err(); err != nil {
		return tools.Fail("memory_index is misconfigured: %v. Fix allowed_dirs under [tool.memory_index] (or [tool.file_read]) in the config file.", err)
	}
	path := args.String("path")
	if strings.TrimSpace(path) == "" {
		return tools.Fail("No path provided.")
	}
	if !t.reach.Permits(t.reach.Resolve(path), tools.Confirmed(ctx)) {
		return t.reach.Outside(path, "index")
	}
	opts := IndexOptions{MaxFileBytes: t.maxFileBytes}
	size, sizeGiven, err := args.Int("chunk_size")
	if err != nil {
		return tools.Fail("Invalid arguments: %s.", err)
	}
	overlap, overlapGiven, err := args.Int("chunk_overlap")
	if err != nil {
		return tools.Fail("Invalid arguments: %s.", err)
	}
	if sizeGiven || overlapGiven {
		defSize, defOverlap := t.s.ChunkDefaults()
		if !sizeGiven {
			size = defSize
		}
		if !overlapGiven {
			overlap = min(defOverlap, size/8)
		}
		if err := memstore.CheckChunking(size, overlap); err != nil {
			return tools.Fail("Invalid arguments: %s.", err)
		}
		opts.ChunkSize, opts.ChunkOverlap = size, overlap
	}
	rep, err := IndexPath(ctx, t.s, t.reach.Abs(path), opts) // a relative path taken in the working directory
	if err != nil {
		var nf *NotFoundError
		switch {
		case errors.As(err, &nf):
			return tools.Fail("%s", err)
		case ctx.Err() != nil:
			return tools.Fail("Indexing %s stopped after %d chunks: %v.", path, rep.Chunks, ctx.Err())
		}
		return tools.Fail("Indexing %s failed after %d chunks: %v.", path, rep.Chunks, err)
	}
	if why, refused := rep.Refused(); refused {
		return tools.Fail("Cannot index %s: %s.", path, why)
	}
	r := tools.OK(FormatReport(rep, path, maxListedSkips)).
		WithMeta("chunks", rep.Chunks).
		WithMeta("files_indexed", len(rep.Indexed)).
		WithMeta("files_unchanged", len(rep.Unchanged)).
		WithMeta("files_skipped", len(rep.Skipped)).
		WithMeta("files_removed", len(rep.Removed)).
		WithMeta("files_forgotten", len(rep.Forgotten))
	if len(rep.Converted) > 0 {
		r = r.WithMeta("files_converted", len(rep.Converted))
	}
	if len(rep.EmbedFailed) > 0 {
		r = r.WithMeta("files_not_embedded", len(rep.EmbedFailed))
	}
	return r
}

// FormatReport renders a report: `Indexed N chunks from PATH`, a line of
// file counts for a directory, then up to maxSkips entries (0: all) of each
// list: files skipped with why, files converted from Windows-1252, files
// stored without embeddings with the error.
func FormatReport(rep Report, path string, maxSkips int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Indexed %d chunks from %s", rep.Chunks, path)
	if rep.File && len(rep.Unchanged) == 1 {
		sb.WriteString("\nThe file is unchanged since it was last indexed.")
	}
	if !rep.File {
		fmt.Fprintf(&sb, "\nFiles: %d indexed, %d unchanged, %d skipped", len(rep.Indexed), len(rep.Unchanged), len(rep.Skipped))
		if len(rep.Removed) > 0 {
			fmt.Fprintf(&sb, ", %d removed (deleted since they were indexed)", len(rep.Removed))
		}
		if len(rep.Forgotten) > 0 {
			fmt.Fprintf(&sb, ", %d forgotten (indexed before, refused now)", len(rep.Forgotten))
		}
		sb.WriteString(".")
	}
	list := func(title string, entries []Skipped) {
		if len(entries) == 0 {
			return
		}
		sb.WriteString("\n" + title)
		for i, e := range entries {
			if maxSkips > 0 && i == maxSkips {
				fmt.Fprintf(&sb, "\n  ... and %d more", len(entries)-i)
				break
			}
			if e.Reason == "" {
				fmt.Fprintf(&sb, "\n  %s", e.Path)
			} else {
				fmt.Fprintf(&sb, "\n  %s (%s)", e.Path, e.Reason)
			}
		}
	}
	if !rep.File {
		list("Skipped:", rep.Skipped)
	}
	converted := make([]Skipped, len(rep.Converted))
	for i, p := range rep.Converted {
		converted[i] = Skipped{Path: p}
	}
	list("Not UTF-8, read as Windows-1252 (Latin-1):", converted)
	list("Stored without embeddings (found by keyword search only; the next run embeds them again):", rep.EmbedFailed)
	return sb.String()
}
