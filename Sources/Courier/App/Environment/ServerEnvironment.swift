import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One environment an app can run against — development, staging, production, a developer's own
/// machine — declared once in an ``EnvironmentSet``.
///
/// An environment has a base URL per API the app talks to (`"default"` when there is one API),
/// header fields sent with every request there, optionally its own certificate pins, and a
/// ``storageNamespace`` that keeps its session state apart: token stores, cache partitions and
/// cookie storage are per namespace, so a staging token or cookie never reaches production.
///
/// ```swift
/// let staging = try ServerEnvironment("staging", baseURLs: [
///     "default": URL(string: "https://staging.example.com/v1")!,
///     "media":   URL(string: "https://media.staging.example.com")!,
/// ], headers: ["X-API-Key": stagingKey])
/// ```
public struct ServerEnvironment: Sendable, Hashable, Identifiable, CustomStringConvertible {
    /// The API name used when an app has one API.
    public static let defaultAPI = "default"

    /// The identifier used by overrides (`COURIER_ENV=staging`), the persisted choice and build
    /// mappings: 1...64 ASCII letters, digits, `.`, `_` or `-`.
    public let id: String
    /// A name for debug menus and logs, e.g. `Staging (EU)`.
    public var displayName: String
    /// Base URL per API name, e.g. `["default": https://api.example.com/v1]`. Each is an absolute
    /// http(s) URL; a path is kept (see ``APIEnvironment/baseURL``).
    public let baseURLs: [String: URL]
    /// Header fields sent with every request in this environment (e.g. a staging API key).
    public var headers: HTTPHeaders
    /// Certificate pins for this environment's hosts, or `nil` for none. A client built for an
    /// ``EnvironmentSet`` sends this environment's requests through a ``PinningTransport`` with them.
    public var pins: PinningPolicy?
    /// The namespace of this environment's session state (token store, cache partition); the
    /// identifier by default. Same rules as ``id``; unique within a set.
    public let storageNamespace: String

    /// Creates an environment with one base URL per API.
    ///
    /// - Parameters:
    ///   - id: The identifier (1...64 ASCII letters, digits, `.`, `_`, `-`).
    ///   - displayName: A name for menus; `id` by default.
    ///   - baseURLs: Base URL per API name; at least one.
    ///   - headers: Header fields for every request in this environment.
    ///   - pins: Certificate pins, or `nil`.
    ///   - storageNamespace: Namespace of the session state; `id` by default.
    /// - Throws: ``EnvironmentError/invalidIdentifier(_:)`` for a bad `id` or namespace,
    ///   ``EnvironmentError/invalidBaseURL(environment:api:url:)`` for a base URL that is not an
    ///   absolute http(s) URL, ``EnvironmentError/missingBaseURL(environment:api:)`` when
    ///   `baseURLs` is empty.
    public init(
        _ id: String, displayName: String? = nil, baseURLs: [String: URL], headers: HTTPHeaders = HTTPHeaders(),
        pins: PinningPolicy? = nil, storageNamespace: String? = nil
    ) throws {
        try Self.validate(identifier: id)
        let namespace = storageNamespace ?? id
        try Self.validate(identifier: namespace)
        guard !baseURLs.isEmpty else { throw EnvironmentError.missingBaseURL(environment: id, api: Self.defaultAPI) }
        for (api, url) in baseURLs {
            guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                let host = url.host, !host.isEmpty
            else { throw EnvironmentError.invalidBaseURL(environment: id, api: api, url: url.absoluteString) }
        }
        self.id = id
        self.displayName = displayName ?? id
        self.baseURLs = baseURLs
        self.headers = headers
        self.pins = pins
        self.storageNamespace = namespace
    }

    /// Creates an environment for an app with one API.
    /// - Throws: See ``init(_:displayName:baseURLs:headers:pins:storageNamespace:)``.
    public init(
        _ id: String, displayName: String? = nil, baseURL: URL, headers: HTTPHeaders = HTTPHeaders(),
        pins: PinningPolicy? = nil, storageNamespace: String? = nil
    ) throws {
        try self.init(
            id, displayName: displayName, baseURLs: [Self.defaultAPI: baseURL], headers: headers,
            pins: pins, storageNamespace: storageNamespace)
    }

    /// The ``APIEnvironment`` a client of `api` uses in this environment: its base URL and this
    /// environment's headers, named after ``id``.
    /// - Throws: ``EnvironmentError/missingBaseURL(environment:api:)`` when `api` has no base URL here.
    public func api(_ api: String = ServerEnvironment.defaultAPI) throws -> APIEnvironment {
        guard let url = baseURLs[api] else { throw EnvironmentError.missingBaseURL(environment: id, api: api) }
        return APIEnvironment(name: id, baseURL: url, headers: headers)
    }

    public var description: String {
        let urls = baseURLs.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.absoluteString)" }
        return "\(id) (\(urls.joined(separator: ", ")))"
    }

    /// Accepts 1...64 ASCII letters, digits, `.`, `_`, `-` (not `.` or `..` alone: they are file names).
    static func validate(identifier: String) throws {
        guard isValid(identifier: identifier) else { throw EnvironmentError.invalidIdentifier(identifier) }
    }

    static func isValid(identifier: String) -> Bool {
        let bytes = Array(identifier.utf8)
        guard (1...64).contains(bytes.count), identifier != ".", identifier != ".." else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
    }
}
