package rendercache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"

	"github.com/klauspost/compress/zstd"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"holdfast.dev/holdfast/internal/render"
)

// The packing codec: zstd at its fastest, one goroutine each, shared (both are safe for
// concurrent use through EncodeAll and DecodeAll), with a small window and low-memory buffers:
// manifests repeat themselves within a few objects, and the codec's own buffers are kept for the
// life of the process.
var (
	packer, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(1<<18), zstd.WithLowerEncoderMem(true))
	unpacker, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxMemory(maxDecoded))
)

// Declaration is what the last render of one service on one cluster declared, kept in this
// process's memory in compressed form: the tier of kept renderings in front of the hub's (see
// the package comment). A drift correction finds the declared object in it without rendering
// the service again — a few bytes per object, against a render that parses every object of the
// service (see bench/RESULTS.md, inventory) — and a full reconcile whose service's inputs did
// not change takes the rendering back from it (Rendering). It is valid as long as the service's
// inputs have the same digest (Input). It holds Secret values: it is never logged. It is safe
// for concurrent use: nothing changes it once made.
type Declaration struct {
	// input is InputDigest of the render's request.
	input string
	// revision is the rendering's digest (render.Result.Digest), which status records.
	revision string
	// objects is how many objects the rendering holds.
	objects int
	// frames hold the objects, one line each, packed in frames of about frameSize bytes (see
	// NewDeclaration).
	frames [][]byte
	// keys identify the declared objects (keyHash), each with the frame holding it, so that a
	// watch event on an object the service does not declare is told at once, without
	// unpacking, and finding one object unpacks only its frame.
	keys map[uint64]int32
}

// frameSize is about how many bytes of lines a frame holds before it is packed: finding one
// object unpacks at most that much, whatever the size of the service (a correction in a service
// of 5,000 objects unpacked a megabyte; bench/RESULTS.md#inventory).
const frameSize = 64 << 10

// ObjectKey is an object's identity in a Declaration: its group and kind, not its version.
type ObjectKey struct {
	Group, Kind, Namespace, Name string
}

// String formats k as the apply layer formats a reference without a version: "apps/ Deployment
// ns/name", " Namespace name".
func (k ObjectKey) String() string {
	gv := ""
	if k.Group != "" {
		gv = k.Group + "/"
	}
	name := k.Name
	if k.Namespace != "" {
		name = k.Namespace + "/" + k.Name
	}
	return gv + " " + k.Kind + " " + name
}

// keySeed makes keyHash's hashes; they live only in this process.
var keySeed = maphash.MakeSeed()

// keyHash is the hash of an object's identity, kind and group (not version) included.
func keyHash(group, kind, namespace, name string) uint64 {
	return maphash.String(keySeed, lineKey(group, kind, namespace, name))
}

// Declares reports whether the service declares the object; an object declared without a
// namespace is declared in the service's namespace, as apply defaults it, and cluster-wide.
func (d *Declaration) Declares(key ObjectKey) bool {
	_, ok := d.keys[keyHash(key.Group, key.Kind, key.Namespace, key.Name)]
	return ok
}

// Input is the digest of the inputs the declaration was rendered from (InputDigest).
func (d *Declaration) Input() string { return d.input }

// Revision is the rendering's digest (render.Result.Digest), which status records.
func (d *Declaration) Revision() string { return d.revision }

// Count is how many objects the rendering holds.
func (d *Declaration) Count() int { return d.objects }

