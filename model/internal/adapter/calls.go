package adapter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
)

// NewCallID makes an id for a tool call the provider gave none: 9
// letters and digits, which every provider accepts (some require
// exactly that).
func NewCallID() string {
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 9)
	for i := range b {
		b[i] = alnum[rand.N(len(alnum))]
	}
	return string(b)
}

// CheckArguments says what is wrong with tool call arguments that are not
// a JSON object, or returns "": what an adapter puts in ToolCall.Invalid.
func CheckArguments(args json.RawMessage) string {
	if !json.Valid(args) {
		var v any
		err := json.Unmarshal(args, &v)
		return fmt.Sprintf("the arguments are not valid JSON: %v", err)
	}
	if v := bytes.TrimLeft(args, " \t\r\n"); v[0] != '{' {
		return "the arguments must be a JSON object"
	}
	return ""
}
