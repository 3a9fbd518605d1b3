package inventory

import (
	"maps"
	"strconv"
)

// classObjects are the VirtualMachineClasses of a namespace: SeedClassName exactly as the seed
// document's CPU-and-memory example defines it, and the usual best-effort/guaranteed sizes, whose
// ConfigSpec (raw vSphere JSON with _typeName discriminators) carries CPU, memory and a vmxnet3 NIC.
func classObjects(namespace string) []map[string]any {
	out := []map[string]any{seedClass(namespace)}
	for _, s := range classSizes {
		out = append(out, sizedClass(namespace, s))
	}
	return out
}

// seedClass: 2 CPUs and 4 GiB (from hardware: its ConfigSpec sets no numCPUs/memoryMB), with a
// 200 MHz / 1024 MB reservation and a 400 MHz / 2048 MB limit.
func seedClass(namespace string) map[string]any {
	o := newObject(vmopV1alpha5, "VirtualMachineClass", namespace, SeedClassName, nil)
	o["spec"] = map[string]any{
		"configSpec": map[string]any{
			"_typeName":        "VirtualMachineConfigSpec",
			"cpuAllocation":    resourceAllocation(200, 400),
			"memoryAllocation": resourceAllocation(1024, 2048),
		},
		"hardware": map[string]any{"cpus": int64(2), "memory": "4Gi"},
	}
	return o
}

// classSize is a named size; guaranteed sizes reserve all of their CPU and memory.
type classSize struct {
	name       string
	cpus       int64
	memoryMiB  int64
	guaranteed bool
}

var classSizes = []classSize{
	{name: "best-effort-small", cpus: 2, memoryMiB: 4096},
	{name: "best-effort-medium", cpus: 2, memoryMiB: 8192},
	{name: "best-effort-large", cpus: 4, memoryMiB: 16384},
	{name: "guaranteed-small", cpus: 2, memoryMiB: 4096, guaranteed: true},
	{name: "guaranteed-medium", cpus: 2, memoryMiB: 8192, guaranteed: true},
	{name: "guaranteed-large", cpus: 4, memoryMiB: 16384, guaranteed: true},
}

// mhzPerCPU is what a guaranteed class reserves per vCPU.
const mhzPerCPU = 1000

func sizedClass(namespace string, s classSize) map[string]any {
	memory := quantity(s.memoryMiB << 20)
	configSpec := map[string]any{
		"_typeName": "VirtualMachineConfigSpec",
		"numCPUs":   s.cpus,
		"memoryMB":  s.memoryMiB,
		"deviceChange": []any{map[string]any{
			"_typeName": "VirtualDeviceConfigSpec",
			"operation": "add",
			"device":    map[string]any{"_typeName": "VirtualVmxnet3", "key": int64(-100)},
		}},
	}
	spec := map[string]any{
		"hardware":   map[string]any{"cpus": s.cpus, "memory": memory},
		"configSpec": configSpec,
	}
	description := "Best-effort: no CPU or memory reservation"
	if s.guaranteed {
		description = "Guaranteed: all CPU and memory reserved"
		configSpec["cpuAllocation"] = map[string]any{"_typeName": "ResourceAllocationInfo", "reservation": s.cpus * mhzPerCPU}
		configSpec["memoryAllocation"] = map[string]any{"_typeName": "ResourceAllocationInfo", "reservation": s.memoryMiB}
		both := map[string]any{"cpu": strconv.FormatInt(s.cpus, 10), "memory": memory}
		spec["policies"] = map[string]any{"resources": map[string]any{"requests": both, "limits": maps.Clone(both)}}
	}
	spec["description"] = description
	o := newObject(vmopV1alpha5, "VirtualMachineClass", namespace, s.name, nil)
	o["spec"] = spec
	return o
}

func resourceAllocation(reservation, limit int64) map[string]any {
	return map[string]any{"_typeName": "ResourceAllocationInfo", "limit": limit, "reservation": reservation}
}
