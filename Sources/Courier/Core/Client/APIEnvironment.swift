import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A named server an app can talk to — development, staging, production — switchable at runtime
/// (a debug menu, a QA build) without rebuilding the client.
public struct APIEnvironment: Sendable, Hashable, CustomStringConvertible {
    /// A human-readable name, e.g. `staging`.
    public var name: String
    /// The base URL every endpoint path is appended to, e.g. `https://api.example.com/v2`. A path
    /// in the base URL is kept: `/items` becomes `https://api.example.com/v2/items`.
    public var baseURL: URL
    /// Header fields sent with every request in this environment (e.g. an API key for staging).
    public var headers: HTTPHeaders

    /// Creates an environment.
    public init(name: String, baseURL: URL, headers: HTTPHeaders = HTTPHeaders()) {
        self.name = name
        self.baseURL = baseURL
        self.headers = headers
    }

    /// Creates an environment from a URL string.
    /// - Throws: ``NetworkError/invalidRequest(_:)`` when `baseURL` is not an absolute http(s) URL.
    public init(name: String, baseURL: String, headers: HTTPHeaders = HTTPHeaders()) throws {
        guard let url = URL(string: baseURL), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", url.host != nil
        else { throw NetworkError.invalidRequest("base URL '\(baseURL)' is not an absolute http(s) URL") }
        self.init(name: name, baseURL: url, headers: headers)
    }

    public var description: String { "\(name) (\(baseURL.absoluteString))" }
}
