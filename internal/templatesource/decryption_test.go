package templatesource_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/decrypt/decrypttest"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/templatesource"
)

const (
	plaintext  = "s3cr3t-from-sops"
	keysName   = "sops-keys"
	secretYAML = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: app\nstringData:\n  password: " + plaintext + "\n"
	configYAML = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: app\ndata:\n  mode: plain\n"
)

// artifactFiles serves one artifact's files, whatever is asked.
type artifactFiles map[string][]byte

func (f artifactFiles) ResolveArtifact(context.Context, render.Artifact) (string, error) {
	return "sha256:ab", nil
}

func (f artifactFiles) ArtifactFiles(context.Context, render.Artifact) (map[string][]byte, error) {
	return f, nil
}

// encryptedTemplate is a template rendering the artifact at path, pinned, decrypted with the
// Secret keysName when decryption is set.
func encryptedTemplate(path string, format holdfastv1.ArtifactFormat, decryption bool) *holdfastv1.ServiceTemplate {
	tpl := template(holdfastv1.ServiceTemplateSpec{Artifact: &holdfastv1.ArtifactSource{URL: "oci://registry/app", Path: path, Format: format}})
	tpl.Status.Artifact = &holdfastv1.ArtifactStatus{URL: "oci://registry/app", Digest: "sha256:ab"}
	if decryption {
		tpl.Spec.Decryption = &holdfastv1.Decryption{Provider: holdfastv1.DecryptionSOPS, SecretRef: holdfastv1.LocalObjectReference{Name: keysName}}
	}
	return tpl
}

