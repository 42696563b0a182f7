package sandbox

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigFor renders a single-context kubeconfig with everything inline, so the file can be
// copied anywhere (another process, a container, a CI artifact) and still work.
func kubeconfigFor(clusterName, contextName, userName, host string, caCert []byte, creds keyPair) ([]byte, error) {
	config := clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{
			clusterName: {Server: host, CertificateAuthorityData: caCert},
		},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{
			userName: {ClientCertificateData: creds.Cert, ClientKeyData: creds.Key},
		},
		Contexts: map[string]*clientcmdapi.Context{
			contextName: {Cluster: clusterName, AuthInfo: userName},
		},
		CurrentContext: contextName,
	}
	data, err := clientcmd.Write(config)
	if err != nil {
		return nil, fmt.Errorf("rendering kubeconfig for %s: %w", contextName, err)
	}
	return data, nil
}

func restConfigFor(host string, caCert []byte, creds keyPair) *rest.Config {
	return &rest.Config{
		Host: host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   caCert,
			CertData: creds.Cert,
			KeyData:  creds.Key,
		},
	}
}
