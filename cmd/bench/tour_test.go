package main

import (
	"slices"
	"testing"
)

// A stay is a run in one package; a climb moves to a package that imports the
// one left; a detour is a stay between two of one package.
func TestTourCounts(t *testing.T) {
	imports := map[string][]string{tourModule + "a": {tourModule + "b"}, tourModule + "b": {tourModule + "c"}}
	got := tourOf([]string{"a", "a", "b", "c", "c", "a", "b", "b", "a"}, imports)
	want := Tour{Rooms: 3, Stays: 6, Climbs: 2, Detours: 1, Path: []string{"a", "b", "c", "a", "b", "a"}}
	if got.Rooms != want.Rooms || got.Stays != want.Stays || got.Climbs != want.Climbs || got.Detours != want.Detours || !slices.Equal(got.Path, want.Path) {
		t.Errorf("tour %+v, want %+v", got, want)
	}
}
