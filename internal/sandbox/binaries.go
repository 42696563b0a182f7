package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
)

// The versions hack/build-control-plane.sh builds by default; the cache directory name is
// derived from them, so both must change together.
const (
	KubernetesVersion = "1.36.4"
	EtcdVersion       = "3.6.16"
)

const (
	etcdBinary              = "etcd"
	apiServerBinary         = "kube-apiserver"
	controllerManagerBinary = "kube-controller-manager"
	schedulerBinary         = "kube-scheduler"
	kwokBinary              = "kwok"
)

var requiredBinaries = []string{etcdBinary, apiServerBinary, controllerManagerBinary, schedulerBinary, kwokBinary}

// BinaryDir returns the directory holding etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok: $HOLDFAST_BIN_DIR if set, else the cache directory
// hack/build-control-plane.sh fills. It fails if any of them is missing, so callers can skip
// or explain instead of failing later with a less helpful exec error; the script builds only
// what a cache lacks.
func BinaryDir() (string, error) {
	dir := os.Getenv("HOLDFAST_BIN_DIR")
	if dir == "" {
		cacheDir, err := cacheRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(cacheDir, fmt.Sprintf("k8s-%s-etcd-%s", KubernetesVersion, EtcdVersion))
	}
	if err := checkBinaries(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// cacheRoot mirrors the shell expression in hack/build-control-plane.sh rather than
// os.UserCacheDir, which differs from it outside Linux.
func cacheRoot() (string, error) {
	if dir := os.Getenv("HOLDFAST_CACHE_DIR"); dir != "" {
		return dir, nil
	}
	if dir := os.Getenv("XDG_CACHE_HOME"); dir != "" {
		return filepath.Join(dir, "holdfast"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("locating the control-plane binary cache: %w", err)
	}
	return filepath.Join(home, ".cache", "holdfast"), nil
}

func checkBinaries(dir string) error {
	for _, name := range requiredBinaries {
		path := filepath.Join(dir, name)
		info, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("control-plane binary %s not found in %s (run `make control-plane` or set HOLDFAST_BIN_DIR): %w", name, dir, err)
		}
		if info.IsDir() || info.Mode().Perm()&0o111 == 0 {
			return fmt.Errorf("control-plane binary %s is not executable (run `make control-plane` or set HOLDFAST_BIN_DIR)", path)
		}
	}
	return nil
}
