/// A bidirectional byte connection under the WebSocket framing: TCP (+ TLS, + proxy) from libcurl
/// on Linux, or an in-memory pipe in tests. The RFC 6455 code above it is platform-neutral.
package protocol ByteStream: Sendable {
    /// Up to `maximumLength` bytes; an empty array means the peer closed (EOF).
    ///
    /// - Throws: ``WebSocketError/connectionFailed(_:)`` when the connection broke.
    func read(maximumLength: Int) async throws -> [UInt8]
    /// Writes all of `bytes`.
    ///
    /// - Throws: ``WebSocketError/connectionFailed(_:)`` or ``WebSocketError/notConnected``.
    func write(_ bytes: [UInt8]) async throws
    /// Closes the connection; pending and later reads return EOF. Idempotent.
    func close()
}