// renderSource renders src as service web and returns the objects by kind.
func renderSource(t *testing.T, src render.Source) map[string]map[string]any {
	t.Helper()
	res, err := render.Render(context.Background(), render.Request{Service: "web", Source: src}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, o := range res.Objects {
		out[o.GetKind()] = o.Object
	}
	return out
}

// A template's SOPS-encrypted manifests, in a Manifests or a Kustomize artifact, encrypted for
// an age or a PGP key of its decryption Secret, render decrypted and marked sensitive; its
// other files are untouched and not sensitive; the artifact's files are not changed.
func TestArtifactDecryption(t *testing.T) {
	ageFile, ageRecipient := decrypttest.AgeKey(t)
	pgpArmored, pgpKey := decrypttest.PGPKey(t)
	forAge := decrypttest.Encrypt(t, "secret.yaml", []byte(secretYAML), decrypttest.Options{Age: []string{ageRecipient}, EncryptedRegex: "^(data|stringData)$"})
	forPGP := decrypttest.Encrypt(t, "secret.yaml", []byte(secretYAML), decrypttest.Options{PGP: []*openpgp.Entity{pgpKey}})
	keys := secret(keysName, map[string][]byte{"age.agekey": ageFile, "pgp.asc": pgpArmored})
	for _, tt := range []struct {
		name   string
		files  artifactFiles
		path   string
		format holdfastv1.ArtifactFormat
	}{
		{name: "manifests, age", path: "deploy", files: artifactFiles{"deploy/secret.yaml": forAge, "deploy/settings.yaml": []byte(configYAML)}},
		{name: "manifests, PGP", path: "deploy", files: artifactFiles{"deploy/secret.yaml": forPGP, "deploy/settings.yaml": []byte(configYAML)}},
		{name: "kustomize", path: "overlay", format: holdfastv1.ArtifactKustomize, files: artifactFiles{
			"overlay/kustomization.yaml": []byte("resources: [../base, settings.yaml]\n"),
			"base/kustomization.yaml":    []byte("resources: [secret.yaml]\n"),
			"base/secret.yaml":           forAge, "overlay/settings.yaml": []byte(configYAML)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := reader(nil, []*corev1.Secret{keys})
			r.Artifacts = tt.files
			encrypted := map[string][]byte{}
			for k, v := range tt.files {
				encrypted[k] = bytes.Clone(v)
			}
			src, err := r.Source(context.Background(), encryptedTemplate(tt.path, tt.format, true))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case src.Kustomize != nil:
				if want := map[string]bool{"base/secret.yaml": true}; !equalSets(src.Kustomize.SensitiveFiles, want) {
					t.Errorf("SensitiveFiles %v, want %v", src.Kustomize.SensitiveFiles, want)
				}
			default:
				for _, d := range src.Documents {
					if want := strings.HasSuffix(d.Origin, `secret.yaml"`); d.Sensitive != want {
						t.Errorf("%s: Sensitive %v, want %v", d.Origin, d.Sensitive, want)
					}
				}
			}
			objects := renderSource(t, src)
			if got := objects["Secret"]["stringData"]; !equalJSON(got, map[string]any{"password": plaintext}) {
				t.Errorf("rendered Secret stringData %v", got)
			}
			if _, ok := objects["Secret"]["sops"]; ok {
				t.Error("the rendered Secret kept its SOPS metadata")
			}
			if got := objects["ConfigMap"]["data"]; !equalJSON(got, map[string]any{"mode": "plain"}) {
				t.Errorf("rendered ConfigMap data %v", got)
			}
			for k, v := range tt.files {
				if !bytes.Equal(v, encrypted[k]) {
					t.Errorf("the artifact's file %s was changed", k)
				}
			}
		})
	}
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func equalJSON(got any, want map[string]any) bool {
	m, ok := got.(map[string]any)
	if !ok || len(m) != len(want) {
		return false
	}
	for k, v := range want {
		if m[k] != v {
			return false
		}
	}
	return true
}

// A template whose encrypted files cannot be decrypted says why, naming the file and the Secret
// and quoting nothing decrypted: no spec.decryption, a Secret that is missing (it is read in the
// template's namespace only, whatever another namespace holds), without keys or without the
// file's key, a file changed after it was encrypted, or an encrypted file in a chart.
func TestArtifactDecryptionFailures(t *testing.T) {
	ageFile, ageRecipient := decrypttest.AgeKey(t)
	strangerFile, _ := decrypttest.AgeKey(t)
	enc := decrypttest.Encrypt(t, "secret.yaml", []byte(secretYAML), decrypttest.Options{Age: []string{ageRecipient}, EncryptedRegex: "^(data|stringData)$"})
	tampered := bytes.Replace(enc, []byte("namespace: app"), []byte("namespace: ap2"), 1)
	elsewhere := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "other-team", Name: keysName}, Data: map[string][]byte{"age.agekey": ageFile}}
	manifests := artifactFiles{"deploy/secret.yaml": enc}
	file := `artifact oci://registry/app@sha256:ab file "deploy/secret.yaml"`
	for _, tt := range []struct {
		name       string
		secrets    []*corev1.Secret
		files      artifactFiles
		decryption bool
		format     holdfastv1.ArtifactFormat
		notFound   bool     // a *ReadError for the Secret
		want       []string // in a DecryptionFailed error
	}{
		{name: "no spec.decryption", files: manifests, want: []string{file, "is encrypted with SOPS: set spec.decryption"}},
		{name: "no Secret", decryption: true, files: manifests, notFound: true},
		{name: "the Secret in another namespace", decryption: true, secrets: []*corev1.Secret{elsewhere}, files: manifests, notFound: true},
		{name: "a Secret without keys", decryption: true, secrets: []*corev1.Secret{secret(keysName, map[string][]byte{"key": ageFile})}, files: manifests,
			want: []string{"ServiceTemplate templates/web", "spec.decryption.secretRef", "Secret templates/" + keysName + " has no entry ending in .agekey"}},
		{name: "the wrong key", decryption: true, secrets: []*corev1.Secret{secret(keysName, map[string][]byte{"age.agekey": strangerFile})}, files: manifests,
			want: []string{file, "cannot be decrypted with Secret templates/" + keysName, "encrypted for age recipients " + ageRecipient}},
		{name: "tampered", decryption: true, secrets: []*corev1.Secret{secret(keysName, map[string][]byte{"age.agekey": ageFile})},
			files: artifactFiles{"deploy/secret.yaml": tampered}, want: []string{file, "MAC does not match"}},
		{name: "an encrypted chart file", decryption: true, secrets: []*corev1.Secret{secret(keysName, map[string][]byte{"age.agekey": ageFile})},
			files: artifactFiles{"deploy/Chart.yaml": []byte("name: web\nversion: 1.0.0\n"), "deploy/secret.yaml": enc}, format: holdfastv1.ArtifactHelm,
			want: []string{file, "a chart's files are not decrypted"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := reader(nil, tt.secrets)
			r.Artifacts = tt.files
			_, err := r.Source(context.Background(), encryptedTemplate("deploy", tt.format, tt.decryption))
			if err == nil {
				t.Fatal("Source succeeded")
			}
			if strings.Contains(err.Error(), plaintext) {
				t.Errorf("error quotes the plaintext: %q", err)
			}
			if tt.notFound {
				var re *templatesource.ReadError
				if !errors.As(err, &re) || !re.NotFound() || re.Namespace != ns || re.Name != keysName || re.Field != templatesource.FieldDecryption {
					t.Errorf("error %v, want Secret %s/%s (%s) not found", err, ns, keysName, templatesource.FieldDecryption)
				}
				return
			}
			if render.ReasonOf(err) != holdfastv1.DecryptionFailedReason {
				t.Errorf("reason %q, want %s: %v", render.ReasonOf(err), holdfastv1.DecryptionFailedReason, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// Decrypted manifests are sensitive whatever kind they declare: a render error about one names
// the file and quotes nothing of it, as for a manifest read from a Secret.
func TestDecryptedManifestsAreNotQuotedInRenderErrors(t *testing.T) {
	ageFile, ageRecipient := decrypttest.AgeKey(t)
	broken := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: db}\ndata:\n  password: '{{ required \"" + plaintext + "\" .Values.missing }}'\n"
	r := reader(nil, []*corev1.Secret{secret(keysName, map[string][]byte{"age.agekey": ageFile})})
	r.Artifacts = artifactFiles{"deploy/db.yaml": decrypttest.Encrypt(t, "db.yaml", []byte(broken), decrypttest.Options{Age: []string{ageRecipient}})}
	tpl := encryptedTemplate("deploy", "", true)
	tpl.Spec.Templating = holdfastv1.TemplatingGoTemplate
	src, err := r.Source(context.Background(), tpl)
	if err != nil {
		t.Fatal(err)
	}
	_, err = render.Render(context.Background(), render.Request{Service: "web", Source: src}, nil)
	if err == nil {
		t.Fatal("Render succeeded")
	}
	if want := `artifact oci://registry/app@sha256:ab file "deploy/db.yaml"`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
	if strings.Contains(err.Error(), plaintext) {
		t.Errorf("error quotes the decrypted file: %q", err)
	}
}
