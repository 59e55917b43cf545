import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
#if canImport(CourierCurl)
import CourierCurl
#endif

#if canImport(CourierCurl)
/// `http_proxy` from the environment, honoured by both transports on Linux, and
/// `CurlTransport.Configuration.proxy = .none` ignoring it, against TestServer/proxy_server.py
/// (which records the path of every request it forwards).
///
/// libcurl reads the variables of the process, and setting them in this process would send every
/// other test running in parallel through the proxy, so the requests are made by a second run of
/// this test binary (the `probe` test below) started with `http_proxy` set.
@Suite("Proxies from the environment")
struct EnvironmentProxyTests {
    static let probeVariable = "COURIER_PROXY_PROBE_NAMESPACE"

    struct ProxyStats: Decodable { var paths: [String] }

    @Test(
        "with http_proxy set, CurlTransport and URLSession go through the proxy; CurlTransport with proxy .none does not",
        .enabled(if: TestTransport.isCurl, "starts its own run of both transports"), .timeLimit(.minutes(2)))
    func environmentProxy() async throws {
        guard let proxy = ProcessInfo.processInfo.environment["COURIER_PROXY_URL"], let proxyURL = URL(string: proxy) else {
            throw TestServers.Missing(variable: "COURIER_PROXY_URL")
        }
        let namespace = TestServers.makeNamespace("proxy")
        var environment = ProcessInfo.processInfo.environment
        for name in ["no_proxy", "NO_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] {
            environment[name] = nil
        }
        environment["http_proxy"] = proxy
        environment[Self.probeVariable] = namespace
        environment["COURIER_TRANSPORT"] = nil

        // Not Foundation.Process: its run() can crash a process with many sockets open (ChildProcess).
        let probe = try ChildProcess.run(
            URL(fileURLWithPath: try #require(Bundle.main.executablePath)),
            arguments: ["--testing-library", "swift-testing", "--filter", "proxyProbe"], environment: environment)
        let status = await probe.terminationStatus
        #expect(status == 0, "the probe run failed (status \(status))")

        let (data, _) = try await URLSession.shared.data(from: proxyURL.appendingPathComponent("_proxy/stats"))
        let paths = try JSONDecoder().decode(ProxyStats.self, from: data).paths.filter { $0.contains(namespace) }
        #expect(paths.sorted() == ["/ns/\(namespace)/echo/curl-environment", "/ns/\(namespace)/echo/urlsession"])
        let log = try await TestServers.requestLog(namespace: namespace).map(\.path).sorted()
        #expect(
            log == ["/echo/curl-direct", "/echo/curl-environment", "/echo/urlsession"],
            "every request reached the server, through the proxy or not")
    }

    /// Runs only in the run ``environmentProxy()`` starts (with `http_proxy` set).
    @Test(.enabled(if: ProcessInfo.processInfo.environment[probeVariable] != nil, "started by environmentProxy"))
    func proxyProbe() async throws {
        let namespace = try #require(ProcessInfo.processInfo.environment[Self.probeVariable])
        let base = try TestServers.apiURL().appendingPathComponent("ns").appendingPathComponent(namespace)
            .appendingPathComponent("echo")
        let viaEnvironment = CurlTransport()
        let direct = CurlTransport { $0.proxy = .none }
        let session = URLSessionTransport()
        #expect(try await viaEnvironment.send(URLRequest(url: base.appendingPathComponent("curl-environment"))).statusCode == 200)
        #expect(try await direct.send(URLRequest(url: base.appendingPathComponent("curl-direct"))).statusCode == 200)
        #expect(try await session.send(URLRequest(url: base.appendingPathComponent("urlsession"))).statusCode == 200)
    }
}
#endif
