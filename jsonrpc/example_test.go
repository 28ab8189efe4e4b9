package jsonrpc_test

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/toolwire/toolwire/jsonrpc"
)

func ExampleDecode() {
	m, err := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(m.IsRequest(), m.ID, m.Method, string(m.Params))

	// A malformed message gets an error ready to send back, addressed to
	// the request's id when it could be read.
	m, err = jsonrpc.Decode([]byte(`{"id":8,"method":"tools/list"}`))
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		fmt.Println(string((&jsonrpc.Message{ID: m.ID, Error: e}).Append(nil)))
	}
	// Output:
	// true 7 tools/list {}
	// {"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"invalid request: the \"jsonrpc\" member is missing; it must be \"2.0\""}}
}

func ExampleNewRequest() {
	m, err := jsonrpc.NewRequest(jsonrpc.StringID("req-1"), "tools/call", map[string]any{
		"name":      "greet",
		"arguments": map[string]string{"who": "<world>"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(m.Append(nil)))
	// Output:
	// {"jsonrpc":"2.0","id":"req-1","method":"tools/call","params":{"arguments":{"who":"<world>"},"name":"greet"}}
}

func ExampleLineReader() {
	in := strings.NewReader("{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n" +
		strings.Repeat("x", 100) + "\n" +
		"{\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n")
	lr := jsonrpc.NewLineReader(in, 64)
	for {
		line, err := lr.ReadLine()
		if errors.Is(err, jsonrpc.ErrTooLarge) {
			fmt.Println("skipped:", err)
			continue
		}
		if err != nil {
			break // io.EOF
		}
		m, _ := jsonrpc.Decode(line)
		fmt.Println("method:", m.Method)
	}
	// Output:
	// method: a
	// skipped: message of more than 64 bytes exceeds the limit of 64 bytes; it was discarded
	// method: b
}

func ExampleLineWriter() {
	lw := jsonrpc.NewLineWriter(os.Stdout)
	n, _ := jsonrpc.NewNotification("notifications/progress", map[string]any{"progressToken": "t", "progress": 1})
	_ = lw.Write(n)
	_ = lw.Write(&jsonrpc.Message{ID: jsonrpc.Int64ID(1), Result: []byte(`{"ok":true}`)})
	// Output:
	// {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"progressToken":"t"}}
	// {"jsonrpc":"2.0","id":1,"result":{"ok":true}}
}
