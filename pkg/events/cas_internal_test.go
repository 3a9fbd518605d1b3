package events

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

func TestIsWrongLastSequence(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"single replica", fmt.Errorf("nats: %w", &jetstream.APIError{ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence, Code: 400}), true},
		{"replicated", fmt.Errorf("nats: %w", &jetstream.APIError{ErrorCode: jetstream.JSErrCodeStreamWrongLastSequenceConstant, Code: 400}), true},
		{"other api error", fmt.Errorf("nats: %w", &jetstream.APIError{ErrorCode: jetstream.JSErrCodeStreamNotFound, Code: 404}), false},
		{"not an api error", errors.New("wrong last sequence"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isWrongLastSequence(tt.err); got != tt.want {
				t.Errorf("isWrongLastSequence(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
