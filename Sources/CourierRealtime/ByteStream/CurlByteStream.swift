#if canImport(CCurl)
import CCurl
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A TCP (+ TLS, + proxy) byte connection from libcurl in connect-only mode: `CURLOPT_CONNECT_ONLY`
/// makes `curl_easy_perform` stop after connecting (proxy tunnel and TLS included), then
/// `curl_easy_send`/`curl_easy_recv` move raw bytes. This is how `ws://` and `wss://` work on
/// Linux, where URLSessionWebSocketTask is not available.
///
/// libcurl calls run on two serial dispatch queues (one for reads, one for writes); every call on
/// the easy handle holds `lock`, because a handle (and its TLS session) must not be used from two
/// threads at once. A read waits for data on a dispatch read source, and a write for room on a
/// dispatch write source: neither holds a thread while it waits, and `close()` ends both waits.
package final class CurlByteStream: ByteStream, @unchecked Sendable {
    // @unchecked: `handle`, `closed`, the sources and their count are only touched holding `lock`.
    private let lock = NSLock()
    private var handle: UnsafeMutableRawPointer?
    private var closed = false
    private let socket: curl_socket_t
    private let readQueue = DispatchQueue(label: "courier.realtime.curl.read")
    /// The read source a read waits on, cancelled by ``close()``; guarded by `lock`.
    private var readSource: (any DispatchSourceProtocol)?
    /// The write source a write waits on for room, cancelled by ``close()``; guarded by `lock`.
    private var writeSource: (any DispatchSourceProtocol)?
    /// Sources made on `socket` whose cancel handler has not run yet; guarded by `lock`. The
    /// handle (and with it the socket) is cleaned up only once none is left: libdispatch needs a
    /// descriptor open until every source on it was cancelled and its cancel handler ran. Closed
    /// earlier, the number can go to a new connection while the old registration still stands, and
    /// that connection's source may then never be woken.
    private var watchingSources = 0
    private let writeQueue = DispatchQueue(label: "courier.realtime.curl.write")

    private static let globalInit: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    /// The connect's driver, which frees the handles (``CurlConnector/cleanUp()``).
    private let connector: CurlConnector

    private init(connector: CurlConnector, socket: curl_socket_t) {
        self.connector = connector
        self.handle = connector.easy
        self.socket = socket
    }

    /// Connects to the request's host and port: TLS for `wss://` (verifying the peer against the
    /// system store, or against `trustedCertificateAuthorities` when set), through the proxy the
    /// standard environment variables name, within `connectTimeout`. Holds no thread while it
    /// waits (``CurlConnector``).
    ///
    /// - Throws: ``WebSocketError/connectionFailed(_:)`` with libcurl's message;
    ///   `CancellationError` at once when the calling task is cancelled (nothing stays open).
    package static func connect(_ request: WebSocketRequest) async throws -> CurlByteStream {
        try request.validate()
        guard globalInit else { throw WebSocketError.connectionFailed("curl_global_init failed") }
        var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        components?.scheme = request.isSecure ? "https" : "http"
        guard let target = components?.url?.absoluteString else { throw WebSocketError.invalidURL(request.url.absoluteString) }
        let timeoutMS = max(
            1,
            Int(
                request.connectTimeout.components.seconds * 1000 + request.connectTimeout.components.attoseconds
                    / 1_000_000_000_000_000))
        guard let handle = curl_easy_init() else { throw WebSocketError.connectionFailed("curl_easy_init failed") }
        var code = ccurl_easy_setopt_string(handle, CURLOPT_URL, target)
        if code == CURLE_OK { code = ccurl_easy_setopt_long(handle, CURLOPT_CONNECT_ONLY, 1) }
        if code == CURLE_OK { code = ccurl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1) }
        if code == CURLE_OK { code = ccurl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, timeoutMS) }
        if code == CURLE_OK { code = ccurl_easy_setopt_long(handle, CURLOPT_HTTPPROXYTUNNEL, 1) }
        if code == CURLE_OK, let caFile = request.trustedCertificateAuthorities?.path {
            code = ccurl_easy_setopt_string(handle, CURLOPT_CAINFO, caFile)
        }
        guard code == CURLE_OK, let connector = CurlConnector(easy: handle) else {
            let message = code == CURLE_OK ? "curl_multi_init failed" : String(cString: curl_easy_strerror(code))
            curl_easy_cleanup(handle)
            throw WebSocketError.connectionFailed(message)
        }
        code = await connector.connect()
        var socket: curl_socket_t = -1
        if code == CURLE_OK { code = ccurl_easy_getinfo_socket(handle, &socket) }
        guard code == CURLE_OK, socket >= 0 else {
            let message = String(cString: curl_easy_strerror(code))
            connector.cleanUp()
            if code == CURLE_ABORTED_BY_CALLBACK { throw CancellationError() }
            throw WebSocketError.connectionFailed(message)
        }
        if var size = request.sendBufferSize.map({ Int32(clamping: $0) }) {
            // Bounds what the kernel buffers for a peer that stopped reading (tests fill it fast).
            _ = setsockopt(socket, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        return CurlByteStream(connector: connector, socket: socket)
    }

    /// Reads what libcurl has, else waits for the socket to become readable without holding a
    /// thread: a dispatch read source (libdispatch's event loop watches the descriptor) wakes the
    /// wait. A read blocked in `poll(2)` held one of libdispatch's overcommit threads for as long
    /// as the connection was quiet, and those are capped (255 on Linux): measured, 240 open
    /// connections worked and 300 hung the whole process.
    package func read(maximumLength: Int) async throws -> [UInt8] {
        while true {
            let bytes: [UInt8]? = try await withCheckedThrowingContinuation { continuation in
                readQueue.async { continuation.resume(with: Result { try self.readAvailable(maximumLength: maximumLength) }) }
            }
            if let bytes { return bytes }
            await waitUntil(.readable)
        }
    }

    /// Sends every byte of `bytes`. When the kernel's send buffer is full (a peer that reads
    /// slowly, or not at all) it waits for room on a dispatch write source, holding no thread: a
    /// write blocked in `poll(2)` held an overcommit thread until the write deadline, and 255 such
    /// writes at once hung the whole process, as quiet reads did.
    ///
    /// - Throws: ``WebSocketError/notConnected`` once the stream is closed (also while waiting),
    ///   ``WebSocketError/connectionFailed(_:)`` with libcurl's message when the send fails.
    package func write(_ bytes: [UInt8]) async throws {
        var offset = 0
        while offset < bytes.count {
            let start = offset
            let sent: Int? = try await withCheckedThrowingContinuation { continuation in
                writeQueue.async { continuation.resume(with: Result { try self.sendAvailable(bytes, from: start) }) }
            }
            if let sent {
                offset += sent
            } else {
                await waitUntil(.writable)
            }
        }
    }

    package func close() {
        let (handle, sources): (UnsafeMutableRawPointer?, [any DispatchSourceProtocol]) = lock.withLock {
            closed = true
            let sources = [readSource, writeSource].compactMap { $0 }
            readSource = nil
            writeSource = nil
            // A source still watching the socket: the last cancel handler cleans up instead.
            guard watchingSources == 0 else { return (nil, sources) }
            defer { self.handle = nil }
            return (self.handle, sources)
        }
        if handle != nil { connector.cleanUp() }
        // Ends the waits: each source's cancel handler resumes its reader or writer.
        for source in sources { source.cancel() }
    }

    /// One `curl_easy_recv`: the bytes read (empty: the peer closed, or the stream was closed),
    /// or `nil` when nothing is there yet.
    private func readAvailable(maximumLength: Int) throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: max(1, maximumLength))
        var received = 0
        let code: CURLcode? = buffer.withUnsafeMutableBytes { raw in
            lock.lock()
            defer { lock.unlock() }
            guard !closed, let handle else { return nil }
            return curl_easy_recv(handle, raw.baseAddress, raw.count, &received)
        }
        guard let code else { return [] }
        switch code {
        case CURLE_OK: return Array(buffer.prefix(received))  // 0 bytes: the peer closed
        case CURLE_AGAIN: return nil
        default: throw WebSocketError.connectionFailed(String(cString: curl_easy_strerror(code)))
        }
    }

    /// Which readiness a wait is for.
    private enum Readiness { case readable, writable }

    /// Returns once the socket is readable (data, end of stream or an error) or has room to send,
    /// as `readiness` asks, or the stream was closed. Holds no thread meanwhile: libdispatch's
    /// event loop watches the descriptor.
    private func waitUntil(_ readiness: Readiness) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let watching = lock.withLock { () -> Bool in
                guard !closed else { return false }
                watchingSources += 1  // keeps the socket open until this source's cancel handler ran
                return true
            }
            guard watching else {
                continuation.resume()
                return
            }
            let source: any DispatchSourceProtocol =
                switch readiness {
                case .readable: DispatchSource.makeReadSource(fileDescriptor: socket, queue: readQueue)
                case .writable: DispatchSource.makeWriteSource(fileDescriptor: socket, queue: writeQueue)
                }
            // The one place the waiter resumes: readiness cancels the source, and so does close().
            source.setCancelHandler { [self] in
                sourceEnded()
                continuation.resume()
            }
            // Dispatch releases the handlers once the source is cancelled: no lasting cycle.
            source.setEventHandler { source.cancel() }
            let isClosed = lock.withLock {
                if !closed {
                    switch readiness {
                    case .readable: readSource = source
                    case .writable: writeSource = source
                    }
                }
                return closed
            }
            source.resume()
            if isClosed { source.cancel() }
        }
        lock.withLock {
            switch readiness {
            case .readable: readSource = nil
            case .writable: writeSource = nil
            }
        }
    }

    /// A source's cancel handler ran: once the stream is closed and no source is left, the handle
    /// and its socket are cleaned up.
    private func sourceEnded() {
        let handle: UnsafeMutableRawPointer? = lock.withLock {
            watchingSources -= 1
            guard closed, watchingSources == 0 else { return nil }
            defer { self.handle = nil }
            return self.handle
        }
        if handle != nil { connector.cleanUp() }
    }

    /// One `curl_easy_send` of the bytes from `offset` on: how many the kernel took, or `nil` when
    /// its send buffer is full.
    private func sendAvailable(_ bytes: [UInt8], from offset: Int) throws -> Int? {
        var sent = 0
        let code: CURLcode? = bytes.withUnsafeBytes { raw in
            lock.lock()
            defer { lock.unlock() }
            guard !closed, let handle, let base = raw.baseAddress else { return nil }
            return curl_easy_send(handle, base + offset, raw.count - offset, &sent)
        }
        guard let code else { throw WebSocketError.notConnected }
        switch code {
        case CURLE_OK: return sent > 0 ? sent : nil
        case CURLE_AGAIN: return nil
        default: throw WebSocketError.connectionFailed(String(cString: curl_easy_strerror(code)))
        }
    }

    deinit {
        if handle != nil { connector.cleanUp() }
    }
}

extension RFC6455Transport {
    /// Courier's RFC 6455 client over libcurl byte streams (`ws://` and `wss://`).
    package static func curl(fragmentSize: Int? = nil) -> RFC6455Transport {
        RFC6455Transport(fragmentSize: fragmentSize) { try await CurlByteStream.connect($0) }
    }
}
#endif
