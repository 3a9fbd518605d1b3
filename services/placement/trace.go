package placement

import (
	"context"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/vmop/vmop/pkg/vcenter"
)

const tracerName = "github.com/vmop/vmop/services/placement"

// Span names of the vCenter calls, one per kind of call.
const (
	spanFindByName    = "vcenter FindChild"
	spanTopology      = "vcenter DiscoverZones"
	spanCapacity      = "vcenter RetrieveCapacity"
	spanFolder        = "vcenter EnsureFolder"
	spanDeploy        = "vcenter DeployLibraryItem"
	spanCreateVM      = "vcenter CreateVM"
	spanReconfigure   = "vcenter ReconfigVM"
	spanObserve       = "vcenter RetrieveVM"
	spanPowerOff      = "vcenter PowerOffVM"
	spanDestroy       = "vcenter DestroyVM"
	spanPlaceXCluster = "vcenter PlaceVmsXCluster"
	spanPlaceVM       = "vcenter PlaceVm"
	spanClusterRules  = "vcenter ReconfigureComputeResource"
)

// traced runs one vCenter call inside a CLIENT span that is a child of ctx's span (the
// reconcile's consumer span), so a trace shows which vCenter calls a change caused.
func traced(ctx context.Context, name string, f func(context.Context) error, attrs ...attribute.KeyValue) error {
	ctx, span := otel.Tracer(tracerName).Start(ctx, name,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	defer span.End()
	err := f(ctx)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	return err
}

// tracedTask runs, under a span, the vCenter task start begins and returns the object it
// made (the created or cloned VM).
func tracedTask(ctx context.Context, name string, start func(context.Context) (*object.Task, error), attrs ...attribute.KeyValue) (types.ManagedObjectReference, error) {
	var ref types.ManagedObjectReference
	err := traced(ctx, name, func(ctx context.Context) error {
		task, err := start(ctx)
		if err != nil {
			return err
		}
		info, err := vcenter.WaitTask(ctx, task)
		if err != nil {
			return err
		}
		ref = info.Result.(types.ManagedObjectReference)
		return nil
	}, attrs...)
	return ref, err
}

// objectAttr names the VirtualMachine a span works for.
func objectAttr(namespace, name string) attribute.KeyValue {
	return attribute.String("vmop.object", namespace+"/"+name)
}
