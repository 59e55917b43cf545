import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds the `URLRequest` for an endpoint: URL from the environment and the endpoint's path and
/// query (with `URLComponents`, each path segment and query component percent-encoded per
/// RFC 3986), headers, and the encoded body.
package struct RequestBuilder: Sendable {
    let encoder: JSONEncoder
    let queryEncoder: URLQueryEncoder
    let defaultHeaders: HTTPHeaders
    /// The environment's base URL, parsed once.
    let baseURLs = BaseURLCache()

    /// - Throws: ``NetworkError/invalidRequest(_:)`` for a bad URL, an unencodable body/query, or a
    ///   header field that is not valid HTTP (see ``validate(_:)``).
    func makeRequest<E: Endpoint>(
        for endpoint: E, environment: APIEnvironment, requestID: HTTPHeaders.Field? = nil
    ) throws -> URLRequest {
        let url = try makeURL(for: endpoint, environment: environment)
        let policy = endpoint.policy  // a protocol requirement: read once
        // An absolute URL on an origin the environment does not name (a CDN, a link from a
        // response) gets none of the environment's credentials: no environment header fields, and
        // no access token — a call that asks for one is refused before anything is sent.
        let isForeign =
            Self.absoluteScheme(of: endpoint.path) != nil
            && !environment.baseURLs.values.contains { RedirectSafety.isSameOrigin($0, url) }
        if isForeign, policy.auth != .none {
            throw NetworkError.invalidRequest(
                "\(endpoint.method) \(url.scheme ?? "")://\(url.host ?? "")\(url.port.map { ":\($0)" } ?? "") is not an origin of environment "
                    + "'\(environment.id)': the access token is sent only to the environment's base URLs; "
                    + "call it with a policy whose auth is .none, or add its base URL to the environment")
        }
        var request = URLRequest(url: url)
        // GET is URLRequest's default; on Linux the setter costs about 2 µs (it normalises the name).
        if endpoint.method != .get {
            // A method is a token (RFC 9110 §9.1): a CR, LF or space would rewrite the request line.
            guard !endpoint.method.rawValue.isEmpty, endpoint.method.rawValue.utf8.allSatisfy(HTTPHeaders.isTokenByte) else {
                throw NetworkError.invalidRequest(
                    "'\(endpoint.method.rawValue.debugDescription)' is not an HTTP method (RFC 9110 §9.1)")
            }
            request.httpMethod = endpoint.method.rawValue
        }
        request.timeoutInterval = Self.idleTimeout(for: policy.deadline)

        // Each layer replaces the fields it names; a name repeated within one layer keeps every value.
        var headers = defaultHeaders
        let environmentHeaders = isForeign ? HTTPHeaders() : environment.headers
        let endpointHeaders = endpoint.headers  // a protocol requirement: read once
        // One copy of the defaults with room for every layer and the fields added below.
        headers.reserveCapacity(headers.fields.count + environmentHeaders.fields.count + endpointHeaders.fields.count + 4)
        for layer in [environmentHeaders, endpointHeaders] where !layer.fields.isEmpty {
            for field in layer { headers.remove(field.name) }
            for field in layer { headers.add(field.name, field.value) }
        }
        if !headers.contains("Accept") { headers.replace("Accept", with: "application/json") }

        if !endpoint.body.isEmpty, endpoint.method == .get || endpoint.method == .head {
            // RFC 9110 §9.3.1: a GET body has no defined semantics; URLSession on Linux fails such a
            // request with an unrelated -1103 "resource exceeds maximum size".
            throw NetworkError.invalidRequest(
                "\(endpoint.method) \(endpoint.path) must not have a body; send the data as query parameters")
        }
        if case .stream(let stream, let contentType) = endpoint.body {
            // The stream itself is attached for each send by the pipeline (see BodyStream).
            if !headers.contains("Content-Type") { headers.replace("Content-Type", with: contentType) }
            // A known length goes out as Content-Length (CurlTransport sends the body with it, not
            // chunked). URLSessionTransport removes it where URLSession always sends a stream chunked
            // (TransportCapabilities.sendsStreamLength is false: Linux): a Content-Length next to
            // Transfer-Encoding would make the request invalid (RFC 9112 §6.3).
            if let length = stream.length { headers.replace("Content-Length", with: String(length)) }
        } else if let (data, contentType) = try encodeBody(endpoint.body, encoder: endpoint.options.encoder ?? encoder) {
            request.httpBody = data
            if !headers.contains("Content-Type") { headers.replace("Content-Type", with: contentType) }
        }
        // The request ID the pipeline's outermost RequestIDInterceptor would add, added here with
        // the other fields instead: one `setValue` on Linux copies the request and costs ~5 µs.
        // Only when nothing can tell the difference: no request modifier runs after this point.
        if let requestID, endpoint.options.modifyRequest == nil, !headers.contains(requestID.name),
            (try? Self.validate(requestID)) != nil
        {
            headers.replace(requestID.name, with: requestID.value)
        }
        for field in headers { try Self.validate(field) }
        // One bridge to NSMutableURLRequest, not one per field; every name was just checked.
        request.allHTTPHeaderFields = headers.dictionary(namesAreTokens: true)
        endpoint.options.modifyRequest?(&request)
        return request
    }

    /// URLSession's per-request timeout is an idle timeout; Courier enforces the total deadline
    /// itself, so the idle timeout is a backstop one second longer than the deadline: a call that
    /// runs out of time always ends with Courier's ``NetworkError/timedOut(_:)`` (`nil`), the same
    /// on every transport, never with a transport's `URLError.timedOut` racing it.
    ///
    /// Whole seconds, rounded up, plus one, in `2...maxIdleTimeout`: URLSession on Linux truncates
    /// `timeoutInterval` to whole seconds (`Int(timeoutInterval) * 1000` ms), so a 1.5 s deadline
    /// would otherwise be cut by a 1 s transport timeout, and it traps on a value too large for
    /// that arithmetic (e.g. a deadline of `.seconds(Int64.max)` meaning "no deadline").
    package static func idleTimeout(for deadline: Duration) -> TimeInterval {
        // `Duration / Duration`, not `components`, which traps beyond Int64.max seconds.
        let seconds = deadline / .seconds(1)
        guard seconds.isFinite else { return maxIdleTimeout }
        return min(maxIdleTimeout, max(1, seconds.rounded(.up)) + 1)
    }

    /// The largest idle timeout set on a request, in seconds (one year); longer deadlines are
    /// still enforced by Courier itself.
    static let maxIdleTimeout: TimeInterval = 365 * 24 * 3600

    /// Rejects a field the transport would send as something else: a name that is not an RFC 9110
    /// §5.1 token (a space, a colon, non-ASCII), or a value containing CR, LF or NUL (§5.5) — which
    /// URLSession on Linux writes to the wire as is, so `"a\r\nX-Other: 1"` would inject a field.
    /// The message names the field but never repeats its value (it may be a secret).
    static func validate(_ field: HTTPHeaders.Field) throws {
        guard !field.name.isEmpty, field.name.utf8.allSatisfy(HTTPHeaders.isTokenByte) else {
            throw NetworkError.invalidRequest("header name \(field.name.debugDescription) is not a valid field name")
        }
        guard !field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else {
            throw NetworkError.invalidRequest("the value of header '\(field.name)' contains CR, LF or NUL")
        }
    }

    /// The lower-cased scheme when `path` starts with `scheme://` (RFC 3986 §3.1), else `nil`.
    /// A relative path such as `/v1/items:batchGet` or `items:search` has no `://` after its
    /// first characters and is not taken for a URL.
    static func absoluteScheme(of path: String) -> String? {
        var scheme: [UInt8] = []
        var bytes = path.utf8.makeIterator()
        while let byte = bytes.next() {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
                scheme.append(byte | 0x20)
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."):
                guard !scheme.isEmpty else { return nil }
                scheme.append(byte)
            case UInt8(ascii: ":"):
                guard !scheme.isEmpty, bytes.next() == UInt8(ascii: "/"), bytes.next() == UInt8(ascii: "/") else {
                    return nil
                }
                return String(decoding: scheme, as: UTF8.self)
            default:
                return nil
            }
        }
        return nil
    }

    func makeURL<E: Endpoint>(for endpoint: E, environment: APIEnvironment) throws -> URL {
        let path = endpoint.path
        if let scheme = Self.absoluteScheme(of: path) {
            guard scheme == "http" || scheme == "https" else {
                throw NetworkError.invalidRequest("'\(path)' is not an http(s) URL")
            }
            guard var absolute = URLComponents(string: path), let host = absolute.host, !host.isEmpty else {
                throw NetworkError.invalidRequest("'\(path)' is not a valid absolute URL")
            }
            // An absolute URL is sent as written: its `{…}` are no placeholders.
            if let name = endpoint.pathValues.keys.sorted().first {
                throw NetworkError.invalidRequest(
                    "'\(path)' is an absolute URL: the path value '\(name)' has no placeholder to fill (build the URL whole)")
            }
            absolute.scheme = scheme  // schemes are case-insensitive; URLSession on Linux rejects `HTTP://`
            if let encoded = try encodedQuery(of: endpoint) {
                if let existing = absolute.percentEncodedQuery, !existing.isEmpty {
                    absolute.percentEncodedQuery = existing + "&" + encoded
                } else {
                    absolute.percentEncodedQuery = encoded
                }
            }
            guard let url = absolute.url else {
                throw NetworkError.invalidRequest("cannot build a URL from '\(path)'")
            }
            return url
        }
        // The base URL is parsed once per environment; the rest is string assembly in the order
        // `URLComponents` would use (RFC 3986 §5.3), then one parse.
        let base = try baseURLs.parts(of: environment.baseURL)
        let query = try encodedQuery(of: endpoint)
        let key = BaseURLCache.URLKey(path: path, pathValues: endpoint.pathValues, query: query)
        if let url = baseURLs.url(for: key, on: base.baseURL) { return url }
        var string = base.origin
        if path.isEmpty && endpoint.pathValues.isEmpty {
            // An empty endpoint path adds nothing: the base URL is used as is, query included.
            string += base.fullPath
        } else {
            let rawSegments = path.split(separator: "/", omittingEmptySubsequences: true)
            // RFC 3986 §5.2.4 removes "." and ".." when a URL is resolved, so "/items/\(input)" with
            // input "../admin" would reach /admin: a dot-segment is refused, never sent.
            if let dot = rawSegments.first(where: { $0 == "." || $0 == ".." }) {
                throw NetworkError.invalidRequest(
                    "path '\(path)' contains a '\(dot)' segment, which URL resolution would remove")
            }
            let segments = try PathTemplate.encodedSegments(rawSegments, values: endpoint.pathValues, path: path)
            string += base.path
            string += "/"
            string += segments.joined(separator: "/")
            if path.utf8.count > 1 && path.hasSuffix("/") { string += "/" }
        }
        switch (base.query, query) {
        case (let existing?, let added?) where !existing.isEmpty: string += "?" + existing + "&" + added
        case (_, let added?): string += "?" + added
        case (let existing?, nil): string += "?" + existing
        case (nil, nil): break
        }
        if let fragment = base.fragment { string += "#" + fragment }
        guard let url = URL(string: string) else {
            throw NetworkError.invalidRequest("cannot build a URL from '\(path)' and base '\(environment.baseURL)'")
        }
        baseURLs.remember(url, for: key, on: base.baseURL)
        return url
    }

    /// The endpoint's query, percent-encoded (RFC 3986 §3.4), or `nil` when it has no items.
    private func encodedQuery<E: Endpoint>(of endpoint: E) throws -> String? {
        let items: [URLQueryItem]
        do {
            items = try endpoint.query.items(using: queryEncoder)
        } catch {
            throw NetworkError.invalidRequest("query of \(E.self) cannot be encoded: \(error)")
        }
        return items.isEmpty ? nil : PercentEncoding.query(from: items)
    }

    private func encodeBody(_ body: RequestBody, encoder: JSONEncoder) throws -> (Data, String)? {
        do {
            switch body {
            case .none:
                return nil
            case .json(let value):
                return (try encoder.encode(value), "application/json")
            case .form(let items):
                return (FormURLEncoder().encode(items), "application/x-www-form-urlencoded")
            case .formEncodable(let value):
                return (try FormURLEncoder(queryEncoder: queryEncoder).encode(value), "application/x-www-form-urlencoded")
            case .data(let data, let contentType):
                return (data, contentType)
            case .stream:
                return nil
            }
        } catch {
            throw NetworkError.invalidRequest("body cannot be encoded: \(error)")
        }
    }
}
