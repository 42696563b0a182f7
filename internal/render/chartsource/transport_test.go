package chartsource

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

func TestLimitTransport(t *testing.T) {
	const limit = 64 << 10
	chunk := make([]byte, 4<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("bytes"))
		if r.URL.Query().Get("length") == "declared" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		for written := 0; written < n; written += len(chunk) {
			if _, err := w.Write(chunk[:min(len(chunk), n-written)]); err != nil {
				return
			}
			if f, ok := w.(http.Flusher); ok {
				f.Flush() // chunked: no Content-Length to refuse on
			}
		}
	}))
	defer srv.Close()

	tests := []struct {
		name     string
		requests []string // query strings, all charged to one budget
		wantErr  bool
	}{
		{"body exactly at the limit", []string{"bytes=65536"}, false},
		{"chunked body over the limit is cut off", []string{"bytes=10485760"}, true},
		{"declared length over the limit is refused unread", []string{"bytes=10485760&length=declared"}, true},
		{"the budget spans requests", []string{"bytes=40000", "bytes=40000"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			budget := newByteBudget(limit)
			client := &http.Client{Transport: limitTransport{base: http.DefaultTransport, budget: budget}}
			var err error
			for _, q := range tt.requests {
				var resp *http.Response
				resp, err = client.Get(srv.URL + "/?" + q)
				if err != nil {
					break
				}
				_, err = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if err != nil {
					break
				}
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr && (!errors.Is(err, errDownloadLimit) || !budget.exceeded.Load()) {
				t.Errorf("err = %v, exceeded = %v; want errDownloadLimit and exceeded", err, budget.exceeded.Load())
			}
			// At most one byte past the limit is ever handed to the reader.
			if used := budget.used.Load(); used > limit+1 {
				t.Errorf("read %d bytes, limit %d", used, limit)
			}
		})
	}
}
