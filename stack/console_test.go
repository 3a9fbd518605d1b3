package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/vmop/vmop/pkg/events/eventstest"
	"github.com/vmop/vmop/pkg/vcenter"
)

// chromium finds the browser; the test fails without it (.ci/run installs Debian's).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("the console's browser test needs Chromium: apt-get install -y chromium")
	return ""
}

// screenshotDir is where the test leaves its screenshots: VMOP_SCREENSHOTS, else
// $TMPDIR/vmop-console.
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("VMOP_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "vmop-console")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// recordStatuses makes the list page remember every Status it shows for the VM, and marks
// the page so that a reload (which would lose the mark) is noticed.
const recordStatuses = `(() => {
  window.__seen = []; window.__notReloaded = true;
  const body = document.querySelector('#vm-list tbody');
  new MutationObserver(() => {
    const cell = document.querySelector('#vm-list tr[data-name="my-vm"][data-namespace="my-namespace"] td.status');
    const v = cell && cell.textContent;
    if (v && window.__seen[window.__seen.length - 1] !== v) window.__seen.push(v);
  }).observe(body, { childList: true, subtree: true, characterData: true });
  return true;
})()`

// TestConsoleInBrowser walks issue #12's browser acceptance in headless Chromium against
// make run's stack: sign in with the admin token, create vm-example from the form (in a
// second tab signed in with the kubeconfig), watch it go Creating → Running in the list
// without a reload, open it (conditions, Events), stop it (vcsim's VM off, the power-off in
// its Events), remove a power-on check, see the field error of an invalid edit at its line,
// delete it; then a pasted v1alpha4 dry run, the image inventory and the Events feed.
func TestConsoleInBrowser(t *testing.T) {
	browser := chromium(t)
	vcsimAddr := eventstest.FreeAddr(t)
	s := startStackWith(t, map[string]string{"VMOP_VCSIM_ADDR": vcsimAddr})
	base := s.kubectl("config", "view", "--minify", "--context", "admin", "-o", "jsonpath={.clusters[0].cluster.server}")
	token := s.kubectl("config", "view", "--raw", "--minify", "--context", "admin", "-o", "jsonpath={.users[0].user.token}")
	shots := screenshotDir(t)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.WindowSize(1366, 900),
		chromedp.Flag("ignore-certificate-errors", true), // the stack's own CA, as kubectl trusts it
	)...)
	defer cancelAlloc()
	list, cancelList := chromedp.NewContext(alloc)
	defer cancelList()
	form, cancelForm := chromedp.NewContext(list) // a second tab of the same browser
	defer cancelForm()
	for name, tab := range map[string]context.Context{"list": list, "form": form} {
		if err := chromedp.Listen(tab, func(ev any) {
			switch ev := ev.(type) {
			case *runtime.EventExceptionThrown:
				t.Errorf("%s tab: uncaught exception: %s %s", name, ev.ExceptionDetails.Text, exceptionText(ev.ExceptionDetails))
			case *runtime.EventConsoleAPICalled:
				if ev.Type == runtime.ConsoleAPICalledTypeError {
					t.Logf("%s tab console: %s", name, consoleText(ev))
				}
			}
		}); err != nil {
			t.Fatalf("start Chromium: %v", err)
		}
	}
	began := time.Now()
	run := func(tab context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		defer func() { t.Logf("%5.1fs %s", time.Since(began).Seconds(), what) }()
		if err := chromedp.Do(tab, actions...); err != nil {
			buf, _ := chromedp.Run(tab, chromedp.FullScreenshot(100))
			_ = os.WriteFile(filepath.Join(shots, "failed.png"), buf, 0o644)
			t.Fatalf("%s: %v (screenshot %s)", what, err, filepath.Join(shots, "failed.png"))
		}
	}
	// until polls a page expression with the test's deadline.
	until := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(60*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))
	}
	// click finds and clicks an element in one turn of the page: the console re-renders as its
	// watches deliver, so a node found first and clicked later may be gone by then.
	click := func(selector string) chromedp.Action[chromedp.Void] {
		return until(fmt.Sprintf(`(() => { const e = document.querySelector(%q);
			if (!e || e.disabled || e.getClientRects().length === 0) return false;
			e.click(); return true; })()`, selector))
	}
	signIn := func(tab context.Context, token string) {
		run(tab, "sign in with a token",
			chromedp.Navigate(base+"/"),
			chromedp.WaitVisible(chromedp.CSS("#token")),
			chromedp.SendKeys(chromedp.CSS("#token"), token),
			click(`.signin button[type="submit"]`),
			chromedp.WaitVisible(chromedp.CSS(`#nav a[href="#/vms"]`)),
			chromedp.WaitVisible(chromedp.CSS("#vm-list")))
	}

	signIn(list, token)
	run(list, "follow the list", chromedp.Evaluate[chromedp.Void](recordStatuses))

	run(form, "sign in with the kubeconfig, dropped in as a file",
		chromedp.Navigate(base+"/"),
		chromedp.WaitReady(chromedp.CSS("#kubeconfig")),
		chromedp.SetUploadFiles(chromedp.CSS("#kubeconfig"), []string{s.kubeconfig}),
		chromedp.WaitVisible(chromedp.CSS(`#nav a[href="#/create"]`)))
	image := "VirtualMachineImage/vmi-0a0044d7c690bcbea"
	run(form, "create vm-example from the form",
		click(`#nav a[href="#/create"]`),
		chromedp.SetValue(chromedp.CSS("#c-namespace"), "my-namespace"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#c-namespace").dispatchEvent(new Event("change"))`),
		chromedp.WaitReady(chromedp.CSS(fmt.Sprintf(`#c-image option[value=%q]`, image))),
		chromedp.WaitReady(chromedp.CSS(`#c-class option[value="my-vm-class"]`)),
		chromedp.WaitReady(chromedp.CSS(`#c-storage option[value="my-storage-class"]`)),
		chromedp.SendKeys(chromedp.CSS("#c-name"), "my-vm"),
		chromedp.SetValue(chromedp.CSS("#c-class"), "my-vm-class"),
		chromedp.SetValue(chromedp.CSS("#c-image"), image),
		chromedp.SetValue(chromedp.CSS("#c-storage"), "my-storage-class"))
	screenshot(t, form, filepath.Join(shots, "create.png"))
	run(form, "send the form",
		click("#create-submit"),
		until(`location.hash === "#/vm/my-namespace/my-vm" && document.querySelector("#vm-status") !== null`))
	if got := s.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o", "jsonpath={.metadata.managedFields[0].manager}"); got != "vmop-console" {
		t.Errorf("the form's create is recorded under field manager %q, want vmop-console", got)
	}
	if got := s.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o", "jsonpath={.spec.className} {.spec.imageName} {.spec.storageClass} {.spec.bootstrap.cloudInit.cloudConfig}"); got != `my-vm-class vmi-0a0044d7c690bcbea my-storage-class {}` {
		t.Errorf("the form created %q", got)
	}

	run(list, "the list shows the VM Running, live", until(`window.__seen.includes("Running")`))
	seen := evaluate[[]string](t, list, `window.__seen`)
	notReloaded := evaluate[bool](t, list, `window.__notReloaded === true`)
	if i := slices.Index(seen, "Creating"); i < 0 || i > slices.Index(seen, "Running") || !notReloaded {
		t.Errorf("the list showed %v (reloaded: %v), want Creating then Running without a reload", seen, !notReloaded)
	}
	screenshot(t, list, filepath.Join(shots, "list.png"))

	// An ordinary user's "all namespaces" is theirs: one watch per namespace they may enter,
	// the others skipped without an error.
	user, cancelUser := chromedp.NewContext(list)
	defer cancelUser()
	signIn(user, s.kubectl("config", "view", "--raw", "--minify", "--context", "user", "-o", "jsonpath={.users[0].user.token}"))
	run(user, "the user's list", until(`document.querySelector('#vm-list tr[data-name="my-vm"] td.status') !== null`))
	if problems := evaluate[string](t, user, `document.querySelector("#list-state").textContent`); problems != "" {
		t.Errorf("the user's list shows %q", problems)
	}
	cancelUser()

	run(list, "open the VM: its conditions and Events",
		click(`#vm-list a[href="#/vm/my-namespace/my-vm"]`),
		until(`document.querySelector("#vm-status")?.textContent === "Running"`),
		until(`document.querySelector("#conditions")?.textContent.includes("VirtualMachineCreated")`),
		until(`document.querySelectorAll("#event-list li.event").length > 0`))
	screenshot(t, list, filepath.Join(shots, "vm.png"))

	vc, err := vcenter.Connect(ctx, vcsimEndpoint(t, s, vcsimAddr))
	if err != nil {
		t.Fatal(err)
	}
	vm, err := vcenter.FindVM(ctx, vc, s.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o", "jsonpath={.spec.instanceUUID}"))
	if err != nil {
		t.Fatal(err)
	}
	run(list, "stop it", click(`button[data-action="stop"]`),
		until(`document.querySelector("#action-result")?.textContent.includes("Stop: accepted")`))
	s.eventually("vcsim's VM off", func() bool {
		state, err := vm.PowerState(ctx)
		return err == nil && state == types.VirtualMachinePowerStatePoweredOff
	})
	run(list, "the page shows it stopped, and its power-off among its Events",
		until(`document.querySelector("#vm-status")?.textContent === "Stopped"`),
		until(`document.querySelector('#event-list li[data-reason="PoweredOff"]') !== null`))

	s.kubectl("annotate", "vm", "my-vm", "-n", "my-namespace", "poweron.check.vmoperator.vmware.com/ad=joining the domain")
	run(list, "an administrator removes a pending power-on check",
		until(`document.querySelector(".checks")?.textContent.includes("joining the domain")`),
		click(".checks button"),
		until(`document.querySelector(".checks") === null`))
	if got := s.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o", "jsonpath={.metadata.annotations}"); strings.Contains(got, "poweron.check") {
		t.Errorf("the check is still there: %s", got)
	}

	run(list, "an invalid edit is refused, its field error at its line",
		until(`document.querySelector("#yaml").value.includes("powerState: PoweredOff")`),
		chromedp.Evaluate[chromedp.Void](`(() => { const y = document.querySelector("#yaml");
			y.value = y.value.replace("powerState: PoweredOff", "powerState: Sideways");
			y.dispatchEvent(new Event("input")); return true; })()`),
		click("#yaml-save"),
		until(`document.querySelector("#yaml-errors .field-errors") !== null`))
	errorsText := evaluate[string](t, list, `document.querySelector("#yaml-errors").textContent`)
	marked := evaluate[string](t, list, `(() => { const i = [...document.querySelectorAll(".gutter span")].findIndex(s => s.classList.contains("bad"));
		return i < 0 ? "" : document.querySelector("#yaml").value.split("\n")[i]; })()`)
	if !strings.Contains(errorsText, "spec.powerState") || !strings.Contains(errorsText, "Sideways") || strings.TrimSpace(marked) != "powerState: Sideways" {
		t.Errorf("field error %q, marked line %q; want spec.powerState at powerState: Sideways", errorsText, marked)
	}
	if got := s.kubectl("get", "vm", "my-vm", "-n", "my-namespace", "-o", "jsonpath={.spec.powerState}"); got != "PoweredOff" {
		t.Errorf("the refused edit changed powerState to %q", got)
	}
	screenshot(t, list, filepath.Join(shots, "vm-field-error.png"))

	run(list, "delete it",
		click(`button[data-action="delete"]`),
		click(`button[data-action="confirm delete"]`),
		until(`document.querySelector("main")?.textContent.includes("my-vm is deleted.")`))
	if out, err := s.kubectlErr("get", "vm", "my-vm", "-n", "my-namespace"); err == nil || !strings.Contains(out, "NotFound") {
		t.Errorf("after the console's delete: %v %s", err, out)
	}

	run(list, "pasted YAML (VM Operator's vm-example, v1alpha4) passes the server's dry run",
		click(`#nav a[href="#/create"]`),
		chromedp.SetValue(chromedp.CSS("#c-namespace"), "my-namespace"),
		click(`button[data-tab="yaml"]`),
		chromedp.SetValue(chromedp.CSS("#c-yaml"), vmExample),
		click(`#create-yaml button[type="button"]`),
		until(`document.querySelector("#create-result")?.textContent.includes("The server accepts it")`))
	if out, err := s.kubectlErr("get", "vm", "my-vm", "-n", "my-namespace"); err == nil || !strings.Contains(out, "NotFound") {
		t.Errorf("the dry run created the VM: %v %s", err, out)
	}
	run(list, "the inventory lists the images, OVF and ISO",
		click(`#nav a[href="#/inventory"]`),
		click(`a[href="#/inventory/images"]`),
		until(`document.querySelector('table[data-kind="virtualmachineimages"]')?.textContent.includes("vmi-0a0044d7c690bcbea")`),
		until(`[...document.querySelectorAll("main table td")].some(td => td.textContent === "ISO")`))
	screenshot(t, list, filepath.Join(shots, "inventory.png"))
	run(list, "the live feed of Events, filtered",
		click(`#nav a[href="#/events"]`),
		until(`document.querySelector('#feed li[data-reason="PoweredOff"]') !== null`),
		chromedp.SendKeys(chromedp.CSS("#feed-text"), "PoweredOff"),
		until(`[...document.querySelectorAll("#feed li.event")].every(li => li.textContent.includes("PoweredOff"))`))
	screenshot(t, list, filepath.Join(shots, "events.png"))
	t.Logf("screenshots in %s", shots)
}

