import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// What the reference server's `/echo` says it received (the fields these tests read).
private struct EchoSeen: Decodable, Sendable {
    var headers: [String: String]
    var query: [String: [String]]
    var body: String?
    var bodySize: Int

    func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

@Suite("Observability against the reference server", .secretGuard)
struct ObservabilityIntegrationTests {
    @Test func secretsReachTheServerButNoLogCURLOrHARFile() async throws {
        let observed = try ObservedClient(inner: [ObservedClient.SetHeader(name: "X-API-Key", value: "SECRET-KEY")])
        let body = Data(#"{"user":{"name":"ann","password":"SECRET-PW"}}"#.utf8)
        let request = Request<EchoSeen>(
            method: .post, path: "/echo",
            query: ["access_token": "SECRET-QUERY", "page": "1"],
            headers: ["Authorization": "Bearer SECRET-TOKEN", "Cookie": "sid=SECRET-SID", "Idempotency-Key": "order-17"],
            body: .data(body, contentType: "application/json")
        ).verboseLogging

        let echo = try await observed.client.send(request)

        // Server-side truth: every secret really went over the wire.
        #expect(echo.header("Authorization") == "Bearer SECRET-TOKEN")
        #expect(echo.header("Cookie") == "sid=SECRET-SID")
        #expect(echo.header("X-API-Key") == "SECRET-KEY")
        #expect(echo.query["access_token"] == ["SECRET-QUERY"])
        #expect(echo.body?.contains("SECRET-PW") == true)
        #expect(echo.bodySize == body.count)

        // Names stay visible with the marker; the guard checks that no value does.
        let text = observed.logger.text
        #expect(text.contains("Authorization: Bearer <redacted>"))
        #expect(text.contains("Cookie: sid=<redacted>"))
        #expect(
            text.lowercased().contains("x-api-key: <redacted>"), "the per-attempt line shows what the inner interceptor added")
        #expect(text.contains("Idempotency-Key: order-17"), "an idempotency key is not a secret")
        #expect(text.contains(#""password":"<redacted>""#))
        #expect(text.contains("access_token=<redacted>&page=1"))
        // The echoed response body comes back redacted too (by key and by learned value).
        let responses = observed.logger.entries.filter { $0.event == .response }
        #expect(responses.count == 2)
        #expect(responses.allSatisfy { $0.details.contains { $0.hasPrefix("body: {") } })

        // A cURL command of the request as built (not from a snapshot) is redacted as well.
        var urlRequest = URLRequest(url: try #require(URL(string: "https://api.example.com/echo?access_token=SECRET-QUERY")))
        urlRequest.httpMethod = "POST"
        urlRequest.setValue("Bearer SECRET-TOKEN", forHTTPHeaderField: "Authorization")
        urlRequest.httpBody = body
        let curl = CURLCommand(urlRequest).text
        SecretGuard.current?.watch(text: curl)
        #expect(curl.contains("-H 'Authorization: Bearer <redacted>'"))
    }

    @Test func oneMetricsEventPerCallWithServerTruthForStatusRetriesAndBytes() async throws {
        let observed = try ObservedClient(inner: [ObservedClient.RetryOnceOn503()])
        let namespace = observed.namespace
        let (status, _) = try await TestServers.control(
            "POST", "/_faults", namespace: namespace,
            json: ["path": "/echo", "method": "POST", "faults": [["status": 503]]])
        #expect(status == 200)

        let payload = Data(String(repeating: "x", count: 1000).utf8)
        let echoed = try await observed.client.response(
            for: Request<HTTPResponse>.raw(
                .post, "/echo", body: .data(payload, contentType: "text/plain")))
        var item = Request<HTTPResponse>.raw(.get, "/items/1")
        item.pathTemplate = "/items/{id}"
        let fetched = try await observed.client.response(for: item)
        let missing = try await observed.client.response(for: Request<HTTPResponse>.raw(.get, "/status/404"))

        let events = observed.metrics.events
        #expect(events.count == 3, "one event per call, not per attempt")
        let echo = try #require(events.first { $0.requestID == echoed.context.requestID })
        #expect(echo.statusCode == 200)
        #expect(echo.retryCount == 1)
        #expect(echo.attempts == 2)
        #expect(echo.requestBodyBytes == payload.count)
        #expect(echo.responseBodyBytes == echoed.response.data.count)
        #expect(echo.pathTemplate == "/echo")
        let get = try #require(events.first { $0.requestID == fetched.context.requestID })
        #expect(get.pathTemplate == "/items/{id}", "the template, never the raw path with its id")
        #expect(get.statusCode == fetched.statusCode)
        #expect(get.retryCount == 0)
        #expect(get.responseBodyBytes == fetched.response.data.count)
        let notFound = try #require(events.first { $0.requestID == missing.context.requestID })
        #expect(notFound.statusCode == 404)
        #expect(notFound.errorKind == nil, "a response is not a transport error, whatever its status")
        #if !canImport(Darwin)
        if TestTransport.isCurl {
            // libcurl measures every phase: each event carries the timings of its last attempt.
            #expect(events.allSatisfy { $0.taskTimings?.total != nil && $0.taskTimings?.networkProtocol == "http/1.1" })
        } else {
            #expect(events.allSatisfy { $0.taskTimings == nil }, "Linux URLSession delivers no task metrics: absent, not zero")
        }
        #endif

        // Server-side truth: the echo was attempted twice, the item fetched once.
        #expect(try await TestServers.requestCount("POST /echo", namespace: namespace) == 2)
        #expect(try await TestServers.requestCount("GET /items/{id}", namespace: namespace) == 1)
        let seen = try JSONDecoder().decode(EchoSeen.self, from: echoed.response.data)
        #expect(seen.bodySize == payload.count)
    }

    /// The archive of what the user sent and got was written 0644 (`Data.write(options: .atomic)`),
    /// readable by other local users.
    @Test("a HAR file, and a folder made for it, are their owner's alone")
    func aHARFileIsReadableByItsOwnerAlone() async throws {
        let observed = try ObservedClient()
        _ = try await observed.client.response(for: Request<HTTPResponse>.raw(.get, "/items"))
        #expect(try await TestServers.requestCount("GET /items", namespace: observed.namespace) == 1)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-har-\(observed.namespace)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("session.har")
        try observed.har.write(to: file)
        #expect(String(decoding: try Data(contentsOf: file), as: UTF8.self).contains("/items"))
        let mode = { (url: URL) in
            try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue
        }
        #expect(try mode(file) == 0o600)
        // A folder it makes lists the archive to its owner alone.
        let nested = folder.appendingPathComponent("exports/session.har")
        try observed.har.write(to: nested)
        #expect(try mode(nested) == 0o600)
        #expect(try mode(nested.deletingLastPathComponent()) == 0o700)
    }

    @Test func aHARFileOfSeveralCallsParsesWithTheRequiredFields() async throws {
        let observed = try ObservedClient()
        let list = try await observed.client.response(for: Request<HTTPResponse>.raw(.get, "/items"))
        let echo = try await observed.client.response(
            for: Request<HTTPResponse>.raw(
                .post, "/echo", query: ["token": "SECRET-TOKEN"],
                body: .data(Data(#"{"refresh_token":"SECRET-REFRESH"}"#.utf8), contentType: "application/json")
            ).verboseLogging)
        _ = try await observed.client.response(for: Request<HTTPResponse>.raw(.get, "/status/503"))
        // A connection failure: nothing listens on port 1.
        await #expect(throws: NetworkError.self) {
            try await observed.client.send(Request<HTTPResponse>.raw(.get, "http://127.0.0.1:1/unreachable"))
        }

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(observed.namespace).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try observed.har.write(to: file)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        let log = try #require(root["log"] as? [String: Any])
        #expect(log["version"] as? String == "1.2")
        #expect((log["creator"] as? [String: Any])?["name"] as? String == "Courier")
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == 4)
        for entry in entries {
            for key in ["startedDateTime", "time", "request", "response", "cache", "timings"] {
                #expect(entry[key] != nil, "entry.\(key) missing")
            }
            let request = try #require(entry["request"] as? [String: Any])
            for key in ["method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"] {
                #expect(request[key] != nil, "request.\(key) missing")
            }
            let response = try #require(entry["response"] as? [String: Any])
            for key in [
                "status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize", "bodySize",
            ] {
                #expect(response[key] != nil, "response.\(key) missing")
            }
            let timings = try #require(entry["timings"] as? [String: Any])
            #expect(["send", "wait", "receive"].allSatisfy { (timings[$0] as? Double ?? -1) >= 0 })
        }
        let statuses = entries.compactMap { ($0["response"] as? [String: Any])?["status"] as? Int }
        #expect(statuses == [200, 200, 503, 0])
        #expect(list.statusCode == 200)

        // The HAR entry's request ID is the one the server received as X-Request-ID.
        let seen = try JSONDecoder().decode(EchoSeen.self, from: echo.response.data)
        #expect(entries[1]["_requestID"] as? String == seen.header("X-Request-ID"))
        #expect(seen.header("X-Request-ID") == echo.context.requestID.description)
    }
}
