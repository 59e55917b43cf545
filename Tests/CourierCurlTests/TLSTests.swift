#if canImport(CCurl)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierCurl

/// TLS against TestServer/tls_server.py (hypercorn, self-signed certificate made at startup):
/// custom CA bundles, SPKI pinning with backup pins (issue 12, item 6) and HTTP/2 (item 2).
@Suite("CurlTransport over TLS: CA file, pins, HTTP/2")
struct TLSTests {
    struct Hello: Decodable {
        var httpVersion: String
        var scheme: String
    }

    static let unrelatedPin = "mt6CLBG7Uu5u3sdtY83KB03FYUxMEaEHh0q+IJmBHbo="
    static let otherUnrelatedPin = "n9wAWgmBsYfvyXPWyaIAuryh55GSNUvmk3qvvDcFFaM="

    func transport(
        pins: [String]? = nil, trusted: Bool = true, version: CurlTransport.HTTPVersion = .automatic
    ) throws
        -> CurlTransport
    {
        let authorities = URL(fileURLWithPath: try CurlServers.value("COURIER_TLS_CA_FILE"))
        let policy = try pins.map { try PinningPolicy(pins: ["127.0.0.1": $0]) }
        return CurlTransport {
            if trusted { $0.trustedCertificateAuthorities = authorities }
            $0.pinning = policy
            $0.httpVersion = version
        }
    }

    func hello(_ transport: CurlTransport, base variable: String = "COURIER_TLS_URL") async throws -> Hello {
        let response = try await transport.send(
            URLRequest(url: try CurlServers.url(variable).appendingPathComponent("tls/hello")))
        #expect(response.statusCode == 200)
        return try JSONDecoder().decode(Hello.self, from: response.data)
    }

    @Test("an environment's pins are enforced by a CurlTransport whose pinning is exactly them, by no other")
    func environmentPinsAreEnforcedByTheConfiguredPolicy() throws {
        let policy = try PinningPolicy(pins: ["api.example.test": [Self.unrelatedPin, Self.otherUnrelatedPin]])
        #expect(policy.isEnforced(by: CurlTransport { $0.pinning = policy }))
        #expect(!policy.isEnforced(by: CurlTransport()))
        let other = try PinningPolicy(pins: ["other.example.test": [Self.unrelatedPin, Self.otherUnrelatedPin]])
        #expect(!policy.isEnforced(by: CurlTransport { $0.pinning = other }))
    }

    @Test("a server certificate from the configured CA file is trusted; HTTP/2 is negotiated over TLS (ALPN)")
    func customAuthoritiesAndHTTP2() async throws {
        let hello = try await hello(try transport())
        #expect(hello.scheme == "https")
        #expect(hello.httpVersion == "2")
    }

