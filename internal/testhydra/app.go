package testhydra

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
)

// ConsentRequest is what a client asked the user for, as Hydra's consent
// request says it.
type ConsentRequest struct {
	// Subject is the user who logged in.
	Subject string
	// ClientID is the client asking.
	ClientID string
	// Scopes are the scopes asked for (the scope parameter).
	Scopes []string
	// Audience is the audience asked for with Hydra's audience parameter.
	Audience []string
	// Resources are the resource parameters (RFC 8707) of the
	// authorization request, which Hydra itself ignores.
	Resources []string
}

// Consent is the user's answer to a ConsentRequest.
type Consent struct {
	// Scopes are the scopes granted: the access token's scope.
	Scopes []string
	// Audience is the access token's audience (its aud claim).
	Audience []string
	// Deny refuses the request: Hydra redirects to the client with
	// error=access_denied.
	Deny bool
}

// DefaultConsent grants what was asked: the scopes, and as the audience
// both the audience and the resources asked for.
func DefaultConsent(r ConsentRequest) Consent {
	aud := slices.Clone(r.Audience)
	for _, res := range r.Resources {
		if !slices.Contains(aud, res) {
			aud = append(aud, res)
		}
	}
	return Consent{Scopes: slices.Clone(r.Scopes), Audience: aud}
}

// SetSubject sets the user the login application logs in when the
// authorization request has no login_hint (DefaultSubject at first).
func (s *Server) SetSubject(subject string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subject = subject
}

// SetConsent sets how the consent application answers; nil restores
// DefaultConsent.
func (s *Server) SetConsent(f func(ConsentRequest) Consent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.consent = f
}

// appHandler is the login and consent application Hydra sends the user
// agent to (its urls.login, urls.consent and urls.error).
func (s *Server) appHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		s.answer(w, r, s.login)
	})
	mux.HandleFunc("GET /consent", func(w http.ResponseWriter, r *http.Request) {
		s.answer(w, r, s.decide)
	})
	mux.HandleFunc("GET /error", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		http.Error(w, fmt.Sprintf("hydra refused the authorization request: %s: %s (%s)",
			q.Get("error"), q.Get("error_description"), q.Get("error_hint")), http.StatusBadRequest)
	})
	return mux
}

// answer runs a step of the flow and redirects the user agent where Hydra
// said, or answers 500 with the step's error.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, step func(context.Context, url.Values) (string, error)) {
	to, err := step(r.Context(), r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	http.Redirect(w, r, to, http.StatusFound)
}

// redirect is the answer of Hydra's accept and reject endpoints.
type redirect struct {
	RedirectTo string `json:"redirect_to"`
}

// login accepts a login request as the login_hint's subject, else as the
// subject SetSubject set.
func (s *Server) login(ctx context.Context, q url.Values) (string, error) {
	challenge := url.QueryEscape(q.Get("login_challenge"))
	var req struct {
		OIDCContext struct {
			LoginHint string `json:"login_hint"`
		} `json:"oidc_context"`
	}
	if err := s.getJSON(ctx, s.adminURL+"/admin/oauth2/auth/requests/login?login_challenge="+challenge, &req); err != nil {
		return "", err
	}
	// Nothing is remembered (remember: false, and Browse starts with no
	// cookies), so Hydra never asks to skip the login.
	subject := req.OIDCContext.LoginHint
	if subject == "" {
		s.mu.Lock()
		subject = s.subject
		s.mu.Unlock()
	}
	var to redirect
	err := s.doJSON(ctx, http.MethodPut, s.adminURL+"/admin/oauth2/auth/requests/login/accept?login_challenge="+challenge,
		map[string]any{"subject": subject, "remember": false}, &to)
	return to.RedirectTo, err
}

// decide answers a consent request as SetConsent's function (or
// DefaultConsent) says.
func (s *Server) decide(ctx context.Context, q url.Values) (string, error) {
	challenge := url.QueryEscape(q.Get("consent_challenge"))
	var req struct {
		Subject  string   `json:"subject"`
		Scopes   []string `json:"requested_scope"`
		Audience []string `json:"requested_access_token_audience"`
		Client   struct {
			ID       string   `json:"client_id"`
			Audience []string `json:"audience"`
		} `json:"client"`
		RequestURL string `json:"request_url"`
	}
	if err := s.getJSON(ctx, s.adminURL+"/admin/oauth2/auth/requests/consent?consent_challenge="+challenge, &req); err != nil {
		return "", err
	}
	u, err := url.Parse(req.RequestURL)
	if err != nil {
		return "", fmt.Errorf("hydra's consent request has a request_url that does not parse: %w", err)
	}
	s.mu.Lock()
	f := s.consent
	s.mu.Unlock()
	if f == nil {
		f = DefaultConsent
	}
	c := f(ConsentRequest{Subject: req.Subject, ClientID: req.Client.ID, Scopes: req.Scopes,
		Audience: req.Audience, Resources: u.Query()["resource"]})
	var to redirect
	if c.Deny {
		err = s.doJSON(ctx, http.MethodPut, s.adminURL+"/admin/oauth2/auth/requests/consent/reject?consent_challenge="+challenge,
			map[string]any{"error": "access_denied", "error_description": "The user denied the request."}, &to)
		return to.RedirectTo, err
	}
	if err := s.allowAudience(ctx, req.Client.ID, req.Client.Audience, c.Audience); err != nil {
		return "", err
	}
	err = s.doJSON(ctx, http.MethodPut, s.adminURL+"/admin/oauth2/auth/requests/consent/accept?consent_challenge="+challenge,
		map[string]any{"grant_scope": nonNil(c.Scopes), "grant_access_token_audience": nonNil(c.Audience), "remember": false}, &to)
	return to.RedirectTo, err
}

// allowAudience adds to the audiences a client is registered with those
// of granted it lacks. Hydra checks, when the client refreshes a token,
// that the client may ask for each audience the token was granted (and
// ignores the resource parameter a client uses to ask for one), so a
// deployer of Hydra registers, for each client, the resource servers it
// may use; granting one at consent does it here, through the admin API.
func (s *Server) allowAudience(ctx context.Context, clientID string, registered, granted []string) error {
	all := slices.Clone(registered)
	for _, a := range granted {
		if !slices.Contains(all, a) {
			all = append(all, a)
		}
	}
	if len(all) == len(registered) {
		return nil
	}
	patch := []map[string]any{{"op": "replace", "path": "/audience", "value": all}}
	if err := s.doJSON(ctx, http.MethodPatch, s.adminURL+"/admin/clients/"+url.PathEscape(clientID), patch, nil); err != nil {
		return fmt.Errorf("allowing client %s the audience granted: %w", clientID, err)
	}
	return nil
}

// nonNil returns l, or an empty list for nil (Hydra wants a JSON list).
func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
