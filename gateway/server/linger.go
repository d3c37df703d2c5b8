package server

import (
	"io"
	"net"
	"sync"
	"time"
)

// Lingering close. When the server answers before it has read the whole
// request — a body over BodyLimit is refused on its Content-Length alone —
// and then closes the connection, the body still arriving makes the kernel
// send a reset, which can destroy the answer before the client (or HAProxy,
// which before 3.0 does not drain a request either) reads it: the client
// sees "connection reset" instead of 400 payload_too_large. So a connection
// is closed the way HTTP/1.1 servers do (RFC 9112 9.6): shut down the
// sending side after the answer, read and discard what the peer still
// sends, for at most lingerTime and lingerBytes, then close.
const (
	lingerTime  = 5 * time.Second
	lingerBytes = 64 << 20
)

// LingeringListener wraps ln so that its connections close lingering.
func LingeringListener(ln net.Listener) net.Listener { return lingerListener{ln} }

type lingerListener struct{ net.Listener }

func (l lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		return &lingerConn{TCPConn: tc}, nil
	}
	return c, nil
}

type lingerConn struct {
	*net.TCPConn
	once sync.Once
}

// Close sends FIN after what was written, then drains the peer's data in
// the background until it closes too (or the bounds are reached).
func (c *lingerConn) Close() error {
	var err error
	c.once.Do(func() {
		if err = c.TCPConn.CloseWrite(); err != nil {
			err = c.TCPConn.Close()
			return
		}
		go func() {
			_ = c.TCPConn.SetReadDeadline(time.Now().Add(lingerTime))
			_, _ = io.CopyN(io.Discard, c.TCPConn, lingerBytes)
			_ = c.TCPConn.Close()
		}()
	})
	return err
}

// Listen serves the app on addr with lingering close (LingeringListener).
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen(s.App.Config().Network, addr)
	if err != nil {
		return err
	}
	return s.App.Listener(LingeringListener(ln))
}
