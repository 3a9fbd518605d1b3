package readmodel

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// continueToken is what a list continue token carries: the last key returned and the RV
// of the first page. Clients treat it as opaque.
type continueToken struct {
	Namespace string `json:"ns"`
	Name      string `json:"name"`
	RV        string `json:"rv"`
}

func encodeContinue(t continueToken) string {
	b, _ := json.Marshal(t) // strings always marshal
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(s string) (continueToken, error) {
	var t continueToken
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &t)
	}
	if err == nil && t.Name == "" {
		err = errors.New("no key")
	}
	if err == nil {
		_, err = parseRV(t.RV)
	}
	if err != nil {
		return continueToken{}, fmt.Errorf("continue token: %w: %v", ErrInvalid, err)
	}
	return t, nil
}
