package helm

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"text/template/parse"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// Template functions whose result differs from one call to the next, and
// the command Perturb appends to each call so that a second render differs
// wherever one of them reaches the output, whatever its precision (a date
// formatted by the day, a random integer of two values), even when the
// second draw of a random function equals the first: strings get a
// character no random function draws (⁂). Functions returning a
// struct (genCA and its kin) are left as they are: their keys and serial
// numbers are random already. lookup is not among them: it reads the
// cluster, which a plan sees as the apply will.
var perturbations = map[string]string{ //nolint:gosec // template function names, not credentials
	// 400 days, 1 hour, 1 minute and 1 second later: every field of a
	// date differs (year or month, day, weekday, hour, minute, second).
	"now": `dateModify "+9601h1m1s"`,
	// Two draws never coincide: ranges up to 10⁹ do not overlap, wider
	// ones coincide with a probability under 10⁻⁹.
	"randInt":                  `add 1000000007`,
	"ago":                      `printf "%v\u2042"`,
	"randAlphaNum":             `printf "%v\u2042"`,
	"randAlpha":                `printf "%v\u2042"`,
	"randNumeric":              `printf "%v\u2042"`,
	"randAscii":                `printf "%v\u2042"`,
	"randBytes":                `printf "%v\u2042"`,
	"uuidv4":                   `printf "%v\u2042"`,
	"shuffle":                  `printf "%v\u2042"`,
	"htpasswd":                 `printf "%v\u2042"`,
	"bcrypt":                   `printf "%v\u2042"`,
	"encryptAES":               `printf "%v\u2042"`,
	"genPrivateKey":            `printf "%v\u2042"`,
	"genCA":                    "",
	"genCAWithKey":             "",
	"genSelfSignedCert":        "",
	"genSelfSignedCertWithKey": "",
	"genSignedCert":            "",
	"genSignedCertWithKey":     "",
}

var nondeterministicCall = func() *regexp.Regexp {
	names := make([]string, 0, len(perturbations))
	for name := range perturbations {
		names = append(names, regexp.QuoteMeta(name))
	}
	return regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)
}()

// Perturb returns a copy of the chart and values whose templates (files
// and values strings too, for `tpl`) call the non-reproducible functions
// with their results perturbed, so that rendering both and comparing tells
// which objects a render cannot reproduce. ok is false when nothing in the
// chart or values names such a function: every render is then alike (but
// for lookup).
func Perturb(c *Chart, values map[string]any) (pc *Chart, pv map[string]any, ok bool) {
	pc, changed := perturbChart(c)
	perturbed, valuesChanged := perturbValue(values)
	if !changed && !valuesChanged {
		return c, values, false
	}
	pv, _ = perturbed.(map[string]any)
	return pc, pv, true
}

func perturbChart(c *chart.Chart) (*chart.Chart, bool) {
	out := *c
	changed := false
	files := func(in []*common.File) []*common.File {
		result := make([]*common.File, len(in))
		for i, f := range in {
			result[i] = f
			text, perturbed, err := perturbTemplate(f.Name, string(f.Data))
			switch {
			case perturbed:
				result[i] = &common.File{Name: f.Name, Data: []byte(text)}
				changed = true
			case err != nil && strings.HasPrefix(f.Name, "templates/"):
				// A template naming such a function that Go's parser
				// refuses here: a second render may still tell.
				changed = true
			}
		}
		return result
	}
	out.Templates = files(c.Templates)
	out.Files = files(c.Files)
	if v, valuesChanged := perturbValue(c.Values); valuesChanged {
		out.Values, changed = v.(map[string]any), true
	}
	deps := make([]*chart.Chart, len(c.Dependencies()))
	for i, d := range c.Dependencies() {
		var depChanged bool
		deps[i], depChanged = perturbChart(d)
		changed = changed || depChanged
	}
	out.SetDependencies(deps...)
	return &out, changed
}

