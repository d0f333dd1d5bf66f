package config

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
)

// zeroMeansUnset lists the settings where 0 is not a value but "not set":
// the tool, the store or the server uses its default instead. Written in
// the file, such a 0 is almost always a mistake (num_ctx = 0 for "no
// limit", timeout = 0 for "never"), and taking the default without a word
// would run with a value the person did not choose; so it is a problem,
// at its line. The value is what an unset one means. Keys are paths with
// "*" for an entry of a list or table; those whose default is listed in
// defaults (what config show prints for an unset value) say "".
var zeroMeansUnset = map[string]string{
	"options.num_ctx":             "the server's window for the model",
	"options.num_predict":         "",
	"memory.chunk_size":           "",
	"memory.max_file_bytes":       "",
	"images.max_bytes":            "",
	"context.tool_result_share":   "",
	"context.compact_at":          "",
	"code.timeout":                "",
	"code.cpu_seconds":            "",
	"code.memory_mb":              "",
	"code.max_processes":          "",
	"code.max_file_size_mb":       "",
	"code.max_output_bytes":       "",
	"code.session_cpu_seconds":    "",
	"code.docker.memory_mb":       "",
	"code.docker.pids_limit":      "",
	"code.docker.cpus":            "",
	"code.docker.timeout":         "",
	"web.http.max_bytes":          "",
	"web.http.timeout":            "",
	"web.http.max_timeout":        "",
	"web.search.timeout":          "",
	"mcp.servers.*.timeout":       strconv.Itoa(mcp.DefaultTimeoutSeconds),
	"mcp.servers.*.start_timeout": strconv.Itoa(mcp.DefaultStartTimeoutSeconds),
	"commands.*.timeout":          strconv.Itoa(tools.DefaultTimeoutSeconds),
}

// entryIndex matches the index of a list's entry in a path.
var entryIndex = lazyregexp.New(`\[\d+\]`)

// checkZero reports a 0 written at path for a setting where 0 means "not
// set" (see zeroMeansUnset).
func (d *decoder) checkZero(path string, v reflect.Value) {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Float32, reflect.Float64:
	default:
		return
	}
	if !v.IsZero() {
		return
	}
	pattern := entryIndex().ReplaceAllString(path, ".*")
	unset, ok := zeroMeansUnset[pattern]
	if !ok {
		return
	}
	if unset == "" {
		unset = defaults[pattern]
	}
	d.report.at(path, fmt.Sprintf("is 0, which here means not set: jarvis would quietly use the default (%s) instead", unset),
		"leave it out for the default, or give a value above 0")
}
