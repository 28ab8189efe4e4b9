package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/toolwire/toolwire/host"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/oauth"
	"github.com/toolwire/toolwire/schema"
)

// chat answers what servers ask (see serverasks.go) at the terminal: a
// form field by field, a page to open, a completion by the model.

// pause stops the spinner for a question; resume starts it again if
// tools still run.
func (c *chat) pause() (resume func()) {
	c.asking.Lock()
	c.mu.Lock()
	c.stopSpinnerLocked()
	c.clearStatus()
	c.endLine()
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		if len(c.running) > 0 && c.term != nil {
			c.startSpinner()
		}
		c.mu.Unlock()
		c.asking.Unlock()
	}
}

// say prints a line of a question.
func (c *chat) say(format string, args ...any) {
	fmt.Fprintf(c.out, format+"\n", args...)
}

// printable makes text a server sent safe to print: no escape sequences
// or other control characters but newlines.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}

// cancelled is the answer to a question the user left (Ctrl-D).
func cancelled(err error) (*mcp.ElicitResult, error) {
	if errors.Is(err, io.EOF) {
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	return nil, err
}

func (c *chat) answerElicitation(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	resume := c.pause()
	defer resume()
	server := host.AskingServer(ctx)
	if p.Mode == "url" {
		return c.openPage(server, p)
	}
	c.say("%s %s", c.style("1", "Server "+server+" asks:"), printable(p.Message))
	for {
		answer, err := c.readLine("Answer? [y]es, [n]o (decline), [c]ancel: ")
		if err != nil {
			return cancelled(err)
		}
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "y", "yes", "":
			return c.fillForm(p.RequestedSchema)
		case "n", "no":
			return &mcp.ElicitResult{Action: "decline"}, nil
		case "c", "cancel":
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}
	}
}

// formField is what a form shows of a field beyond its schema.Property.
type formField struct {
	schema.Property
	options  []option // a single or multiple choice
	multiple bool
	check    *schema.Validator // nil when the field's schema does not compile
}

// option is a choice of an enum: its value and its title.
type option struct {
	value any
	title string
}

// fieldOf reads a form field's choices and compiles its schema.
func fieldOf(p schema.Property) formField {
	f := formField{Property: p}
	var s struct {
		Enum      []any    `json:"enum"`
		EnumNames []string `json:"enumNames"`
		OneOf     []struct {
			Const any    `json:"const"`
			Title string `json:"title"`
		} `json:"oneOf"`
		Items struct {
			Enum  []any `json:"enum"`
			AnyOf []struct {
				Const any    `json:"const"`
				Title string `json:"title"`
			} `json:"anyOf"`
		} `json:"items"`
	}
	_ = json.Unmarshal(p.Schema, &s)
	enum, titled := s.Enum, s.OneOf
	if p.MainType() == "array" {
		f.multiple, enum, titled = true, s.Items.Enum, s.Items.AnyOf
	}
	for i, v := range enum {
		o := option{value: v, title: fmt.Sprint(v)}
		if i < len(s.EnumNames) && !f.multiple {
			o.title = s.EnumNames[i]
		}
		f.options = append(f.options, o)
	}
	for _, t := range titled {
		f.options = append(f.options, option{value: t.Const, title: t.Title})
	}
	f.check, _ = schema.Compile(p.Schema)
	return f
}

