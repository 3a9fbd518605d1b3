package main

import (
	"testing"
	"time"
)

func TestTrySoftTimeoutConfig(t *testing.T) {
	tests := []struct {
		env     string
		want    time.Duration
		wantErr bool
	}{
		{env: "", want: 5 * time.Minute}, // the settings table's default
		{env: "30s", want: 30 * time.Second},
		{env: "soon", wantErr: true},
		{env: "-1m", wantErr: true},
	}
	for _, tt := range tests {
		c, err := loadConfig(func(k string) string {
			if k == "VMOP_TRYSOFT_TIMEOUT" {
				return tt.env
			}
			return ""
		})
		if (err != nil) != tt.wantErr || c.TrySoftTimeout != tt.want {
			t.Errorf("VMOP_TRYSOFT_TIMEOUT=%q: %v, %v; want %v, error %v", tt.env, c.TrySoftTimeout, err, tt.want, tt.wantErr)
		}
	}
}
