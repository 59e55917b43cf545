import Foundation
import Courier

/// A `NetworkMetricsSink` that keeps every event in memory, for tests.
public final class CapturingMetricsSink: NetworkMetricsSink {
    private let storage = Locked<[NetworkMetricsEvent]>([])
    private let webSocketStorage = Locked<[WebSocketMetricsEvent]>([])

    /// Creates an empty sink.
    public init() {}

    public func record(_ event: NetworkMetricsEvent) {
        storage.withLock { $0.append(event) }
    }

    public func record(_ event: WebSocketMetricsEvent) {
        webSocketStorage.withLock { $0.append(event) }
    }

    /// Every event, in the order recorded.
    public var events: [NetworkMetricsEvent] { storage.current }

    /// Every WebSocket connection event (from a `WebSocketClient` listing this sink), in the order
    /// recorded.
    public var webSocketEvents: [WebSocketMetricsEvent] { webSocketStorage.current }

    /// Forgets every event.
    public func removeAll() {
        storage.set([])
        webSocketStorage.set([])
    }
}
