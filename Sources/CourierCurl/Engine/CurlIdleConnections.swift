#if canImport(CCurl)
import CCurl
import Foundation

/// The sockets of HTTP/1.x connections libcurl keeps alive between transfers, so a connection can
/// be checked before libcurl sends a request on it again (under the engine's lock).
///
/// An idle HTTP/1.x connection has nothing to read: the server speaks only to answer a request
/// (RFC 9112 §9.3). Bytes waiting on one are a server's framing fault — a body longer than its
/// `Content-Length`, a body after a `HEAD` or a `304`, a response nobody asked for — and libcurl
/// 7.88 reuses such a connection anyway: the next request on it reads those bytes as its own
/// answer, or fails with "Received HTTP/0.9". An end of stream means the server closed the
/// connection while it was idle, before the next request could reach it. Either way the next
/// request must not go out on it, and nothing of it was sent yet: the transfer takes another
/// connection (``CurlEngine``).
///
/// HTTP/2 connections are not kept here: frames (PING, SETTINGS, WINDOW_UPDATE, GOAWAY) may
/// arrive on them at any time, and libcurl reads them.
struct CurlIdleConnections {
    private struct Entry {
        let socket: Int32
        let remotePort: Int
    }

    /// By local port: the port libcurl reports in CURLOPT_PREREQFUNCTION for the connection it
    /// is about to use.
    private var entries: [Int: Entry] = [:]

    /// Notes the connection a finished transfer used: kept when libcurl keeps it open after an
    /// HTTP/1.x exchange, forgotten otherwise.
    mutating func transferFinished(_ handle: UnsafeMutableRawPointer) {
        var localPort = 0
        guard ccurl_easy_getinfo_long(handle, CURLINFO_LOCAL_PORT, &localPort) == CURLE_OK, localPort > 0 else { return }
        var version = 0
        var socket: curl_socket_t = -1
        var remotePort = 0
        _ = ccurl_easy_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version)
        // The connection's socket, or -1 when libcurl closed it rather than keep it.
        _ = ccurl_easy_getinfo_socket(handle, &socket)
        _ = ccurl_easy_getinfo_long(handle, CURLINFO_PRIMARY_PORT, &remotePort)
        let http1 = version == CURL_HTTP_VERSION_1_0 || version == CURL_HTTP_VERSION_1_1
        if http1, socket >= 0, remotePort > 0 {
            entries[localPort] = Entry(socket: Int32(socket), remotePort: remotePort)
        } else {
            entries[localPort] = nil
        }
    }

    /// Whether the kept connection libcurl is about to reuse (its ports as CURLOPT_PREREQFUNCTION
    /// reports them) has bytes or an end of stream waiting; if so its socket is shut down, so that
    /// libcurl never uses it again. A new connection (`handle` made no connection of its own:
    /// `CURLINFO_NUM_CONNECTS` is 0 when libcurl reuses one) and one not kept here (HTTP/2) are
    /// never looked at.
    mutating func takeIfUnusable(_ handle: UnsafeMutableRawPointer, localPort: Int, remotePort: Int) -> Bool {
        guard let entry = entries.removeValue(forKey: localPort), entry.remotePort == remotePort else { return false }
        // A socket libcurl closed since may have left its entry (and its descriptor number) behind.
        var connects = 0
        guard ccurl_easy_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK, connects == 0 else {
            return false
        }
        var byte: UInt8 = 0
        let read = recv(entry.socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if read < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return false }
        // The descriptor may have been closed and reused since: only the connection's own socket
        // (the same two ports) is shut down.
        guard Self.port(of: entry.socket, peer: false) == localPort, Self.port(of: entry.socket, peer: true) == remotePort
        else { return false }
        _ = shutdown(entry.socket, Int32(SHUT_RDWR))
        return true
    }

    /// The local or peer port of a TCP socket, or `nil`.
    private static func port(of socket: Int32, peer: Bool) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(socket, $0, &length) : getsockname(socket, $0, &length)
            }
        }
        guard result == 0 else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
        default:
            return nil
        }
    }
}
#endif
