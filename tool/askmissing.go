package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolwire/toolwire/schema"
)

// AskMissing sets whether the registry asks the user for required
// arguments a call left out: when the arguments' one problem is missing
// ones, and each is a plain value a form can hold (a string, number,
// integer or boolean at the top level), the registry asks through Elicit
// (the call's Client: the MCP client's user, an agent's Elicit callback)
// and makes the call again with the answers, once. A user who declines is
// an error the model reads; a caller who cannot be asked leaves the
// arguments error as it was; another failure to ask is returned with the
// arguments error, wrapped (the MCP server ends the call with its
// ErrInputRequired so).
func (r *Registry) AskMissing(on bool) {
	r.mu.Lock()
	r.asks = on
	r.mu.Unlock()
}

// askMissing completes the arguments of a call of e that failed the
// pipeline with err by asking for the missing ones, and makes the call
// again with them; when it cannot ask, err is the call's error.
func (r *Registry) askMissing(ctx context.Context, e *entry, args json.RawMessage, err error) (*Result, error) {
	var ae *ArgumentsError
	if errors.As(err, &ae) {
		completed, ok, aerr := completeMissing(ctx, e.tool, args, ae)
		switch {
		case aerr != nil:
			return nil, r.fatalIfDone(ctx, aerr)
		case ok:
			return r.call(ctx, e.name, completed, false)
		}
	}
	return nil, r.fatalIfDone(ctx, err)
}

// completeMissing asks the user for the required arguments of tool t
// that ae says the call left out, and returns args with the answers. ok is
// false when it cannot ask, and the call keeps its error.
func completeMissing(ctx context.Context, t Tool, args json.RawMessage, ae *ArgumentsError) (completed json.RawMessage, ok bool, err error) {
	if len(ae.Missing) == 0 || ae.Syntax != "" || len(ae.Problems) > 0 {
		return nil, false, nil
	}
	info := t.Info()
	form, ok := missingForm(info.InputSchema, ae.Missing)
	if !ok {
		return nil, false, nil
	}
	res, err := Elicit(ctx, &Elicitation{
		Message: fmt.Sprintf("The tool %s needs %s to run.", info.Name, strings.Join(ae.Missing, ", ")),
		Schema:  form,
	})
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("%w (asking the user for %s: %w)", ae, strings.Join(ae.Missing, ", "), err)
	case res.Action != ActionAccept:
		return nil, false, fmt.Errorf("the user did not give %s for tool %s (%s)", strings.Join(ae.Missing, ", "), info.Name, res.Action)
	}
	m := map[string]any{}
	if len(args) > 0 && string(args) != "null" && json.Unmarshal(args, &m) != nil {
		return nil, false, nil
	}
	for k, v := range res.Content {
		m[k] = v
	}
	b, err := json.Marshal(m)
	return b, err == nil, err
}

// missingForm is the schema of a form asking for the missing properties
// of input, as input describes them; ok is false when one is not a plain
// value.
func missingForm(input json.RawMessage, missing []string) (form json.RawMessage, ok bool) {
	all, err := schema.Properties(input)
	if err != nil {
		return nil, false
	}
	type field struct {
		Type        string            `json:"type"`
		Title       string            `json:"title,omitempty"`
		Description string            `json:"description,omitempty"`
		Enum        []json.RawMessage `json:"enum,omitempty"`
	}
	props := make(map[string]field, len(missing))
	for _, name := range missing {
		i := slices.IndexFunc(all, func(p schema.Property) bool { return p.Name == name })
		if i < 0 {
			return nil, false
		}
		p := all[i]
		switch p.MainType() {
		case "string", "number", "integer", "boolean":
		default:
			return nil, false // nested, or not a plain value
		}
		for _, v := range p.Enum {
			if len(v) == 0 || v[0] != '"' {
				return nil, false // a form's choices are strings
			}
		}
		props[name] = field{Type: p.MainType(), Title: p.Title, Description: p.Description, Enum: p.Enum}
	}
	form, err = json.Marshal(map[string]any{"type": "object", "properties": props, "required": missing})
	return form, err == nil
}
