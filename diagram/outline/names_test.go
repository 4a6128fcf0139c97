package outline

import "testing"

func TestFileBase(t *testing.T) {
	for _, c := range []struct {
		title string
		rev   int64
		want  string
	}{
		{"Deploy pipeline", 3, "deploy-pipeline-r3"},
		{"  CI/CD: build → test → ship!  ", 12, "ci-cd-build-test-ship-r12"},
		{"Схема БД", 1, "схема-бд-r1"},
		{"", 2, "diagram-r2"},
		{"***", 2, "diagram-r2"},
		{"Org chart", 0, "org-chart"},
		{"An extraordinarily long diagram title that goes on and on", 4, "an-extraordinarily-long-diagram-title-th-r4"},
	} {
		if got := FileBase(c.title, c.rev); got != c.want {
			t.Errorf("FileBase(%q, %d) = %q, want %q", c.title, c.rev, got, c.want)
		}
	}
}
