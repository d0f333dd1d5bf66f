package memory

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	memstore "github.com/jarvis-workbench/jarvis/store/memory"
)

// Forgotten says what Forget deleted.
type Forgotten struct {
	Documents int `json:"documents"`
	// Sources are the sources whose documents were deleted, sorted.
	Sources []string `json:"sources"`
	// Under is the directory whose indexed files were forgotten; "" when
	// the argument named one source.
	Under string `json:"under,omitempty"`
}

// Forget deletes the documents of a source, in one transaction. source is
// a source exactly as stored (what memory_store was given, or an indexed
// file's path); failing that, a file path, relative or with ~, as indexing
// stores it (absolute, after symbolic links); or a directory, whose every
// indexed file is forgotten, matched on path boundaries (so /etc does not
// match /etcetera). Nothing found is not an error: Documents is 0.
func Forget(ctx context.Context, s *memstore.Store, source string) (Forgotten, error) {
	var out Forgotten
	if strings.TrimSpace(source) == "" {
		return out, nil
	}
	has := func(src string) (bool, error) {
		found, err := s.Sources(ctx, src)
		return slices.Contains(found, src), err
	}
	if ok, err := has(source); err != nil || ok {
		if ok {
			out.Sources = []string{source}
		}
		return forget(ctx, s, out, err)
	}
	abs, err := filepath.Abs(expandHome(source))
	if err != nil {
		return out, nil
	}
	names := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		names = append(names, real)
	}
	for _, name := range names {
		ok, err := has(name)
		if err != nil {
			return out, err
		}
		if ok {
			out.Sources = append(out.Sources, name)
			continue
		}
		prefix := name
		if !strings.HasSuffix(prefix, string(filepath.Separator)) {
			prefix += string(filepath.Separator)
		}
		under, err := s.Sources(ctx, prefix)
		if err != nil {
			return out, err
		}
		if len(under) > 0 && out.Under == "" {
			out.Under = name
		}
		out.Sources = append(out.Sources, under...)
	}
	slices.Sort(out.Sources)
	out.Sources = slices.Compact(out.Sources)
	return forget(ctx, s, out, nil)
}

func forget(ctx context.Context, s *memstore.Store, out Forgotten, err error) (Forgotten, error) {
	if err != nil || len(out.Sources) == 0 {
		return out, err
	}
	out.Documents, err = s.DeleteSources(ctx, out.Sources)
	if err != nil {
		out.Documents = 0
	}
	return out, err
}
