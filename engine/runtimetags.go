package engine

import "slices"

// permitTags returns the tags whose permits a step attempt takes: the
// step's own and the runtime tags of its run, without duplicates.
func (d *decider) permitTags(stepTags []string) []string {
	out := stepTags
	for _, t := range d.st.RuntimeTags {
		if !slices.Contains(out, t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}