// NewDeclaration packs a rendering made from the inputs with digest input, for a service whose
// objects without a namespace go to defaultNamespace.
func NewDeclaration(input string, res *render.Result, defaultNamespace string) (*Declaration, error) {
	d := &Declaration{input: input, revision: res.Digest, objects: len(res.Objects), keys: make(map[uint64]int32, len(res.Objects))}
	var raw bytes.Buffer
	total := 0
	pack := func() {
		// EncodeAll sizes its output for the worst case: keep only what it wrote.
		d.frames = append(d.frames, bytes.Clone(packer.EncodeAll(raw.Bytes(), nil)))
		raw.Reset()
	}
	for _, o := range res.Objects {
		frame := int32(len(d.frames))
		group, kind := o.GroupVersionKind().Group, o.GetKind()
		d.keys[keyHash(group, kind, o.GetNamespace(), o.GetName())] = frame
		if o.GetNamespace() == "" {
			d.keys[keyHash(group, kind, defaultNamespace, o.GetName())] = frame
		}
		b, err := json.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("encoding %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		// JSON holds neither NUL nor a raw newline, so neither can end a field early.
		line := lineKey(group, kind, o.GetNamespace(), o.GetName())
		raw.WriteString(line)
		raw.Write(b)
		raw.WriteByte('\n')
		if total += len(line) + len(b) + 1; total > maxDecoded {
			return nil, fmt.Errorf("the rendering is over %d bytes", maxDecoded)
		}
		if raw.Len() >= frameSize {
			pack()
		}
	}
	if raw.Len() > 0 || len(d.frames) == 0 {
		pack()
	}
	return d, nil
}

// lineKey starts an object's line: what find matches on.
func lineKey(group, kind, namespace, name string) string {
	return group + "\x00" + kind + "\x00" + namespace + "\x00" + name + "\x00"
}

// Find returns the declared objects of keys, by key; an object declared without a namespace
// matches keys in defaultNamespace, as apply defaults it. Keys not declared are not in the map.
func (d *Declaration) Find(keys []ObjectKey, defaultNamespace string) (map[ObjectKey]*unstructured.Unstructured, error) {
	out := map[ObjectKey]*unstructured.Unstructured{}
	// Only the frames holding declared keys are unpacked: a correction asks every service of
	// the set, and wants one object.
	var held []int32
	for _, key := range keys {
		if f, ok := d.keys[keyHash(key.Group, key.Kind, key.Namespace, key.Name)]; ok && !slices.Contains(held, f) {
			held = append(held, f)
		}
	}
	frames := make([][]byte, 0, len(held))
	for _, f := range held {
		frames = append(frames, d.frames[f])
	}
	want := map[string]ObjectKey{}
	for _, key := range keys {
		want[lineKey(key.Group, key.Kind, key.Namespace, key.Name)] = key
		if key.Namespace == defaultNamespace {
			want[lineKey(key.Group, key.Kind, "", key.Name)] = key
		}
	}
	err := d.each(frames, func(key, object []byte) error {
		found, ok := want[string(key)]
		if !ok {
			return nil
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(object); err != nil {
			return fmt.Errorf("decoding %s from the kept declaration: %w", found, err)
		}
		out[found] = u
		return nil
	})
	return out, err
}

// Rendering returns every declared object, in the order rendered, and their digest: the
// rendering the declaration was made from, new objects each call (apply may change them). It
// is how a full reconcile whose inputs did not change skips the render.
func (d *Declaration) Rendering() (*render.Result, error) {
	objects := make([]*unstructured.Unstructured, 0, d.objects)
	err := d.each(d.frames, func(_, object []byte) error {
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

// each unpacks frames, in order, and calls f with each object's line key and JSON, in order,
// until f returns an error.
func (d *Declaration) each(frames [][]byte, f func(key, object []byte) error) error {
	for _, frame := range frames {
		if err := eachLine(frame, f); err != nil {
			return err
		}
	}
	return nil
}

// eachLine unpacks one frame and calls f with each of its lines' key and JSON.
func eachLine(frame []byte, f func(key, object []byte) error) error {
	raw, err := unpacker.DecodeAll(frame, nil)
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

// keyBytes is about what one entry of Declaration.keys costs in a Go map.
const keyBytes = 32

// Size is about how many bytes the declaration holds in memory: what the caller bounds all of
// them by.
func (d *Declaration) Size() int {
	n := len(d.keys) * keyBytes
	for _, f := range d.frames {
		n += len(f) + frameBytes
	}
	return n
}

// frameBytes is about what a frame costs beyond its bytes: its slice header.
const frameBytes = 24