// vcsimEndpoint is the stack's embedded vcsim, reached as its services reach it.
func vcsimEndpoint(t *testing.T, s *stack, addr string) vcenter.Endpoint {
	c, err := loadConfig(func(k string) string {
		return map[string]string{
			"VMOP_DATA": s.data, "VMOP_VCENTER_URL": "https://" + addr + "/sdk",
			"VMOP_VCENTER_CA_FILE": filepath.Join(s.data, "vcsim", "tls.crt"), "VMOP_VCENTER_PASSWORD": "vmop-secret",
		}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := vcenterEndpoint(c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// evaluate returns the value of a page expression.
func evaluate[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(tab, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

func screenshot(t *testing.T, tab context.Context, file string) {
	t.Helper()
	// From the top: sticky table headings of a scrolled page land mid-table in a full-page capture.
	if err := chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`)); err != nil {
		t.Fatal(err)
	}
	buf, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", file, err)
	}
	if err := os.WriteFile(file, buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

func consoleText(ev *runtime.EventConsoleAPICalled) string {
	var parts []string
	for _, a := range ev.Args {
		if a.Description != "" {
			parts = append(parts, a.Description)
		} else {
			parts = append(parts, string(a.Value))
		}
	}
	return strings.Join(parts, " ")
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil {
		return d.Exception.Description
	}
	return fmt.Sprintf("%s:%d", d.URL, d.LineNumber)
}
