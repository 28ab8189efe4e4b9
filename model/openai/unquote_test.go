package openai

import (
	"bytes"
	"encoding/json"
	"testing"
)

// unquoteCases are insides of JSON strings, valid and not.
var unquoteCases = []string{
	``, `{}`, `{\"a\":2,\"b\":3}`, `a\\b`, `line\nbreak\ttab`, `Jos\u00e9 \ud83d\ude00`,
	`lone \ud83d half`, "raw é and \xff", `ctl` + "\x01", `ends in \`, `a"b`, `\x`, `\u12`, `\/`,
}

// TestUnquote: unquote reads what json.Unmarshal reads of the same
// string, and fails where it fails.
func TestUnquote(t *testing.T) {
	for _, raw := range unquoteCases {
		checkUnquote(t, raw)
	}
}

func FuzzUnquote(f *testing.F) {
	for _, raw := range unquoteCases {
		f.Add(raw)
	}
	f.Fuzz(checkUnquote)
}

func checkUnquote(t *testing.T, raw string) {
	var want string
	werr := json.Unmarshal([]byte(`"`+raw+`"`), &want)
	got, err := unquote([]byte(raw))
	if (err != nil) != (werr != nil) || err == nil && !bytes.Equal(got, []byte(want)) {
		t.Errorf("unquote(%q) = %q, %v; json.Unmarshal reads %q, %v", raw, got, err, want, werr)
	}
}
