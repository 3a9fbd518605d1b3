package events

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestAckFor(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		delivered uint64
		stopping  bool
		want      ack
	}{
		{"success", nil, 1, false, ack{kind: ackDone}},
		{"success after retries", nil, 7, false, ack{kind: ackDone}},
		{"permanent", fmt.Errorf("bad spec: %w", ErrPermanent), 1, false, ack{kind: ackTerm, reason: "bad spec: permanent failure"}},
		{"undecodable", fmt.Errorf("spec message x: %w", ErrMalformed), 3, false, ack{kind: ackTerm, reason: "spec message x: malformed message"}},
		{"transient, first delivery", errors.New("vcenter: connection reset"), 1, false, ack{kind: ackRetry, delay: time.Second}},
		{"transient, second delivery", errors.New("vcenter: connection reset"), 2, false, ack{kind: ackRetry, delay: 2 * time.Second}},
		{"transient, third delivery", errors.New("vcenter: connection reset"), 3, false, ack{kind: ackRetry, delay: 4 * time.Second}},
		{"transient, capped", errors.New("vcenter: connection reset"), 19, false, ack{kind: ackRetry, delay: time.Minute}},
		{"conflict is transient", fmt.Errorf("publish status: %w", ErrConflict), 1, false, ack{kind: ackRetry, delay: time.Second}},
		{"stopping", fmt.Errorf("read vm: %w", context.Canceled), 5, true, ack{kind: ackRetry}},
		{"cancelled, not stopping (a lost scope) backs off", fmt.Errorf("scope lost: %w", context.Canceled), 2, false, ack{kind: ackRetry, delay: 2 * time.Second}},
		{"handler timeout backs off", fmt.Errorf("read vm: %w", context.DeadlineExceeded), 2, false, ack{kind: ackRetry, delay: 2 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ackFor(tt.err, tt.delivered, tt.stopping); got != tt.want {
				t.Errorf("ackFor(%v, %d, stopping %v) = %+v, want %+v", tt.err, tt.delivered, tt.stopping, got, tt.want)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	want := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60}
	for i, w := range want {
		if got := backoff(uint64(i + 1)); got != w*time.Second {
			t.Errorf("backoff(%d) = %v, want %v", i+1, got, w*time.Second)
		}
	}
	if got := backoff(0); got != time.Second {
		t.Errorf("backoff(0) = %v, want 1s", got)
	}
	if got := backoff(1 << 62); got != time.Minute {
		t.Errorf("backoff(huge) = %v, want 1m", got)
	}
}

func TestTermReasonIsCutAtARuneBoundary(t *testing.T) {
	err := errors.New(strings.Repeat("é", maxTermReason)) // two bytes each
	got := termReason(err)
	if len(got) > maxTermReason || !utf8.ValidString(got) || len(got) < maxTermReason-1 {
		t.Errorf("termReason cut to %d bytes, valid=%v; want at most %d valid bytes", len(got), utf8.ValidString(got), maxTermReason)
	}
}