// perturbValue rewrites the template strings of a values tree (copied
// where it changes); the bool reports a change.
func perturbValue(v any) (any, bool) {
	switch v := v.(type) {
	case map[string]any:
		var out map[string]any
		for k, e := range v {
			if pe, changed := perturbValue(e); changed {
				if out == nil {
					out = maps.Clone(v)
				}
				out[k] = pe
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range v {
			if pe, changed := perturbValue(e); changed {
				if out == nil {
					out = slices.Clone(v)
				}
				out[i] = pe
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case string:
		if text, ok, _ := perturbTemplate("value", v); ok {
			return text, true
		}
	}
	return v, false
}

// perturbTemplate rewrites text, a Go template, so that each call of a
// function of perturbations goes through its perturbing command; ok is
// false when text calls none; err when it names one but does not parse.
func perturbTemplate(name, text string) (_ string, ok bool, err error) {
	if !strings.Contains(text, "{{") || !nondeterministicCall.MatchString(text) {
		return "", false, nil
	}
	trees := map[string]*parse.Tree{}
	t := parse.New(name)
	t.Mode = parse.SkipFuncCheck
	if _, err := t.Parse(text, "", "", trees); err != nil {
		return "", false, err
	}
	changed := false
	for _, tree := range trees {
		if tree.Root != nil && rewrite(tree.Root) {
			changed = true
		}
	}
	if !changed {
		return "", false, nil
	}
	var b strings.Builder
	for _, defined := range slices.Sorted(maps.Keys(trees)) {
		if tree := trees[defined]; defined != name && tree.Root != nil {
			fmt.Fprintf(&b, "{{define %q}}%s{{end}}", defined, tree.Root.String())
		}
	}
	if main := trees[name]; main != nil && main.Root != nil {
		b.WriteString(main.Root.String())
	}
	return b.String(), true, nil
}

// rewrite perturbs the calls under n; it reports whether there was one.
func rewrite(n parse.Node) bool {
	changed := false
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return false
		}
		for _, c := range n.Nodes {
			changed = rewrite(c) || changed
		}
	case *parse.ActionNode:
		changed = rewrite(n.Pipe)
	case *parse.IfNode:
		changed = rewriteBranch(&n.BranchNode)
	case *parse.RangeNode:
		changed = rewriteBranch(&n.BranchNode)
	case *parse.WithNode:
		changed = rewriteBranch(&n.BranchNode)
	case *parse.TemplateNode:
		if n.Pipe != nil {
			changed = rewrite(n.Pipe)
		}
	case *parse.PipeNode:
		if n == nil {
			return false
		}
		cmds := make([]*parse.CommandNode, 0, len(n.Cmds))
		for _, cmd := range n.Cmds {
			cmds = append(cmds, cmd)
			for i, arg := range cmd.Args {
				id, ok := arg.(*parse.IdentifierNode)
				if !ok {
					changed = rewrite(arg) || changed
					continue
				}
				suffix, ok := perturbations[id.Ident]
				if !ok {
					continue
				}
				changed = true
				if suffix == "" {
					continue
				}
				if i == 0 {
					// The call heads the command: perturb its result next.
					cmds = append(cmds, suffixCommand(suffix))
				} else {
					// An argument: (f | suffix).
					cmd.Args[i] = &parse.PipeNode{NodeType: parse.NodePipe, Cmds: []*parse.CommandNode{
						{NodeType: parse.NodeCommand, Args: []parse.Node{id}}, suffixCommand(suffix),
					}}
				}
			}
		}
		n.Cmds = cmds
	case *parse.ChainNode:
		changed = rewrite(n.Node)
	}
	return changed
}

func rewriteBranch(b *parse.BranchNode) bool {
	changed := rewrite(b.Pipe)
	changed = rewrite(b.List) || changed
	if b.ElseList != nil {
		changed = rewrite(b.ElseList) || changed
	}
	return changed
}

// suffixCommand is the command node of text, e.g. `add 1`.
func suffixCommand(text string) *parse.CommandNode {
	trees := map[string]*parse.Tree{}
	t := parse.New("suffix")
	t.Mode = parse.SkipFuncCheck
	if _, err := t.Parse("{{0 | "+text+"}}", "", "", trees); err != nil {
		panic(fmt.Sprintf("perturbation %q does not parse: %v", text, err)) // constants above
	}
	return trees["suffix"].Root.Nodes[0].(*parse.ActionNode).Pipe.Cmds[1]
}
