// Command vcvms prints the name of every virtual machine in a vCenter, one a line: what
// deploy/compose/smoke.sh counts, through vcsim's published port, to find each VM it
// created exactly once.
//
//	go run ./stack/vcvms -url https://127.0.0.1:8989/sdk -ca tls.crt
//
// The password is read from VCVMS_PASSWORD (default vmop-secret, the compose vcsim's).
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"

	"github.com/vmop/vmop/pkg/vcenter"
)

func main() {
	sdk := flag.String("url", "https://127.0.0.1:8989/sdk", "vCenter's SDK URL")
	user := flag.String("user", "admin", "vCenter's user")
	ca := flag.String("ca", "", "PEM file of the CA (or the certificate) vCenter presents")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	names, err := vmNames(ctx, *sdk, *user, cmp.Or(os.Getenv("VCVMS_PASSWORD"), "vmop-secret"), *ca)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vcvms:", err)
		os.Exit(1)
	}
	for _, n := range names {
		fmt.Println(n)
	}
}

func vmNames(ctx context.Context, sdk, user, password, ca string) ([]string, error) {
	u, err := url.Parse(sdk)
	if err != nil {
		return nil, fmt.Errorf("-url: %w", err)
	}
	u.User = url.UserPassword(user, password)
	c, err := vcenter.Connect(ctx, vcenter.Endpoint{URL: u, CAFile: ca, Client: "vcvms"})
	if err != nil {
		return nil, err
	}
	defer vcenter.Logout(context.Background(), c)
	v, err := view.NewManager(c.Client).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		return nil, fmt.Errorf("container view: %w", err)
	}
	defer v.Destroy(context.Background())
	var vms []mo.VirtualMachine
	if err := v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name"}, &vms); err != nil {
		return nil, fmt.Errorf("list VMs: %w", err)
	}
	names := make([]string, len(vms))
	for i, vm := range vms {
		names[i] = vm.Name
	}
	return names, nil
}
