package inventory

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/vmware/govmomi/ovf"
	"github.com/vmware/govmomi/vapi/library"
)

// Image labels mirrored from the status (api-rules §9.2).
const (
	imageTypeLabel       = "image.vmoperator.vmware.com/type"
	imageCapabilityLabel = "capability.image.vmoperator.vmware.com/"
	imageOSLabel         = "os.image.vmoperator.vmware.com/"
)

// imageTypes maps the content library item types that are images to image status types.
var imageTypes = map[string]string{
	library.ItemTypeOVF:  "OVF",
	library.ItemTypeISO:  "ISO",
	library.ItemTypeVMTX: "VM",
}

// imageStatus is the status of the image of item (env is its OVF descriptor, nil for other types)
// and the labels that mirror it.
func imageStatus(item library.Item, env *ovf.Envelope) (map[string]any, map[string]string) {
	status := map[string]any{
		"name":                   item.Name,
		"providerItemID":         item.ID,
		"providerContentVersion": item.ContentVersion,
		"conditions":             []any{readyCondition(item)},
	}
	typ := imageTypes[item.Type] // libraryItems keeps only items of these types
	status["type"] = typ
	labels := map[string]string{imageTypeLabel: typ}
	if env == nil {
		return status, labels
	}
	if vs := env.VirtualSystem; vs != nil {
		virtualSystemStatus(vs, status, labels)
	}
	if disks := diskStatus(env); len(disks) > 0 {
		status["disks"] = disks
	}
	return status, labels
}

// readyCondition: a synced library item is a ready image; the transition time is the item's last
// change, so reading the same inventory twice gives the same condition.
func readyCondition(item library.Item) map[string]any {
	at := time.Unix(0, 0)
	if item.LastModifiedTime != nil {
		at = *item.LastModifiedTime
	} else if item.CreationTime != nil {
		at = *item.CreationTime
	}
	return map[string]any{
		"type":               "Ready",
		"status":             "True",
		"reason":             "True",
		"message":            "",
		"lastTransitionTime": at.UTC().Truncate(time.Second).Format(time.RFC3339),
	}
}

func virtualSystemStatus(vs *ovf.VirtualSystem, status map[string]any, labels map[string]string) {
	if len(vs.Product) > 0 {
		p := vs.Product[0]
		status["productInfo"] = omitEmpty(map[string]any{
			"product": p.Product, "vendor": p.Vendor, "version": p.Version, "fullVersion": p.FullVersion,
		})
	}
	if osSection := vs.OperatingSystem; osSection != nil {
		// As VM Operator does for OVF images: id is the CIM OS ID, type the vSphere guest ID.
		info := map[string]any{"id": strconv.Itoa(int(osSection.ID))}
		if osSection.OSType != nil {
			info["type"] = *osSection.OSType
		}
		if osSection.Version != nil {
			info["version"] = *osSection.Version
		}
		info = omitEmpty(info)
		status["osInfo"] = info
		for _, k := range []string{"id", "type", "version"} {
			if v, _ := info[k].(string); isLabelValue(v) {
				labels[imageOSLabel+k] = v
			}
		}
	}
	if len(vs.VirtualHardware) > 0 {
		hw := vs.VirtualHardware[0]
		for _, c := range hw.Config {
			if c.Key == "firmware" && c.Value != "" {
				status["firmware"] = c.Value
			}
		}
		if hw.System != nil && hw.System.VirtualSystemType != nil {
			if v := hardwareVersion(*hw.System.VirtualSystemType); v > 0 {
				status["hardwareVersion"] = v
			}
		}
	}

	var caps, props, system []any
	for _, p := range vs.Product {
		for _, prop := range p.Property {
			value := ""
			if prop.Default != nil {
				value = *prop.Default
			}
			switch {
			case prop.Key == capabilitiesProperty:
				for c := range strings.SplitSeq(value, ",") {
					if c = strings.TrimSpace(c); c != "" {
						caps = append(caps, c)
						labels[imageCapabilityLabel+c] = "true"
					}
				}
			case strings.HasPrefix(prop.Key, "vmware-system"):
				system = append(system, map[string]any{"key": prop.Key, "value": value})
			case prop.UserConfigurable != nil && *prop.UserConfigurable:
				p := map[string]any{"key": prop.Key, "type": prop.Type}
				if prop.Default != nil {
					p["default"] = value
				}
				props = append(props, p)
			}
		}
	}
	setList(status, "capabilities", caps)
	setList(status, "ovfProperties", props)
	setList(status, "vmwareSystemProperties", system)
}

var vmxVersion = regexp.MustCompile(`^vmx-(\d+)`)

// hardwareVersion parses "vmx-19" (possibly followed by more types) into 19; 0 if not a vmx type.
func hardwareVersion(systemType string) int64 {
	m := vmxVersion.FindStringSubmatch(strings.TrimSpace(systemType))
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseInt(m[1], 10, 32)
	return v
}

var labelValue = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)

func isLabelValue(v string) bool {
	return v != "" && len(v) <= 63 && labelValue.MatchString(v)
}

func omitEmpty(m map[string]any) map[string]any {
	for k, v := range m {
		if v == "" {
			delete(m, k)
		}
	}
	return m
}

func setList(m map[string]any, key string, list []any) {
	if len(list) > 0 {
		m[key] = list
	}
}
