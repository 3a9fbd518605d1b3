package main

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// stackKubeconfig is what the tests read of the kubeconfig the stack writes: the API's
// address, its CA (PEM) and each user's token.
type stackKubeconfig struct {
	server string
	ca     []byte
	tokens map[string]string // by user name: admin, user
}

func readKubeconfig(path string) (stackKubeconfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return stackKubeconfig{}, err
	}
	var kc struct {
		Clusters []struct {
			Cluster struct {
				Server string `json:"server"`
				CA     string `json:"certificate-authority-data"`
			} `json:"cluster"`
		} `json:"clusters"`
		Users []struct {
			Name string `json:"name"`
			User struct {
				Token string `json:"token"`
			} `json:"user"`
		} `json:"users"`
	}
	if err := yaml.Unmarshal(data, &kc); err != nil {
		return stackKubeconfig{}, fmt.Errorf("kubeconfig: %w", err)
	}
	if len(kc.Clusters) != 1 {
		return stackKubeconfig{}, errors.New("kubeconfig: want one cluster")
	}
	ca, err := base64.StdEncoding.DecodeString(kc.Clusters[0].Cluster.CA)
	if err != nil {
		return stackKubeconfig{}, fmt.Errorf("kubeconfig CA: %w", err)
	}
	out := stackKubeconfig{server: kc.Clusters[0].Cluster.Server, ca: ca, tokens: map[string]string{}}
	for _, u := range kc.Users {
		out.tokens[u.Name] = u.User.Token
	}
	return out, nil
}
