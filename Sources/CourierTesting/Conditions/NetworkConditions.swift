import Foundation

/// The network a ``ConditionedTransport`` simulates: latency, bandwidth each way, a drop after a
/// number of bytes, offline windows and a failure rate — like Apple's Network Link Conditioner,
/// but deterministic and on a test clock.
///
/// ```swift
/// var conditions = NetworkConditions(latency: .milliseconds(300))
/// conditions.downloadBytesPerSecond = 50_000
/// conditions.dropAfterBytes = 100_000
/// ```
public struct NetworkConditions: Sendable, Hashable {
    /// Added once per request, after the request body is sent and before the response head
    /// arrives (a round trip); zero by default.
    public var latency: Duration
    /// Request body bandwidth in bytes per second; `nil` (the default) for unlimited.
    public var uploadBytesPerSecond: Int?
    /// Response body bandwidth in bytes per second, applied chunk by chunk to streamed bodies;
    /// `nil` (the default) for unlimited.
    public var downloadBytesPerSecond: Int?
    /// The connection is lost after this many response body bytes: the body ends with
    /// `URLError(.networkConnectionLost)` (as `transport`) after
    /// delivering exactly these bytes; `nil` (the default) never drops.
    public var dropAfterBytes: Int?
    /// Times, measured from the transport's creation on its clock, during which every request
    /// fails at once with `URLError(.notConnectedToInternet)` (`offline`).
    public var offlineWindows: [Range<Duration>]
    /// Probability from 0 to 1 that a request fails with `URLError(.networkConnectionLost)`
    /// before reaching the wrapped transport; drawn from the transport's seeded generator. 0 by default.
    public var failureRate: Double

    /// Creates conditions; by default a perfect network.
    public init(
        latency: Duration = .zero, uploadBytesPerSecond: Int? = nil, downloadBytesPerSecond: Int? = nil,
        dropAfterBytes: Int? = nil, offlineWindows: [Range<Duration>] = [], failureRate: Double = 0
    ) {
        self.latency = latency
        self.uploadBytesPerSecond = uploadBytesPerSecond
        self.downloadBytesPerSecond = downloadBytesPerSecond
        self.dropAfterBytes = dropAfterBytes
        self.offlineWindows = offlineWindows
        self.failureRate = failureRate
    }

    /// No delay, no limit, no failure.
    public static let perfect = NetworkConditions()
    /// Every request fails as offline.
    public static let offline = NetworkConditions(offlineWindows: [.zero..<Duration.seconds(Int64.max)])
    /// Network Link Conditioner's "3G" profile: 100 ms each way (200 ms round trip), 780 kbit/s
    /// down, 330 kbit/s up.
    public static let threeG = NetworkConditions(
        latency: .milliseconds(200), uploadBytesPerSecond: 330_000 / 8, downloadBytesPerSecond: 780_000 / 8)
    /// Network Link Conditioner's "Edge" profile: 400 ms round trip, 240 kbit/s down, 200 kbit/s up.
    public static let edge = NetworkConditions(
        latency: .milliseconds(400), uploadBytesPerSecond: 200_000 / 8, downloadBytesPerSecond: 240_000 / 8)
    /// Network Link Conditioner's "Very Bad Network" profile: 1 s round trip, 1 Mbit/s each way,
    /// 10 % of requests lost.
    public static let veryBadNetwork = NetworkConditions(
        latency: .seconds(1), uploadBytesPerSecond: 1_000_000 / 8, downloadBytesPerSecond: 1_000_000 / 8, failureRate: 0.1)

    /// The time `bytes` take at `bytesPerSecond`, exact to the attosecond; zero when unlimited.
    static func transferTime(_ bytes: Int, at bytesPerSecond: Int?) -> Duration {
        guard let rate = bytesPerSecond, rate > 0, bytes > 0 else { return .zero }
        return Duration.seconds(Int64(bytes)) / rate
    }
}
