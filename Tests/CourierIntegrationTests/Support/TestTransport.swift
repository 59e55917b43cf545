import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import Testing
#if canImport(CourierCurl)
import CourierCurl
#endif

/// The transport every integration test sends through, chosen by `COURIER_TRANSPORT`: `curl`
/// runs the whole suite over ``CurlTransport`` (`scripts/test` runs the integration suites a
/// second time that way on Linux), anything else or unset over ``URLSessionTransport``. Both must
/// pass the same tests; a test that is about URLSession itself says so and uses it directly.
enum TestTransport {
    /// `true` when this run sends through libcurl.
    static let isCurl: Bool = ProcessInfo.processInfo.environment["COURIER_TRANSPORT"] == "curl"

    /// The name of the transport under test, for messages.
    static var name: String { isCurl ? "CurlTransport" : "URLSessionTransport" }

    /// A fresh transport (its own connections and cookies).
    ///
    /// - Parameter maximumConnectionsPerHost: Room for parallel calls to one host.
    static func make(maximumConnectionsPerHost: Int? = nil) -> any Transport & SessionResettable {
        #if canImport(CourierCurl)
        if isCurl {
            return CurlTransport { configuration in
                if let maximumConnectionsPerHost { configuration.httpMaximumConnectionsPerHost = maximumConnectionsPerHost }
            }
        }
        #endif
        let configuration = URLSessionTransport.defaultConfiguration()
        if let maximumConnectionsPerHost { configuration.httpMaximumConnectionsPerHost = maximumConnectionsPerHost }
        return URLSessionTransport(configuration: configuration)
    }

    /// A fresh transport enforcing `pinning`: ``PinningTransport`` over URLSession, or a
    /// ``CurlTransport`` with the pins in its configuration.
    static func make(pinning: PinningPolicy) -> any Transport {
        #if canImport(CourierCurl)
        if isCurl { return CurlTransport { $0.pinning = pinning } }
        #endif
        return PinningTransport(policy: pinning)
    }

    /// A fresh transport whose own cookie handling is off, to put under a ``CookieStoringTransport``.
    static func makeWithoutCookies() -> any Transport & SessionResettable {
        #if canImport(CourierCurl)
        if isCurl { return CurlTransport { $0.httpShouldSetCookies = false } }
        #endif
        return URLSessionTransport(configuration: CookieStoringTransport.baseConfiguration())
    }

    /// Runs a test only in the URLSession pass: it is about URLSession (or URLSessionTransport)
    /// itself, not behaviour both transports share.
    static var urlSessionOnly: ConditionTrait {
        .enabled(if: !isCurl, "exercises URLSessionTransport itself")
    }

    /// Sets a fresh ``make(maximumConnectionsPerHost:)`` transport: `APIClient(environment: e, configure: TestTransport.configure)`.
    static func configure(_ configuration: inout APIClient.Configuration) {
        configuration.transport = make()
    }

    /// The same for clients of an environment set.
    static func configure(_ configuration: inout APIClient.Configuration, _ environment: APIEnvironment) {
        configuration.transport = make()
    }
}
