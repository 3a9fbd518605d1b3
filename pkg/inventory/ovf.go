package inventory

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"text/template"
)

// ovfSpec describes one single-VM OVF package.
type ovfSpec struct {
	Product, Vendor, Version, FullVersion string
	OSID                                  int    // CIM operating system ID (OperatingSystemSection ovf:id)
	OSType                                string // vSphere guest ID
	OSVersion                             string
	Firmware                              string // "efi" or "bios"
	HardwareVersion                       int
	CPUs, MemoryMiB                       int
	Capabilities                          []string // VM Operator image capabilities
	Disks                                 []ovfDisk
	Properties                            []ovfProperty
}

type ovfDisk struct {
	CapacityGiB  int
	PopulatedMiB int
}

type ovfProperty struct {
	Key, Type, Value string
	UserConfigurable bool
	Label            string
}

// capabilitiesProperty is the OVF property VM Operator reads image capabilities from
// (comma-separated).
const capabilitiesProperty = "capabilities.image.vmoperator.vmware.com"

// itemFile is a file of a library item: an OVF descriptor, a disk or an ISO.
type itemFile struct {
	Name string
	Data []byte
}

// diskFiles generates the disk payloads: empty stream-optimized VMDKs of the declared capacity.
func (s ovfSpec) diskFiles(item string) []itemFile {
	files := make([]itemFile, len(s.Disks))
	for i, d := range s.Disks {
		name := fmt.Sprintf("%s-disk%d.vmdk", item, i+1)
		files[i] = itemFile{Name: name, Data: streamOptimizedVMDK(name, int64(d.CapacityGiB)<<30, s.HardwareVersion)}
	}
	return files
}

// descriptor renders the OVF envelope referencing the given disk files (one per disk, in order).
func (s ovfSpec) descriptor(item string, disks []itemFile) (string, error) {
	if len(disks) != len(s.Disks) {
		return "", fmt.Errorf("ovf %s: %d disk files for %d disks", item, len(disks), len(s.Disks))
	}
	props := s.Properties
	if len(s.Capabilities) > 0 {
		props = append([]ovfProperty{{Key: capabilitiesProperty, Type: "string", Value: strings.Join(s.Capabilities, ",")}}, props...)
	}
	var b bytes.Buffer
	err := ovfTemplate.Execute(&b, map[string]any{"Name": item, "Spec": s, "Files": disks, "Properties": props})
	if err != nil {
		return "", fmt.Errorf("render ovf %s: %w", item, err)
	}
	return b.String(), nil
}

