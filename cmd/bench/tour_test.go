package main

import (
	"slices"
	"testing"
)

// A stay is a run in one package; a climb moves to a package that imports the one left.
func TestTourCounts(t *testing.T) {
	imports := map[string][]string{tourModule + "a": {tourModule + "b"}, tourModule + "b": {tourModule + "c"}}
	got := tourOf([]string{"a", "a", "b", "c", "c", "a", "b", "b"}, imports)
	want := Tour{Rooms: 3, Stays: 5, Climbs: 1, Path: []string{"a", "b", "c", "a", "b"}}
	if got.Rooms != want.Rooms || got.Stays != want.Stays || got.Climbs != want.Climbs || !slices.Equal(got.Path, want.Path) {
		t.Errorf("tour %+v, want %+v", got, want)
	}
}
