package templatesource

import (
	"context"
	"fmt"
	"path"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/decrypt"
	"holdfast.dev/holdfast/internal/render"
)

// FieldDecryption is the field of a ServiceTemplate that names its decryption Secret.
const FieldDecryption = "spec.decryption.secretRef"

// decryptionKeys reads the keys of the Secret tpl's spec.decryption names, in tpl's namespace
// (the API takes a name only, so no other namespace can be named), or nil when it has none. A
// missing Secret is a *ReadError; one without usable keys a DecryptionFailed *render.Error.
func (r Reader) decryptionKeys(ctx context.Context, tpl *holdfastv1.ServiceTemplate) (*decrypt.Keys, error) {
	d := tpl.Spec.Decryption
	if d == nil {
		return nil, nil
	}
	object := fmt.Sprintf("ServiceTemplate %s/%s", tpl.Namespace, tpl.Name)
	if d.Provider != holdfastv1.DecryptionSOPS {
		return nil, &render.Error{Reason: render.ReasonInvalidSource, Object: object,
			Message: fmt.Sprintf("spec.decryption.provider %q is not supported: use %s", d.Provider, holdfastv1.DecryptionSOPS)}
	}
	data, err := r.secretData(ctx, tpl, d.SecretRef.Name, FieldDecryption)
	if err != nil {
		return nil, err
	}
	keys, err := decrypt.ParseKeys(fmt.Sprintf("Secret %s/%s", tpl.Namespace, d.SecretRef.Name), data)
	if err != nil {
		return nil, &render.Error{Reason: holdfastv1.DecryptionFailedReason, Object: object,
			Message: fmt.Sprintf("%s: %v", FieldDecryption, err)}
	}
	return keys, nil
}

// opened is what an artifact's files hold to render: the files, with those encrypted with SOPS
// decrypted, and which those were. The files given are never changed (a cache may hold them):
// decrypted ones are in a copy.
type opened struct {
	files     map[string][]byte
	decrypted map[string]bool
}

// open decrypts the SOPS-encrypted YAML and JSON files among names, with keys. An encrypted
// file without keys (no spec.decryption), or one they do not open, is a DecryptionFailed error
// naming the file and the Secret; the error quotes nothing of the file.
func open(ref string, files map[string][]byte, names []string, keys *decrypt.Keys) (opened, error) {
	o := opened{files: files}
	for _, name := range names {
		content := files[name]
		if !manifestFile(name) || !decrypt.Encrypted(name, content) {
			continue
		}
		object := fmt.Sprintf("%s file %q", ref, name)
		if keys == nil {
			return opened{}, &render.Error{Reason: holdfastv1.DecryptionFailedReason, Object: object,
				Message: "is encrypted with SOPS: set spec.decryption to a Secret holding its age or PGP key"}
		}
		plain, err := decrypt.File(name, content, keys)
		if err != nil {
			return opened{}, &render.Error{Reason: holdfastv1.DecryptionFailedReason, Object: object,
				Message: fmt.Sprintf("cannot be decrypted with %s (%s): %v", keys.Source(), FieldDecryption, err)}
		}
		if o.decrypted == nil {
			o.files, o.decrypted = make(map[string][]byte, len(files)), map[string]bool{}
			for k, v := range files {
				o.files[k] = v
			}
		}
		o.files[name], o.decrypted[name] = plain, true
	}
	return o, nil
}

// manifestFile reports whether a file of an artifact is read as manifests: *.yaml, *.yml and
// *.json, the files SOPS encrypts as a tree.
func manifestFile(name string) bool {
	switch path.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}
