import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds the `URLRequest` for an endpoint: URL from the environment and the endpoint's path and
/// query (with `URLComponents`, each path segment and query component percent-encoded per
/// RFC 3986), headers, and the encoded body.
struct RequestBuilder: Sendable {
    let encoder: JSONEncoder
    let queryEncoder: URLQueryEncoder
    let defaultHeaders: HTTPHeaders

    /// - Throws: ``NetworkError/invalidRequest(_:)`` for a bad URL or an unencodable body/query.
    func makeRequest<E: Endpoint>(for endpoint: E, environment: APIEnvironment) throws -> URLRequest {
        let url = try makeURL(for: endpoint, environment: environment)
        var request = URLRequest(url: url)
        request.httpMethod = endpoint.method.rawValue
        request.timeoutInterval = Self.idleTimeout(for: endpoint.policy.timeout)

        // Each layer replaces the fields it names; a name repeated within one layer keeps every value.
        var headers = defaultHeaders
        for layer in [environment.headers, endpoint.headers] {
            for field in layer { headers.remove(field.name) }
            for field in layer { headers.add(field.name, field.value) }
        }
        if !headers.contains("Accept") { headers.replace("Accept", with: "application/json") }

        if let (data, contentType) = try encodeBody(endpoint.body, encoder: endpoint.options.encoder ?? encoder) {
            request.httpBody = data
            if !headers.contains("Content-Type") { headers.replace("Content-Type", with: contentType) }
        }
        request.allHTTPHeaderFields = headers.dictionary  // one bridge to NSMutableURLRequest, not one per field
        endpoint.options.modifyRequest?(&request)
        return request
    }

    /// URLSession's per-request timeout is an idle timeout; Courier enforces the total deadline
    /// itself, so the idle timeout only needs to be no shorter than the deadline.
    static func idleTimeout(for deadline: Duration) -> TimeInterval {
        let seconds = Double(deadline.components.seconds) + Double(deadline.components.attoseconds) / 1e18
        return max(1, seconds)
    }

    func makeURL<E: Endpoint>(for endpoint: E, environment: APIEnvironment) throws -> URL {
        let path = endpoint.path
        let lowered = path.lowercased()
        let components: URLComponents
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            guard let absolute = URLComponents(string: path), let host = absolute.host, !host.isEmpty else {
                throw NetworkError.invalidRequest("'\(path)' is not a valid absolute URL")
            }
            components = absolute
        } else {
            guard var base = URLComponents(url: environment.baseURL, resolvingAgainstBaseURL: true) else {
                throw NetworkError.invalidRequest("base URL '\(environment.baseURL)' cannot be parsed")
            }
            let basePath = base.percentEncodedPath.hasSuffix("/")
                ? String(base.percentEncodedPath.dropLast()) : base.percentEncodedPath
            let segments = path.split(separator: "/", omittingEmptySubsequences: true)
                .map { PercentEncoding.encodePathSegment(String($0)) }
            let trailingSlash = path.count > 1 && path.hasSuffix("/")
            base.percentEncodedPath = basePath + "/" + segments.joined(separator: "/") + (trailingSlash ? "/" : "")
            components = base
        }
        var result = components
        let items: [URLQueryItem]
        do {
            items = try endpoint.query.items(using: queryEncoder)
        } catch {
            throw NetworkError.invalidRequest("query of \(E.self) cannot be encoded: \(error)")
        }
        if !items.isEmpty {
            let encoded = PercentEncoding.query(from: items)
            if let existing = result.percentEncodedQuery, !existing.isEmpty {
                result.percentEncodedQuery = existing + "&" + encoded
            } else {
                result.percentEncodedQuery = encoded
            }
        }
        guard let url = result.url else {
            throw NetworkError.invalidRequest("cannot build a URL from '\(path)' and base '\(environment.baseURL)'")
        }
        return url
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
            }
        } catch {
            throw NetworkError.invalidRequest("body cannot be encoded: \(error)")
        }
    }
}
