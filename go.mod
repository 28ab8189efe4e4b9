module github.com/toolwire/toolwire

go 1.26.0

require (
	github.com/creack/pty v1.1.24
	github.com/joho/godotenv v1.5.1
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/spf13/cobra v1.10.2
	golang.org/x/term v0.47.0
	golang.org/x/text v0.14.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