// fillForm asks for each field of a form in turn, re-asking when an
// answer does not fit the field's schema.
func (c *chat) fillForm(requested json.RawMessage) (*mcp.ElicitResult, error) {
	props, err := schema.Properties(requested)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "the requested schema is not a JSON object: %v", err)
	}
	c.say("%s", c.style("2", `Enter keeps the default; "-" leaves an optional field out; /cancel stops.`))
	content := map[string]any{}
	for _, p := range props {
		f := fieldOf(p)
		c.describe(f)
		for {
			line, err := c.readLine(fmt.Sprintf("  %s: ", printable(f.Name)))
			if err != nil {
				return cancelled(err)
			}
			line = strings.TrimSpace(line)
			if line == "/cancel" {
				return &mcp.ElicitResult{Action: "cancel"}, nil
			}
			v, set, err := f.parse(line)
			if err != nil {
				c.say("  %s", c.style("31", err.Error()))
				continue
			}
			if set {
				content[f.Name] = v
			}
			break
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// describe shows a field: its title, description, type, default and
// choices.
func (c *chat) describe(f formField) {
	head := f.Name
	if f.Title != "" {
		head = f.Title
	}
	var about []string
	if t := f.MainType(); t != "" {
		about = append(about, t)
	}
	if f.Required {
		about = append(about, "required")
	}
	if len(f.Default) > 0 {
		about = append(about, "default "+string(f.Default))
	}
	line := fmt.Sprintf("%s (%s)", printable(head), strings.Join(about, ", "))
	if f.Description != "" {
		line += ": " + printable(f.Description)
	}
	c.say("%s", line)
	if len(f.options) > 0 {
		var opts []string
		for i, o := range f.options {
			opts = append(opts, fmt.Sprintf("%d) %s", i+1, printable(o.title)))
		}
		how := "one of"
		if f.multiple {
			how = "any of, separated by commas:"
		}
		c.say("  %s %s", how, strings.Join(opts, "  "))
	}
}

// parse turns what the user typed into the field's value; set is false
// when the field is left out.
func (f formField) parse(line string) (v any, set bool, err error) {
	switch {
	case line == "" && len(f.Default) > 0:
		err = json.Unmarshal(f.Default, &v)
		return v, err == nil, err
	case line == "" || line == "-":
		if f.Required {
			return nil, false, fmt.Errorf("%s is required: type a value", f.Name)
		}
		return nil, false, nil
	}
	if f.multiple {
		var list []any
		for _, part := range strings.Split(line, ",") {
			x, err := f.choose(strings.TrimSpace(part))
			if err != nil {
				return nil, false, err
			}
			list = append(list, x)
		}
		v = list
	} else if len(f.options) > 0 {
		if v, err = f.choose(line); err != nil {
			return nil, false, err
		}
	} else if v, err = typed(line, f.MainType()); err != nil {
		return nil, false, err
	}
	if f.check != nil {
		if err := f.check.Validate(asJSON(v)); err != nil {
			return nil, false, fmt.Errorf("%q does not fit: %s", line, expected(err))
		}
	}
	return v, true, nil
}

// asJSON is a value as decoded from JSON, as the schema validator takes
// it.
func asJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// expected says what a field's schema wants, from its validation error.
func expected(err error) string {
	var verr *schema.ValidationError
	if !errors.As(err, &verr) || len(verr.Problems) == 0 {
		return err.Error()
	}
	var want []string
	for _, p := range verr.Problems {
		want = append(want, "expected "+p.Expected)
	}
	return strings.Join(want, "; ")
}

// choose finds the option a user named by number, value or title.
func (f formField) choose(s string) (any, error) {
	if i, err := strconv.Atoi(s); err == nil && i >= 1 && i <= len(f.options) {
		return f.options[i-1].value, nil
	}
	for _, o := range f.options {
		if fmt.Sprint(o.value) == s || strings.EqualFold(o.title, s) {
			return o.value, nil
		}
	}
	return nil, fmt.Errorf("%q is not one of the choices: type its number or its name", s)
}

// typed reads text as a value of a JSON Schema type.
func typed(s, typ string) (any, error) {
	switch typ {
	case "integer":
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", s)
		}
		return i, nil
	case "number":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return f, nil
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not yes or no", s)
	}
	return s, nil
}

// openPage asks the user to visit a page (URL mode): it shows the
// address and its host, opens it in a browser only when the user agrees
// and one is available, and waits for the user to be done.
func (c *chat) openPage(server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "the URL %q is not an http or https address", p.URL)
	}
	c.say("%s %s", c.style("1", "Server "+server+" asks you to open a page on "+printable(u.Host)+":"), printable(p.Message))
	c.say("  %s", printable(p.URL))
	for {
		answer, err := c.readLine("Open it? [y]es, [n]o (decline), [c]ancel: ")
		if err != nil {
			return cancelled(err)
		}
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "y", "yes":
		case "n", "no":
			return &mcp.ElicitResult{Action: "decline"}, nil
		case "c", "cancel":
			return &mcp.ElicitResult{Action: "cancel"}, nil
		default:
			continue
		}
		break
	}
	switch {
	case !browserAvailable():
		c.say("No browser here: open the address above yourself.")
	default:
		if err := oauth.OpenBrowser(p.URL); err != nil {
			c.say("%v: open the address above yourself.", err)
		}
	}
	if _, err := c.readLine("Press Enter when you are done there: "); err != nil {
		return cancelled(err)
	}
	return &mcp.ElicitResult{Action: "accept"}, nil
}

// browserAvailable reports whether a browser may open here: $BROWSER
// names one, or the system has a desktop (not over SSH without one).
func browserAvailable() bool {
	switch {
	case os.Getenv("BROWSER") != "":
		return true
	case runtime.GOOS == "darwin" || runtime.GOOS == "windows":
		return true
	}
	return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}

func (c *chat) answerSampling(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	server := host.AskingServer(ctx)
	c.asking.Lock() // the chat is set up
	m := c.agent.Model
	c.asking.Unlock()
	if !c.o.sampling {
		resume := c.pause()
		c.say("%s %s", c.style("1", "Server "+server+" asks "+c.modelName()+" for a completion:"), printable(samplingSummary(p, 200)))
		if p.SystemPrompt != "" {
			c.say("  system prompt: %q", printable(shorten(p.SystemPrompt, 200)))
		}
		answer, err := c.readLine(fmt.Sprintf("Allow (at most %d tokens, no tools)? [y/N]: ", samplingTokens(p)))
		resume()
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if a := strings.ToLower(strings.TrimSpace(answer)); err != nil || (a != "y" && a != "yes") {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "the user did not allow server %s to use the model", server)
		}
	}
	return sample(ctx, m, c.modelName(), p)
}
