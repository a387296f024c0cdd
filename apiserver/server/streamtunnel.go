package server

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/minik8s/minik8s/api/apierrors"
)

// Port-forward over WebSocket (kubectl >= 1.31): the client offers
// WebSocket subprotocols "SPDY/3.1+portforward.k8s.io" and speaks SPDY
// inside binary messages. As kube-apiserver's StreamTunnelingHandler, the
// apiserver asks the kubelet for a plain SPDY upgrade and, once it
// answers 101, accepts the WebSocket and carries the bytes both ways:
// no SPDY is parsed here; the kubelet alone speaks it.
const (
	spdyTunnelPrefix   = "SPDY/3.1+"
	headerStreamProto  = "X-Stream-Protocol-Version"
	spdyUpgradeHeader  = "SPDY/3.1"
	tunnelWriteTimeout = 30 * time.Second
)

// isTunnelRequest tells a WebSocket upgrade offering a tunneled SPDY
// subprotocol.
func isTunnelRequest(r *http.Request) bool {
	if !websocket.IsWebSocketUpgrade(r) {
		return false
	}
	for _, p := range websocket.Subprotocols(r) {
		if strings.HasPrefix(p, spdyTunnelPrefix) {
			return true
		}
	}
	return false
}

func (s *Server) tunnelPortForward(w http.ResponseWriter, r *http.Request, u *url.URL) {
	var protos []string
	for _, p := range websocket.Subprotocols(r) {
		if rest, ok := strings.CutPrefix(p, spdyTunnelPrefix); ok {
			protos = append(protos, rest)
		}
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, u.String(), nil)
	if err != nil {
		writeError(w, r, err)
		return
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", spdyUpgradeHeader)
	for _, p := range protos {
		req.Header.Add(headerStreamProto, p)
	}
	rt, err := s.proxy.rt()
	if err != nil {
		writeError(w, r, err)
		return
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		writeError(w, r, kubeletUnreachable(u, err))
		return
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer resp.Body.Close()
		relayKubeletError(w, r, resp)
		return
	}
	backend, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		resp.Body.Close()
		writeError(w, r, apierrors.NewInternalError(errors.New("the kubelet's upgraded connection is not writable")))
		return
	}
	defer backend.Close()
	chosen := strings.TrimSpace(resp.Header.Get(headerStreamProto))
	if chosen == "" && len(protos) > 0 {
		chosen = protos[0]
	}
	up := websocket.Upgrader{
		Subprotocols:     []string{spdyTunnelPrefix + chosen},
		HandshakeTimeout: 30 * time.Second,
		// Authentication is by the request's credentials, checked by the
		// filter chain; the Origin adds nothing.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	defer ws.Close()
	done := make(chan struct{}, 2)
	go func() { // kubelet -> client
		defer func() { done <- struct{}{} }()
		buf := make([]byte, 32<<10)
		for {
			n, err := backend.Read(buf)
			if n > 0 {
				_ = ws.SetWriteDeadline(time.Now().Add(tunnelWriteTimeout))
				if werr := ws.WriteMessage(websocket.BinaryMessage, buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { // client -> kubelet
		defer func() { done <- struct{}{} }()
		for {
			typ, rd, err := ws.NextReader()
			if err != nil {
				return
			}
			if typ != websocket.BinaryMessage {
				continue
			}
			if _, err := io.Copy(backend, rd); err != nil {
				return
			}
		}
	}()
	<-done
	_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	_ = backend.Close()
	_ = ws.Close()
	<-done
	s.log.Debug("port-forward tunnel closed", "kubelet", u.Host)
}
