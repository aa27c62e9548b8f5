package reconcile

import "testing"

func TestReleaseName(t *testing.T) {
	for _, tc := range []struct {
		name, releaseName, targetNamespace, want string
	}{
		{name: "podinfo", want: "podinfo"},
		{name: "podinfo", targetNamespace: "apps", want: "apps-podinfo"},
		{name: "podinfo", releaseName: "custom", targetNamespace: "apps", want: "custom"},
		// The example of the HelmRelease v2 documentation has the same hash, but
		// keeps 42 characters (55 in all, over Helm's limit) where its rule and
		// helm-controller keep 40.
		{name: "with-a-nice-object-name", targetNamespace: "a-very-lengthy-target-namespace", want: "a-very-lengthy-target-namespace-with-a-n-97af5d7f41f3"},
		{name: "x", targetNamespace: "exactly-fifty-one-characters-long-namespace-abcdefg", want: "exactly-fifty-one-characters-long-namespace-abcdefg-x"},
	} {
		got := ReleaseName(tc.releaseName, tc.targetNamespace, tc.name)
		if got != tc.want {
			t.Errorf("ReleaseName(%q, %q, %q) = %q, want %q", tc.releaseName, tc.targetNamespace, tc.name, got, tc.want)
		}
		if len(got) > MaxReleaseNameLength {
			t.Errorf("ReleaseName(%q, %q, %q) = %q is longer than %d", tc.releaseName, tc.targetNamespace, tc.name, got, MaxReleaseNameLength)
		}
	}
}
