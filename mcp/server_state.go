package mcp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/toolwire/toolwire/jsonrpc"
)

// stateTTL is how long a requestState stays valid.
const stateTTL = time.Hour

// statePayload is what a requestState carries: the request it belongs to,
// the answers gathered on earlier rounds, application state, and an expiry.
type statePayload struct {
	Method    string                     `json:"m"`
	Subject   string                     `json:"s,omitempty"`
	Responses map[string]json.RawMessage `json:"r,omitempty"`
	App       json.RawMessage            `json:"a,omitempty"`
	Expires   int64                      `json:"e"`
}

// inputRequired builds the input_required result for a request whose
// handler asked the client for input.
func (s *Server) inputRequired(req *request) (any, error) {
	req.mu.Lock()
	defer req.mu.Unlock()
	p := statePayload{Method: req.method, Subject: req.subject, Responses: req.responses, App: req.appState,
		Expires: time.Now().Add(stateTTL).Unix()}
	state, err := s.sealState(p)
	if err != nil {
		return nil, err
	}
	return &InputRequiredResult{
		ResultBase:    ResultBase{ResultType: ResultInputRequired},
		InputRequests: req.asked,
		RequestState:  state,
	}, nil
}

func (s *Server) sealState(p statePayload) (string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	body := base64.RawURLEncoding.EncodeToString(b)
	return body + "." + s.mac(body), nil
}

func (s *Server) mac(body string) string {
	h := hmac.New(sha256.New, s.stateKey)
	h.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// openState verifies a requestState and merges its answers into req.
func (s *Server) openState(req *request, state string) error {
	invalid := func(why string) error {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid requestState: %s; retry the original request without requestState and inputResponses", why)
	}
	body, sig, ok := strings.Cut(state, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(s.mac(body))) {
		return invalid("it was not issued by this server or has been modified")
	}
	b, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return invalid("it is not well-formed")
	}
	var p statePayload
	if err := json.Unmarshal(b, &p); err != nil {
		return invalid("it is not well-formed")
	}
	if time.Now().Unix() > p.Expires {
		return invalid("it has expired")
	}
	if p.Method != req.method {
		return invalid("it belongs to a " + p.Method + " request, not " + req.method)
	}
	merged := make(map[string]json.RawMessage, len(p.Responses)+len(req.responses))
	for k, v := range p.Responses {
		merged[k] = v
	}
	for k, v := range req.responses {
		merged[k] = v
	}
	req.responses = merged
	req.appState = p.App
	req.stateSubject = p.Subject
	return nil
}
