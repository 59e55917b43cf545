import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
#if canImport(CourierCurl)
import CourierCurl
#endif

/// Credentials and TLS failures (issue 22, item 7) against TestServer/tls_server.py and the
/// reference API, on the transport `COURIER_TRANSPORT` names.
///
/// URLSession on Linux cannot be told to trust the test CA (FoundationNetworking reads a CA file
/// setting only on Android), so the tests that need a trusted `https` hop run over `CurlTransport`
/// with `COURIER_TLS_CA_FILE`; the certificate-failure tests run on both.
@Suite("TLS failures and credentials across schemes")
struct TLSFailureTests {
    static func env(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
            throw TestServers.Missing(variable: name)
        }
        return value
    }

    static func url(_ name: String) throws -> URL {
        guard let url = URL(string: try env(name)) else { throw TestServers.Missing(variable: name) }
        return url
    }

    /// The transport under test; over curl trusting the TLS server's CA when `trusted`.
    static func transport(trusted: Bool) throws -> any Transport {
        #if canImport(CourierCurl)
        if TestTransport.isCurl {
            let authorities = URL(fileURLWithPath: try env("COURIER_TLS_CA_FILE"))
            return CurlTransport { if trusted { $0.trustedCertificateAuthorities = authorities } }
        }
        #endif
        return TestTransport.make()
    }

    static let listeners = [
        "COURIER_TLS_EXPIRED_URL", "COURIER_TLS_NOT_YET_VALID_URL", "COURIER_TLS_WRONG_HOST_URL",
        "COURIER_TLS_SELF_SIGNED_URL", "COURIER_TLS_UNKNOWN_CA_URL",
    ]

    func failure(_ variable: String, transport: any Transport) async throws -> NetworkError? {
        let client = APIClient(environment: APIEnvironment(name: "tls", baseURL: try Self.url(variable))) {
            $0.transport = transport
        }
        return await #expect(throws: NetworkError.self) {
            try await client.send(Request<HTTPResponse>.raw(.get, "/anything"))
        }
    }

    @Test(
        "an untrusted certificate (expired, not yet valid, wrong host, self-signed, unknown CA) is a certificate failure of unknown authority, with its own message",
        arguments: listeners)
    func untrustedCertificateIsOneKind(variable: String) async throws {
        let error = try await failure(variable, transport: try Self.transport(trusted: false))
        #expect(error?.kind == .transport)
        #expect(error?.certificateFailure != nil, "\(variable): \(String(describing: error))")
        #if canImport(FoundationNetworking)
        // Neither transport trusts the test CA here: OpenSSL stops at the chain, before dates and names.
        #expect(error?.certificateFailure == .unknownAuthority, "\(variable): \(String(describing: error))")
        #endif
        #expect(error?.userMessage == ErrorMessages.certificateMessage)
        #expect(error.map { ErrorMessages.english.message(for: $0) } == ErrorMessages.certificateMessage)
    }

    #if canImport(CourierCurl)
    @Test(
        "with the CA trusted, each certificate problem has its own code",
        .enabled(if: TestTransport.isCurl, "URLSession on Linux cannot trust the test CA"),
        arguments: [
            ("COURIER_TLS_EXPIRED_URL", CertificateFailure.expired),
            ("COURIER_TLS_NOT_YET_VALID_URL", .notYetValid),
            ("COURIER_TLS_WRONG_HOST_URL", .untrusted),
            ("COURIER_TLS_SELF_SIGNED_URL", .unknownAuthority),
            ("COURIER_TLS_UNKNOWN_CA_URL", .unknownAuthority),
        ])
    func trustedAuthorityCodes(variable: String, expected: CertificateFailure) async throws {
        let error = try await failure(variable, transport: try Self.transport(trusted: true))
        #expect(error?.certificateFailure == expected, "\(variable): \(String(describing: error))")
        #expect(error?.userMessage == ErrorMessages.certificateMessage)
    }

    @Test(
        "an https → http redirect is refused by default; the opt-in follows it without Authorization or X-API-Key",
        .enabled(if: TestTransport.isCurl, "URLSession on Linux cannot trust the test CA for the https hop"))
    func insecureRedirect() async throws {
        let namespace = TestServers.makeNamespace("downgrade")
        let target = try TestServers.apiURL().appendingPathComponent("ns").appendingPathComponent(namespace)
            .appendingPathComponent("echo").absoluteString
        let tls = try Self.url("COURIER_TLS_URL")
        let request = Request<HTTPResponse>.raw(.get, "/tls/redirect", query: ["to": target])
            .header("Authorization", "Bearer SECRET-DOWNGRADE-TOKEN")
            .header("X-API-Key", "SECRET-DOWNGRADE-KEY")
            .header("X-Trace", "kept")

        let refusingTransport = try Self.transport(trusted: true)
        let refusing = APIClient(environment: APIEnvironment(name: "tls", baseURL: tls)) {
            $0.transport = refusingTransport
        }
        let error = await #expect(throws: NetworkError.self) { try await refusing.send(request) }
        guard case .transport(let urlError)? = error else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
        #expect(urlError.code == .appTransportSecurityRequiresSecureConnection)
        #expect(try await TestServers.requestLog(namespace: namespace).isEmpty, "the http hop was never sent")

        let allowingTransport = try Self.transport(trusted: true)
        let allowing = APIClient(environment: APIEnvironment(name: "tls", baseURL: tls)) {
            $0.transport = allowingTransport
            $0.redirects.allowsInsecureRedirects = true
        }
        let response = try await allowing.send(request)
        #expect(response.statusCode == 200)
        let log = try await TestServers.requestLog(namespace: namespace)
        #expect(log.count == 1)
        #expect(log.first?.header("Authorization") == nil, "the http hop carried \(log.first?.headers ?? [:])")
        #expect(log.first?.header("X-API-Key") == nil, "the http hop carried \(log.first?.headers ?? [:])")
        #expect(log.first?.header("X-Trace") == "kept")
    }

    @Test(
        "a Secure cookie set over https never goes to the same host over http; a plain cookie does",
        .enabled(if: TestTransport.isCurl, "URLSession on Linux can neither resolve a custom name nor trust the test CA"))
    func secureCookieStaysOnHTTPS() async throws {
        let host = "courier-test.invalid"
        let tls = try Self.url("COURIER_TLS_URL")
        let api = try TestServers.apiURL()
        let namespace = TestServers.makeNamespace("secure-cookie")
        let authorities = URL(fileURLWithPath: try Self.env("COURIER_TLS_CA_FILE"))
        let transport = CurlTransport {
            $0.trustedCertificateAuthorities = authorities
            $0.resolvedAddresses = [host: "127.0.0.1"]
        }
        let tlsPort = try #require(tls.port)
        let apiPort = try #require(api.port)
        let secureBase = try #require(URL(string: "https://\(host):\(tlsPort)"))
        let plainBase = try #require(URL(string: "http://\(host):\(apiPort)/ns/\(namespace)"))
        let secure = APIClient(environment: APIEnvironment(name: "tls", baseURL: secureBase)) { $0.transport = transport }
        let plain = APIClient(environment: APIEnvironment(name: "plain", baseURL: plainBase)) { $0.transport = transport }

        #expect(try await secure.send(Request<HTTPResponse>.raw(.get, "/tls/set-cookie")).statusCode == 200)
        _ = try await plain.send(Request<HTTPResponse>.raw(.get, "/echo"))
        let log = try await TestServers.requestLog(namespace: namespace)
        #expect(log.count == 1)
        let cookie = log.first?.header("Cookie") ?? ""
        #expect(cookie.contains("courier_plain=visible"), "the http request carried Cookie: \(cookie)")
        #expect(!cookie.contains("courier_secure"), "the Secure cookie went over http: \(cookie)")
        #expect(log.first?.header("Host") == "\(host):\(apiPort)")
    }
    #endif
}
