package manifest

import (
	"slices"
	"strings"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/redact"
)

// Mask hides secrets in objects as shown, as the helm
// provider hides its sensitive values in the manifest: every occurrence,
// in each form a template or an error writes it (escaped, base64, a line
// of several), becomes Hash of the secret under key, so that a
// change shows while no guess can be checked. nil when there is nothing
// to hide; secrets shorter than redact.MinLength are left, as in messages.
func Mask(key []byte, secrets []string) func(string) string {
	byForm := map[string]string{}
	for _, s := range secrets {
		shown := Hash(key, []byte(s))
		for _, form := range redact.Forms(s) { // none under redact.MinLength
			byForm[form] = shown
		}
	}
	if len(byForm) == 0 {
		return nil
	}
	forms := make([]string, 0, len(byForm))
	for f := range byForm {
		forms = append(forms, f)
	}
	// Longest first: a secret may hold another.
	slices.SortFunc(forms, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, byForm[f])
	}
	return strings.NewReplacer(pairs...).Replace
}
