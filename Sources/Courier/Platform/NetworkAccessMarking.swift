import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Puts an endpoint's ``NetworkAccess`` on its `URLRequest` and reads the system's refusal back
/// from a `URLError`, where the platform has both (Apple: `allowsExpensiveNetworkAccess`,
/// `allowsConstrainedNetworkAccess`, `URLError.networkUnavailableReason`). Linux's URLRequest has
/// neither property: its twin does nothing and finds no reason.
protocol NetworkAccessMarking: Sendable {
    /// Sets the request's properties for `access`.
    func mark(_ request: inout URLRequest, with access: NetworkAccess)
    /// Why the system refused the network to a request, when `error` says so.
    func unavailableReason(of error: URLError) -> NetworkUnavailableReason?
}

/// Linux: no request property to set, no reason in errors; the client's ``NetworkPathMonitoring``
/// (if any) is what keeps the policy there.
struct NoNetworkAccessMarking: NetworkAccessMarking {
    func mark(_ request: inout URLRequest, with access: NetworkAccess) {}
    func unavailableReason(of error: URLError) -> NetworkUnavailableReason? { nil }
}

#if !canImport(FoundationNetworking)
/// Apple platforms: the request's own network-access properties; the system refuses the task with
/// `URLError.notConnectedToInternet` and a `networkUnavailableReason`.
struct URLRequestNetworkAccessMarking: NetworkAccessMarking {
    func mark(_ request: inout URLRequest, with access: NetworkAccess) {
        if !access.allowsExpensive { request.allowsExpensiveNetworkAccess = false }
        if !access.allowsConstrained { request.allowsConstrainedNetworkAccess = false }
    }

    func unavailableReason(of error: URLError) -> NetworkUnavailableReason? {
        switch error.networkUnavailableReason {
        case .cellular?: return .cellular
        case .expensive?: return .expensive
        case .constrained?: return .constrained
        case nil: return nil
        @unknown default: return nil
        }
    }
}
#endif

extension PlatformAdapters {
    #if canImport(FoundationNetworking)
    /// How an endpoint's network access reaches its request.
    static let networkAccess: any NetworkAccessMarking = NoNetworkAccessMarking()
    #else
    /// How an endpoint's network access reaches its request.
    static let networkAccess: any NetworkAccessMarking = URLRequestNetworkAccessMarking()
    #endif

    /// Why the system refused the network to a request (Apple), or `nil`.
    static func networkUnavailableReason(_ error: URLError) -> NetworkUnavailableReason? {
        networkAccess.unavailableReason(of: error)
    }
}
