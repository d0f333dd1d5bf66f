package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	"github.com/dustin/go-humanize"
	"github.com/muesli/termenv"
	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/internal/table"
	"github.com/jarvis-workbench/jarvis/store/memory"
	memorytools "github.com/jarvis-workbench/jarvis/tools/memory"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

func (a *cmdline) memoryCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "Index, search and manage long-term memory",
		Long: `Memory holds texts that models can search with the memory tools (retrieval,
memory_search, memory_retrieve): notes stored with memory_store and files
indexed here or with memory_index. Texts are cut into overlapping chunks
(512 words, 64 shared, by default) and ranked with BM25; scores run from 0
to 1. Memory lives in the jarvis database (--db).

Commands that take an ID accept any unique prefix of it.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.memIndexCommand(), a.memSearchCommand(), a.memListCommand(), a.memStatsCommand(), a.memForgetCommand(), a.memCompactCommand())
	return cmd
}

// openMemory checks the database can be opened and returns the memory on
// it (the database is released when the command ends). A command that
// does not write (write false) refuses a named database that does not
// exist (see readDB).
func (a *cmdline) openMemory(write bool) (*memory.Store, error) {
	open := a.readDB
	if write {
		open = a.openDB
	}
	if _, err := open("memory"); err != nil {
		return nil, err
	}
	env, err := a.environment()
	if err != nil {
		return nil, err
	}
	return env.memory, nil
}

func (a *cmdline) memIndexCommand() *cobra.Command {
	var size, overlap int
	var maxSize string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "index PATH",
		Short: "Index a text file or every text file under a directory",
		Long: `Store a file, or every text file under a directory, in memory: one document
per file, its source the file's absolute path. A file indexed before is
replaced when it changed and skipped when it did not, so running this again
on a tree only does the work that is needed.

Skipped, and listed with the reason: binary files, sensitive files (keys,
credential stores, shell histories, .env, jarvis's own config and database:
the rules of file_read), files over 1 MiB ([memory] max_file_bytes, or
--max-file-size), empty files. Version-control and dependency directories
(.git, node_modules, vendor, .venv, ...) are not entered, and symbolic links
are followed only to files inside the tree. Text that is not UTF-8 but reads
as Latin-1 (Windows-1252) is converted and listed.

With an embedding model configured, a file whose embedding fails is stored
for keyword search only, listed, and embedded again by the next run.

Chunk sizes are in words. With --chunk-size alone, the overlap is an eighth
of it (at most the default 64).`,
		Example: "  jarvis memory index ~/notes\n  jarvis memory index README.md --chunk-size 200 --overlap 20\n  jarvis memory index ~/logs --max-file-size 8MiB",
		Args:    argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := memorytools.IndexOptions{}
			if cmd.Flags().Changed("chunk-size") || cmd.Flags().Changed("overlap") {
				if !cmd.Flags().Changed("chunk-size") {
					size = memory.DefaultChunkSize
				}
				if !cmd.Flags().Changed("overlap") {
					overlap = min(memory.DefaultChunkOverlap, size/8)
				}
				if err := memory.CheckChunking(size, overlap); err != nil {
					return usageErr("%v", err)
				}
				opts.ChunkSize, opts.ChunkOverlap = size, overlap
			}
			if cmd.Flags().Changed("max-file-size") {
				n, err := humanize.ParseBytes(maxSize)
				if err != nil || n == 0 || n > memorytools.MaxFileBytesLimit {
					return usageErr("--max-file-size %q: give a size from 1 byte to 256MiB, such as 4MiB, 500kB or 1048576", maxSize)
				}
				opts.MaxFileBytes = int64(n)
			}
			s, err := a.openMemory(true)
			if err != nil {
				return err
			}
			if env, err := a.environment(); err == nil && opts.MaxFileBytes == 0 {
				opts.MaxFileBytes = env.cfg.Memory.MaxFileBytes
			}
			bar := newIndexProgress(a.io.Err)
			opts.Progress = bar.update
			rep, err := memorytools.IndexPath(cmd.Context(), s, args[0], opts)
			bar.done()
			var nf *memorytools.NotFoundError
			switch {
			case errors.As(err, &nf):
				return failErr("path not found: %s", nf.Path)
			case err != nil && cmd.Context().Err() != nil:
				fmt.Fprintln(a.io.Out, memorytools.FormatReport(rep, args[0], 20))
				return fmt.Errorf("indexing interrupted: %w", err) // exits 130
			case err != nil:
				if rep.Chunks > 0 {
					fmt.Fprintln(a.io.Out, memorytools.FormatReport(rep, args[0], 20))
				}
				return failErr("indexing %s failed: %v", args[0], err)
			}
			if why, refused := rep.Refused(); refused {
				return failErr("cannot index %s: %s", args[0], why)
			}
			if asJSON {
				return writeJSON(a.io.Out, rep)
			}
			fmt.Fprintln(a.io.Out, memorytools.FormatReport(rep, args[0], 20))
			if rep.Bytes > 0 && rep.Elapsed > 0 {
				fmt.Fprintf(a.io.Out, "%s of text in %s (%.1f MB/s).\n", megabytes(rep.Bytes), rep.Elapsed.Round(time.Millisecond),
					float64(rep.Bytes)/1e6/rep.Elapsed.Seconds())
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&size, "chunk-size", memory.DefaultChunkSize, "words per chunk")
	cmd.Flags().IntVar(&overlap, "overlap", memory.DefaultChunkOverlap, "words shared by consecutive chunks")
	cmd.Flags().StringVar(&maxSize, "max-file-size", "", "skip larger files, e.g. 8MiB (default: [memory] max_file_bytes, else 1MiB)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the full report (every skipped file) as JSON")
	return cmd
}

func (a *cmdline) memSearchCommand() *cobra.Command {
	var k int
	var asJSON bool
	var source string
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search memory as the memory tools do",
		Long: `Print the chunks that best match QUERY (all arguments, joined), best first,
