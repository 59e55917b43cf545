import Courier
import Foundation

/// The measurements of one connection attempt: its identity, handshake timing and the traffic of
/// the connection once open. Counted from the client's actor and its keepalive task, so the
/// traffic sits in a lock.
final class ConnectionMeter: Sendable {
    /// Messages, payload bytes and pings of one connection.
    struct Traffic: Sendable, Hashable {
        var messagesSent = 0
        var bytesSent = 0
        var messagesReceived = 0
        var bytesReceived = 0
        var pingsSent = 0
        var pongsReceived = 0
        var lastRoundTripTime: Duration?
    }

    /// The attempt's ID in logs and metrics.
    let id = RequestID()
    /// Wall-clock start.
    let startedAt = Date()
    /// The start on the client's clock.
    let started: Duration
    /// Whether the session had been open before.
    let isReconnect: Bool
    /// The handshake as logs show it; `nil` when the client has no logger.
    let handshake: RedactedHandshake?
    private let traffic = Locked(Traffic())

    init(started: Duration, isReconnect: Bool, handshake: RedactedHandshake?) {
        self.started = started
        self.isReconnect = isReconnect
        self.handshake = handshake
    }

    /// The traffic so far.
    var current: Traffic { traffic.current }

    func sent(_ message: WebSocketMessage) {
        let size = message.byteCount
        traffic.withLock {
            $0.messagesSent += 1
            $0.bytesSent += size
        }
    }

    func received(_ message: WebSocketMessage) {
        let size = message.byteCount
        traffic.withLock {
            $0.messagesReceived += 1
            $0.bytesReceived += size
        }
    }

    func pingSent() { traffic.withLock { $0.pingsSent += 1 } }

    func pongReceived(after roundTrip: Duration) {
        traffic.withLock {
            $0.pongsReceived += 1
            $0.lastRoundTripTime = roundTrip
        }
    }
}