    @Test("without the CA file the self-signed certificate is refused with URLSession's certificate code")
    func untrustedCertificate() async throws {
        await #expect {
            _ = try await hello(try transport(trusted: false))
        } throws: { error in
            (error as? URLError)?.code == .serverCertificateHasUnknownRoot
        }
    }

    @Test("the pinned key (with a backup pin) lets the request through")
    func pinMatches() async throws {
        let pin = try CurlServers.value("COURIER_TLS_PIN")
        #expect(try await hello(try transport(pins: [Self.unrelatedPin, pin])).httpVersion == "2")
    }

    @Test("every new connection to a pinned host passes its pins, also one that could resume a TLS session")
    func pinnedHostOnNewConnections() async throws {
        let pin = try CurlServers.value("COURIER_TLS_PIN")
        let transport = try transport(pins: [pin, Self.unrelatedPin], version: .http1)
        let url = try CurlServers.url("COURIER_TLS_URL").appendingPathComponent("tls/hello")
        for _ in 0..<4 {
            var request = URLRequest(url: url)
            request.setValue("close", forHTTPHeaderField: "Connection")  // a new connection each time
            #expect(try await transport.send(request).statusCode == 200)
        }
    }

    @Test("no pinned key in the certificate: refused before the request is sent, as a pinning failure naming the server's pin")
    func pinMismatch() async throws {
        let transport = try transport(pins: [Self.unrelatedPin, Self.otherUnrelatedPin])
        let client = APIClient(
            environment: APIEnvironment(name: "tls", baseURL: try CurlServers.url("COURIER_TLS_URL")),
            configure: { $0.transport = transport })
        let error = await #expect(throws: NetworkError.self) {
            try await client.send(Request<Data>.get("/tls/hello"))
        }
        // The server presents one self-signed certificate: its pin is the only one in the chain.
        let serverPin = try CurlServers.value("COURIER_TLS_PIN")
        #expect(error?.pinningFailure == .pinMismatch(host: "127.0.0.1", presented: [serverPin]))
        #expect(error?.certificateFailure == .untrusted)
        #expect(error?.userMessage == ErrorMessages.certificateMessage)
        guard case .transport(let urlError)? = error else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
        #expect(urlError.code == .serverCertificateUntrusted)
        #expect(urlError.curlCode == 90)  // CURLE_SSL_PINNEDPUBKEYNOTMATCH
    }

    @Test("plain HTTP to a pinned host is refused without touching the network")
    func pinnedHostOverPlainHTTP() async throws {
        let (base, namespace) = try CurlServers.namespace()
        let pin = try CurlServers.value("COURIER_TLS_PIN")
        let transport = try transport(pins: [pin, Self.unrelatedPin])
        await #expect {
            _ = try await transport.send(URLRequest(url: base.appendingPathComponent("echo")))
        } throws: { error in
            (error as? URLError)?.pinningFailure == .insecureScheme(host: "127.0.0.1")
        }
        #expect(try await CurlServers.stats(namespace)["totalRequests"] as? Int == 0)
    }

    @Test("h2c with prior knowledge when asked; HTTP/1.1 on plain http otherwise")
    func h2cPriorKnowledge() async throws {
        #expect(try await hello(try transport(version: .http2PriorKnowledge), base: "COURIER_H2C_URL").httpVersion == "2")
        #expect(try await hello(try transport(), base: "COURIER_H2C_URL").httpVersion == "1.1")
        #expect(try await hello(try transport(version: .http1)).httpVersion == "1.1")
    }

    @Test("h2c with prior knowledge answers every request, one after another and together")
    func h2cPriorKnowledgeAnswersEveryRequest() async throws {
        // libcurl 7.87–7.88 failed every request on a reused h2c connection before sending it
        // (error 16, curl issue 10634): the second of two calls in a row failed.
        let transport = try transport(version: .http2PriorKnowledge)
        for _ in 0..<3 {
            #expect(try await hello(transport, base: "COURIER_H2C_URL").httpVersion == "2")
        }
        let versions = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try await self.hello(transport, base: "COURIER_H2C_URL").httpVersion } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(versions == Array(repeating: "2", count: 8))
    }

    @Test("concurrent requests share one multiplexed HTTP/2 connection; the metrics say h2 and reuse")
    func multiplexing() async throws {
        let sink = CapturingMetricsSink()
        let transport = try transport()
        let client = APIClient(environment: APIEnvironment(name: "tls", baseURL: try CurlServers.url("COURIER_TLS_URL"))) {
            $0.transport = transport
            $0.interceptors = .standard(metrics: sink)
        }
        _ = try await client.send(Request<Data>.get("/tls/hello"))  // opens the connection
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<16 { group.addTask { _ = try await client.send(Request<Data>.get("/tls/bytes/16000")) } }
            try await group.waitForAll()
        }
        let timings = sink.events.compactMap(\.taskTimings)
        #expect(timings.count == 17)
        #expect(timings.allSatisfy { $0.networkProtocol == "h2" })
        #expect(timings.first?.secureConnection != nil, "the first request did the TLS handshake")
        #expect(timings.dropFirst().allSatisfy { $0.isReusedConnection == true }, "one connection, multiplexed")
    }
}
#endif
