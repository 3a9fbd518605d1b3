package api

import (
	"net/http"
	"runtime"
	"slices"

	"github.com/labstack/echo/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"

	"github.com/vmop/vmop/pkg/model"
)

// Verbs every kind serves; discovery advertises them so kubectl knows what it may ask.
var (
	objectVerbs = metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}
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
	for _, gv := range groupVersions() {
		if gv.Group == "" {
			continue
		}
		v := metav1.GroupVersionForDiscovery{GroupVersion: gv.Group + "/" + gv.Version, Version: gv.Version}
		list.Groups = append(list.Groups, metav1.APIGroup{Name: gv.Group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v})
	}
	return c.JSON(http.StatusOK, list)
}

// resourceList answers /api/v1 and /apis/<group>/<version>; false when we serve no such
// group-version.
func resourceList(group, ver string) (metav1.APIResourceList, bool) {
	gv := group + "/" + ver
	if group == "" {
		gv = ver
	}
	list := metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv}
	for _, k := range model.Kinds() {
		if k.Group != group || k.Version != ver {
			continue
		}
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: k.Plural, SingularName: k.Singular, Namespaced: k.Namespaced, Kind: k.Kind,
			Verbs: objectVerbs, ShortNames: k.ShortNames,
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
	return list, len(list.APIResources) > 0
}

type groupVersion struct{ Group, Version string }

// groupVersions lists the served group-versions in the order of the kind registry.
func groupVersions() []groupVersion {
	var out []groupVersion
	for _, k := range model.Kinds() {
		gv := groupVersion{k.Group, k.Version}
		if !slices.Contains(out, gv) {
			out = append(out, gv)
		}
	}
	return out
}
