package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vim25"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/inventory"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/pkg/reconcile"
)

// Images. An image's status is what the content library says of the item its
// spec.providerRef names (api-rules §9.2), or for an image of type VM what its template VM
// says: the service reads the item and publishes the image's status as its slice, for an
// image created at any time, and again at every resync, since an item can change in vCenter without an event reaching vmop. Placement
// deploys a VM from an image once this slice says it is Ready.

const (
	pluralImages        = "virtualmachineimages"
	pluralClusterImages = "clustervirtualmachineimages"
	imageWorkers        = 2
)

// imageReconciler reads images' content library items through the vAPI, and the
// template VMs of images of type VM through vim25.
type imageReconciler struct {
	rest *rest.Client
	vc   *vim25.Client
	now  func() time.Time
}

// run reconciles the images of plural (a namespace's or the cluster's) until ctx
// ends.
func (r *imageReconciler) run(ctx context.Context, cfg Config, plural string) error {
	return reconcile.Run(ctx, cfg.JetStream, imageLoopConfig(cfg.Logger, plural), r.reconcile)
}

func imageLoopConfig(log *slog.Logger, plural string) reconcile.Config {
	return reconcile.Config{
		Service: model.ServiceStorage, Durable: model.ServiceStorage + "-" + plural, Plural: plural,
		Workers: imageWorkers, Resync: resync, Logger: log,
	}
}

func (r *imageReconciler) reconcile(ctx context.Context, o reconcile.Object) (reconcile.Result, error) {
	if o.Deleting() {
		return reconcile.ReleasedKeeping(o.Slices[model.ServiceStorage]), nil
	}
	var img struct {
		Spec struct {
			ProviderRef *model.LocalObjectRef `json:"providerRef"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(o.Spec.Body, &img); err != nil {
		return reconcile.Result{}, fmt.Errorf("%w: decode %s: %v", events.ErrPermanent, o.Ref, err)
	}
	ref := img.Spec.ProviderRef
	if ref == nil || ref.Name == "" {
		return r.notReady(o, "spec.providerRef names no content library item"), nil
	}
	if ref.Kind == inventory.TemplateProviderKind {
		status, found, err := inventory.TemplateImageStatus(ctx, r.vc, ref.Name)
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("template VM of %s: %w", o.Ref, err)
		}
		if !found {
			return r.notReady(o, fmt.Sprintf("no template VM %s in folder %s", ref.Name, inventory.TemplateFolder)), nil
		}
		return reconcile.Result{Status: status}, nil
	}
	status, found, err := inventory.ImageStatus(ctx, r.rest, ref.Kind, ref.Name)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("content library item of %s: %w", o.Ref, err)
	}
	if !found {
		return r.notReady(o, fmt.Sprintf("%s %s is not in the content library", ref.Kind, ref.Name)), nil
	}
	return reconcile.Result{Status: status}, nil
}

// notReady is the status of an image whose item cannot be read: Ready False NotFound.
func (r *imageReconciler) notReady(o reconcile.Object, message string) reconcile.Result {
	prev, _ := reconcile.SliceConditions(o.Slices[model.ServiceStorage]) // unreadable: only the transition time is lost
	conds := reconcile.NewConditionSet(prev, o.Meta.Generation, r.now())
	conds.Set(model.ConditionReady, metav1.ConditionFalse, model.ReasonNotFound, message)
	return reconcile.Result{Status: model.VirtualMachineImageStatus{Conditions: conds.List()}}
}
