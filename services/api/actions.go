package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/admission"
)

// KubeVirt-style actions on a VirtualMachine: PUT (or POST) …/virtualmachines/<name>/start,
// stop or restart, so a console or a script has one call per action. Each is a change of
// the desired state that goes the way of a PATCH by the same caller (authorization,
// admission, dry run, compare-and-swap append to SPECS) and answers with the updated
// object.
const (
	actionStart   = "start"   // spec.powerState PoweredOn
	actionStop    = "stop"    // spec.powerState PoweredOff; gracePeriod 0 → powerOffMode Hard
	actionRestart = "restart" // spec.nextRestartTime "now"; gracePeriodSeconds 0 → restartMode Hard
)

// actionVerbs are advertised in discovery: KubeVirt's clients PUT, POST is accepted too.
var actionVerbs = []string{"create", "update"}

// actionAttempts bounds the retries of an action that lost the compare-and-swap to a
// concurrent write: an action names no resourceVersion, so it is re-applied to the new
// state, as the apiserver retries a patch.
const actionAttempts = 5

// actionsOf lists the actions a kind serves.
func actionsOf(k model.Kind) []string {
	if k.Group == model.GroupVMOperator && k.Version == model.VersionVMOperator && k.Kind == "VirtualMachine" {
		return []string{actionRestart, actionStart, actionStop}
	}
	return nil
}

// isAction tells whether t addresses an action. Actions are served in the stored version
// only: they edit the stored object, which a request in another version would convert as
// if it were in that version.
func isAction(t target) bool {
	return t.Name != "" && t.Subresource != "" && !t.converted() && slices.Contains(actionsOf(t.Kind), t.Subresource)
}

// actionOptions is the union of KubeVirt's StartOptions, StopOptions and RestartOptions
// (their apiVersion and kind are ignored); every field is optional, as is the body.
type actionOptions struct {
	Paused             bool     `json:"paused"`             // start: not supported
	GracePeriod        *int64   `json:"gracePeriod"`        // stop: 0 powers off hard
	GracePeriodSeconds *int64   `json:"gracePeriodSeconds"` // restart: 0 resets
	Force              bool     `json:"force"`              // virtctl --force: hard unless a grace period is given
	DryRun             []string `json:"dryRun"`
}

// hard reports whether the action must not wait for the guest: a grace period of 0, or
// force without a grace period.
func (o actionOptions) hard(grace *int64) bool {
	return (grace != nil && *grace == 0) || (o.Force && grace == nil)
}

func (s *server) action(c echo.Context, t target) error {
	if m := c.Request().Method; m != http.MethodPut && m != http.MethodPost {
		return apierrors.NewMethodNotSupported(t.gr(), m)
	}
	if err := s.authorize(userOf(c), t, "update"); err != nil {
		return err
	}
	opts, err := readActionOptions(c, t)
	if err != nil {
		return err
	}
	dry, err := dryRun(c)
	if err != nil {
		return err
	}
	if !dry {
		if dry, err = dryRunValues(opts.DryRun); err != nil {
			return err
		}
	}
	for attempt := 1; ; attempt++ {
		rec, obj, found, err := s.specs.live(c.Request().Context(), t)
		if err != nil {
			return err
		}
		if !found {
			return notFound(t.gr(), t.Name)
		}
		if metaString(obj, "deletionTimestamp") != "" {
			return apierrors.NewConflict(t.gr(), t.Name, fmt.Errorf("cannot %s a VM that is being deleted", t.Subresource))
		}
		if err := applyAction(t, opts, obj); err != nil {
			return err
		}
		// The state the action was applied to: a write in between is a conflict, retried.
		metadata(obj)["resourceVersion"] = strconv.FormatUint(rec.Seq, 10)
		err = s.replaceAs(c, t, obj, dry)
		if !apierrors.IsConflict(err) || attempt == actionAttempts {
			return err
		}
		c.Response().Header().Del("Warning") // the next attempt's admission warns again
	}
}

// applyAction changes the stored object's spec as the action asks; an action that would
// change nothing is a conflict with the VM's state, as in KubeVirt ("already running").
func applyAction(t target, opts actionOptions, obj map[string]any) error {
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		obj["spec"] = spec
	}
	desired, _ := spec["powerState"].(string)
	conflict := func(format string, args ...any) error {
		return apierrors.NewConflict(t.gr(), t.Name, fmt.Errorf(format, args...))
	}
	switch t.Subresource {
	case actionStart:
		if opts.Paused {
			return admission.Invalid(vmGroupKind, t.Name, field.ErrorList{field.NotSupported(field.NewPath("paused"), true, []string{"false"})})
		}
		if desired == string(model.PowerStateOn) {
			return conflict("VM is already desired %s", model.PowerStateOn)
		}
		spec["powerState"] = string(model.PowerStateOn)
	case actionStop:
		if err := checkGrace(t.Name, "gracePeriod", opts.GracePeriod); err != nil {
			return err
		}
		hard := opts.hard(opts.GracePeriod)
		if desired == string(model.PowerStateOff) && (!hard || spec["powerOffMode"] == string(model.PowerOpModeHard)) {
			return conflict("VM is already desired %s", model.PowerStateOff)
		}
		spec["powerState"] = string(model.PowerStateOff)
		if hard {
			spec["powerOffMode"] = string(model.PowerOpModeHard)
		}
	case actionRestart:
		if err := checkGrace(t.Name, "gracePeriodSeconds", opts.GracePeriodSeconds); err != nil {
			return err
		}
		if desired != string(model.PowerStateOn) {
			return conflict("VM is desired %s: only a VM desired %s can be restarted", desired, model.PowerStateOn)
		}
		spec["nextRestartTime"] = "now" // admission (D15) makes it the current time
		if opts.hard(opts.GracePeriodSeconds) {
			spec["restartMode"] = string(model.PowerOpModeHard)
		}
	}
	return nil
}

var vmGroupKind = schema.GroupKind{Group: model.GroupVMOperator, Kind: "VirtualMachine"}

func checkGrace(name, path string, grace *int64) error {
	if grace != nil && *grace < 0 {
		return admission.Invalid(vmGroupKind, name, field.ErrorList{field.Invalid(field.NewPath(path), *grace, "must be 0 or more seconds")})
	}
	return nil
}

// readActionOptions decodes the optional options body; malformed JSON is 400.
func readActionOptions(c echo.Context, t target) (actionOptions, error) {
	var opts actionOptions
	body, err := readBody(c)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return opts, err
	}
	if err := json.Unmarshal(body, &opts); err != nil {
		return opts, badRequest("the request body is not valid %s options: %v", t.Subresource, err)
	}
	return opts, nil
}