with their score (0 to 1), source, chunk number (from 0, as in the JSON) and
document id, and the lines of the chunk that match. Matching ignores case,
punctuation and word endings ("running" finds "runs"); any of the query's
words may match. --source keeps the hits of one source: a file (or the source
given to memory_store), or every file under a directory.`,
		Example: `  jarvis memory search quarterly report
  jarvis memory search "deployment checklist" -k 10 --json
  jarvis memory search --source ~/notes/trips lisbon`,
		Args: argsUsage(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			query := joinArgs(args)
			if query == "" {
				return usageErr("the query is empty\nUsage: %s", cmd.UseLine())
			}
			if k < 1 {
				return usageErr("-k must be at least 1, got %d", k)
			}
			s, err := a.openMemory(false)
			if err != nil {
				return err
			}
			want := k
			if source != "" {
				k = memory.MaxResults // the source's best, among the best of all
			}
			res, err := s.Search(cmd.Context(), query, k)
			if err != nil {
				return failErr("search failed: %v", err)
			}
			if source != "" {
				res.Hits = fromSource(res.Hits, searchSource(cmd.Context(), s, source), want)
			}
			if res.Warning != "" {
				fmt.Fprintf(a.io.Err, "jarvis: warning: %s\n", safe.Text(res.Warning))
			}
			if asJSON {
				if res.Hits == nil {
					res.Hits = []memory.Hit{}
				}
				return writeJSON(a.io.Out, res)
			}
			if len(res.Hits) == 0 {
				fmt.Fprintln(a.io.Out, "No relevant results found.")
				return nil
			}
			for i, h := range res.Hits {
				src := h.Source
				if src == "" {
					src = "(no source)"
				}
				preview := strings.Join(memory.Excerpt(query, h.Content, 3), " … ")
				fmt.Fprintf(a.io.Out, "%d. [%.2f] %s  chunk %d  id %s\n   %s\n", i+1, h.Score, src, h.Chunk, h.DocID, format.OneLine(preview, 240))
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&k, "top-k", "k", 5, "number of results")
	cmd.Flags().StringVar(&source, "source", "", "only the hits of this source: a file path (or the source given to memory_store), or a directory for every file under it")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results (full chunk texts and scores) as JSON")
	return cmd
}

func (a *cmdline) memListCommand() *cobra.Command {
	var source string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the documents in memory",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.openMemory(false)
			if err != nil {
				return err
			}
			if source != "" {
				source = sourceInStore(cmd.Context(), s, source)
			}
			docs, err := s.List(cmd.Context(), source)
			if err != nil {
				return failErr("listing memory failed: %v", err)
			}
			if asJSON {
				if docs == nil {
					docs = []memory.Document{}
				}
				return writeJSON(a.io.Out, docs)
			}
			if len(docs) == 0 {
				if source != "" {
					fmt.Fprintf(a.io.Out, "No documents from %s.\n", source)
				} else {
					fmt.Fprintln(a.io.Out, "No documents in memory. Add some with 'jarvis memory index PATH' or the memory_store tool.")
				}
				return nil
			}
			w := table.New(a.io.Out)
			fmt.Fprintln(w, "ID\tCREATED\tCHUNKS\tSIZE\tSOURCE")
			for _, d := range docs {
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", d.ID, d.Created.Local().Format("2006-01-02 15:04"), d.Chunks, megabytes(int64(d.Bytes)), orDash(d.Source))
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&source, "source", "", "only the documents of this source (a file path or the source given to memory_store)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the documents as JSON")
	return cmd
}

func (a *cmdline) memStatsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Show how much is in memory and how it is indexed",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.openMemory(false)
			if err != nil {
				return err
			}
			st, err := s.Stats(cmd.Context())
			if err != nil {
				return failErr("reading memory stats failed: %v", err)
			}
			if asJSON {
				return writeJSON(a.io.Out, st)
			}
			w := table.New(a.io.Out)
			fmt.Fprintf(w, "Database:\t%s\n", st.Database)
			fmt.Fprintf(w, "Documents:\t%d\n", st.Documents)
			fmt.Fprintf(w, "Chunks:\t%d (%.0f indexed terms each on average)\n", st.Chunks, st.AvgChunkTokens)
			fmt.Fprintf(w, "Distinct terms:\t%d\n", st.Terms)
			if len(st.Chunking) == 0 {
				fmt.Fprintf(w, "Chunking:\tno documents yet\n")
			}
			for i, c := range st.Chunking {
				label := ""
				if i == 0 {
					label = "Chunking:"
				}
				fmt.Fprintf(w, "%s\t%d words, %d shared between neighbours: %s, %s\n", label, c.Size, c.Overlap, format.Count(c.Documents, "document"), format.Count(c.Chunks, "chunk"))
			}
			if len(st.Chunking) != 1 || st.Chunking[0].Size != st.DefaultChunkSize || st.Chunking[0].Overlap != st.DefaultChunkOverlap {
				fmt.Fprintf(w, "New texts:\t%d words, %d shared\n", st.DefaultChunkSize, st.DefaultChunkOverlap)
			}
			if st.EmbedModel != "" {
				fmt.Fprintf(w, "Semantic ranking:\ton, with %s (%s embedded)\n", st.EmbedModel, format.Count(st.Vectors, "chunk"))
			} else {
				fmt.Fprintf(w, "Semantic ranking:\toff (no embedding model configured; BM25 only)\n")
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the figures as JSON")
	return cmd
}

func (a *cmdline) memForgetCommand() *cobra.Command {
	var source string
	cmd := &cobra.Command{
		Use:   "forget ID... | --source SOURCE",
		Short: "Delete documents from memory",
		Long: `Delete documents, with their chunks, by id (any unique prefix; see
'jarvis memory list') or every document of a source: for an indexed file,
its path; for a directory, every file indexed under it.`,
		Example: "  jarvis memory forget 3f2a9c01\n  jarvis memory forget --source ~/notes/old.md\n  jarvis memory forget --source ~/notes",
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case source == "" && len(args) == 0:
				return usageErr("give the id of a document to forget, or --source\nUsage: %s", cmd.UseLine())
			case source != "" && len(args) > 0:
				return usageErr("give either document ids or --source, not both")
			}
			s, err := a.openMemory(false)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if source != "" {
				f, err := memorytools.Forget(ctx, s, source)
				switch {
				case err != nil:
					return failErr("forgetting %s failed: %v", source, err)
				case f.Documents == 0:
					return failErr("no documents from source %q, nor indexed under it (see 'jarvis memory list')", source)
				case f.Under != "":
					fmt.Fprintf(a.io.Out, "Forgot %s (%s) under %s.\n", format.Count(f.Documents, "document"), format.Count(len(f.Sources), "source"), f.Under)
				default:
					fmt.Fprintf(a.io.Out, "Forgot %s from %s.\n", format.Count(f.Documents, "document"), strings.Join(f.Sources, ", "))
				}
				if f.Documents >= 10 {
					fmt.Fprintln(a.io.Out, "The database file keeps the space they took until 'jarvis memory compact' gives it back.")
				}
				return nil
			}
			// Resolve every id first: a typo in the third must not leave
			// the first two forgotten and the command failed.
			ids := make([]string, len(args))
			for i, arg := range args {
				id, err := s.Resolve(ctx, arg)
				var amb *memory.AmbiguousError
				switch {
				case errors.Is(err, memory.ErrNotFound):
					return failErr("no memory document with id %q (see 'jarvis memory list')", arg)
				case errors.As(err, &amb):
					return usageErr("%v", err)
				case err != nil:
					return failErr("%v", err)
				}
				ids[i] = id
			}
			for _, id := range ids {
				doc, err := s.Get(ctx, id)
				if err == nil {
					err = s.Delete(ctx, id)
				}
				if err != nil {
					return failErr("forgetting %s failed: %v", id, err)
				}
				from := ""
				if doc.Source != "" {
					from = " from " + doc.Source
				}
				fmt.Fprintf(a.io.Out, "Forgot %s%s (%s).\n", id, from, format.Count(doc.Chunks, "chunk"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&source, "source", "", "forget every document of this source, or indexed under this directory")
	return cmd
}

// sourceInStore returns source as stored: indexed files are stored under
// their absolute path, so a relative path (or ~) that names nothing as
// given is tried as an absolute one.
func sourceInStore(ctx context.Context, s *memory.Store, source string) string {
	if docs, err := s.List(ctx, source); err == nil && len(docs) > 0 {
		return source
	}
	p := source
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if abs, err := filepath.Abs(p); err == nil {
		if docs, err := s.List(ctx, abs); err == nil && len(docs) > 0 {
			return abs
		}
	}
	return source
}

// searchSource is what --source names: a source as stored, else the path
// it names made absolute (indexed files are stored under their absolute
// path), a file's or a directory's.
func searchSource(ctx context.Context, s *memory.Store, source string) string {
	if docs, err := s.List(ctx, source); err == nil && len(docs) > 0 {
		return source
	}
	if abs, err := filepath.Abs(expandHome(source)); err == nil {
		return abs
	}
	return source
}

// fromSource keeps the first k hits whose source is source or, for a
// directory, a file under it.
func fromSource(hits []memory.Hit, source string, k int) []memory.Hit {
	dir := strings.TrimSuffix(source, string(filepath.Separator)) + string(filepath.Separator)
	var out []memory.Hit
	for _, h := range hits {
		if len(out) == k {
			break
		}
		if h.Source == source || strings.HasPrefix(h.Source, dir) {
			out = append(out, h)
		}
	}
	return out
}

// megabytes formats a byte count for people: 812 B, 14.2 kB, 3.4 MB.
func megabytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// indexProgress shows IndexPath's progress on stderr: a bar redrawn in
// place on a terminal, else a plain line at every further tenth of the work
// (so a log shows progress without a line per batch).
type indexProgress struct {
	w      io.Writer
	tty    bool
	bar    progress.Model
	start  time.Time
	tenths int
	drawn  bool
}

func newIndexProgress(w io.Writer) *indexProgress {
	p := &indexProgress{w: w, tty: isTerminal(w), start: time.Now()}
	if p.tty {
		profile := termenv.NewOutput(w.(*os.File)).EnvColorProfile()
		p.bar = progress.New(progress.WithDefaultGradient(), progress.WithWidth(30), progress.WithoutPercentage(), progress.WithColorProfile(profile))
	}
	return p
}

func (p *indexProgress) update(pr memorytools.Progress) {
	if pr.TotalBytes == 0 {
		return
	}
	frac := float64(pr.Bytes) / float64(pr.TotalBytes)
	if !p.tty {
		if t := int(frac * 10); t > p.tenths && pr.Files < pr.TotalFiles {
			p.tenths = t
			fmt.Fprintf(p.w, "indexing: %d%% (%d of %d files, %d chunks)\n", t*10, pr.Files, pr.TotalFiles, pr.Chunks)
		}
		return
	}
	rate := ""
	if secs := time.Since(p.start).Seconds(); secs > 0.5 {
		rate = fmt.Sprintf("  %.1f MB/s", float64(pr.Bytes)/1e6/secs)
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s %3.0f%%  %d/%d files  %s/%s  %d chunks%s",
		p.bar.ViewAs(frac), frac*100, pr.Files, pr.TotalFiles, megabytes(pr.Bytes), megabytes(pr.TotalBytes), pr.Chunks, rate)
	p.drawn = true
}

// done clears the bar so the report starts on a clean line.
func (p *indexProgress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
