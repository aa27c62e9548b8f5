package chartsource

import (
	"errors"
	"fmt"
	"path/filepath"

	"helm.sh/helm/v4/pkg/provenance"
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
	if _, err := signatory.Verify(archive, prov, filepath.Base(fileName)); err != nil {
		return fmt.Errorf("%w: %s against keyring %s: %w", ErrProvenance, fileName, keyring, err)
	}
	return nil
}
