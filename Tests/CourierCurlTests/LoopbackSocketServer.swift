#if canImport(CCurl)
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on a loopback port, on a thread of its own, for faults the reference servers
/// cannot script: each accepted connection is handed to `serve`, one connection at a time, and
/// every request head is counted. ``stop()`` closes the listening socket (a reconnect is then
/// refused) and ends the thread: call it when the test ends. ``reopen()`` listens on the same port
/// again.
final class LoopbackSocketServer: @unchecked Sendable {
    /// One accepted connection: read request heads and bodies, write raw bytes.
    final class Connection {
        fileprivate let socket: Int32
        fileprivate let server: LoopbackSocketServer
        private var pending: [UInt8] = []

        fileprivate init(socket: Int32, server: LoopbackSocketServer) {
            self.socket = socket
            self.server = server
        }

        /// The next request head, lower-cased, without its blank line (counted), or `nil` once the
        /// peer closed. The body stays unread: ``readBody(of:)`` reads it.
        func readHead() -> String? {
            while true {
                if let end = Self.find(pending, Array("\r\n\r\n".utf8)) {
                    let head = String(decoding: pending[0..<end], as: UTF8.self).lowercased()
                    pending.removeFirst(end + 4)
                    server.countRequest()
                    return head
                }
                guard receive() else { return nil }
            }
        }

        /// Reads (and drops) the body `head` announces with `Content-Length`; `false` if the peer closed.
        func readBody(of head: String) -> Bool {
            let line = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
            let length = line.flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            while pending.count < length {
                guard receive() else { return false }
            }
            pending.removeFirst(length)
            return true
        }

        /// Writes `text` as it is (CRLFs included).
        func write(_ text: String) {
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        /// Stops accepting connections (a reconnect is refused).
        func closeListener() { server.stop() }

        private func receive() -> Bool {
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { return false }
            pending.append(contentsOf: buffer[0..<count])
            return true
        }

        private static func find(_ haystack: [UInt8], _ needle: [UInt8]) -> Int? {
            guard haystack.count >= needle.count else { return nil }
            for index in 0...(haystack.count - needle.count) where Array(haystack[index..<(index + needle.count)]) == needle {
                return index
            }
            return nil
        }
    }

    /// `http://127.0.0.1:port`.
    let origin: URL
    private var listener: Int32
    private let serve: @Sendable (Connection) -> Void
    private let lock = NSLock()
    private var requests = 0
    private var stopped = false

    /// How many request heads the server read.
    var requestCount: Int { lock.withLock { requests } }

    init(serve: @escaping @Sendable (Connection) -> Void) throws {
        let (listener, port) = try Self.openListener(port: 0)
        guard let origin = URL(string: "http://127.0.0.1:\(port)") else {
            close(listener)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        self.listener = listener
        self.origin = origin
        self.serve = serve
        serveConnections(of: listener)
    }

    /// A listening socket on 127.0.0.1:`port` (0: a free one), and its port.
    private static func openListener(port: UInt16) throws -> (Int32, UInt16) {
        #if canImport(Glibc)
        let streamType = Int32(SOCK_STREAM.rawValue)
        #else
        let streamType = SOCK_STREAM
        #endif
        let listener = socket(AF_INET, streamType, 0)
        guard listener >= 0 else { throw POSIXError(.EMFILE) }
        var reuse: Int32 = 1
        _ = setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 64) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        return (listener, UInt16(bigEndian: address.sin_port))
    }

    /// Serves the connections `listener` accepts on a thread of its own, until it is closed.
    private func serveConnections(of listener: Int32) {
        Thread { [self] in
            while true {
                let socket = accept(listener, nil, nil)
                guard socket >= 0 else { return }
                serve(Connection(socket: socket, server: self))
                close(socket)
            }
        }.start()
    }

    /// Closes the listening socket; the accepting thread ends.
    func stop() {
        let listener: Int32? = lock.withLock {
            defer { stopped = true }
            return stopped ? nil : self.listener
        }
        guard let listener else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Listens on the same port again after ``stop()``, serving new connections as before.
    func reopen() throws {
        guard let port = origin.port.flatMap(UInt16.init(exactly:)) else { throw POSIXError(.EADDRNOTAVAIL) }
        let (listener, _) = try Self.openListener(port: port)
        lock.withLock {
            self.listener = listener
            stopped = false
        }
        serveConnections(of: listener)
    }

    fileprivate func countRequest() { lock.withLock { requests += 1 } }
}
#endif
