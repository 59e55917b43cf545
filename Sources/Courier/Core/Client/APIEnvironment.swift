import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A server an app can talk to — development, staging, production, a developer's own machine —
/// by its base URL, switchable at runtime (a debug menu, a QA build) without rebuilding clients.
///
/// One type serves both uses. An app with one API and one server writes
/// `APIEnvironment(name:baseURL:)`; an app that declares its environments once in an
/// `EnvironmentSet` gives each one a base URL per API it talks to (`"default"` when there is
/// one), optionally its own certificate ``pins``, and a ``storageNamespace`` that keeps its
/// session state apart — token stores, cache partitions and cookie storage are per namespace, so
/// a staging token or cookie never reaches production.
///
/// ```swift
/// let production = try APIEnvironment(name: "production", baseURL: "https://api.example.com/v1")
/// let staging = try APIEnvironment("staging", baseURLs: [
///     "default": URL(string: "https://staging.example.com/v1")!,
///     "media":   URL(string: "https://media.staging.example.com")!,
/// ], headers: ["X-API-Key": stagingKey])
/// ```
public struct APIEnvironment: Sendable, Hashable, Identifiable, CustomStringConvertible {
    /// The API name used when an app has one API.
    public static let defaultAPI = "default"

    /// The identifier, e.g. `staging`: used in logs and by an `EnvironmentSet`'s overrides
    /// (`COURIER_ENV=staging`), persisted choice and build mappings, where it must be 1...64 ASCII
    /// letters, digits, `.`, `_` or `-` (checked when the set is made).
    public var id: String
    /// A name for debug menus and logs, e.g. `Staging (EU)`; ``id`` by default.
    public var displayName: String
    /// Base URL per API name, e.g. `["default": https://api.example.com/v1]`; each an absolute
    /// http(s) URL. A path in a base URL is kept: `/items` becomes `https://api.example.com/v1/items`.
    public private(set) var baseURLs: [String: URL]
    /// Header fields sent with every request in this environment (e.g. a staging API key).
    public var headers: HTTPHeaders
    /// Certificate pins for this environment's hosts, or `nil` for none. A client's default
    /// transport for this environment is a ``PinningTransport`` with them. A call to a pinned host
    /// through a transport that does not enforce exactly these pins (one `configure` installed, or
    /// a plain client's transport after ``APIClient/switchEnvironment(to:)``) is refused with
    /// ``PinningFailure/transportIgnoresPins(host:)`` before anything is sent.
    public var pins: PinningPolicy?
    /// The namespace of this environment's session state (token store, cache partition); ``id``
    /// by default. Unique within a set, with the same rules as ``id``.
    public var storageNamespace: String

    /// The base URL of the ``defaultAPI`` (of the first API by name when there is no default API):
    /// the URL every endpoint path of a single-API client is appended to. Setting it sets the
    /// default API's.
    public var baseURL: URL {
        get {
            baseURLs[Self.defaultAPI] ?? baseURLs.min { $0.key < $1.key }?.value
                ?? URL(fileURLWithPath: "/")  // unreachable: every initializer stores a base URL
        }
        set { baseURLs[Self.defaultAPI] = newValue }
    }

    /// The identifier (``id``).
    @available(*, deprecated, renamed: "id")
    public var name: String {
        get { id }
        set { id = newValue }
    }

    /// Creates an environment with one API (``defaultAPI``).
    ///
    /// - Parameters:
    ///   - name: The identifier, e.g. `staging`.
    ///   - baseURL: The base URL every endpoint path is appended to.
    ///   - headers: Header fields for every request in this environment.
    public init(name: String, baseURL: URL, headers: HTTPHeaders = HTTPHeaders()) {
        self.id = name
        self.displayName = name
        self.baseURLs = [Self.defaultAPI: baseURL]
        self.headers = headers
        self.pins = nil
        self.storageNamespace = name
    }

    /// Creates an environment with one API from a URL string.
    ///
    /// - Parameters:
    ///   - name: The identifier, e.g. `staging`.
    ///   - baseURL: An absolute http(s) URL.
    ///   - headers: Header fields for every request in this environment.
    /// - Throws: ``NetworkError/invalidRequest(_:)`` when `baseURL` is not an absolute http(s) URL.
    public init(name: String, baseURL: String, headers: HTTPHeaders = HTTPHeaders()) throws {
        guard let url = URL(string: baseURL), Self.isHTTP(url) else {
            throw NetworkError.invalidRequest("base URL '\(baseURL)' is not an absolute http(s) URL")
        }
        self.init(name: name, baseURL: url, headers: headers)
    }

    /// Creates an environment with one base URL per API, for an `EnvironmentSet`.
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
        let namespace = storageNamespace ?? id
        try Self.validate(identifier: id)
        try Self.validate(identifier: namespace)
        guard !baseURLs.isEmpty else { throw EnvironmentError.missingBaseURL(environment: id, api: Self.defaultAPI) }
        for (api, url) in baseURLs where !Self.isHTTP(url) {
            throw EnvironmentError.invalidBaseURL(environment: id, api: api, url: url.absoluteString)
        }
        self.id = id
        self.displayName = displayName ?? id
        self.baseURLs = baseURLs
        self.headers = headers
        self.pins = pins
        self.storageNamespace = namespace
    }

    /// Creates an environment with one API, for an `EnvironmentSet`.
    /// - Throws: See ``init(_:displayName:baseURLs:headers:pins:storageNamespace:)``.
    public init(
        _ id: String, displayName: String? = nil, baseURL: URL, headers: HTTPHeaders = HTTPHeaders(),
        pins: PinningPolicy? = nil, storageNamespace: String? = nil
    ) throws {
        try self.init(
            id, displayName: displayName, baseURLs: [Self.defaultAPI: baseURL], headers: headers,
            pins: pins, storageNamespace: storageNamespace)
    }

    /// This environment as a client of `api` sees it: the same identifier, headers, pins and
    /// namespace, with `api`'s base URL as ``baseURL``.
    /// - Throws: ``EnvironmentError/missingBaseURL(environment:api:)`` when `api` has no base URL here.
    public func api(_ api: String = APIEnvironment.defaultAPI) throws -> APIEnvironment {
        guard let url = baseURLs[api] else { throw EnvironmentError.missingBaseURL(environment: id, api: api) }
        var environment = self
        environment.baseURLs = [Self.defaultAPI: url]
        return environment
    }

    public var description: String {
        if baseURLs.count == 1, let url = baseURLs[Self.defaultAPI] { return "\(id) (\(url.absoluteString))" }
        let urls = baseURLs.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.absoluteString)" }
        return "\(id) (\(urls.joined(separator: ", ")))"
    }

    /// Whether `url` is on an origin (scheme, host, port: RFC 6454 §4) of one of ``baseURLs``:
    /// where the environment's credentials may go. Transfers the system runs outside the
    /// pipeline (background uploads and downloads) ask it before adding a token.
    package func isOrigin(of url: URL) -> Bool {
        baseURLs.values.contains { RedirectSafety.isSameOrigin($0, url) }
    }

    private static func isHTTP(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = url.host else {
            return false
        }
        return !host.isEmpty
    }
}

/// The former name of ``APIEnvironment`` for environments declared in an `EnvironmentSet`.
@available(*, deprecated, renamed: "APIEnvironment")
public typealias ServerEnvironment = APIEnvironment
