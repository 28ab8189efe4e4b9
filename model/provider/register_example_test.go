package provider_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/toolwire/toolwire/model"
	"github.com/toolwire/toolwire/model/provider"
)

// shout is a model of an adapter outside this module: it answers with
// the last message, in capitals.
type shout struct {
	name, key string
}

func (m *shout) Generate(_ context.Context, req *model.Request, _ func(model.Delta)) (*model.Response, error) {
	last := req.Messages[len(req.Messages)-1].Text
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, Text: strings.ToUpper(last)}}, nil
}

// The adapter's package registers its provider in its init function:
// Open then reads its key as it does the built-in providers' keys.
func init() {
	provider.Register(provider.Provider{
		Name:   "shout",
		KeyEnv: []string{"SHOUT_API_KEY"},
		New: func(id string, o provider.Options) (model.Model, error) {
			return &shout{name: id, key: o.APIKey}, nil
		},
	})
}

// ExampleRegister opens a model of an outside adapter by name, as
// toolwire's --model shout:v1 does.
func ExampleRegister() {
	getenv := func(k string) string { return map[string]string{"SHOUT_API_KEY": "sk-1"}[k] }
	m, err := provider.Open("shout:v1", provider.Options{Getenv: getenv})
	if err != nil {
		log.Fatal(err)
	}
	res, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "hello"}}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Message.Text, m.(*shout).name, m.(*shout).key)

	_, err = provider.Open("shout:v1", provider.Options{Getenv: func(string) string { return "" }})
	fmt.Println(err)
	// Output:
	// HELLO v1 sk-1
	// model "shout:v1": shout needs an API key: set SHOUT_API_KEY (or pass --api-key)
}
