package vcenter

import (
	"testing"

	"github.com/vmware/govmomi/vim25/types"
)

func TestAdminPaused(t *testing.T) {
	opt := func(k, v string) types.BaseOptionValue { return &types.OptionValue{Key: k, Value: v} }
	for _, tt := range []struct {
		options []types.BaseOptionValue
		want    bool
	}{
		{nil, false},
		{[]types.BaseOptionValue{opt(KeyUID, "u"), opt(KeyAdminPause, "true")}, true},
		{[]types.BaseOptionValue{opt(KeyAdminPause, "TRUE")}, true},
		{[]types.BaseOptionValue{opt(KeyAdminPause, "false")}, false},
		{[]types.BaseOptionValue{opt(KeyAdminPause, "")}, false},
		{[]types.BaseOptionValue{opt("other", "true")}, false},
	} {
		if got := AdminPaused(tt.options); got != tt.want {
			t.Errorf("AdminPaused(%v) = %v, want %v", tt.options, got, tt.want)
		}
	}
}
