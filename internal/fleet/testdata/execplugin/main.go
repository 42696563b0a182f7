// Command execplugin is an exec credential plugin for tests: it answers with the client
// certificate and key in the files its two arguments name, as a cloud provider's plugin answers
// with a token.
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: execplugin CERT-FILE KEY-FILE")
		os.Exit(2)
	}
	cert, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	key, err := os.ReadFile(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cred := map[string]any{
		"apiVersion": "client.authentication.k8s.io/v1",
		"kind":       "ExecCredential",
		"status":     map[string]any{"clientCertificateData": string(cert), "clientKeyData": string(key)},
	}
	if err := json.NewEncoder(os.Stdout).Encode(cred); err != nil {
		os.Exit(1)
	}
}
