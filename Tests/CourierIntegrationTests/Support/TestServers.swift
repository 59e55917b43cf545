import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

/// Addresses of the real local servers that `scripts/test` starts, and per-test namespaces.
///
/// `COURIER_API_URL` is the reference API (TestServer/), `HTTPBIN_URL` is httpbin under gunicorn.
/// Tests must not run without them: a missing variable fails the test with a clear message rather
/// than skipping it (a skipped integration suite would look green without testing anything).
enum TestServers {
    struct Missing: Error, CustomStringConvertible {
        let variable: String
        var description: String { "\(variable) is not set: run the suite through scripts/test, which starts the servers" }
    }

    /// The reference API's root URL, e.g. `http://127.0.0.1:54321`.
    static func apiURL() throws -> URL { try url(from: "COURIER_API_URL") }

    /// The second, independent reference API instance (`COURIER_API2_URL`): another process with
    /// its own state and JWT secret, on another port of 127.0.0.1.
    static func api2URL() throws -> URL { try url(from: "COURIER_API2_URL") }

    /// httpbin's root URL.
    static func httpbinURL() throws -> URL { try url(from: "HTTPBIN_URL") }

    private static func url(from variable: String) throws -> URL {
        guard let text = ProcessInfo.processInfo.environment[variable], let url = URL(string: text) else {
            throw Missing(variable: variable)
        }
        return url
    }

    /// A fresh namespace name; the reference server scopes all state under `/ns/{name}`.
    static func makeNamespace(_ prefix: String = "t") -> String {
        "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// An environment pointing at the reference API inside `namespace`.
    static func apiEnvironment(namespace: String) throws -> APIEnvironment {
        APIEnvironment(
            name: "test-\(namespace)", baseURL: try apiURL().appendingPathComponent("ns").appendingPathComponent(namespace))
    }

    /// An environment pointing at httpbin.
    static func httpbinEnvironment() throws -> APIEnvironment {
        APIEnvironment(name: "httpbin", baseURL: try httpbinURL())
    }

    /// A client for the reference API in a fresh (or given) namespace.
    static func apiClient(
        namespace: String = makeNamespace(),
        configure: (inout APIClient.Configuration) -> Void = { _ in }
    ) throws -> (APIClient, String) {
        let client = APIClient(environment: try apiEnvironment(namespace: namespace)) { configuration in
            TestTransport.configure(&configuration)
            configure(&configuration)
        }
        return (client, namespace)
    }

    /// The namespace's server-side counters (`GET /ns/{ns}/_stats`) as a JSON object.
    static func stats(namespace: String) async throws -> [String: Any] {
        let url = try apiURL().appendingPathComponent("ns").appendingPathComponent(namespace).appendingPathComponent("_stats")
        let (data, _) = try await URLSession.shared.data(from: url)
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    /// Sends a raw JSON control request (faults, config) to the reference server in `namespace`.
    @discardableResult
    static func control(_ method: String, _ path: String, namespace: String, json: Any? = nil) async throws -> (Int, Data) {
        var url = try apiURL().appendingPathComponent("ns").appendingPathComponent(namespace)
        for part in path.split(separator: "/") { url.appendPathComponent(String(part)) }
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }
}

// MARK: - Echo and request log (added for the core integration tests)

/// What the reference server's `/echo` received, as it reports it: method, paths, query (raw and
/// decoded), headers and body.
struct Echo: Decodable, Sendable {
    /// The request method.
    var method: String
    /// The decoded path, namespace prefix included.
    var path: String
    /// The path exactly as sent (percent-encoded).
    var rawPath: String
    /// The decoded path without the `/ns/{ns}` prefix.
    var routePath: String
    /// The namespace the request landed in.
    var namespace: String
    /// The query exactly as sent, without `?`.
    var rawQuery: String
    /// The query decoded by the server (`parse_qsl`), values per name in order.
    var query: [String: [String]]
    /// The headers as received (repeated fields joined with ", "), names as sent.
    var headers: [String: String]
    /// The body as UTF-8 text, when it is valid UTF-8.
    var body: String?
    /// The body bytes, Base64.
    var bodyBase64: String
    /// The body size in bytes.
    var bodySize: Int
    /// The form fields, for `application/x-www-form-urlencoded` bodies.
    var form: [String: [String]]?

    /// The header `name`, case-insensitively.
    func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The body bytes.
    var bodyData: Data { Data(base64Encoded: bodyBase64) ?? Data() }
}

/// One entry of the reference server's request log (`GET /ns/{ns}/_requests`).
struct LoggedRequest: Decodable, Sendable {
    var seq: Int
    var method: String
    var path: String
    var route: String?
    var rawQuery: String
    var headers: [String: String]
    /// When the server took the request (seconds since 1970, the server's clock).
    var time: Double?

    /// The header `name`, case-insensitively.
    func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

extension TestServers {
    /// The requests the reference server saw in `namespace`, oldest first, optionally only those
    /// whose path or route template is `path`.
    static func requestLog(namespace: String, path: String? = nil) async throws -> [LoggedRequest] {
        var components = URLComponents(
            url: try apiURL().appendingPathComponent("ns").appendingPathComponent(namespace).appendingPathComponent("_requests"),
            resolvingAgainstBaseURL: false)
        if let path { components?.queryItems = [URLQueryItem(name: "path", value: path)] }
        guard let url = components?.url else { throw URLError(.badURL) }
        let (data, _) = try await URLSession.shared.data(from: url)
        struct Log: Decodable { var requests: [LoggedRequest] }
        return try JSONDecoder().decode(Log.self, from: data).requests
    }

    /// The namespace's counter for `key` under `requests` in `_stats` (e.g. `"GET /items/{id}"`), 0 when absent.
    static func requestCount(_ key: String, namespace: String) async throws -> Int {
        let stats = try await stats(namespace: namespace)
        return ((stats["requests"] as? [String: Any])?[key] as? Int) ?? 0
    }
}

extension TestServers {
    /// Waits until `count` requests are held at the reference server's `gate` in `namespace`
    /// (bounded: 6,000 checks, 5 ms apart).
    static func waitUntilHeld(
        _ count: Int, gate: String, namespace: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for _ in 0..<6000 {
            let (_, data) = try await control("GET", "_gates/\(gate)", namespace: namespace)
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            if (object?["waiting"] as? Int) == count { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("\(count) requests never reached gate \(gate)", sourceLocation: sourceLocation)
    }
}
