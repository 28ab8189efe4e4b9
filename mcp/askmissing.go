package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/tool"
)

// retryMissing calls the named tool again when the call that gave err
// left out required arguments the client's user gave (see askMissing);
// otherwise it returns res and err as they are.
func (s *Server) retryMissing(ctx context.Context, name string, args json.RawMessage, res *tool.Result, err error) (*tool.Result, error) {
	var ae *tool.ArgumentsError
	if !errors.As(err, &ae) || !onlyMissing(ae) {
		return res, err
	}
	completed, ok, aerr := s.askMissing(ctx, name, args, ae.Missing)
	switch {
	case aerr != nil:
		return nil, aerr
	case ok:
		return s.tools.Call(ctx, name, completed)
	}
	return res, err
}

// askMissing asks the client's user, through elicitation, for required
// arguments a call of the named tool left out, and returns the arguments
// with the answers. ok is false when it cannot ask: the client has no
// elicitation, or an argument is not a plain value a form can hold (a
// string, number, integer or boolean at the top level). A user who
// declines is an error the model reads. ErrInputRequired comes back as
// it is, for a modern client to answer on a retry.
func (s *Server) askMissing(ctx context.Context, name string, args json.RawMessage, missing []string) (json.RawMessage, bool, error) {
	r := requestFrom(ctx)
	if r == nil || r.caps == nil || r.caps.Elicitation == nil {
		return nil, false, nil
	}
	t, ok := s.tools.Lookup(name)
	if !ok {
		return nil, false, nil
	}
	var in struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(t.Info().InputSchema, &in) != nil {
		return nil, false, nil
	}
	props := map[string]any{}
	for _, m := range missing {
		var p struct {
			Type        string   `json:"type"`
			Title       string   `json:"title,omitempty"`
			Description string   `json:"description,omitempty"`
			Enum        []string `json:"enum,omitempty"`
		}
		if json.Unmarshal(in.Properties[m], &p) != nil {
			return nil, false, nil
		}
		switch p.Type {
		case "string", "number", "integer", "boolean":
		default:
			return nil, false, nil // nested, or not a plain value
		}
		props[m] = p
	}
	schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": missing})
	res, err := Elicit(ctx, &ElicitParams{
		Message:         fmt.Sprintf("The tool %s needs %s to run.", name, strings.Join(missing, ", ")),
		RequestedSchema: schema,
	})
	if err != nil {
		if errors.Is(err, ErrInputRequired) {
			return nil, false, err
		}
		return nil, false, nil // the client could not ask: the model gets the error
	}
	if res.Action != "accept" {
		return nil, false, fmt.Errorf("the user did not give %s for tool %s (%s)", strings.Join(missing, ", "), name, res.Action)
	}
	m := map[string]any{}
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &m); err != nil {
			return nil, false, nil
		}
	}
	for k, v := range res.Content {
		m[k] = v
	}
	b, err := json.Marshal(m)
	return b, err == nil, err
}

// onlyMissing reports arguments whose one problem is required ones left
// out.
func onlyMissing(ae *tool.ArgumentsError) bool {
	return len(ae.Missing) > 0 && ae.Syntax == "" && len(ae.Problems) == 0
}
