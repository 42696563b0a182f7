package clusterservicestatus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"

	"github.com/klauspost/compress/zstd"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/rendercache"
)

// maxPacked bounds what one service's kept declaration may expand to; a larger rendering is not
// kept, and its drift is corrected through a full render.
const maxPacked = 64 << 20

// The packing codec: zstd at its fastest, one goroutine each, shared (both are safe for
// concurrent use through EncodeAll and DecodeAll), with a small window and low-memory buffers:
// manifests repeat themselves within a few objects, and the codec's own buffers are kept for the
// life of the process.
var (
	packer, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(1<<18), zstd.WithLowerEncoderMem(true))
	unpacker, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxMemory(maxPacked))
)

// declaration is what the last render of one service on one cluster declared, kept in memory
// in compressed form, so that a drift correction finds the declared object without rendering
// the service again: a few bytes per object, against a render that parses every object of the
// service (see bench/RESULTS.md, inventory). It is valid as long as the service's inputs have
// the same digest.
type declaration struct {
	// input is rendercache.InputDigest of the render's request.
	input string
	// revision is the rendering's digest (render.Result.Digest), which status records.
	revision string
	// objects is how many objects the rendering holds.
	objects int
	// packed holds the objects, one line each (see pack).
	packed []byte
	// keys identify the declared objects (objectKey), so that a watch event on an object the
	// service does not declare is told at once, without unpacking.
	keys map[uint64]struct{}
}

// keySeed makes objectKey's hashes; they live only in this process.
var keySeed = maphash.MakeSeed()

// objectKey is the hash of an object's identity, kind and group (not version) included.
func objectKey(group, kind, namespace, name string) uint64 {
	return maphash.String(keySeed, lineKey(group, kind, namespace, name))
}

// declares reports whether the service declares the object; an object declared without a
// namespace is declared in the service's namespace, as apply defaults it, and cluster-wide.
func (d *declaration) declares(ref apply.Ref) bool {
	_, ok := d.keys[objectKey(ref.Group, ref.Kind, ref.Namespace, ref.Name)]
	return ok
}

// newDeclaration packs a rendering made from the inputs with digest input, for a service whose
// objects without a namespace go to defaultNamespace.
func newDeclaration(input string, res *render.Result, defaultNamespace string) (*declaration, error) {
	var raw bytes.Buffer
	keys := make(map[uint64]struct{}, len(res.Objects))
	for _, o := range res.Objects {
		group, kind := o.GroupVersionKind().Group, o.GetKind()
		keys[objectKey(group, kind, o.GetNamespace(), o.GetName())] = struct{}{}
		if o.GetNamespace() == "" {
			keys[objectKey(group, kind, defaultNamespace, o.GetName())] = struct{}{}
		}
		b, err := json.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("encoding %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		// JSON holds neither NUL nor a raw newline, so neither can end a field early.
		raw.WriteString(lineKey(o.GroupVersionKind().Group, o.GetKind(), o.GetNamespace(), o.GetName()))
		raw.Write(b)
		raw.WriteByte('\n')
		if raw.Len() > maxPacked {
			return nil, fmt.Errorf("the rendering is over %d bytes", maxPacked)
		}
	}
	// EncodeAll sizes its output for the worst case: keep only what it wrote.
	packed := bytes.Clone(packer.EncodeAll(raw.Bytes(), nil))
	return &declaration{input: input, revision: res.Digest, objects: len(res.Objects), packed: packed, keys: keys}, nil
}

// lineKey starts an object's line: what find matches on.
func lineKey(group, kind, namespace, name string) string {
	return group + "\x00" + kind + "\x00" + namespace + "\x00" + name + "\x00"
}

// find returns the declared objects of refs, by unversioned ref; an object declared without a
// namespace matches refs in defaultNamespace, as apply defaults it. Refs not declared are not
// in the map.
func (d *declaration) find(refs []apply.Ref, defaultNamespace string) (map[apply.Ref]*unstructured.Unstructured, error) {
	want := map[string]apply.Ref{}
	for _, ref := range refs {
		want[lineKey(ref.Group, ref.Kind, ref.Namespace, ref.Name)] = unversioned(ref)
		if ref.Namespace == defaultNamespace {
			want[lineKey(ref.Group, ref.Kind, "", ref.Name)] = unversioned(ref)
		}
	}
	out := map[apply.Ref]*unstructured.Unstructured{}
	err := d.each(func(key, object []byte) error {
		ref, ok := want[string(key)]
		if !ok {
			return nil
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(object); err != nil {
			return fmt.Errorf("decoding %s from the kept declaration: %w", ref, err)
		}
		out[ref] = u
		return nil
	})
	return out, err
}

// rendering returns every declared object, in the order rendered, and their digest: the
// rendering the declaration was made from, new objects each call (apply may change them). It
// is how a full reconcile whose inputs did not change skips the render (see renderService).
func (d *declaration) rendering() (*render.Result, error) {
	objects := make([]*unstructured.Unstructured, 0, d.objects)
	err := d.each(func(_, object []byte) error {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(object); err != nil {
			return fmt.Errorf("decoding object %d from the kept declaration: %w", len(objects)+1, err)
		}
		objects = append(objects, u)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(objects) != d.objects {
		return nil, fmt.Errorf("the kept declaration holds %d objects, not %d", len(objects), d.objects)
	}
	return &render.Result{Objects: objects, Digest: d.revision}, nil
}

// each unpacks the declaration and calls f with each object's line key and JSON, in order,
// until f returns an error.
func (d *declaration) each(f func(key, object []byte) error) error {
	raw, err := unpacker.DecodeAll(d.packed, nil)
	if err != nil {
		return fmt.Errorf("unpacking the kept declaration: %w", err)
	}
	for line := range bytes.Lines(raw) {
		cut := 0
		for range 4 {
			i := bytes.IndexByte(line[cut:], 0)
			if i < 0 {
				return errors.New("unpacking the kept declaration: a line without its key")
			}
			cut += i + 1
		}
		if err := f(line[:cut], bytes.TrimSuffix(line[cut:], []byte("\n"))); err != nil {
			return err
		}
	}
	return nil
}

// keyBytes is about what one entry of declaration.keys costs in a Go map.
const keyBytes = 32

// size is about how many bytes the declaration holds in memory: what bounds all of them
// (maxDeclaredBytes).
func (d *declaration) size() int { return len(d.packed) + len(d.keys)*keyBytes }

// inputDigest is the digest of everything rendering svc for cluster reads (see
// rendercache.InputDigest): equal digests give equal renderings, up to what a Helm chart
// generates, which the hub keeps (package rendercache).
func (r *Reconciler) inputDigest(ctx context.Context, s *scope, svc holdfastv1.Service) (string, error) {
	req, err := r.renderRequest(ctx, s, svc)
	if err != nil {
		return "", err
	}
	return r.digestOf(ctx, req)
}

// digestOf is inputDigest of a render request built already.
func (r *Reconciler) digestOf(ctx context.Context, req render.Request) (string, error) {
	if req.Source.Helm == nil || r.Charts == nil {
		return rendercache.InputDigest(req, nil)
	}
	ch, err := r.Charts.Load(ctx, *req.Source.Helm)
	if err != nil {
		return "", fmt.Errorf("service %q: loading its chart: %w", req.Service, err)
	}
	return rendercache.InputDigest(req, ch)
}
