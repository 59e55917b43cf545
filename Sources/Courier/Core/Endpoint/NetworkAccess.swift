/// Which networks an endpoint may use, by what they cost the user: a prefetch or a large
/// download can stay off cellular data and Low Data Mode while user-initiated calls go anywhere.
///
/// ```swift
/// struct PrefetchCovers: Endpoint {
///     typealias Response = [Item]
///     var path: String { "/covers" }
///     var policy: EndpointPolicy { .standard.with(\.networkAccess, .prefetch) }
/// }
/// ```
///
/// How it is enforced (``EndpointPolicy/networkAccess``):
/// - Apple platforms: on every request, as `URLRequest.allowsExpensiveNetworkAccess` and
///   `allowsConstrainedNetworkAccess`; the system refuses the call when the path in use is
///   expensive (cellular, a personal hotspot) or constrained (Low Data Mode), and its
///   `URLError.notConnectedToInternet` with `networkUnavailableReason` `.expensive`/`.constrained`
///   becomes ``NetworkError/networkUnavailable(_:)``.
/// - Every platform, with a ``NetworkPathMonitoring`` in ``APIClient/Configuration/networkPath``:
///   the client asks it before anything is sent and refuses the call with the same error when the
///   current path is known to be expensive or constrained.
/// - Linux without a monitor: nothing knows a path's cost, so the policy is a no-op.
public struct NetworkAccess: Sendable, Hashable {
    /// Whether the call may use an expensive network: cellular data or a personal hotspot.
    public var allowsExpensive: Bool
    /// Whether the call may use a constrained network: one in Low Data Mode.
    public var allowsConstrained: Bool

    /// Access to the networks described.
    ///
    /// - Parameters:
    ///   - allowsExpensive: Whether cellular data and hotspots may carry the call.
    ///   - allowsConstrained: Whether a network in Low Data Mode may carry the call.
    public init(allowsExpensive: Bool = true, allowsConstrained: Bool = true) {
        self.allowsExpensive = allowsExpensive
        self.allowsConstrained = allowsConstrained
    }

    /// Any network (the default).
    public static let unrestricted = NetworkAccess()

    /// Neither expensive nor constrained networks: for prefetches and large downloads the user did
    /// not ask for now.
    public static let prefetch = NetworkAccess(allowsExpensive: false, allowsConstrained: false)

    /// Anything but a network in Low Data Mode: for optional, heavy content (high-resolution media)
    /// the user chose to spare.
    public static let respectsLowDataMode = NetworkAccess(allowsExpensive: true, allowsConstrained: false)

    /// Why `path` may not carry a call with this access, or `nil` when it may (or its cost is
    /// unknown).
    func refusal(on path: NetworkPath?) -> NetworkUnavailableReason? {
        guard let path else { return nil }
        if !allowsExpensive, path.isExpensive == true { return .expensive }
        if !allowsConstrained, path.isConstrained == true { return .constrained }
        return nil
    }
}

/// Why a call was refused a network: the terms of `URLError.NetworkUnavailableReason`.
public enum NetworkUnavailableReason: String, Sendable, Hashable, CaseIterable {
    /// The call does not allow cellular access (`URLRequest.allowsCellularAccess`).
    case cellular
    /// The path is expensive (cellular, a personal hotspot) and the call does not allow that
    /// (``NetworkAccess/allowsExpensive``).
    case expensive
    /// The path is constrained (Low Data Mode) and the call does not allow that
    /// (``NetworkAccess/allowsConstrained``).
    case constrained
}

/// What is known about the network path the device uses now; `nil` for what is not known.
public struct NetworkPath: Sendable, Hashable {
    /// Whether the path is expensive (cellular, a personal hotspot).
    public var isExpensive: Bool?
    /// Whether the path is constrained (Low Data Mode).
    public var isConstrained: Bool?

    /// A path with what is known of it.
    public init(isExpensive: Bool? = nil, isConstrained: Bool? = nil) {
        self.isExpensive = isExpensive
        self.isConstrained = isConstrained
    }
}

/// Tells the client what the current network path costs, so ``EndpointPolicy/networkAccess`` is
/// kept where the system does not enforce it (Linux). Conform an adapter over your platform's
/// path monitor (e.g. `NWPathMonitor`'s `isExpensive`/`isConstrained`, or a Linux
/// NetworkManager `Metered` property).
public protocol NetworkPathMonitoring: Sendable {
    /// The path in use now, or `nil` when unknown. Called once per call before it is sent: answer
    /// from a stored value, without blocking.
    var currentPath: NetworkPath? { get }
}
