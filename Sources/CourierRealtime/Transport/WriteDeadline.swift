/// The deadline of one write to a peer (``WebSocketClient/Configuration/writeTimeout``): a peer
/// that stops reading holds a write until the connection fails, so a watchdog started with the
/// write calls `expired` — which fails the connection, and that ends the write — unless the write
/// ended first. Both transports use it: Courier's RFC 6455 connection for each write slice, and
/// `URLSessionWebSocketTask` (which has no write deadline of its own) for each send.
enum WriteDeadline {
    /// Runs `write`; calls `expired` once `timeout` has passed on `sleep`'s clock while it runs.
    ///
    /// - Parameters:
    ///   - timeout: How long the write may take.
    ///   - sleep: The clock (`Task.sleep` by default; tests inject a manual one). A sleep that
    ///     throws (cancelled when the write ended) never calls `expired`.
    ///   - expired: Fails the connection.
    ///   - isolation: The caller's actor, where `write` runs (an actor's own stream).
    ///   - write: The write.
    /// - Throws: What `write` throws.
    static func run(
        timeout: Duration, sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        expired: @escaping @Sendable () async -> Void, isolation: isolated (any Actor)? = #isolation,
        write: () async throws -> Void
    ) async throws {
        let watchdog = Task {
            do { try await sleep(timeout) } catch { return }
            await expired()
        }
        defer { watchdog.cancel() }
        try await write()
    }
}
