package fleet

import (
	"errors"
	"io"
	"net"
	"strings"
)

// AnswerLost reports whether err is a connection that failed while a request was answered: a
// net.Error (reset, a read timeout), an answer cut short (EOF), or one whose body client-go could
// not read. The request may have been carried out; asking again is the answer (an apply is
// idempotent). redact words these errors, and apply.IsTransient retries them.
func AnswerLost(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || bodyUnread(err)
}

// bodyUnread reports whether err is client-go's for an answer whose body could not be read
// (rest.Request.transformResponse: "... when reading response body ... Please retry"), an HTTP/2
// stream reset or a connection lost mid-answer. What it wraps is net/http's own HTTP/2 error,
// whose types are not exported, so its words are the only way to tell.
func bodyUnread(err error) bool {
	return strings.Contains(err.Error(), "when reading response body")
}
