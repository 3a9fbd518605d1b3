package inventory

import (
	"github.com/vmware/govmomi/cns"
	cnssim "github.com/vmware/govmomi/cns/simulator"
	cnstypes "github.com/vmware/govmomi/cns/types"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
)

// vcsim's CNS volume manager reads its volumes in CnsQueryVolume and CnsQueryAllVolume
// holding the CNS registry's lock of the manager, and writes them in tasks (create,
// delete, extend) holding the vim25 registry's lock of the same reference: a query beside
// such a task reads the map while it is written, which aborts the process. Real CNS
// serves both at once; lockedVolumeManager serves the two queries under the tasks' lock
// too, so that they wait for a running task as its other calls do.
type lockedVolumeManager struct {
	*cnssim.CnsVolumeManager
}

func (m *lockedVolumeManager) CnsQueryVolume(ctx *simulator.Context, req *cnstypes.CnsQueryVolume) (res soap.HasFault) {
	m.withTaskLock(ctx, func() { res = m.CnsVolumeManager.CnsQueryVolume(ctx, req) })
	return res
}

func (m *lockedVolumeManager) CnsQueryAllVolume(ctx *simulator.Context, req *cnstypes.CnsQueryAllVolume) (res soap.HasFault) {
	m.withTaskLock(ctx, func() { res = m.CnsVolumeManager.CnsQueryAllVolume(ctx, req) })
	return res
}

// withTaskLock runs f holding the lock the manager's tasks hold: vim25's, of its reference.
func (m *lockedVolumeManager) withTaskLock(ctx *simulator.Context, f func()) {
	vctx := ctx.For(vim25.Path)
	vctx.Map.WithLock(vctx, m.Reference(), f)
}

// lockCNSQueries puts lockedVolumeManager in place of the CNS registry's volume manager;
// ctx is any call's (the registry is reachable only through one). It runs at the first
// vim25 call, a login, before any CNS call: those need its session.
func lockCNSQueries(ctx *simulator.Context) {
	reg := ctx.For(cns.Path).Map
	if reg == nil {
		return
	}
	if m, ok := reg.Get(cns.CnsVolumeManagerInstance).(*cnssim.CnsVolumeManager); ok {
		reg.Put(&lockedVolumeManager{m})
	}
}
