import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("What goes on the wire follows sendsStreamLength and resendsOnReusedConnections")
struct WireRequestCapabilityTests {
    static func streamedUpload() throws -> URLRequest {
        var request = URLRequest(url: try #require(TransportFixtures.url))
        request.httpMethod = "PUT"
        request.httpBodyStream = InputStream(data: Data(count: 10))
        request.setValue("10", forHTTPHeaderField: "Content-Length")
        return request
    }

    @Test("a streamed body keeps its Content-Length where the platform sends it, and loses it where it goes chunked")
    func streamLength() throws {
        let request = try Self.streamedUpload()
        #expect(
            URLSessionTransport.wireRequest(request, capabilities: .apple).value(forHTTPHeaderField: "Content-Length") == "10")
        #expect(
            URLSessionTransport.wireRequest(request, capabilities: .foundationNetworking)
                .value(forHTTPHeaderField: "Content-Length") == nil)
        var data = URLRequest(url: try #require(TransportFixtures.url))
        data.httpBody = Data(count: 3)
        data.setValue("3", forHTTPHeaderField: "Content-Length")
        #expect(
            URLSessionTransport.wireRequest(data, capabilities: .foundationNetworking)
                .value(forHTTPHeaderField: "Content-Length") == "3", "a Data body keeps its length everywhere")
    }

    @Test(
        "only where the HTTP layer resends on reused connections do bodies and unsafe requests get a connection of their own",
        arguments: [("GET", false, false), ("POST", false, true), ("PUT", true, true), ("DELETE", false, false)])
    func freshConnection(method: String, hasBody: Bool, onLinux: Bool) throws {
        var request = URLRequest(url: try #require(TransportFixtures.url))
        request.httpMethod = method
        if hasBody { request.httpBody = Data(count: 1) }
        #expect(URLSessionTransport.needsFreshConnection(request, capabilities: .foundationNetworking) == onLinux)
        #expect(!URLSessionTransport.needsFreshConnection(request, capabilities: .apple))
    }

    @Test("the capabilities of this platform are the ones chosen in Platform/CurrentPlatform.swift")
    func currentPlatform() {
        #if canImport(FoundationNetworking)
        #expect(TransportCapabilities.current == .foundationNetworking)
        #else
        #expect(TransportCapabilities.current == .apple)
        #endif
        #expect(URLSessionTransport().capabilities == .current)
    }
}
