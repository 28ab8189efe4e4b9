package http1_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/toolwire/toolwire/http1"
)

// Serve any http.Handler, here a mux, on a listener of its own.
func Example() {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := &http1.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()

	resp, err := http.Post("http://"+ln.Addr().String()+"/echo", "text/plain", strings.NewReader("hello"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, string(b))
	// Output: 200 OK hello
}
