package vcenter

import (
	"strings"

	"github.com/vmware/govmomi/vim25/types"
)

// AdminPauseProperty is the property path of KeyAdminPause alone, for reads that do not
// want the whole ExtraConfig (it holds the bootstrap data).
const AdminPauseProperty = `config.extraConfig["` + KeyAdminPause + `"]`

// AdminPaused reports whether a VM's ExtraConfig holds an admin's pause: KeyAdminPause
// set to "true", in any case.
func AdminPaused(extraConfig []types.BaseOptionValue) bool {
	for _, o := range extraConfig {
		if opt := o.GetOptionValue(); opt.Key == KeyAdminPause {
			v, _ := opt.Value.(string)
			return strings.EqualFold(v, "true")
		}
	}
	return false
}
