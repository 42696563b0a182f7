package rendercache

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"holdfast.dev/holdfast/internal/render"
)

// entry is one service's kept rendering, as stored under its name in the Secret's data.
type entry struct {
	// Input is the input digest the objects were rendered from.
	Input string `json:"input"`
	// Digest is render.Result.Digest; decode checks the objects against it.
	Digest       string            `json:"digest"`
	ChartVersion string            `json:"chartVersion,omitempty"`
	Objects      []json.RawMessage `json:"objects"`
}

// maxDecoded bounds what one entry may expand to: a kept rendering is at most as large as the
// objects Render accepts, and a corrupt or hostile entry must not exhaust memory. It bounds a
// Declaration the same way: a larger rendering is not kept in memory, and its drift is
// corrected through a full render.
const maxDecoded = 64 << 20

// encode compresses a rendering made from the input digest input.
func encode(input string, res *render.Result) ([]byte, error) {
	e := entry{Input: input, Digest: res.Digest, ChartVersion: res.ChartVersion, Objects: make([]json.RawMessage, 0, len(res.Objects))}
	for _, o := range res.Objects {
		raw, err := json.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("encoding %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		e.Objects = append(e.Objects, raw)
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encoding the rendering: %w", err)
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("compressing the rendering: %w", err)
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, fmt.Errorf("compressing the rendering: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing the rendering: %w", err)
	}
	return buf.Bytes(), nil
}

// decode returns the rendering an entry holds and its input digest. It fails on anything that
// is not exactly what encode wrote: corrupt data, or objects that do not match their digest.
// Errors never quote the content.
func decode(data []byte) (string, *render.Result, error) {
	raw, err := decompress(data)
	if err != nil {
		return "", nil, err
	}
	var e entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return "", nil, errors.New("decoding the kept rendering: not valid JSON")
	}
	if e.Input == "" || e.Digest == "" {
		return "", nil, errors.New("decoding the kept rendering: no input digest or no digest")
	}
	res := &render.Result{Digest: e.Digest, ChartVersion: e.ChartVersion, Objects: make([]*unstructured.Unstructured, 0, len(e.Objects))}
	for i, o := range e.Objects {
		u := &unstructured.Unstructured{}
		// Unstructured's own decoding keeps integers as int64, as rendering does.
		if err := u.UnmarshalJSON(o); err != nil {
			return "", nil, fmt.Errorf("decoding object %d of the kept rendering: not a Kubernetes object", i+1)
		}
		res.Objects = append(res.Objects, u)
	}
	if got, err := render.Digest(res.Objects); err != nil || got != e.Digest {
		return "", nil, errors.New("the kept rendering does not match its digest")
	}
	return e.Input, res, nil
}

func decompress(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, errors.New("decompressing the kept rendering: not gzip data")
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxDecoded+1))
	if err != nil {
		return nil, errors.New("decompressing the kept rendering: corrupt data")
	}
	if len(raw) > maxDecoded {
		return nil, fmt.Errorf("decompressing the kept rendering: over %d bytes", maxDecoded)
	}
	return raw, nil
}
