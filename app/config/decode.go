package config

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
	"github.com/jarvis-workbench/jarvis/tools"
)

// decoder fills a Config from a parsed file one value at a time, so that
// a value of the wrong type is one problem among the others instead of
// the end of the reading (the values after it are still read and
// checked), and every key no setting takes is found, with the keys that
// exist beside it.
type decoder struct {
	md     toml.MetaData
	report *report
	// decoded receives the path of every value taken from the file.
	decoded func(path string)
}

var (
	unmarshalerType     = reflect.TypeOf((*toml.Unmarshaler)(nil)).Elem()
	textUnmarshalerType = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
)

// table decodes the keys of one table into the struct rv.
func (d *decoder) table(keys map[string]toml.Primitive, rv reflect.Value, path string) {
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		field, ok := fieldFor(rv, k)
		sub := joinPath(path, k)
		if !ok {
			d.unknown(rv.Type(), sub, k)
			continue
		}
		d.value(keys[k], field, sub)
	}
}

// value decodes prim into rv, going into tables, maps of tables and
// arrays of tables so that their own values are decoded one by one.
func (d *decoder) value(prim toml.Primitive, rv reflect.Value, path string) {
	t := rv.Type()
	switch {
	case t.Kind() == reflect.Struct && !decodesItself(t):
		var keys map[string]toml.Primitive
		if err := d.md.PrimitiveDecode(prim, &keys); err != nil {
			d.badType(path, t, err)
			return
		}
		d.table(keys, rv, path)
		return
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.Struct && !decodesItself(t.Elem()):
		var entries map[string]toml.Primitive
		if err := d.md.PrimitiveDecode(prim, &entries); err != nil {
			d.badType(path, t, err)
			return
		}
		if rv.IsNil() {
			rv.Set(reflect.MakeMap(t))
		}
		for k, p := range entries {
			ev := reflect.New(t.Elem()).Elem()
			d.value(p, ev, joinPath(path, k))
			rv.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), ev)
		}
		return
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct && !decodesItself(t.Elem()):
		var entries []toml.Primitive
		if err := d.md.PrimitiveDecode(prim, &entries); err != nil {
			d.badType(path, t, err)
			return
		}
		out := reflect.MakeSlice(t, len(entries), len(entries))
		for i, p := range entries {
			d.value(p, out.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		rv.Set(out)
		return
	}
	// A leaf: decoded into a fresh value, so that a failure leaves the
	// default in place.
	fresh := reflect.New(t)
	if err := d.md.PrimitiveDecode(prim, fresh.Interface()); err != nil {
		d.badType(path, t, err)
		return
	}
	rv.Set(fresh.Elem())
	d.decoded(path)
	d.checkZero(path, rv)
}

func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(unmarshalerType) || p.Implements(textUnmarshalerType)
}

// fieldFor finds the field of struct rv that key sets, as the decoder
// does: by its toml name, else by its name in any case.
func fieldFor(rv reflect.Value, key string) (reflect.Value, bool) {
	t := rv.Type()
	fold := -1
	for i := 0; i < t.NumField(); i++ {
		name, ok := tomlName(t.Field(i))
		if !ok {
			continue
		}
		if name == key {
			return rv.Field(i), true
		}
		if fold < 0 && strings.EqualFold(name, key) {
			fold = i
		}
	}
	if fold >= 0 {
		return rv.Field(fold), true
	}
	return reflect.Value{}, false
}

// tomlName is the key a struct field is read from (false: none).
func tomlName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	switch name {
	case "-":
		return "", false
	case "":
		return f.Name, true
	}
	return name, true
}

// fieldNames lists the keys struct type t takes.
func fieldNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if name, ok := tomlName(t.Field(i)); ok {
			out = append(out, name)
		}
	}
	return out
}

func (d *decoder) unknown(in reflect.Type, path, key string) {
	known := fieldNames(in)
	msg := "unknown setting"
	if s := tools.Suggest(key, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	d.report.at(path, msg, fmt.Sprintf("the keys %s are: %s (docs/config.md has them all)", sectionName(parentPath(path)), strings.Join(known, ", ")))
}

// sectionName names the table at path as the file writes it: "at the top
// level", "in [tool.calculator]", "in [[mcp.servers]]".
func sectionName(path string) string {
	switch {
	case path == "":
		return "at the top level"
	case strings.HasSuffix(path, "]"):
		return "in [[" + parentPath(path) + "]]"
	}
	return "in [" + path + "]"
}

// tomlPrefix is the location the decoder puts before its messages; the
// problem carries its own.
var tomlPrefix = lazyregexp.New(`^toml: (line \d+ )?(\(last key "[^"]*"\): )?`)

// badType reports a value the setting's type cannot hold.
func (d *decoder) badType(path string, t reflect.Type, err error) {
	msg := err.Error()
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg = pe.Message
	}
	msg = tomlPrefix().ReplaceAllString(msg, "")
	if strings.Contains(msg, "incompatible types") {
		msg = "must be " + typeWords(t)
	}
	d.report.at(path, msg, "")
}

// typeWords says what a value of type t is written as.
func typeWords(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return `a string in quotes ("...")`
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, without quotes"
	case reflect.Float32, reflect.Float64:
		return "a number, without quotes"
	case reflect.Slice:
		switch t.Elem().Kind() {
		case reflect.Struct:
			return "a list of tables ([[...]] sections)"
		case reflect.String:
			return `a list of strings, e.g. ["a", "b"]`
		}
		return "a list of values in [ ]"
	case reflect.Map, reflect.Struct:
		return "a table (a [section] or { key = value, ... })"
	}
	return "of type " + t.String()
}
