package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailscale/hujson"
)

// A configuration file is edited as a hujson syntax tree, so that what
// the edit does not touch stays as it was: other servers, keys toolwire
// does not know, the order, the comments and trailing commas of a JSONC
// file, the indentation.

// errExists is a server name the file has already.
var errExists = errors.New("exists")

// editConfig applies edit to the configuration file at path (an empty
// object when it does not exist) and writes the result in its place
// atomically, holding the file's lock so that edits at once all land.
func editConfig(path string, edit func(root *hujson.Value) error) error {
	return withFileLock(path, func() error { return editLocked(path, edit) })
}

// editLocked is editConfig once the lock is held.
func editLocked(path string, edit func(root *hujson.Value) error) error {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		data = []byte("{}\n")
	case err != nil:
		return fmt.Errorf("config %s: %w", path, err)
	}
	root, err := hujson.Parse(data)
	if err != nil {
		return fmt.Errorf("config %s is not valid JSON: %s: fix it before editing it", path, strings.TrimPrefix(err.Error(), "hujson: "))
	}
	if _, ok := root.Value.(*hujson.Object); !ok {
		return fmt.Errorf("config %s: want a JSON object with \"mcpServers\" in it: fix it before editing it", path)
	}
	if err := edit(&root); err != nil {
		return err
	}
	out := root.Pack()
	if _, err := hujson.Parse(out); err != nil { // a bug here must not break the user's file
		return fmt.Errorf("editing config %s gave invalid JSON (%v): the file is left as it was; please report this", path, err)
	}
	// A trusted project file stays trusted through the user's own edit.
	wasTrusted := isTrusted(path)
	if err := writeFileAtomic(path, out); err != nil {
		return err
	}
	if wasTrusted {
		return trustFile(path)
	}
	return nil
}

// writeFileAtomic replaces the file at path (through symbolic links) with
// data: written to a temporary file in the same directory, then renamed,
// so that a reader sees the old file or the new one, never a part. A new
// file is readable only by its owner, as it may hold tokens; an existing
// file keeps its mode.
func writeFileAtomic(path string, data []byte) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("config %s: %w (the file is left as it was)", path, err)
	}
	return nil
}

// serversMember finds the object of servers: "mcpServers", else VS Code's
// "servers"; with create, an empty "mcpServers" is added when neither is
// there. It returns the member's index in root, or -1.
func serversMember(root *hujson.Value, create bool) (int, error) {
	obj := root.Value.(*hujson.Object)
	i := memberIndex(obj, "mcpServers")
	if i < 0 {
		i = memberIndex(obj, "servers")
	}
	if i < 0 {
		if !create {
			return -1, nil
		}
		step := indentStep(obj)
		if err := root.Patch([]byte(`[{"op": "add", "path": "/mcpServers", "value": {}}]`)); err != nil {
			return -1, err
		}
		i = memberIndex(obj, "mcpServers")
		placeMember(obj, i, "", step, []byte("{}"))
	}
	if _, ok := obj.Members[i].Value.Value.(*hujson.Object); !ok {
		return -1, fmt.Errorf("%q is not an object of servers by name: fix it before editing it", memberName(obj, i))
	}
	return i, nil
}

// setServer adds the server entry (JSON) under its name, or replaces it
// when replace; a name that is there already without replace is
// errExists.
func setServer(root *hujson.Value, name string, entry []byte, replace bool) error {
	i, err := serversMember(root, true)
	if err != nil {
		return err
	}
	obj := root.Value.(*hujson.Object)
	key := memberName(obj, i)
	servers := obj.Members[i].Value.Value.(*hujson.Object)
	op := "add"
	if memberIndex(servers, name) >= 0 {
		if !replace {
			return errExists
		}
		op = "replace"
	}
	patch, err := json.Marshal([]map[string]any{{"op": op, "path": "/" + key + "/" + name, "value": json.RawMessage(entry)}})
	if err != nil {
		return err
	}
	if err := root.Patch(patch); err != nil {
		return err
	}
	step := indentStep(obj)
	outer := lineIndent(obj.Members[i].Name.BeforeExtra)
	j := memberIndex(servers, name)
	if op == "replace" {
		servers.Members[j].Value.Value = formatted(entry, outer+step, step)
		return nil
	}
	placeMember(servers, j, outer, step, entry)
	return nil
}

