package server

import (
	"encoding/base64"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/gorilla/websocket"
)

// A pods/log read over WebSocket, as kube-apiserver's StreamObject
// (k8s.io/apiserver wsstream.Reader): the raw stream in messages of up to
// 2 KiB after an empty first one, binary for "binary.k8s.io" (or no
// subprotocol), text in base64 for "base64.binary.k8s.io"; the server
// closes when the stream ends.
const (
	logProtocolBinary = "binary.k8s.io"
	logProtocolBase64 = "base64.binary.k8s.io"
	// logWriteTimeout is wsstream's default deadline for one write.
	logWriteTimeout = 10 * time.Minute
)

var logUpgrader = websocket.Upgrader{
	HandshakeTimeout: 30 * time.Second,
	// As kube: browsers from any origin may read logs with their credentials
	// already checked by the filter chain.
	CheckOrigin: func(*http.Request) bool { return true },
}

// isLogWebSocket tells a pods/log request that asks for a WebSocket.
func isLogWebSocket(r *http.Request) bool { return websocket.IsWebSocketUpgrade(r) }

// negotiateLogProtocol is wsstream's handshake: the first of the client's
// subprotocols the server speaks, "" when it offers none.
func negotiateLogProtocol(r *http.Request) (string, bool) {
	offered := websocket.Subprotocols(r)
	if len(offered) == 0 {
		return "", true
	}
	for _, p := range offered {
		if slices.Contains([]string{logProtocolBinary, logProtocolBase64}, p) {
			return p, true
		}
	}
	return "", false
}

// streamLogWebSocket upgrades r and copies body onto the WebSocket.
func streamLogWebSocket(w http.ResponseWriter, r *http.Request, body io.Reader) {
	proto, ok := negotiateLogProtocol(r)
	if !ok {
		// x/net/websocket's answer to a refused handshake, as kube's.
		w.WriteHeader(http.StatusForbidden)
		return
	}
	var hdr http.Header
	if proto != "" {
		hdr = http.Header{"Sec-Websocket-Protocol": {proto}}
	}
	c, err := logUpgrader.Upgrade(w, r, hdr)
	if err != nil {
		return // the upgrader has answered
	}
	defer c.Close()
	// The client sends nothing; its close (or a read error) ends the copy.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	}()
	b64 := proto == logProtocolBase64
	send := func(p []byte) error {
		_ = c.SetWriteDeadline(time.Now().Add(logWriteTimeout))
		if b64 {
			return c.WriteMessage(websocket.TextMessage, []byte(base64.StdEncoding.EncodeToString(p)))
		}
		return c.WriteMessage(websocket.BinaryMessage, p)
	}
	if send(nil) != nil {
		return
	}
	buf := make([]byte, 2048)
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			if send(buf[:n]) != nil {
				return
			}
		}
		if rerr != nil {
			break
		}
		select {
		case <-done:
			return
		default:
		}
	}
	_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
}
