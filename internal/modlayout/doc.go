// Package modlayout holds the test that a program outside the repository
// can depend on toolwire's modules as a user's would, through a module
// proxy and with no replace directive: the root module, the Redis handle
// store, and the CLI installed with go install. It has no code of its own:
// see its test, which needs the go command and git.
package modlayout