// removeServer removes a server's entry; it reports whether there was one.
func removeServer(root *hujson.Value, name string) (bool, error) {
	i, err := serversMember(root, false)
	if err != nil || i < 0 {
		return false, err
	}
	obj := root.Value.(*hujson.Object)
	servers := obj.Members[i].Value.Value.(*hujson.Object)
	if memberIndex(servers, name) < 0 {
		return false, nil
	}
	if err := root.Patch([]byte(fmt.Sprintf(`[{"op": "remove", "path": "/%s/%s"}]`, memberName(obj, i), name))); err != nil {
		return false, err
	}
	// The removed member's indentation may be left before the brace.
	if nl := bytes.LastIndexByte(servers.AfterExtra, '\n'); nl >= 0 && len(bytes.TrimSpace(servers.AfterExtra[nl:])) == 0 {
		servers.AfterExtra = append(servers.AfterExtra[:nl+1], lineIndent(obj.Members[i].Name.BeforeExtra)...)
	}
	return true, nil
}

// placeMember lays out member j of obj, just added at its end: on a line
// of its own, indented one step deeper than the object (which is indented
// by outer), its value formatted likewise; the closing brace on a line of
// its own. In a file written on one line, the member stays on it.
func placeMember(obj *hujson.Object, j int, outer, step string, value []byte) {
	m := &obj.Members[j]
	if step == "" { // one line
		m.Name.BeforeExtra = []byte(" ")
		m.Value.BeforeExtra, m.Value.Value = []byte(" "), formatted(value, "", "")
		return
	}
	before := bytes.TrimRight(m.Name.BeforeExtra, " \t")
	if len(before) == 0 || before[len(before)-1] != '\n' {
		before = append(before, '\n')
	}
	m.Name.BeforeExtra = append(before, outer+step...)
	m.Name.AfterExtra = nil
	m.Value.BeforeExtra, m.Value.Value = []byte(" "), formatted(value, outer+step, step)
	if !bytes.Contains(obj.AfterExtra, []byte("\n")) {
		obj.AfterExtra = append(bytes.TrimRight(obj.AfterExtra, " \t"), "\n"+outer...)
	}
}

// formatted is a JSON value indented for its place (prefix, step), or
// compact when step is empty.
func formatted(value []byte, prefix, step string) hujson.ValueTrimmed {
	var buf bytes.Buffer
	var err error
	if step == "" {
		err = json.Compact(&buf, value)
	} else {
		err = json.Indent(&buf, value, prefix, step)
	}
	if err != nil {
		buf.Reset()
		buf.Write(value)
	}
	v, err := hujson.Parse(buf.Bytes())
	if err != nil {
		v, _ = hujson.Parse(value)
	}
	return v.Value
}

// indentStep is the indentation of the file's top-level members ("" for a
// file on one line; two spaces for an empty object).
func indentStep(root *hujson.Object) string {
	if len(root.Members) == 0 {
		return "  "
	}
	if first := root.Members[0].Name.BeforeExtra; bytes.Contains(first, []byte("\n")) {
		return lineIndent(first)
	}
	return ""
}

// lineIndent is the whitespace that starts the last line of extra.
func lineIndent(extra []byte) string {
	last := extra[bytes.LastIndexByte(extra, '\n')+1:]
	return string(last[:len(last)-len(bytes.TrimLeft(last, " \t"))])
}

func memberIndex(obj *hujson.Object, name string) int {
	for i := range obj.Members {
		if memberName(obj, i) == name {
			return i
		}
	}
	return -1
}

func memberName(obj *hujson.Object, i int) string {
	if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok {
		return lit.String()
	}
	return ""
}
