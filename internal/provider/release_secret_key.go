package provider

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// privateSecretHashKey is the private state key under which a resource
// keeps its key: it keys the hashes of the Secret values it shows
// (manifest.Hash) and the digests its status records of values and
// releases (reconcile.Digests). Private state never appears in plans or
// in terraform show, so a published plan or state gives no way to check a
// guessed password; the state file itself holds it, as it holds the
// sensitive values.
const privateSecretHashKey = "secret_hash_key"

type secretHashKey struct {
	Key []byte `json:"key"` // base64 in JSON
}

// secretHashKeyOf returns the resource's key from get, or, when it has none
// yet (a create, an import, a state from before keys), makes one and saves
// it with set. With neither, it returns nil: Secret values then show no
// hash at all.
func secretHashKeyOf(ctx context.Context, get privateGetter, set privateSetter, diags *diag.Diagnostics) []byte {
	if get != nil {
		raw, d := get.GetKey(ctx, privateSecretHashKey)
		diags.Append(d...)
		var k secretHashKey
		if len(raw) > 0 && json.Unmarshal(raw, &k) == nil && len(k.Key) == 32 {
			return k.Key
		}
	}
	if set == nil {
		return nil
	}
	k := secretHashKey{Key: newSecretHashKey(diags)}
	if k.Key == nil {
		return nil
	}
	raw, err := json.Marshal(k)
	if err != nil {
		diags.AddError("No random key", fmt.Sprintf("Encoding the key that hashes Secret values failed: %s.", err))
		return nil
	}
	diags.Append(set.SetKey(ctx, privateSecretHashKey, raw)...)
	return k.Key
}

// newSecretHashKey is a new random key.
func newSecretHashKey(diags *diag.Diagnostics) []byte {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		diags.AddError("No random key", fmt.Sprintf("Making the key that keys digests and hashes of secrets failed: %s.", err))
		return nil
	}
	return key
}
