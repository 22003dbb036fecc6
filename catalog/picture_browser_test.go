package catalog

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A picture checked as a person sees it: rendered to PNG by a real
// headless browser (Debian's chromium), where one is installed.

// browser returns the path of a headless browser, or why there is none.
func browser() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no headless browser on PATH (chromium, chromium-browser, google-chrome): on Debian, apt-get install chromium")
}

// screenshot renders the SVG file at path with the browser bin in a
// window of its size, and returns the PNG.
func screenshot(t *testing.T, bin, path string, f svgFacts) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	out := filepath.Join(dir, "shot.png")
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--force-device-scale-factor=1", "--force-color-profile=srgb", "--user-data-dir="+filepath.Join(dir, "profile"),
		fmt.Sprintf("--window-size=%d,%d", f.width, f.height), "--screenshot="+out, "file://"+abs)
	log, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s: %s", bin, log)
	b, err := os.ReadFile(out)
	require.NoError(t, err, "%s wrote no screenshot: %s", bin, log)
	return b
}

// checkPNG checks that b is the picture f describes as a browser drew it:
// a PNG of its size, with every colour filling its rectangles (each
// entity's strip and swatch, the rows' tints) present, and text drawn.
func checkPNG(b []byte, f svgFacts) error {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return err
	}
	if got := img.Bounds().Size(); got != (image.Point{f.width, f.height}) {
		return fmt.Errorf("the PNG is %v, the SVG %dx%d", got, f.width, f.height)
	}
	pixels := map[string]int{}
	dark := 0
	for y := range f.height {
		for x := range f.width {
			r, g, b, _ := img.At(x, y).RGBA()
			pixels[fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)]++
			if (r>>8)+(g>>8)+(b>>8) < 3*90 {
				dark++
			}
		}
	}
	for colour := range f.fills {
		if pixels[colour] < 60 {
			return fmt.Errorf("colour %s fills rectangles of the SVG but only %d pixels of the PNG", colour, pixels[colour])
		}
	}
	// About a tenth of a text's box is dark pixels; ask for a thirtieth
	// (nothing else drawn is dark).
	area := 0
	for _, x := range f.texts {
		area += (x.x1 - x.x0) * (x.y1 - x.y0)
	}
	if dark < area/30 {
		return fmt.Errorf("%d dark pixels for %d texts over %d pixels: the text is not drawn", dark, len(f.texts), area)
	}
	return nil
}

func TestPictureInBrowser(t *testing.T) {
	t.Parallel()
	bin, err := browser()
	if err != nil {
		t.Skip(err)
	}
	tbl, items := pictureFixture(t)
	svg := Picture(tbl, items)
	f, err := checkSVG(svg)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "picture.svg")
	require.NoError(t, os.WriteFile(path, []byte(svg), 0o644))
	require.NoError(t, checkPNG(screenshot(t, bin, path, f), f))
}

// TestExamplePictures checks the pictures of the example apps (their
// docs/*.svg, kept current by each app's catalog test): valid XML
// without overlapping text, and the PNG committed beside each, which a
// browser rendered, still of its size and colours. Where a browser is
// installed it renders each again and checks that too; -update writes
// its PNG beside the SVG.
func TestExamplePictures(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("..", "examples", "*", "docs", "*.svg"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(paths), 5, "skills, goals, tasks, and elections' two tables")
	bin, browserErr := browser()
	for _, path := range paths {
		svg, err := os.ReadFile(path)
		require.NoError(t, err)
		f, err := checkSVG(string(svg))
		require.NoError(t, err, path)
		pngPath := strings.TrimSuffix(path, ".svg") + ".png"
		if browserErr == nil {
			shot := screenshot(t, bin, path, f)
			require.NoError(t, checkPNG(shot, f), "%s as the browser draws it", path)
			if updating() {
				require.NoError(t, os.WriteFile(pngPath, shot, 0o644))
			}
		}
		committed, err := os.ReadFile(pngPath)
		require.NoError(t, err, "run go test ./catalog -run %s -update with chromium installed to render it", t.Name())
		require.NoError(t, checkPNG(committed, f), "%s is stale: run go test ./catalog -run %s -update with chromium installed", pngPath, t.Name())
	}
	if browserErr != nil {
		t.Skip("checked the committed PNGs only: ", browserErr)
	}
}

// updating reports whether the tests run with -update (the flag of the
// package's external tests, linked into the same binary).
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}
