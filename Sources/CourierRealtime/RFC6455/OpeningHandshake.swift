import Courier
import Foundation

/// The client side of the opening handshake (RFC 6455 §4.1): writes the HTTP/1.1 Upgrade request
/// and checks the server's answer.
enum OpeningHandshake {
    /// RFC 6455 §1.3: appended to the key before hashing.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    /// A response head larger than this (bytes) fails the handshake.
    static let maximumResponseHead = 16 * 1024

    /// What a successful handshake leaves: the selected subprotocol and any frame bytes the server
    /// sent right after its response head.
    struct Outcome: Sendable {
        var subprotocol: String?
        var leftover: [UInt8]
        /// The permessage-deflate parameters negotiated, if any.
        var compression: DeflateParameters?
    }

    /// A fresh `Sec-WebSocket-Key`: base64 of 16 random bytes (§4.1).
    static func makeKey() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
    }

    /// The `Sec-WebSocket-Accept` a server must answer for `key` (§4.2.2 step 5.4).
    static func acceptValue(for key: String) -> String {
        Data(SHA1.hash(Array((key + guid).utf8))).base64EncodedString()
    }

    /// The request head for `request` with `key`.
    static func requestHead(_ request: WebSocketRequest, key: String) -> [UInt8] {
        let url = request.url
        // As the URL has them: `url.path` is decoded, and an escaped "/", "?" or space in a
        // segment would move the request to another path or break the request line.
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let path = components?.percentEncodedPath ?? ""
        var target = path.isEmpty ? "/" : path
        if let query = components?.percentEncodedQuery { target += "?" + query }
        var host = url.host ?? ""
        if host.contains(":") { host = "[\(host)]" }
        if let port = url.port, port != (request.isSecure ? 443 : 80) { host += ":\(port)" }
        var lines = [
            "GET \(target) HTTP/1.1",
            "Host: \(host)",
            "Upgrade: websocket",
            "Connection: Upgrade",
            "Sec-WebSocket-Key: \(key)",
            "Sec-WebSocket-Version: 13",
        ]
        if !request.subprotocols.isEmpty {
            lines.append("Sec-WebSocket-Protocol: \(request.subprotocols.joined(separator: ", "))")
        }
        if let compression = request.compression {
            lines.append("Sec-WebSocket-Extensions: \(DeflateNegotiation.offerHeader(compression))")
        }
        // By scalar: "\r\n" is one Character, equal to neither "\r" nor "\n", and would add a field.
        let lineBreaks: Set<Unicode.Scalar> = ["\r", "\n"]
        for header in request.headers
        where !header.name.unicodeScalars.contains(where: lineBreaks.contains)
            && !header.value.unicodeScalars.contains(where: lineBreaks.contains)
        {
            lines.append("\(header.name): \(header.value)")
        }
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// Sends the request on `stream` and validates the response.
    ///
    /// - Throws: ``WebSocketError/handshakeRedirected(status:location:)`` for a 3xx,
    ///   ``WebSocketError/handshakeRejected(status:)`` for another status other than 101 (inside
    ///   a ``HandshakeRetryAfter`` for a 429 or 503 with a `Retry-After`),
    ///   ``WebSocketError/invalidHandshake(_:)`` for a 101 that breaks §4.1,
    ///   ``WebSocketError/negotiationFailed(_:)`` for a subprotocol or extension the client cannot
    ///   use, and the stream's errors.
    static func perform(on stream: any ByteStream, request: WebSocketRequest) async throws -> Outcome {
        let key = makeKey()
        try await stream.write(requestHead(request, key: key))
        var received: [UInt8] = []
        let terminator: [UInt8] = [13, 10, 13, 10]
        while true {
            let chunk = try await stream.read(maximumLength: 4096)
            guard !chunk.isEmpty else {
                throw WebSocketError.invalidHandshake("the server closed the connection during the handshake")
            }
            let searchFrom = max(0, received.count - 3)
            received += chunk
            if let end = firstIndex(of: terminator, in: received, from: searchFrom) {
                let head = Array(received[..<end])
                let leftover = Array(received[(end + 4)...])
                let (subprotocol, compression) = try negotiate(
                    head: head, key: key, offered: request.subprotocols, requiresSubprotocol: request.requiresSubprotocol,
                    compression: request.compression)
                return Outcome(subprotocol: subprotocol, leftover: leftover, compression: compression)
            }
            guard received.count <= maximumResponseHead else {
                throw WebSocketError.invalidHandshake("response head larger than \(maximumResponseHead) bytes")
            }
        }
    }

    /// Checks a response head (§4.1, the client's checks 1–6); returns the selected subprotocol.
    static func validate(head: [UInt8], key: String, offered: [String], requiresSubprotocol: Bool = false) throws -> String? {
        try negotiate(head: head, key: key, offered: offered, requiresSubprotocol: requiresSubprotocol, compression: nil).0
    }

    /// Checks a response head (§4.1, the client's checks 1–6); returns the selected subprotocol and
    /// the permessage-deflate parameters the server accepted (RFC 7692 §7.1) when `compression`
    /// was offered.
    static func negotiate(
        head: [UInt8], key: String, offered: [String], requiresSubprotocol: Bool, compression: PerMessageDeflate?
    ) throws -> (String?, DeflateParameters?) {
        let text = String(decoding: head, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw WebSocketError.invalidHandshake("malformed status line \"\(statusLine.prefix(80))\"")
        }
        var headers: [String: [String]] = [:]
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                guard status == 101 else { continue }  // a rejection's status is what counts
                throw WebSocketError.invalidHandshake("malformed header line")
            }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            headers[name, default: []].append(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        if (300..<400).contains(status) {
            throw WebSocketError.handshakeRedirected(status: status, location: headers["location"]?.first)
        }
        guard status == 101 else {
            // An overloaded server or one in maintenance names when to come back: waited out.
            if status == 429 || status == 503,
                let wait = (headers["retry-after"] ?? []).compactMap({ RetryAfter(headerValue: $0)?.delay() }).max(),
                wait > .zero
            {
                throw HandshakeRetryAfter(failure: .handshakeRejected(status: status), wait: wait)
            }
            throw WebSocketError.handshakeRejected(status: status)
        }
        func tokens(_ name: String) -> [String] {
            (headers[name] ?? []).flatMap { $0.split(separator: ",") }.map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }
        }
        guard tokens("upgrade").contains("websocket") else {
            throw WebSocketError.invalidHandshake("no \"Upgrade: websocket\" (RFC 6455 §4.1)")
        }
        guard tokens("connection").contains("upgrade") else {
            throw WebSocketError.invalidHandshake("no \"Connection: Upgrade\" (RFC 6455 §4.1)")
        }
        guard headers["sec-websocket-accept"] == [acceptValue(for: key)] else {
            throw WebSocketError.invalidHandshake("Sec-WebSocket-Accept does not match the key (RFC 6455 §4.1)")
        }
        // §4.1 check 5: only permessage-deflate, and only when offered (RFC 7692 §7.1).
        let accepted = try DeflateNegotiation.accept(headers["sec-websocket-extensions"] ?? [], offer: compression)
        // §4.1 check 6: at most one subprotocol, one of those offered.
        guard let selected = headers["sec-websocket-protocol"], selected.contains(where: { !$0.isEmpty }) else {
            if requiresSubprotocol, !offered.isEmpty {
                throw WebSocketError.negotiationFailed(
                    "the server selected none of the subprotocols offered (\(offered.joined(separator: ", ")))")
            }
            return (nil, accepted)
        }
        guard selected.count == 1, let name = selected.first, offered.contains(name) else {
            throw WebSocketError.negotiationFailed(
                "the server selected a subprotocol the client did not offer: \(selected.joined(separator: ", "))"
                    + (offered.isEmpty ? " (none was offered)" : " (offered: \(offered.joined(separator: ", ")))"))
        }
        return (name, accepted)
    }

    private static func firstIndex(of pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        var index = start
        while index <= bytes.count - pattern.count {
            if bytes[index] == pattern[0], Array(bytes[index..<(index + pattern.count)]) == pattern { return index }
            index += 1
        }
        return nil
    }
}
