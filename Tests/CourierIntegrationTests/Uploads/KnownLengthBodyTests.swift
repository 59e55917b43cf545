import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierTransfers
import Testing

/// Streamed bodies of known length (a file, a factory with a length, a streamed multipart form)
/// go out with `Content-Length` over `CurlTransport`; URLSession on Linux sends them chunked.
@Suite("Uploads: bodies of known length")
struct KnownLengthBodyTests {
    typealias Arrival = ResendBelowCourierTests.Arrival

    /// Sends `body` once on a fresh connection to the resend listener (answered there) and returns
    /// what the server saw.
    static func send(_ body: RequestBody) async throws -> Arrival {
        let base = try await ResendBelowCourierTests.listenerURL()
        let client = APIClient(environment: APIEnvironment(name: "length", baseURL: base)) { configuration in
            TestTransport.configure(&configuration)
        }
        let id = UUID().uuidString
        _ = try await client.send(Request<Data>(method: .put, path: "/drop", query: ["id": id], body: body))
        let arrivals = try await ResendBelowCourierTests.arrivals(id: id)
        #expect(arrivals.count == 1)
        return try #require(arrivals.first)
    }

    @Test("file, factory and streamed multipart bodies: Content-Length on curl, exact bytes on both")
    func knownLength() async throws {
        let payload = ResendBelowCourierTests.payload
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-length-\(UUID().uuidString)")
        try payload.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var form = MultipartForm()
        try form.addField(named: "name", value: "report")
        try form.addFile(named: "file", fileURL: file, filename: "report.bin")
        let bodies: [(String, RequestBody, Int)] = [
            ("file", .stream(.file(file), contentType: "application/octet-stream"), payload.count),
            (
                "factory",
                .stream(.factory(length: payload.count) { InputStream(data: payload) }, contentType: "application/octet-stream"),
                payload.count
            ),
            ("multipart", .multipart(form), Int(form.contentLength)),
        ]
        for (name, body, length) in bodies {
            let arrival = try await Self.send(body)
            #expect(arrival.complete && arrival.bodyBytes == length, "\(name): \(arrival)")
            if TestTransport.isCurl {
                #expect(arrival.contentLength == String(length) && !arrival.chunked, "\(name): \(arrival)")
            } else {
                #if canImport(FoundationNetworking)
                #expect(arrival.chunked && arrival.contentLength == nil, "\(name): \(arrival)")
                #else
                #expect(arrival.contentLength == String(length), "\(name): \(arrival)")
                #endif
            }
        }
    }
}
