// Command execplugin is an exec credential plugin for tests, standing in for a cloud provider's
// (aws-iam-authenticator, gke-gcloud-auth-plugin, kubelogin): it answers with the client
// certificate and key in the files its two arguments name, or, given -token, with the bearer
// token in the file named after it, as a cloud provider's plugin answers with a token minted
// from the identity it runs as.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

func main() {
	status, err := credential(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cred := map[string]any{
		"apiVersion": "client.authentication.k8s.io/v1",
		"kind":       "ExecCredential",
		"status":     status,
	}
	if err := json.NewEncoder(os.Stdout).Encode(cred); err != nil {
		os.Exit(1)
	}
}

// credential returns the ExecCredential's status the arguments ask for.
func credential(args []string) (map[string]any, error) {
	switch {
	case len(args) == 2 && args[0] == "-token":
		token, err := os.ReadFile(args[1])
		if err != nil {
			return nil, err
		}
		return map[string]any{"token": strings.TrimSpace(string(token))}, nil
	case len(args) == 2:
		cert, err := os.ReadFile(args[0])
		if err != nil {
			return nil, err
		}
		key, err := os.ReadFile(args[1])
		if err != nil {
			return nil, err
		}
		return map[string]any{"clientCertificateData": string(cert), "clientKeyData": string(key)}, nil
	}
	return nil, fmt.Errorf("usage: execplugin CERT-FILE KEY-FILE | execplugin -token TOKEN-FILE")
}
