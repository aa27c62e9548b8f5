package chartsource

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"helm.sh/helm/v3/pkg/provenance"
)

// ErrProvenance means a chart could not be verified against its provenance
// file and the keyring (spec.chart.spec.verify, `helm install --verify`).
var ErrProvenance = errors.New("chart provenance not verified")

// verifyProvenance checks that prov, a Helm provenance file, is signed by a
// key of the keyring file and holds the SHA-256 of archive under fileName,
// the archive's file name when it was signed (`helm package --sign`).
func verifyProvenance(keyring, fileName string, archive, prov []byte) error {
	if len(prov) == 0 {
		return fmt.Errorf("%w: %s has no provenance file (.prov) to verify", ErrProvenance, fileName)
	}
	signatory, err := provenance.NewFromKeyring(keyring, "")
	if err != nil {
		return fmt.Errorf("%w: reading keyring %s: %w", ErrProvenance, keyring, err)
	}
	// Helm verifies files on disk, under the name that was signed.
	dir, err := os.MkdirTemp("", "helmrelease-verify-")
	if err != nil {
		return fmt.Errorf("verifying %s: %w", fileName, err)
	}
	defer os.RemoveAll(dir)
	chartPath := filepath.Join(dir, filepath.Base(fileName))
	if err := os.WriteFile(chartPath, archive, 0o600); err != nil {
		return fmt.Errorf("verifying %s: %w", fileName, err)
	}
	if err := os.WriteFile(chartPath+".prov", prov, 0o600); err != nil {
		return fmt.Errorf("verifying %s: %w", fileName, err)
	}
	if _, err := signatory.Verify(chartPath, chartPath+".prov"); err != nil {
		return fmt.Errorf("%w: %s against keyring %s: %w", ErrProvenance, fileName, keyring, err)
	}
	return nil
}
