package api

import (
	"net/http"
	"runtime"
	"slices"

	"github.com/labstack/echo/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
)

// Verbs every kind serves; discovery advertises them so kubectl knows what it may ask.
var (
	objectVerbs = metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}
	readVerbs   = metav1.Verbs{"get", "list", "watch"}
	statusVerbs = metav1.Verbs{"get", "patch", "update"}
)

func (s *server) version(c echo.Context) error {
	return c.JSON(http.StatusOK, version.Info{
		Major: "1", Minor: "32", GitVersion: "v1.32.0-vmop",
		GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH,
	})
}

// coreVersions answers /api: the legacy core group has only v1.
func (s *server) coreVersions(c echo.Context) error {
	return c.JSON(http.StatusOK, metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: []string{"v1"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: c.Request().Host},
		},
	})
}

// groups answers /apis with every named group we serve.
func (s *server) groups(c echo.Context) error {
	list := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	list.Groups = apiGroups()
	return c.JSON(http.StatusOK, list)
}

// group answers /apis/<group>.
func (s *server) group(c echo.Context, name string) error {
	for _, g := range apiGroups() {
		if g.Name == name {
			g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
			return c.JSON(http.StatusOK, g)
		}
	}
	return notFoundPath()
}

// apiGroups lists the named groups with their versions; the first version served (the
// storage version) is the preferred one.
func apiGroups() []metav1.APIGroup {
	var out []metav1.APIGroup
	for _, gv := range groupVersions() {
		if gv.Group == "" {
			continue
		}
		v := metav1.GroupVersionForDiscovery{GroupVersion: gv.Group + "/" + gv.Version, Version: gv.Version}
		if n := len(out); n > 0 && out[n-1].Name == gv.Group {
			out[n-1].Versions = append(out[n-1].Versions, v)
			continue
		}
		out = append(out, metav1.APIGroup{Name: gv.Group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v})
	}
	return append(out, selfReviewGroups()...)
}

// resourceList answers /api/v1 and /apis/<group>/<version>; false when we serve no such
// group-version.
func resourceList(group, ver string) (metav1.APIResourceList, bool) {
	gv := group + "/" + ver
	if group == "" {
		gv = ver
	}
	list := metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv}
	for _, k := range servedKinds() {
		if k.Group != group || k.Version != ver {
			continue
		}
		verbs := objectVerbs
		if k.ReadOnly {
			verbs = readVerbs
		}
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: k.Plural, SingularName: k.Singular, Namespaced: k.Namespaced, Kind: k.Kind,
			Verbs: verbs, ShortNames: k.ShortNames,
		})
		if k.HasStatus {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name: k.Plural + "/status", Namespaced: k.Namespaced, Kind: k.Kind, Verbs: statusVerbs,
			})
		}
		for _, a := range actionsOf(k) {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name: k.Plural + "/" + a, Namespaced: k.Namespaced, Kind: k.Kind, Verbs: actionVerbs,
			})
		}
	}
	list.APIResources = append(list.APIResources, selfReviewResources(group, ver)...)
	return list, len(list.APIResources) > 0
}

type groupVersion struct{ Group, Version string }

// groupVersions lists the served group-versions, grouped by group in the order of the
// kind registry, the storage version of each group first.
func groupVersions() []groupVersion {
	var out []groupVersion
	for _, k := range servedKinds() {
		gv := groupVersion{k.Group, k.Version}
		if slices.Contains(out, gv) {
			continue
		}
		at := len(out)
		for i := len(out) - 1; i >= 0; i-- {
			if out[i].Group == gv.Group {
				at = i + 1
				break
			}
		}
		out = slices.Insert(out, at, gv)
	}
	return out
}