var ovfTemplate = template.Must(template.New("ovf").Funcs(template.FuncMap{
	"x": func(s any) (string, error) {
		var b strings.Builder
		err := xml.EscapeText(&b, []byte(fmt.Sprint(s)))
		return b.String(), err
	},
	"add": func(a, b int) int { return a + b },
	"mib": func(n int) int64 { return int64(n) << 20 },
}).Parse(`<?xml version="1.0" encoding="UTF-8"?>
<Envelope xmlns="http://schemas.dmtf.org/ovf/envelope/1" xmlns:ovf="http://schemas.dmtf.org/ovf/envelope/1" xmlns:rasd="http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_ResourceAllocationSettingData" xmlns:vssd="http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_VirtualSystemSettingData" xmlns:vmw="http://www.vmware.com/schema/ovf" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <References>
{{- range $i, $f := .Files}}
    <File ovf:id="file{{add $i 1}}" ovf:href="{{x $f.Name}}" ovf:size="{{len $f.Data}}"/>
{{- end}}
  </References>
  <DiskSection>
    <Info>Virtual disk information</Info>
{{- range $i, $d := .Spec.Disks}}
    <Disk ovf:diskId="vmdisk{{add $i 1}}" ovf:fileRef="file{{add $i 1}}" ovf:capacity="{{$d.CapacityGiB}}" ovf:capacityAllocationUnits="byte * 2^30" ovf:populatedSize="{{mib $d.PopulatedMiB}}" ovf:format="http://www.vmware.com/interfaces/specifications/vmdk.html#streamOptimized"/>
{{- end}}
  </DiskSection>
  <NetworkSection>
    <Info>The list of logical networks</Info>
    <Network ovf:name="VM Network">
      <Description>The primary network</Description>
    </Network>
  </NetworkSection>
  <VirtualSystem ovf:id="{{x .Name}}">
    <Info>A virtual machine</Info>
    <Name>{{x .Name}}</Name>
    <OperatingSystemSection ovf:id="{{.Spec.OSID}}"{{if .Spec.OSVersion}} ovf:version="{{x .Spec.OSVersion}}"{{end}} vmw:osType="{{x .Spec.OSType}}">
      <Info>The kind of installed guest operating system</Info>
    </OperatingSystemSection>
    <VirtualHardwareSection>
      <Info>Virtual hardware requirements</Info>
      <System>
        <vssd:ElementName>Virtual Hardware Family</vssd:ElementName>
        <vssd:InstanceID>0</vssd:InstanceID>
        <vssd:VirtualSystemIdentifier>{{x .Name}}</vssd:VirtualSystemIdentifier>
        <vssd:VirtualSystemType>vmx-{{.Spec.HardwareVersion}}</vssd:VirtualSystemType>
      </System>
      <Item>
        <rasd:AllocationUnits>hertz * 10^6</rasd:AllocationUnits>
        <rasd:Description>Number of Virtual CPUs</rasd:Description>
        <rasd:ElementName>{{.Spec.CPUs}} virtual CPU(s)</rasd:ElementName>
        <rasd:InstanceID>1</rasd:InstanceID>
        <rasd:ResourceType>3</rasd:ResourceType>
        <rasd:VirtualQuantity>{{.Spec.CPUs}}</rasd:VirtualQuantity>
      </Item>
      <Item>
        <rasd:AllocationUnits>byte * 2^20</rasd:AllocationUnits>
        <rasd:Description>Memory Size</rasd:Description>
        <rasd:ElementName>{{.Spec.MemoryMiB}}MB of memory</rasd:ElementName>
        <rasd:InstanceID>2</rasd:InstanceID>
        <rasd:ResourceType>4</rasd:ResourceType>
        <rasd:VirtualQuantity>{{.Spec.MemoryMiB}}</rasd:VirtualQuantity>
      </Item>
      <Item>
        <rasd:Address>0</rasd:Address>
        <rasd:Description>SCSI Controller</rasd:Description>
        <rasd:ElementName>SCSI Controller 0</rasd:ElementName>
        <rasd:InstanceID>3</rasd:InstanceID>
        <rasd:ResourceSubType>VirtualSCSI</rasd:ResourceSubType>
        <rasd:ResourceType>6</rasd:ResourceType>
      </Item>
{{- range $i, $d := .Spec.Disks}}
      <Item>
        <rasd:AddressOnParent>{{$i}}</rasd:AddressOnParent>
        <rasd:ElementName>Hard Disk {{add $i 1}}</rasd:ElementName>
        <rasd:HostResource>ovf:/disk/vmdisk{{add $i 1}}</rasd:HostResource>
        <rasd:InstanceID>{{add $i 10}}</rasd:InstanceID>
        <rasd:Parent>3</rasd:Parent>
        <rasd:ResourceType>17</rasd:ResourceType>
      </Item>
{{- end}}
      <Item>
        <rasd:AddressOnParent>7</rasd:AddressOnParent>
        <rasd:AutomaticAllocation>true</rasd:AutomaticAllocation>
        <rasd:Connection>VM Network</rasd:Connection>
        <rasd:Description>VmxNet3 ethernet adapter on "VM Network"</rasd:Description>
        <rasd:ElementName>Network adapter 1</rasd:ElementName>
        <rasd:InstanceID>5</rasd:InstanceID>
        <rasd:ResourceSubType>VmxNet3</rasd:ResourceSubType>
        <rasd:ResourceType>10</rasd:ResourceType>
      </Item>
      <vmw:Config ovf:required="false" vmw:key="firmware" vmw:value="{{x .Spec.Firmware}}"/>
    </VirtualHardwareSection>
    <ProductSection>
      <Info>Information about the installed software</Info>
      <Product>{{x .Spec.Product}}</Product>
      <Vendor>{{x .Spec.Vendor}}</Vendor>
      <Version>{{x .Spec.Version}}</Version>
      <FullVersion>{{x .Spec.FullVersion}}</FullVersion>
{{- range .Properties}}
      <Property ovf:key="{{x .Key}}" ovf:type="{{x .Type}}" ovf:userConfigurable="{{.UserConfigurable}}" ovf:value="{{x .Value}}">
{{- if .Label}}
        <Label>{{x .Label}}</Label>
{{- end}}
      </Property>
{{- end}}
    </ProductSection>
  </VirtualSystem>
</Envelope>
`))
