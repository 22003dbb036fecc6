//go:build !unix

package ddblocal

import "context"

// lockFile is a no-op here: concurrent installs may both download, and
// installTarball's rename tolerates the loser.
func lockFile(ctx context.Context, p string) (unlock func(), err error) {
	return func() {}, ctx.Err()
}
